"""The compiled part of kubesched: the protobuf wire (`kubesched.cluster.protobuf._wire`)."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("kubesched.cluster.protobuf._wire", ["src/kubesched/cluster/protobuf/_wire.pyx"])],
        compiler_directives={"language_level": "3"},
    )
)
