"""The compiled part of kubesched: the protobuf wire (`kubesched.storage.protobuf._wire`)."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("kubesched.storage.protobuf._wire", ["src/kubesched/storage/protobuf/_wire.pyx"])],
        compiler_directives={"language_level": "3"},
    )
)
