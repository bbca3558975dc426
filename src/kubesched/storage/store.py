"""The in-memory API store: typed objects, one resourceVersion, watches, bindings, graceful deletion.

Every rule that a Kubernetes API server enforces and that the scheduler depends on lives here
once: optimistic concurrency, watch resume and expiry, the `pods/binding` checks, graceful pod
deletion. The HTTP facade and the in-process backend both sit on this class.

Objects handed in are copied; objects handed out are the stored ones and must not be mutated.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import random
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar, cast

import msgspec
from lightkube.models import meta_v1
from lightkube.resources import apiextensions_v1, core_v1

from kubesched.api.errors import FieldError
from kubesched.api.selectors import parse_field_selector, parse_label_selector
from kubesched.clock import Clock
from kubesched.cluster.codec import copy_object
from kubesched.cluster.custom import custom_resource, gvk
from kubesched.cluster.errors import (
    STALE_OBJECT,
    AlreadyExists,
    BadRequest,
    Gone,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    TooLargeResourceVersion,
    conflict,
)
from kubesched.cluster.kinds import KINDS, Kind, custom_kind
from kubesched.cluster.protocol import ADDED, BOOKMARK, DELETED, MODIFIED, Bookmark, ListResult, WatchEvent
from kubesched.storage.admission import AdmissionChain
from kubesched.storage.conversion import VIEWS, View, converter
from kubesched.storage.durable import Durable, key_of, unpack
from kubesched.storage.encoded import EncodedTable
from kubesched.storage.fields import managers
from kubesched.storage.journal import Journal, JournalError, Saved, kind_key, ordered, split_kind_key
from kubesched.storage.ownership import Ownership
from kubesched.storage.paging import decode_continue, encode_continue
from kubesched.storage.patch import MERGE, PatchError, apply_patch
from kubesched.storage.strategy import (
    DEFAULT_STRATEGY,
    INITIAL_NAMESPACES,
    STRATEGIES,
    CustomResourceDefinitionStrategy,
    CustomResourceStrategy,
    Strategy,
)
from kubesched.storage.subresources import Action, Subresource, lookup
from kubesched.storage.typecheck import type_error
from kubesched.storage.watch import MemoryWatch
from kubesched.trace import Tracer

R = TypeVar("R")
Key = tuple[str, str]

DEFAULT_WATCH_LATENCY = 0.005
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
DEFAULT_HISTORY = 10_000
ENCODED_KINDS = frozenset({core_v1.Event})  # kept encoded: many, seldom read
_NAME_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_ATTEMPTS = 8  # the API server's tries at a free generated name
_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID_V4 = (0x4000 << 64) | (0x8000 << 48)


FOREGROUND_FINALIZER = "foregroundDeletion"  # the garbage collector's, for the two policies it enacts
ORPHAN_FINALIZER = "orphan"
PROPAGATION_POLICIES = (None, "Background", "Foreground", "Orphan")


def _propagation_finalizers(finalizers: list[str] | None, policy: str | None) -> list[str] | None:
    """An object's finalizers once a delete with `policy` asks the garbage collector for its own
    (Foreground and Orphan exclude each other; Background asks for neither)."""
    if policy not in ("Foreground", "Orphan"):
        return finalizers or None
    wanted, other = (
        (FOREGROUND_FINALIZER, ORPHAN_FINALIZER) if policy == "Foreground" else (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
    )
    kept = [f for f in finalizers or () if f != other]
    if wanted not in kept:
        kept.append(wanted)
    return kept


_BUILT_IN = {key_of(kind): cls for cls, kind in KINDS.items() if kind.cls is cls}  # journal names of built-in kinds


class Change(NamedTuple):
    rv: int
    cls: type[Any]
    type: str
    obj: Any
    old: Any | None


def _from_plain(cls: type[R], data: Any, what: str) -> Any:
    """Plain data as an object of `cls`, or BadRequest saying `what` failed and why."""
    if (problem := type_error(data, cls)) is not None:
        raise BadRequest(f"{what}: {problem}")
    try:
        return msgspec.convert(data, cls)
    except msgspec.ValidationError as e:
        raise BadRequest(f"{what}: {e}") from None


def _check_apply_config(kind: Kind, name: str, config: Any) -> None:
    """What kube-apiserver refuses in an apply configuration before merging it."""
    if not isinstance(config, dict):
        raise BadRequest("error decoding YAML: the apply configuration must be an object")
    version = config.get("apiVersion")
    if version != kind.api_version:
        raise BadRequest(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {version or ''}, expected: {kind.api_version}"
        )
    if config.get("kind") != kind.kind:
        raise BadRequest(f"Incorrect kind specified in apply patch: {config.get('kind') or ''}, expected: {kind.kind}")
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    meta = meta or {}
    if meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    if meta.get("name") not in (None, "", name):
        raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")


@lru_cache(maxsize=1024)
def _matcher(kind: Kind, namespace: str | None, label_selector: str, field_selector: str) -> Callable[[Any], bool]:
    labels = parse_label_selector(label_selector) if label_selector else None
    fields = (
        parse_field_selector(field_selector, supported=kind.fields).compile(kind.fields) if field_selector else None
    )

    def matches(obj: Any) -> bool:
        meta = obj.metadata
        if namespace and meta.namespace != namespace:
            return False
        if labels is not None and not labels.matches(meta.labels or {}):
            return False
        return fields is None or fields(obj)

    return matches


class MemoryStore:
    """A cluster's objects in memory, with the semantics of a Kubernetes API server."""

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
        self.event_ttl = event_ttl
        self._event_expiry: list[tuple[float, Key, int]] = []  # a heap: (when, key, the version it expires at)
        self._next_expiry_sweep = 0.0
        self.watch_latency = watch_latency
        self.tracer = tracer or Tracer(clock.now)
        self._rv = first_resource_version
        self._kinds: dict[type[Any], Kind] = dict(KINDS)
        self._views: dict[type[Any], View] = dict(VIEWS)
        self._custom: dict[tuple[str, str, str], Kind] = {}  # served custom kinds, by group/version/kind
        self.kinds_generation = 0  # changes whenever the set of served kinds does
        self._schemas: dict[type[Any], dict[str, Any]] = {}  # storage class -> openAPIV3Schema
        self._ownership = Ownership(self._schemas)
        self._objects: dict[type[Any], MutableMapping[Key, Any]] = {
            cls: EncodedTable(cls) if cls in ENCODED_KINDS else {} for cls in KINDS if cls not in VIEWS
        }
        self._history: deque[Change] = deque()
        self._history_limit = history
        self._compacted = first_resource_version
        self._watches: dict[type[Any], list[MemoryWatch]] = {cls: [] for cls in self._objects}
        self._rng = random.Random(seed)
        self._restored_uids: set[str] = set()  # given, not drawn: a drawn one must not repeat them
        self._strategies: dict[type[Any], Strategy] = {
            **STRATEGIES,
            apiextensions_v1.CustomResourceDefinition: CustomResourceDefinitionStrategy(
                served=self._custom, serve=self._serve_crd, withdraw=self._withdraw_crd
            ),
        }
        self._stamp_cache: tuple[int, datetime] = (-1, datetime.fromtimestamp(0, UTC))
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
        crd = self._kinds[apiextensions_v1.CustomResourceDefinition]
        for row in ordered(saved.objects, key_of(crd)):
            kind = self.kind_named(*split_kind_key(row.kind))
            if kind is None:
                continue  # a custom kind no longer defined
            obj = unpack(kind.cls, row.data)
            self._objects[kind.cls][(row.namespace, row.name)] = obj
            self._strategy(kind).created(obj)
            if self.event_ttl is not None and kind.cls is core_v1.Event:
                heapq.heappush(
                    self._event_expiry, (self.clock.now() + self.event_ttl, (row.namespace, row.name), row.rv)
                )
        for entry in saved.changes[-self._history_limit :]:
            kind = self.kind_named(*split_kind_key(entry.kind))
            if kind is None:
                continue
            if entry.type == MODIFIED and entry.old is None:
                self._history.clear()  # the version it replaced is not kept: resume only after it
                continue
            old = unpack(kind.cls, entry.old) if entry.old is not None else None
            self._history.append(Change(entry.rv, kind.cls, entry.type, unpack(kind.cls, entry.data), old))
        self._rv = saved.rv
        self._compacted = self._history[0].rv - 1 if self._history else saved.rv

    def kind_named(self, api_version: str, kind: str) -> Kind | None:
        """The kind served as `apiVersion` and `kind` (a manifest's), built-in or custom; None if
        none is."""
        if (cls := _BUILT_IN.get(kind_key(api_version, kind))) is not None:
            return self._kinds[cls]
        group, _, version = api_version.rpartition("/")
        return self._custom.get((group, version, kind))

    # -- kinds -----------------------------------------------------------------------------

    def kind_of(self, cls: type[Any]) -> Kind:
        """The served kind of a resource class; a class of a served custom kind other than the
        store's own (a plugin package's typed class) becomes a view of its storage. TypeError
        for a kind not served."""
        found = self._kinds.get(cls)
        if found is not None:
            return found
        key = gvk(cls)
        served = self._custom.get(key) if key is not None else None
        if served is None:
            raise TypeError(f"kind {getattr(cls, '__name__', cls)!r} is not served")
        self._views[cls] = View(storage=served.cls, to_storage=converter(served.cls), from_storage=converter(cls))
        self._kinds[cls] = served
        return served

    def kinds(self) -> list[Kind]:
        """Every kind served now, built-in and custom (views excluded)."""
        return [k for cls, k in self._kinds.items() if k.cls is cls]

    def _serve_crd(self, crd: Any) -> None:
        """Serve the storage version of an established CustomResourceDefinition."""
        spec = crd.spec
        version = next((v for v in spec.versions if v.storage), spec.versions[0])
        names = spec.names
        namespaced = spec.scope == "Namespaced"
        cls = custom_resource(
            group=spec.group, version=version.name, kind=names.kind, plural=names.plural, namespaced=namespaced
        )
        subresources = (
            ("status",) if version.subresources is not None and version.subresources.status is not None else ()
        )
        kind = custom_kind(
            cls,
            short_names=tuple(names.shortNames or ()),
            categories=tuple(names.categories or ()),
            subresources=subresources,
            singular=names.singular or names.kind.lower(),
            columns=tuple(msgspec.to_builtins(c) for c in version.additionalPrinterColumns or ()),
        )
        self._custom[(spec.group, version.name, names.kind)] = kind
        self._kinds[cls] = kind
        self._objects.setdefault(cls, {})
        self._watches.setdefault(cls, [])
        self.kinds_generation += 1
        schema = version.schema.openAPIV3Schema if version.schema is not None else None
        self._schemas[cls] = msgspec.to_builtins(schema) if schema is not None else {}
        self._strategies[cls] = CustomResourceStrategy(self._schemas[cls])

    def _withdraw_crd(self, crd: Any) -> None:
        """Stop serving a deleted CustomResourceDefinition's kind: its objects are deleted (each
        watch sees them go) and its watches end."""
        spec = crd.spec
        for key in [k for k in self._custom if k[0] == spec.group and k[2] == spec.names.kind]:
            kind = self._custom.pop(key)
            table = self._objects[kind.cls]
            for k in sorted(table):
                self._remove(kind, k, table[k])
            for watch in list(self._watches.pop(kind.cls, [])):
                watch.stop()
            del self._objects[kind.cls]
            self._schemas.pop(kind.cls, None)
            self._strategies.pop(kind.cls, None)
            for cls in [c for c, k in self._kinds.items() if k is kind]:
                del self._kinds[cls]
                self._views.pop(cls, None)
            self.kinds_generation += 1

    def _strategy(self, kind: Kind) -> Strategy:
        return self._strategies.get(kind.cls, DEFAULT_STRATEGY)

    # -- reading ---------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, cls: type[R], name: str, *, namespace: str | None = None) -> R:
        kind = self.kind_of(cls)
        view = self._views.get(cls)
        obj: Any = self._objects[view.storage if view else cls].get(self._key(kind, namespace, name))
        if obj is None:
            raise NotFound(f'{kind.qualified} "{name}" not found', kind=kind.plural, name=name, group=kind.group)
        return cast(R, view.from_storage(obj) if view else obj)

    def list(
        self,
        cls: type[Any],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> ListResult:
        """Matching objects in key order. With `limit`, one page; `continue_token` from the previous
        page resumes after its last key (items are read as they are now, the page keeps the first
        page's resourceVersion). A `resource_version` the list must not be older than, newer than
        any the store has given out, is TooLargeResourceVersion."""
        if resource_version not in (None, "", "0") and (wanted := self._parse_rv(resource_version)) > self._rv:
            raise TooLargeResourceVersion(wanted, self._rv)
        kind = self.kind_of(cls)
        view = self._views.get(cls)
        matches = self._selection(kind, namespace, label_selector, field_selector)
        table = self._objects[view.storage if view else cls]
        rv = self._rv
        keys = sorted(table)
        if continue_token:
            rv, after = decode_continue(continue_token)
            keys = keys[bisect.bisect_right(keys, after) :]
        items: list[Any] = []
        for i, k in enumerate(keys):
            obj = view.from_storage(table[k]) if view else table[k]
            if not matches(obj):
                continue
            if limit and len(items) == limit:
                rest = sum(1 for j in keys[i:] if matches(view.from_storage(table[j]) if view else table[j]))
                return ListResult(items, str(rv), encode_continue(rv, keys[i - 1]), rest)
            items.append(obj)
        return ListResult(items, str(rv))

    # -- writing ---------------------------------------------------------------------------

    def create(self, obj: R, *, namespace: str | None = None, field_manager: str | None = None) -> R:
        """Create an object. With `field_manager` the write is recorded in its managedFields as
        that manager's Update, as every write through the API server is."""
        if view := self._views.get(type(obj)):
            created = self.create(view.to_storage(obj), namespace=namespace, field_manager=field_manager)
            return cast(R, view.from_storage(created))
        kind = self.kind_of(type(obj))
        strategy = self._strategy(kind)
        o: Any = strategy.copy_for_create(obj)
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
            name = self._generate_name(kind.cls, ns or "", meta.generateName)
        meta.name = name
        meta.namespace = ns
        meta.uid = self._new_uid()
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

    def _generate_name(self, cls: type[Any], namespace: str, prefix: str) -> str:
        """`prefix` and a random suffix; a suffix already taken is drawn again, up to
        `GENERATE_NAME_ATTEMPTS` draws in all (after which the create fails with AlreadyExists)."""
        objects = self._objects[cls]
        for _ in range(GENERATE_NAME_ATTEMPTS):
            name = prefix + "".join(self._rng.choice(_NAME_SUFFIX_CHARS) for _ in range(5))
            if (namespace, name) not in objects:
                break
        return name

    def restore(self, obj: R) -> R:
        """Store an object exactly as given — UID, timestamps and status included — as when loading
        a recorded cluster state. It is validated but not defaulted; it gets a new resourceVersion."""
        kind = self.kind_of(type(obj))
        o: Any = copy_object(obj)
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
            self._restored_uids.add(meta.uid)
        else:
            meta.uid = self._new_uid()
        meta.creationTimestamp = meta.creationTimestamp or self.stamp()
        self.refuse_invalid(kind, o, self._strategy(kind).validate(o))
        key = (meta.namespace or "", meta.name)
        table = self._objects[kind.cls]
        return cast(R, self._commit(kind, key, MODIFIED if key in table else ADDED, o, table.get(key)))

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
        if view := self._views.get(type(obj)):
            updated = self.update(view.to_storage(obj), subresource=subresource, field_manager=field_manager, via=via)
            return cast(R, view.from_storage(updated))
        kind = self.kind_of(type(obj))
        o: Any = obj
        meta = o.metadata
        if meta is None or not meta.name:
            raise self._invalid(
                kind, obj, [FieldError("metadata.name", None, "name is required", kind="Required value")]
            )
        key = self._key(kind, meta.namespace, meta.name)
        current = self.get(kind.cls, meta.name, namespace=meta.namespace)
        self.check_preconditions(kind, current, uid=meta.uid, rv=meta.resourceVersion)
        new: Any = copy_object(obj)
        cur_meta = current.metadata
        strategy = self._strategy(kind)
        if subresource == "status":
            new = msgspec.structs.replace(current, metadata=msgspec.structs.replace(cur_meta), status=new.status)
        elif subresource is not None:
            changed = strategy.subresource_update(current, new, subresource)
            if changed is None:
                raise NotFound(f"{kind.qualified} {subresource} subresource is not served", kind=kind.plural)
            new = changed
        else:
            new.metadata = msgspec.structs.replace(
                new.metadata,
                name=cur_meta.name,
                namespace=cur_meta.namespace,
                uid=cur_meta.uid,
                creationTimestamp=cur_meta.creationTimestamp,
                deletionTimestamp=cur_meta.deletionTimestamp,
                deletionGracePeriodSeconds=cur_meta.deletionGracePeriodSeconds,
                generation=cur_meta.generation,
                resourceVersion=cur_meta.resourceVersion,
            )
            strategy.default(new)
            if kind.has_status:
                new.status = current.status
            if strategy.tracks_generation and getattr(new, "spec", None) != getattr(current, "spec", None):
                new.metadata.generation = (cur_meta.generation or 0) + 1
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
        patch: Any,
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
        current: Any = self.get(cls, name, namespace=namespace)
        try:
            patched = apply_patch(kind.kind, msgspec.to_builtins(current), patch, patch_type)
        except PatchError as e:
            raise BadRequest(str(e)) from None
        new = _from_plain(cls, patched, "the patch could not be applied")
        meta = new.metadata
        if meta is None or meta.name != name or (kind.namespaced and meta.namespace != current.metadata.namespace):
            raise BadRequest("the patch may not change the object's name or namespace")
        return cast(R, self.update(new, subresource=subresource, field_manager=field_manager, via=via))

    def apply(
        self,
        cls: type[R],
        name: str,
        config: Any,
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
        if cls in self._views:
            raise BadRequest(f"server-side apply is not supported for {kind.qualified} through {kind.api_version}")
        _check_apply_config(kind, name, config)
        try:
            live: Any = self.get(cls, name, namespace=namespace)
        except NotFound:
            if subresource:
                raise
            live = None
        meta = config.setdefault("metadata", {})
        meta["name"] = name
        if kind.namespaced:
            meta["namespace"] = live.metadata.namespace if live is not None else namespace or "default"
        applied = self._ownership.apply(
            kind, live, config, manager=field_manager, force=force, subresource=subresource, now=self.stamp()
        )
        new: Any = _from_plain(cls, applied.obj, "the apply configuration could not be applied")
        new.metadata.managedFields = managers.encode(applied.managed) or []  # [] clears them
        if live is None:
            return cast(R, self.create(new, namespace=namespace)), True
        return cast(R, self.update(new, subresource=subresource)), False

    def _own(self, kind: Kind, current: Any | None, new: Any, field_manager: str | None, sub: str | None) -> None:
        """Set a write's managedFields: recorded for `field_manager`; else kept from the live
        object when the write leaves them out, and cleared when it sets `[]`."""
        if field_manager is not None:
            self._ownership.track(kind, current, new, manager=field_manager, subresource=sub, now=self.stamp())
            return
        meta = new.metadata
        if meta.managedFields is None and current is not None:
            meta.managedFields = current.metadata.managedFields
        elif managers.is_reset(meta.managedFields):
            meta.managedFields = None

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
        if view := self._views.get(cls):
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
        current: Any = self.get(cls, name, namespace=namespace)
        strategy = self._strategy(kind)
        if (refusal := strategy.refuse_delete(current)) is not None:
            raise refusal
        self.check_preconditions(kind, current, uid=uid, rv=resource_version)
        key = self._key(kind, namespace, name)
        meta = current.metadata
        stored = current
        finalizers = _propagation_finalizers(meta.finalizers, propagation_policy)
        if finalizers != (meta.finalizers or None):
            current = msgspec.structs.replace(current, metadata=msgspec.structs.replace(meta, finalizers=finalizers))
            meta = current.metadata
        started = strategy.begin_delete(current, self.stamp())
        if started is not None:
            return cast(R, self._commit(kind, key, MODIFIED, started, stored))
        grace = strategy.deletion_grace(current, grace_period_seconds)
        if grace > 0 or meta.finalizers:
            if meta.deletionTimestamp is not None and grace >= (meta.deletionGracePeriodSeconds or 0):
                if current is stored:
                    return cast(R, stored)
                return cast(R, self._commit(kind, key, MODIFIED, current, stored))  # the policy's finalizer only
            new = msgspec.structs.replace(
                current,
                metadata=msgspec.structs.replace(
                    meta, deletionTimestamp=self.stamp(offset=grace), deletionGracePeriodSeconds=grace
                ),
            )
            return cast(R, self._commit(kind, key, MODIFIED, new, stored))
        return cast(R, self._remove(kind, key, current))

    def subresources(self, kind: Kind) -> Mapping[str, Subresource]:
        """What `kind` serves beneath its objects, as its strategy says."""
        return self._strategy(kind).subresources(kind)

    def post(self, cls: type[Any], subresource: str, body: Any, *, namespace: str | None = None) -> Any:
        """Post `body` to a subresource that acts (`pods/binding`, `pods/eviction`)."""
        kind = self.kind_of(cls)
        action = lookup(self, kind, subresource)
        if not isinstance(action, Action):
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        return action.act(self, body, namespace)

    def write(self, kind: Kind, current: Any, new: R) -> R:
        """Store `new` in place of `current`: a subresource's change, its own checks made."""
        meta = current.metadata
        return self._commit(kind, (meta.namespace or "", meta.name), MODIFIED, new, current)

    # -- watching --------------------------------------------------------------------------

    def watch(
        self,
        cls: type[Any],
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
        view = self._views.get(cls)
        storage = view.storage if view else cls
        matches = self._selection(kind, namespace, label_selector, field_selector)
        watch = MemoryWatch(
            clock=self.clock,
            matcher=matches,
            latency=self.watch_latency,
            on_stop=self._watches[storage].remove,
            convert=view.from_storage if view else None,
        )
        if resource_version in (None, "", "0"):
            table = self._objects[storage]
            for k in sorted(table):
                watch.offer(ADDED, table[k], None)
        else:
            start = self._parse_rv(resource_version)
            if start < self._compacted:
                raise Gone(f"too old resource version: {start} ({self._compacted})")
            if start > self._rv:
                raise TooLargeResourceVersion(start, self._rv)
            for change in self._history:
                if change.rv > start and change.cls is storage:
                    watch.offer(change.type, change.obj, change.old)
        self._watches[storage].append(watch)
        return watch

    def drop_watches(self, *kinds: type[Any]) -> None:
        """End every open watch of `kinds` (of every kind without any), as an API server going
        away ends them; their clients resume from the last version they saw."""
        for cls in kinds or tuple(self._watches):
            for watch in list(self._watches.get(cls, ())):
                watch.stop()

    def bookmark(self, watch: MemoryWatch, cls: type[Any], *, initial_events_end: bool = False) -> None:
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

    def _commit(self, kind: Kind, key: Key, type_: str, obj: R, old: Any | None) -> R:
        """Store a new version. `obj` and its metadata must be fresh objects, owned by the store."""
        if self._dry_run:
            return obj
        o: Any = obj
        o.metadata.resourceVersion = str(self._rv + 1)
        if self._durable is not None:
            self._durable.write(kind, key, self._rv + 1, type_, obj)
        self._rv += 1
        self._objects[kind.cls][key] = obj
        self._record(kind, type_, obj, old)
        if old is None:
            self._strategy(kind).created(obj)
        return obj

    def _remove(self, kind: Kind, key: Key, obj: Any) -> Any:
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

    def _record(self, kind: Kind, type_: str, obj: Any, old: Any | None) -> None:
        if len(self._history) >= self._history_limit:
            self._compacted = self._history.popleft().rv
        self._history.append(Change(self._rv, kind.cls, type_, obj, old))
        for watch in self._watches[kind.cls]:
            watch.offer(type_, obj, old)
        if self.tracer.enabled:
            self._strategy(kind).trace(self.tracer, type_, obj, old, rv=self._rv)
        if self.event_ttl is not None:
            now = self.clock.now()
            if kind.cls is core_v1.Event and type_ != DELETED:
                key = (obj.metadata.namespace or "", obj.metadata.name)
                heapq.heappush(self._event_expiry, (now + self.event_ttl, key, self._rv))
            if now >= self._next_expiry_sweep:
                self.expire_events()

    def expire_events(self) -> int:
        """Delete the Events not written for `event_ttl` seconds (as etcd's leases expire them
        under kube-apiserver); how many. Writes call it at most once a second of clock time."""
        if self.event_ttl is None:
            return 0
        now = self.clock.now()
        self._next_expiry_sweep = now + 1.0
        kind, table, expired = self._kinds[core_v1.Event], self._objects[core_v1.Event], 0
        while self._event_expiry and self._event_expiry[0][0] <= now:
            _, key, rv = heapq.heappop(self._event_expiry)
            current = table.get(key)
            if current is not None and int(current.metadata.resourceVersion) == rv:  # not written since
                self._remove(kind, key, current)
                expired += 1
        return expired

    def _selection(
        self, kind: Kind, namespace: str | None, label_selector: str, field_selector: str
    ) -> Callable[[Any], bool]:
        try:
            return _matcher(kind, namespace, label_selector, field_selector)
        except FieldError as e:
            raise BadRequest(str(e)) from None

    def check_preconditions(self, kind: Kind, current: Any, *, uid: str | None, rv: str | None) -> None:
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
        cls, kind: Kind, obj: Any, errors: Sequence[FieldError], *, kind_name: str | None = None
    ) -> None:
        if errors:
            raise cls._invalid(kind, obj, errors, kind_name=kind_name)

    @staticmethod
    def _invalid(kind: Kind, obj: Any, errors: Sequence[FieldError], *, kind_name: str | None = None) -> Invalid:
        name = (obj.metadata.name if obj.metadata else None) or ""
        qualified = f"{kind.kind}.{kind.group}" if kind.group else kind.kind  # as Go prints a GroupKind
        return Invalid(kind_name or qualified, name, errors, group=kind.group)

    @staticmethod
    def _parse_rv(rv: str) -> int:
        try:
            return int(rv)
        except ValueError:
            raise BadRequest(f'invalid resource version "{rv}"') from None

    def _new_uid(self) -> str:
        """A version-4 UUID drawn from the store's seeded generator (reproducible runs), never one an
        object restored into the store has: a snapshot saved from a store of the same seed holds
        the very UIDs this store would draw first."""
        while True:
            h = f"{(self._rng.getrandbits(128) & _UUID_CLEAR) | _UUID_V4:032x}"
            uid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
            if uid not in self._restored_uids:
                return uid

    def stamp(self, *, offset: int = 0) -> datetime:
        second = int(self.clock.now()) + offset
        if offset == 0 and self._stamp_cache[0] == second:
            return self._stamp_cache[1]
        stamp = datetime.fromtimestamp(second, UTC)
        if offset == 0:
            self._stamp_cache = (second, stamp)
        return stamp
