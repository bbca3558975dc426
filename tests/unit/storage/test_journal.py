"""A store kept in a journal — SQLite, or a real etcd where one is installed: what was written is
there after a restart, as it was, with its resourceVersions; watches resume across the restart
while the kept history allows."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import time
from urllib.parse import urlsplit

import msgspec
import pytest
from lightkube.resources import apiextensions_v1, apps_v1, core_v1

from builders import binding, deployment, make_node, make_pod, plugins_crd
from kubesched.cluster import Gone
from kubesched.cluster.codec import encode
from kubesched.cluster.custom import custom_resource
from kubesched.cluster.errors import InternalError
from kubesched.storage import MemoryStore
from kubesched.storage.journal import JournalError
from kubesched.storage.journal.etcd import EtcdJournal
from kubesched.storage.journal.sqlite import SqliteJournal
from kubesched.storage.strategy import INITIAL_NAMESPACES

PodGroup = custom_resource(group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups")
KINDS = (core_v1.Namespace, core_v1.Node, core_v1.Pod, apps_v1.Deployment, apiextensions_v1.CustomResourceDefinition)


class SqlitePlace:
    """Where a journal keeps a store: a data directory."""

    def __init__(self, directory):
        self.directory = directory

    def journal(self, history):
        return SqliteJournal(self.directory, history=history)

    def rows(self):
        with contextlib.closing(sqlite3.connect(self.directory / "state.db")) as db:
            return db.execute("SELECT count(*) FROM log").fetchone()[0]


class EtcdPlace:
    """Where a journal keeps a store: a prefix of its own in the session's etcd."""

    def __init__(self, url, prefix):
        self.url, self.prefix = url, prefix

    def journal(self, history):
        return EtcdJournal(self.url, history=history, prefix=self.prefix, wait=0.5)

    def rows(self):
        from urllib.parse import urlsplit

        import etcd3gw

        parts = urlsplit(self.url)
        return len(etcd3gw.client(host=parts.hostname, port=parts.port).get_prefix(f"{self.prefix}/log/"))


@pytest.fixture(params=["sqlite", "etcd"])
def place(request, tmp_path):
    if request.param == "sqlite":
        return SqlitePlace(tmp_path)
    return EtcdPlace(request.getfixturevalue("etcd_url"), f"/test-{tmp_path.name}")


def open_store(clock, place, *, history=10_000, first=0):
    journal = place.journal(history)
    return MemoryStore(clock=clock, watch_latency=0.0, journal=journal, history=history, first_resource_version=first)


def close(store):
    store._durable.journal.close()


def contents(store, *kinds):
    return {cls.__name__: [encode(o) for o in store.list(cls).items] for cls in kinds}


def busy(store):
    """Writes of every sort: creates, a bind, a patch, a graceful and a plain delete, a CRD and
    one of its objects."""
    store.create(make_node("n1").obj)
    for name in ("a", "b", "c"):
        store.create(make_pod(name).req(cpu="100m").obj)
    store.post(core_v1.Pod, "binding", binding(store.get(core_v1.Pod, "a", namespace="default"), "n1"))
    store.patch(core_v1.Pod, "b", {"metadata": {"labels": {"tier": "web"}}}, namespace="default")
    store.delete(core_v1.Pod, "a", namespace="default")  # bound: graceful, stays with a deletionTimestamp
    store.delete(core_v1.Pod, "c", namespace="default")
    store.create(deployment("web", replicas=2))
    store.create(plugins_crd("podgroups"))
    store.create(PodGroup(metadata={"name": "g1", "namespace": "default"}, spec={"minMember": 2}))


def test_a_restarted_store_has_every_object_as_it_was_and_counts_on(place, clock):
    store = open_store(clock, place)
    assert not store.restored
    busy(store)
    before, rv = contents(store, *KINDS, PodGroup), store.resource_version
    close(store)
    again = open_store(clock, place)
    assert again.restored
    assert contents(again, *KINDS, PodGroup) == before
    assert again.resource_version == rv
    assert again.get(core_v1.Pod, "a", namespace="default").metadata.deletionTimestamp is not None
    made = again.create(make_pod("d").obj)
    assert int(made.metadata.resourceVersion) == rv + 1


