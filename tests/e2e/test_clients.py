"""The official Python client and lightkube list and watch pods; a resumed watch misses nothing."""

from __future__ import annotations

import json
import urllib.request

import kubernetes
import lightkube
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.core_v1 import Pod


def create_pod(cluster, name, labels):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }
    req = urllib.request.Request(
        f"{cluster.url}/api/v1/namespaces/default/pods",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read())


def test_official_client_lists_and_resumes_a_watch(cluster):
    api_client = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
    v1 = kubernetes.client.CoreV1Api(api_client)
    create_pod(cluster, "official-a", {"suite": "official"})
    listed = v1.list_namespaced_pod("default", label_selector="suite=official")
    assert [p.metadata.name for p in listed.items] == ["official-a"]
    rv = listed.metadata.resource_version

    seen = []
    watcher = kubernetes.watch.Watch()
    create_pod(cluster, "official-b", {"suite": "official"})
    for event in watcher.stream(
        v1.list_namespaced_pod, "default", label_selector="suite=official", resource_version=rv, timeout_seconds=5
    ):
        seen.append((event["type"], event["object"].metadata.name))
        rv = event["object"].metadata.resource_version
        break  # disconnect after the first event
    watcher.stop()
    # Changes made while nobody watches arrive when the watch resumes from the last version seen.
    create_pod(cluster, "official-c", {"suite": "official"})
    v1.delete_namespaced_pod("official-a", "default")
    for event in kubernetes.watch.Watch().stream(
        v1.list_namespaced_pod, "default", label_selector="suite=official", resource_version=rv, timeout_seconds=1
    ):
        seen.append((event["type"], event["object"].metadata.name))
    assert seen == [("ADDED", "official-b"), ("ADDED", "official-c"), ("DELETED", "official-a")]
    api_client.close()


def test_lightkube_lists_and_resumes_a_watch(cluster):
    client = lightkube.Client(config=KubeConfig.from_file(str(cluster.kubeconfig)))
    create_pod(cluster, "light-a", {"suite": "light"})
    pods = list(client.list(Pod, namespace="default", labels={"suite": "light"}))
    assert [p.metadata.name for p in pods] == ["light-a"]
    rv = pods[0].metadata.resourceVersion
    create_pod(cluster, "light-b", {"suite": "light"})
    seen = []
    for event_type, pod in client.watch(Pod, namespace="default", labels={"suite": "light"}, resource_version=rv):
        seen.append((event_type, pod.metadata.name))
        rv = pod.metadata.resourceVersion
        break
    create_pod(cluster, "light-c", {"suite": "light"})
    client.delete(Pod, "light-b", namespace="default")
    for event_type, pod in client.watch(Pod, namespace="default", labels={"suite": "light"}, resource_version=rv):
        seen.append((event_type, pod.metadata.name))
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "light-b"), ("ADDED", "light-c"), ("DELETED", "light-b")]
