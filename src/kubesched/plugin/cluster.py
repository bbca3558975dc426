"""The cluster as a plugin that writes to it meets it (a binder, a plugin with its own kinds): the
API's errors and the classes of custom resources."""

from kubesched.cluster.custom import custom_resource
from kubesched.cluster.errors import ApiError, Conflict, NotFound

__all__ = ["ApiError", "Conflict", "NotFound", "custom_resource"]
