"""Upstream's names for the lightkube models (`io.k8s.api.core.v1.Pod`), and the value types of
the maps the models leave as a bare `dict` — which the OpenAPI documents describe and request
bodies are checked against."""

from __future__ import annotations

from kubesched.api.objects import Model

META = "io.k8s.apimachinery.pkg.apis.meta.v1"

# lightkube modules whose Go package is not io.k8s.api.<group>.<version>.
_PACKAGES = {
    "meta_v1": META,
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "apiregistration_v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}

# The value types of maps, which the models type as a bare `dict`, written as the models write
# types. Keyed by definition suffix (the part after `io.k8s.api.` or `io.k8s.apimachinery.pkg.apis.`)
# and field.
STRING = "str"
BYTES = "bytes"  # base64 in JSON
QUANTITY = "resource.Quantity"
MAP_VALUES: dict[str, dict[str, str]] = {
    "meta.v1.ObjectMeta": {"labels": STRING, "annotations": STRING},
    "meta.v1.LabelSelector": {"matchLabels": STRING},
    "core.v1.PodSpec": {"nodeSelector": STRING, "overhead": QUANTITY},
    "core.v1.PodStatus": {"allocatedResources": QUANTITY},
    "core.v1.ContainerStatus": {"allocatedResources": QUANTITY},
    "core.v1.ResourceRequirements": {"limits": QUANTITY, "requests": QUANTITY},
    "core.v1.VolumeResourceRequirements": {"limits": QUANTITY, "requests": QUANTITY},
    "core.v1.NodeStatus": {"allocatable": QUANTITY, "capacity": QUANTITY},
    "core.v1.PersistentVolumeSpec": {"capacity": QUANTITY},
    "core.v1.PersistentVolumeClaimStatus": {
        "allocatedResourceStatuses": STRING,
        "allocatedResources": QUANTITY,
        "capacity": QUANTITY,
    },
    "core.v1.CSIVolumeSource": {"volumeAttributes": STRING},
    "core.v1.CSIPersistentVolumeSource": {"volumeAttributes": STRING},
    "core.v1.FlexVolumeSource": {"options": STRING},
    "core.v1.FlexPersistentVolumeSource": {"options": STRING},
    "core.v1.PodCertificateProjection": {"userAnnotations": STRING},
    "core.v1.ServiceSpec": {"selector": STRING},
    "core.v1.ConfigMap": {"data": STRING, "binaryData": BYTES},
    "core.v1.Secret": {"data": BYTES, "stringData": STRING},
    "core.v1.ReplicationControllerSpec": {"selector": STRING},
    "policy.v1.PodDisruptionBudgetStatus": {"disruptedPods": "meta_v1.Time"},
    "storage.v1.StorageClass": {"parameters": STRING},
    "storage.v1.VolumeAttachmentStatus": {"attachmentMetadata": STRING},
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps": {
        "definitions": "apiextensions_v1.JSONSchemaProps",
        "properties": "apiextensions_v1.JSONSchemaProps",
        "patternProperties": "apiextensions_v1.JSONSchemaProps",
        "dependencies": "Any",
    },
    "resource.v1.CapacityRequirements": {"requests": QUANTITY},
    "resource.v1.DeviceRequestAllocationResult": {"consumedCapacity": QUANTITY},
    "resource.v1.Device": {
        "attributes": "resource_v1.DeviceAttribute",
        "capacity": "resource_v1.DeviceCapacity",
        "nodeAllocatableResources": "resource_v1.NodeAllocatableResource",
    },
    "resource.v1.CounterSet": {"counters": "resource_v1.Counter"},
    "resource.v1.DeviceCounterConsumption": {"counters": "resource_v1.Counter"},
}


def model_of(cls: type[Model]) -> type[Model]:
    """The lightkube model class behind a resource class (resources subclass their models)."""
    for base in cls.__mro__:
        if base.__module__.startswith("lightkube.models."):
            return base
    raise TypeError(f"{cls!r} has no lightkube model")


def _package(module: str) -> str:
    short = module.rsplit(".", 1)[-1]
    if short in _PACKAGES:
        return _PACKAGES[short]
    group, version = short.rsplit("_", 1)
    return f"io.k8s.api.{group}.{version}"


def definition_name(cls: type[Model]) -> str:
    """Upstream's definition name for a model or resource class: `io.k8s.api.core.v1.Pod`."""
    model = model_of(cls)
    return f"{_package(model.__module__)}.{model.__name__}"


def short_name(name: str) -> str:
    """A definition name without its `io.k8s.api.` or `io.k8s.apimachinery.pkg.apis.` prefix."""
    for prefix in ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name