@pytest.mark.parametrize("back", [1, 3, 6, 12])
def test_a_watch_resumes_across_a_restart_with_the_events_it_would_have_had(place, clock, back):
    store = open_store(clock, place)
    busy(store)
    since = str(store.resource_version - back)
    expected = [(e.type, encode(e.object)) for e in store.watch(core_v1.Pod, resource_version=since).drain()]
    close(store)
    again = open_store(clock, place)
    resumed = [(e.type, encode(e.object)) for e in again.watch(core_v1.Pod, resource_version=since).drain()]
    assert resumed == expected


def test_a_watch_from_before_the_kept_history_is_gone_after_a_restart(place, clock):
    store = open_store(clock, place, history=4)
    busy(store)
    first, last = store.resource_version - 20, store.resource_version
    close(store)
    again = open_store(clock, place, history=4)
    with pytest.raises(Gone, match="too old resource version"):
        again.watch(core_v1.Pod, resource_version=str(first))
    assert again.watch(core_v1.Pod, resource_version=str(last - 2)) is not None


def test_a_new_data_directory_keeps_the_first_version_it_counted_from(place, clock):
    store = open_store(clock, place, first=5_000)
    close(store)
    again = open_store(clock, place, first=9_000)
    assert again.resource_version == 5_000 + 4  # the four initial namespaces
    replayed = again.watch(core_v1.Namespace, resource_version="5000").drain()
    assert [e.object.metadata.name for e in replayed] == list(INITIAL_NAMESPACES)


def test_a_second_server_on_the_same_directory_is_refused(place, clock):
    store = open_store(clock, place)
    with pytest.raises(JournalError, match=r"in use by another kubesched \(pid \d+"):
        place.journal(10)
    close(store)
    place.journal(10).close()


def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path):
    (tmp_path / "state.db").write_bytes(b"this is no database at all" * 100)
    with pytest.raises(JournalError, match=r"state\.db: not a kubesched data file"):
        SqliteJournal(tmp_path, history=10)


class FailingJournal:
    """A journal whose disk is full after `room` writes."""

    def __init__(self, inner, room):
        self.inner, self.room = inner, room

    def load(self):
        return self.inner.load()

    def begin(self, first_rv):
        self.inner.begin(first_rv)

    def seal(self):
        self.inner.seal()

    def append(self, entry):
        self._spend()
        self.inner.append(entry)

    def _spend(self):
        if self.room == 0:
            raise JournalError("database or disk is full")
        self.room -= 1

    def close(self):
        self.inner.close()


def test_a_write_the_journal_refuses_is_an_internal_error_and_changes_nothing(place, clock):
    journal = FailingJournal(place.journal(100), room=5)
    store = MemoryStore(clock=clock, watch_latency=0.0, journal=journal)
    store.create(make_pod("kept").obj)
    watch = store.watch(core_v1.Pod)
    watch.drain()
    rv = store.resource_version
    with pytest.raises(InternalError, match="storage: database or disk is full"):
        store.create(make_pod("lost").obj)
    with pytest.raises(InternalError):
        store.delete(core_v1.Pod, "kept", namespace="default")
    assert [p.metadata.name for p in store.list(core_v1.Pod).items] == ["kept"]
    assert store.resource_version == rv and watch.drain() == []
    journal.close()
    again = open_store(clock, place)
    assert [p.metadata.name for p in again.list(core_v1.Pod).items] == ["kept"]


def test_events_and_their_expiry_survive_a_restart(place, clock):
    journal = place.journal(100)
    store = MemoryStore(clock=clock, watch_latency=0.0, journal=journal, event_ttl=60.0)
    event = msgspec.convert(
        {"metadata": {"name": "e1", "namespace": "default"}, "involvedObject": {"kind": "Pod", "name": "p"}},
        core_v1.Event,
    )
    store.create(event)
    journal.close()
    again = MemoryStore(clock=clock, watch_latency=0.0, journal=place.journal(100), event_ttl=60.0)
    assert [e.metadata.name for e in again.list(core_v1.Event).items] == ["e1"]
    clock.advance(61.0)
    assert again.expire_events() == 1 and again.list(core_v1.Event).items == []


