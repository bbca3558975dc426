"""The in-memory API store: typed objects, one resourceVersion, watches, bindings, graceful deletion.

Every rule that a Kubernetes API server enforces and that the scheduler depends on lives here
once: optimistic concurrency, watch resume and expiry, the `pods/binding` checks, graceful pod
deletion. The HTTP facade and the in-process backend both sit on this class.

Objects handed in are copied; objects handed out are the stored ones and must not be mutated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import msgspec
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import Named, Served, key_of
from kubesched.clock import Clock
from kubesched.cluster.codec import copy_object
from kubesched.cluster.errors import (
    STALE_OBJECT,
    AlreadyExists,
    BadRequest,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    TooLargeResourceVersion,
    conflict,
)
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.cluster.protocol import ADDED, BOOKMARK, DELETED, MODIFIED, Bookmark, ListResult, WatchEvent
from kubesched.storage.admission import AdmissionChain
from kubesched.storage.conversion import VIEWS
from kubesched.storage.deletion import PROPAGATION_POLICIES, deletion
from kubesched.storage.durable import Durable, saved_changes, saved_objects
from kubesched.storage.encoded import EncodedTable
from kubesched.storage.expiry import EventExpiry
from kubesched.storage.feed import Change, Feed
from kubesched.storage.identity import Identities
from kubesched.storage.journal import Journal, JournalError, Saved
from kubesched.storage.ownership import Ownership
from kubesched.storage.paging import page
from kubesched.storage.patch import MERGE, PatchError, apply_patch
from kubesched.storage.plain import check_apply_config, from_plain
from kubesched.storage.selection import selection
from kubesched.storage.served import ServedKinds
from kubesched.storage.stored import Stored
from kubesched.storage.strategy import DEFAULT_STRATEGY, INITIAL_NAMESPACES, Strategy
from kubesched.storage.subresources import Action, Subresource, lookup
from kubesched.storage.updating import replacement
from kubesched.storage.watch import MemoryWatch
from kubesched.trace import Tracer

R = TypeVar("R", bound=Served)
Key = tuple[str, str]

DEFAULT_WATCH_LATENCY = 0.005
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
DEFAULT_HISTORY = 10_000
ENCODED_KINDS = frozenset({core_v1.Event})  # kept encoded: many, seldom read


class MemoryStore:
    """A cluster's objects in memory, with the semantics of a Kubernetes API server."""

    stamp: Callable[..., datetime]

    def __init__(
        self,
        *,
        clock: Clock,
        watch_latency: float = DEFAULT_WATCH_LATENCY,
        history: int = DEFAULT_HISTORY,
        tracer: Tracer | None = None,
        seed: int | None = 0,
        first_resource_version: int = 0,
        event_ttl: float | None = None,
        disable_admission: Collection[str] = (),
        journal: Journal | None = None,
        populate: bool = False,
    ) -> None:
        """`seed` draws object uids reproducibly (None: from the system's randomness, as a
        server that may restart over a new store must, lest two objects share a uid).
        `first_resource_version`: where versions start; a watch from an earlier one is Gone (a
        new store under a restarted server starts past every version the old one gave out, so
        clients relist instead of resuming into another store's history). `event_ttl`: seconds an
        Event is kept after its last write (kube-apiserver's --event-ttl; None: for ever).
        `disable_admission`: admission plugins turned off, as kube-apiserver's
        --disable-admission-plugins (`NamespaceLifecycle`; `Priority`: a pod's spec.priority is
        kept as given, as in the API server scheduler_perf runs against). `journal`: where every
        change is written before it is visible (`storage.journal`); a journal that holds a saved
        store is loaded instead of starting empty (`restored` is then True). `populate`: the caller
        writes a new store's first objects and then calls `seal()`; until then a restart over the
        journal starts afresh (without it, a new store is sealed once it is made)."""
        self._admission = AdmissionChain(disabled=disable_admission)
        self.clock = clock
        self._expiry = EventExpiry(event_ttl) if event_ttl is not None else None
        self.tracer = tracer or Tracer(clock.now)
        self._rv = first_resource_version
        self._served = ServedKinds(serve=self._serve, withdraw=self._withdraw)
        self._ownership = Ownership(self._served.schemas)
        self._strategies = self._served.strategies
        self._subresources: dict[Kind, Mapping[str, Subresource]] = {}  # each kind's, as its strategy says
        self._objects: dict[type[Served], MutableMapping[Key, Served]] = {
            cls: EncodedTable(cls) if cls in ENCODED_KINDS else {} for cls in KINDS if cls not in VIEWS
        }
        self._feed = Feed(clock=clock, latency=watch_latency, limit=history, compacted=first_resource_version)
        for cls in self._objects:
            self._feed.serve(cls)
        self._ids = Identities(clock, seed)
        self.stamp = self._ids.stamp  # the clock's second as a timestamp (`offset` seconds ahead)
        self._dry_run = False
        self._durable = Durable(journal) if journal is not None else None
        saved = journal.load() if journal is not None else None
        self.restored = saved is not None
        if saved is not None:
            self._load(saved)
            return
        if journal is not None:
            journal.begin(first_resource_version)
        for name in INITIAL_NAMESPACES:
            self.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name=name)))
        if not populate:
            self.seal()

    def seal(self) -> None:
        """Mark a new store's first objects written: a restart over its journal loads it from now on."""
        if self._durable is not None:
            try:
                self._durable.journal.seal()
            except JournalError as e:
                raise InternalError(f"storage: {e}") from None

    def _load(self, saved: Saved) -> None:
        """Take the objects, history and version counter a journal saved (CRDs first, so that
        their kinds are served when their objects come)."""
        for kind, key, obj, rv in saved_objects(saved, self.kind_named):
            self._objects[kind.cls][key] = obj
            self._strategy(kind).created(obj)
            if self._expiry is not None:
                self._expiry.written(kind.cls, key, rv, self.clock.now())
        self._rv = saved.rv
        self._feed.resume(saved_changes(saved, self.kind_named, limit=self._feed.limit), rv=saved.rv)

    # -- kinds -----------------------------------------------------------------------------

    def kind_named(self, api_version: str, kind: str) -> Kind | None:
        """The kind served as `apiVersion` and `kind` (a manifest's), built-in or custom; None if
        none is."""
        return self._served.named(api_version, kind)

    def kind_of(self, cls: type[Served]) -> Kind:
        """The served kind of a resource class (TypeError for a kind not served)."""
        return self._served.served_as(cls) or self._served.of(cls)

    def kinds(self) -> list[Kind]:
        """Every kind served now, built-in and custom (views excluded)."""
        return self._served.all()

    @property
    def kinds_generation(self) -> int:
        """Changes whenever the set of served kinds does."""
        return self._served.generation

    def _serve(self, kind: Kind) -> None:
        self._objects.setdefault(kind.cls, {})
        self._feed.serve(kind.cls)

    def _withdraw(self, kind: Kind) -> None:
        """Delete a withdrawn kind's objects (each watch sees them go) and end its watches."""
        table = self._objects[kind.cls]
        for k in sorted(table):
            self._remove(kind, k, table[k])
        self._feed.withdraw(kind.cls)
        del self._objects[kind.cls]
        self._subresources.pop(kind, None)

    def _strategy(self, kind: Kind) -> Strategy[Any]:  # Any: the kind's own objects
        return self._strategies.get(kind.cls, DEFAULT_STRATEGY)

    # -- reading ---------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, cls: type[R], name: str, *, namespace: str | None = None) -> R:
        kind = self.kind_of(cls)
        view = self._served.view(cls)
        obj = self._objects[view.storage if view else cls].get(self._key(kind, namespace, name))
        if obj is None:
            raise NotFound(f'{kind.qualified} "{name}" not found', kind=kind.plural, name=name, group=kind.group)
        return cast(R, view.from_storage(obj) if view else obj)

    def list(
        self,
        cls: type[Served],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> ListResult[Any]:  # Any: objects of `cls`, whichever served class it is
        """Matching objects in key order. With `limit`, one page; `continue_token` from the previous
        page resumes after its last key (items are read as they are now, the page keeps the first
        page's resourceVersion). A `resource_version` the list must not be older than, newer than
        any the store has given out, is TooLargeResourceVersion."""
        if resource_version not in (None, "", "0") and (wanted := self._parse_rv(resource_version)) > self._rv:
            raise TooLargeResourceVersion(wanted, self._rv)
        kind = self.kind_of(cls)
        view = self._served.view(cls)
        return page(
            self._objects[view.storage if view else cls],
            matches=selection(kind, namespace, label_selector, field_selector),
            convert=view.from_storage if view else None,
            rv=self._rv,
            limit=limit,
            continue_token=continue_token,
        )

    # -- writing ---------------------------------------------------------------------------

    def create(self, obj: R, *, namespace: str | None = None, field_manager: str | None = None) -> R:
        """Create an object. With `field_manager` the write is recorded in its managedFields as
        that manager's Update, as every write through the API server is."""
        if view := self._served.view(type(obj)):
            created = self.create(view.to_storage(obj), namespace=namespace, field_manager=field_manager)
            return cast(R, view.from_storage(created))
        kind = self.kind_of(type(obj))
        strategy = self._strategy(kind)
        o: Stored = strategy.copy_for_create(obj)
        meta = o.metadata = o.metadata or meta_v1.ObjectMeta()
        ns = None
        if kind.namespaced:
            if namespace and meta.namespace and namespace != meta.namespace:
                raise BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            ns = namespace or meta.namespace or "default"
        name = meta.name
        if not name and meta.generateName:
            objects = self._objects[kind.cls]
            name = self._ids.name(meta.generateName, lambda n: (ns or "", n) in objects)
        meta.name = name
        meta.namespace = ns
        meta.uid = self._ids.uid()
        meta.creationTimestamp = now = self.stamp()
        meta.resourceVersion = meta.deletionTimestamp = meta.deletionGracePeriodSeconds = None
        if strategy.tracks_generation:
            meta.generation = 1
        strategy.default(o)
        strategy.prepare_for_create(o, now)
        self._admission.admit(kind, o, self._objects.__getitem__)
        self.refuse_invalid(kind, o, strategy.validate(o))
        key = (ns or "", name or "")
        if key in self._objects[kind.cls]:
            raise AlreadyExists(
                f'{kind.qualified} "{name}" already exists', kind=kind.plural, name=name or "", group=kind.group
            )
        self._own(kind, None, o, field_manager, None)
        return cast(R, self._commit(kind, key, ADDED, o, None))

    def restore(self, obj: R) -> R:
        """Store an object exactly as given — UID, timestamps and status included — as when loading
        a recorded cluster state. It is validated but not defaulted; it gets a new resourceVersion."""
        kind = self.kind_of(type(obj))
        o = copy_object(obj)
        meta = o.metadata
        if meta is None or not meta.name:
            raise self._invalid(kind, o, [FieldError("metadata.name", None, "name is required", kind="Required value")])
        if kind.namespaced:
            meta.namespace = meta.namespace or "default"
            if ("", meta.namespace) not in self._objects[core_v1.Namespace]:
                raise NotFound(f'namespaces "{meta.namespace}" not found', kind="namespaces", name=meta.namespace)
        else:
            meta.namespace = None
        if meta.uid:
            self._ids.restored(meta.uid)
        else:
            meta.uid = self._ids.uid()
        meta.creationTimestamp = meta.creationTimestamp or self.stamp()
        self.refuse_invalid(kind, o, self._strategy(kind).validate(o))
        key = (meta.namespace or "", meta.name)
        table = self._objects[kind.cls]
        return self._commit(kind, key, MODIFIED if key in table else ADDED, o, table.get(key))

    def update(
        self,
        obj: R,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        via: str | None = None,
    ) -> R:
        """Replace an object. Without a subresource the status of a kind with a status
        subresource is kept; with `subresource="status"` only the status changes. managedFields
        left out are kept; `field_manager` records the write as that manager's Update, made
        through the subresource `via` names (`scale`) or else through `subresource`."""
        if view := self._served.view(type(obj)):
            updated = self.update(view.to_storage(obj), subresource=subresource, field_manager=field_manager, via=via)
            return cast(R, view.from_storage(updated))
        kind = self.kind_of(type(obj))
        meta = obj.metadata
        if meta is None or not meta.name:
            raise self._invalid(
                kind, obj, [FieldError("metadata.name", None, "name is required", kind="Required value")]
            )
        key = self._key(kind, meta.namespace, meta.name)
        current = self.get(kind.cls, meta.name, namespace=meta.namespace)
        self.check_preconditions(kind, current, uid=meta.uid, rv=meta.resourceVersion)
        strategy = self._strategy(kind)
        new = replacement(kind, strategy, current, copy_object(obj), subresource)
        self.refuse_invalid(kind, new, strategy.validate_update(current, new))
        self._own(kind, current, new, field_manager, via or subresource)
        if new == current:
            return cast(R, current)
        if strategy.deleted_during_update(new):
            return cast(R, self._remove(kind, key, new))
        return cast(R, self._commit(kind, key, MODIFIED, new, current))

    def patch(
        self,
        cls: type[R],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: str = MERGE,
        field_manager: str | None = None,
        via: str | None = None,
    ) -> R:
        """Apply a merge, JSON or strategic merge patch (`patch_type`); a `metadata.resourceVersion`
        or `metadata.uid` the patch sets is a precondition."""
        kind = self.kind_of(cls)
        current: Any = self.get(cls, name, namespace=namespace)  # Any: stored, its metadata set
        try:
            patched = apply_patch(kind.kind, msgspec.to_builtins(current), patch, patch_type)
        except PatchError as e:
            raise BadRequest(str(e)) from None
        new = from_plain(cls, patched, "the patch could not be applied")
        meta = new.metadata
        if meta is None or meta.name != name or (kind.namespaced and meta.namespace != current.metadata.namespace):
            raise BadRequest("the patch may not change the object's name or namespace")
        return self.update(new, subresource=subresource, field_manager=field_manager, via=via)

    def apply(
        self,
        cls: type[R],
        name: str,
        config: object,
        *,
        field_manager: str,
        namespace: str | None = None,
        subresource: str | None = None,
        force: bool = False,
    ) -> tuple[R, bool]:
        """Server-side apply: merge the configuration `config` (plain data) into the object, or
        create it from the configuration when it does not exist. Returns the object and whether
        it was created. ApplyConflict (409) when the configuration changes fields other managers
        own, unless `force`."""
        kind = self.kind_of(cls)
        if self._served.view(cls) is not None:
            raise BadRequest(f"server-side apply is not supported for {kind.qualified} through {kind.api_version}")
        checked = check_apply_config(kind, name, config)
        try:
            live: Any = self.get(cls, name, namespace=namespace)  # Any: stored, its metadata set
        except NotFound:
            if subresource:
                raise
            live = None
        at = live.metadata.namespace if live is not None else namespace or "default"
        new = self._ownership.applied(
            kind,
            live,
            checked,
            name=name,
            namespace=at,
            manager=field_manager,
            force=force,
            sub=subresource,
            now=self.stamp(),
        )
        if live is None:
            return cast(R, self.create(new, namespace=namespace)), True
        return cast(R, self.update(new, subresource=subresource)), False

    def _own(self, kind: Kind, current: object | None, new: object, field_manager: str | None, sub: str | None) -> None:
        self._ownership.written(kind, current, new, manager=field_manager, subresource=sub, now=self.stamp())

    def delete(
        self,
        cls: type[R],
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: str | None = None,
    ) -> R:
        """Delete an object. A bound, running pod is deleted gracefully: it gets a
        deletionTimestamp `grace` seconds ahead and stays until its kubelet finishes the
        deletion (with grace 0). An object with finalizers stays, being deleted, until they are
        removed; `propagation_policy` Foreground or Orphan adds the garbage collector's finalizer
        (Background, the default, leaves the dependents to it once the owner is gone). Returns the
        object as it now stands, or as it was removed. `uid` and `resource_version` are
        preconditions."""
        if propagation_policy not in PROPAGATION_POLICIES:
            raise BadRequest(f'unsupported propagationPolicy "{propagation_policy}"')
        if view := self._served.view(cls):
            gone = self.delete(
                view.storage,
                name,
                namespace=namespace,
                uid=uid,
                resource_version=resource_version,
                propagation_policy=propagation_policy,
            )
            return cast(R, view.from_storage(gone))
        kind = self.kind_of(cls)
        current = self.get(cls, name, namespace=namespace)
        strategy = self._strategy(kind)
        if (refusal := strategy.refuse_delete(current)) is not None:
            raise refusal
        self.check_preconditions(kind, current, uid=uid, rv=resource_version)
        key = self._key(kind, namespace, name)
        left = deletion(strategy, current, policy=propagation_policy, grace=grace_period_seconds, stamp=self.stamp)
        if left is None:
            return cast(R, self._remove(kind, key, current))
        if left is current:
            return current
        return cast(R, self._commit(kind, key, MODIFIED, left, current))

    def subresources(self, kind: Kind) -> Mapping[str, Subresource]:
        """What `kind` serves beneath its objects, as its strategy says."""
        found = self._subresources.get(kind)
        if found is None:
            found = self._subresources[kind] = self._strategy(kind).subresources(kind)
        return found

    def post(self, cls: type[Served], subresource: str, body: object, *, namespace: str | None = None) -> object:
        """Post `body` to a subresource that acts (`pods/binding`, `pods/eviction`)."""
        kind = self.kind_of(cls)
        action = lookup(self, kind, subresource)
        if not isinstance(action, Action):
            raise MethodNotAllowed()
        return action.act(self, body, namespace)

    def write(self, kind: Kind, current: Served, new: R) -> R:
        """Store `new` in place of `current`: a subresource's change, its own checks made."""
        return self._commit(kind, key_of(current), MODIFIED, new, current)

    # -- watching --------------------------------------------------------------------------

    def watch(
        self,
        cls: type[Served],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str | None = None,
    ) -> MemoryWatch:
        """Open a watch. With no resourceVersion (or "0") it starts with an ADDED event for each
        current object; with one, it replays every later change, or raises Gone when those
        changes are no longer in the history."""
        kind = self.kind_of(cls)
        view = self._served.view(cls)
        storage = view.storage if view else cls
        start = None if resource_version in (None, "", "0") else self._parse_rv(resource_version)
        return self._feed.open(
            storage,
            matcher=selection(kind, namespace, label_selector, field_selector),
            convert=view.from_storage if view else None,
            start=start,
            rv=self._rv,
            current=self._objects[storage],
        )

    def drop_watches(self, *kinds: type[Served]) -> None:
        """End every open watch of `kinds` (of every kind without any), as an API server going
        away ends them; their clients resume from the last version they saw."""
        self._feed.drop(kinds)

    def bookmark(self, watch: MemoryWatch, cls: type[Served], *, initial_events_end: bool = False) -> None:
        """Queue a BOOKMARK carrying the current resourceVersion: once delivered, every change
        up to it has been delivered too. `initial_events_end` marks the end of the initial
        events of a watch opened with sendInitialEvents."""
        annotations = {INITIAL_EVENTS_END: "true"} if initial_events_end else None
        kind = self.kind_of(cls)
        meta = meta_v1.ObjectMeta(resourceVersion=str(self._rv), annotations=annotations)
        watch.push(WatchEvent(BOOKMARK, Bookmark(apiVersion=kind.api_version, kind=kind.kind, metadata=meta)))

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """Within the block, writes run every check, default and hook and return what they would
        store, but nothing is stored, no resourceVersion is spent and no watch hears of it (the
        API server's dryRun=All). A created object answers with no resourceVersion; an updated one
        with the version it has."""
        before, self._dry_run = self._dry_run, True
        try:
            yield
        finally:
            self._dry_run = before

    # -- internals -------------------------------------------------------------------------

    def _commit(self, kind: Kind, key: Key, type_: str, obj: R, old: Served | None) -> R:
        """Store a new version. `obj` and its metadata must be fresh objects, owned by the store."""
        if self._dry_run:
            return obj
        o: Any = obj  # Any: its metadata set
        o.metadata.resourceVersion = str(self._rv + 1)
        if self._durable is not None:
            self._durable.write(kind, key, self._rv + 1, type_, obj)
        self._rv += 1
        self._objects[kind.cls][key] = obj
        self._record(kind, type_, obj, old)
        if old is None:
            self._strategy(kind).created(obj)
        return obj

    def _remove(self, kind: Kind, key: Key, obj: Any) -> Any:  # Any: a stored object (its metadata set), as gone
        if self._dry_run:
            return obj
        gone = msgspec.structs.replace(
            obj, metadata=msgspec.structs.replace(obj.metadata, resourceVersion=str(self._rv + 1))
        )
        if self._durable is not None:
            self._durable.write(kind, key, self._rv + 1, DELETED, gone)
        self._rv += 1
        del self._objects[kind.cls][key]
        self._strategy(kind).removed(obj)
        self._record(kind, DELETED, gone, None)
        return gone

    def _record(self, kind: Kind, type_: str, obj: Served, old: Served | None) -> None:
        self._feed.record(Change(self._rv, kind.cls, type_, obj, old))
        if self.tracer.enabled:
            self._strategy(kind).trace(self.tracer, type_, obj, old, rv=self._rv)
        if self._expiry is not None:
            now = self.clock.now()
            if type_ != DELETED:
                self._expiry.written(kind.cls, key_of(obj), self._rv, now)
            if self._expiry.sweep_due(now):
                self.expire_events()

    def expire_events(self) -> int:
        """Delete the Events not written for `event_ttl` seconds (as etcd's leases expire them
        under kube-apiserver); how many. Writes call it at most once a second of clock time."""
        if self._expiry is None:
            return 0
        kind, table, expired = KINDS[core_v1.Event], self._objects[core_v1.Event], 0
        for key, rv in list(self._expiry.due(self.clock.now())):
            current: Any = table.get(key)  # Any: a stored Event, its metadata set
            if current is not None and int(current.metadata.resourceVersion) == rv:  # not written since
                self._remove(kind, key, current)
                expired += 1
        return expired

    def check_preconditions(self, kind: Kind, current: Any, *, uid: str | None, rv: str | None) -> None:  # Any: stored
        meta = current.metadata
        if uid and uid != meta.uid:
            why = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.uid}"
            raise conflict(kind.qualified, meta.name, why, kind=kind.plural)
        if rv and rv != meta.resourceVersion:
            raise conflict(kind.qualified, meta.name, STALE_OBJECT, kind=kind.plural)

    @staticmethod
    def _key(kind: Kind, namespace: str | None, name: str) -> Key:
        return ((namespace or "default") if kind.namespaced else "", name)

    @classmethod
    def refuse_invalid(
        cls, kind: Kind, obj: Named, errors: Sequence[FieldError], *, kind_name: str | None = None
    ) -> None:
        if errors:
            raise cls._invalid(kind, obj, errors, kind_name=kind_name)

    @staticmethod
    def _invalid(kind: Kind, obj: Named, errors: Sequence[FieldError], *, kind_name: str | None = None) -> Invalid:
        name = (obj.metadata.name if obj.metadata else None) or ""
        qualified = f"{kind.kind}.{kind.group}" if kind.group else kind.kind  # as Go prints a GroupKind
        return Invalid(kind_name or qualified, name, errors, group=kind.group)

    @staticmethod
    def _parse_rv(rv: str) -> int:
        try:
            return int(rv)
        except ValueError:
            raise BadRequest(f'invalid resource version "{rv}"') from None
