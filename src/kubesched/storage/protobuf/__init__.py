"""Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`): the schema of the served
groups as data, the codec between messages and their JSON shape, and the envelope kube-apiserver
puts around an object (`k8s\\0` and runtime.Unknown) and around each watch event."""