def test_superseded_versions_are_compacted_and_the_latest_of_each_object_kept(place, clock):
    store = open_store(clock, place, history=8)
    store.create(make_pod("steady").obj)
    store.create(make_pod("gone").obj)
    store.create(make_pod("busy").obj)
    for i in range(300):
        store.patch(core_v1.Pod, "busy", {"metadata": {"labels": {"i": str(i)}}}, namespace="default")
    store.delete(core_v1.Pod, "gone", namespace="default")
    since = str(store.resource_version - 5)
    expected = [(e.type, encode(e.object)) for e in store.watch(core_v1.Pod, resource_version=since).drain()]
    before = contents(store, core_v1.Pod, core_v1.Namespace)
    close(store)
    assert place.rows() <= 6 + 64 + 8  # the objects' latest rows, the kept history, the writes since compacting
    again = open_store(clock, place, history=8)
    assert contents(again, core_v1.Pod, core_v1.Namespace) == before
    assert again.get(core_v1.Pod, "busy", namespace="default").metadata.labels == {"i": "299"}
    assert [(e.type, encode(e.object)) for e in again.watch(core_v1.Pod, resource_version=since).drain()] == expected
    with pytest.raises(Gone):
        again.watch(core_v1.Pod, resource_version=str(again.resource_version - 100))


def test_a_store_killed_before_its_first_objects_are_all_written_starts_afresh(place, clock):
    journal = place.journal(100)
    store = MemoryStore(clock=clock, watch_latency=0.0, journal=journal, populate=True)
    store.create(make_node("n1").obj)  # and then the process dies, before seal()
    journal.close()
    again = open_store(clock, place)
    assert not again.restored and again.list(core_v1.Node).items == []
    again.create(make_node("n2").obj)
    close(again)
    assert [n.metadata.name for n in open_store(clock, place).list(core_v1.Node).items] == ["n2"]


HOLD = """
import sys, time
from kubesched.storage.journal.etcd import EtcdJournal
EtcdJournal(sys.argv[1], history=10, prefix=sys.argv[2], lease_ttl=2)
print("held", flush=True)
time.sleep(60)
"""


def test_an_etcd_prefix_held_by_a_killed_server_is_free_once_its_lease_expires(etcd_url, tmp_path):
    prefix = f"/test-{tmp_path.name}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, etcd_url, prefix], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    holder.kill()
    holder.wait()
    with pytest.raises(JournalError, match=rf"{prefix}: in use by another kubesched \(pid {holder.pid} on "):
        EtcdJournal(etcd_url, history=10, prefix=prefix, wait=0.2)
    began = time.monotonic()
    EtcdJournal(etcd_url, history=10, prefix=prefix, wait=5.0).close()  # the lease ran out meanwhile
    assert time.monotonic() - began < 4.0


def test_an_etcd_journal_whose_lock_was_taken_away_writes_nothing(etcd_url, tmp_path, clock):
    import etcd3gw

    place = EtcdPlace(etcd_url, f"/test-{tmp_path.name}")
    store = open_store(clock, place)
    store.create(make_pod("kept").obj)
    parts = urlsplit(etcd_url)
    etcd3gw.client(host=parts.hostname, port=parts.port).delete(f"{place.prefix}/lock")  # an operator's doing
    with pytest.raises(InternalError, match="this server's lock is gone"):
        store.create(make_pod("lost").obj)
    assert [p.metadata.name for p in store.list(core_v1.Pod).items] == ["kept"]
    close(store)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("etcd.example:2379", "etcd.example:2379: expected an etcd client URL such as http://127.0.0.1:2379"),
        ("http://127.0.0.1:1", "http://127.0.0.1:1 /kubesched: cannot use etcd ("),
    ],
)
def test_an_etcd_it_cannot_use_is_named(url, message):
    with pytest.raises(JournalError) as raised:
        EtcdJournal(url, history=10)
    assert str(raised.value).startswith(message)
