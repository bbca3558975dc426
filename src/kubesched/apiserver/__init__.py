"""The embedded Kubernetes-compatible HTTP API server."""
