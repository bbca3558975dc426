"""The UI's routes on an aiohttp application: the pages (`/ui/`), their JSON (`/ui/api/...`), the
live stream (`/ui/api/stream`, server-sent events) and the actions, over a running scheduler
(`mount`); the same pages over a recorded run (`mount_replay`) and a comparison (`mount_comparison`);
a sweep's points, each opened into a recorded run, come with `kubesched.ui.sweep.mount_sweep`."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import math
from collections.abc import Awaitable, Callable, Mapping
from importlib import resources
from pathlib import Path

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from lightkube.resources import core_v1

from kubesched.cluster import ApiError
from kubesched.ui import documents
from kubesched.ui.actions import ActionError, Actions
from kubesched.ui.documents import BadParameter, PodFilter
from kubesched.ui.mirror import NODE, POD, QUEUE, Mirror
from kubesched.ui.replay import Recording, Replayed

STATIC = Path(str(resources.files("kubesched.ui") / "static"))
STREAM_INTERVAL = 0.1  # seconds between the stream's looks at what changed: changes are sent together
HEARTBEAT = 15.0  # seconds of quiet after which the stream says it is alive
EVENTS_WITHIN = 2.0  # seconds a pod page waits for the pod's Events
MIRROR = web.AppKey("kubesched.ui.mirror", Mirror)
ACTIONS = web.AppKey("kubesched.ui.actions", Actions)
REPLAYED = web.AppKey("kubesched.ui.replayed", Replayed)
COMPARISON = web.AppKey("kubesched.ui.comparison", dict)


def _pages(app: web.Application) -> None:
    app.router.add_get("/ui", _to_index)
    app.router.add_get("/ui/", _index)
    app.router.add_static("/ui/static/", STATIC, append_version=False)


def mount(app: web.Application, mirror: Mirror, *, actions: Actions | None = None, token: str | None = None) -> None:
    """Serve on `app`, under `/ui/`, the UI of the scheduler `mirror` follows (made before the
    scheduler starts, so that it sees every pod and node); with `actions`, the page may also
    change the cluster through them (without, those requests are 403); with `token` (the API
    server's), only to whoever shows it (`guard`)."""
    if token is not None:
        app.middlewares.append(guard(token))
    app[MIRROR] = mirror
    if actions is not None:
        app[ACTIONS] = actions
    _pages(app)
    app.router.add_post("/ui/api/pods", _create_pod)
    app.router.add_delete("/ui/api/pods/{namespace}/{name}", _delete_pod)
    app.router.add_post("/ui/api/nodes", _add_nodes)
    app.router.add_post("/ui/api/nodes/{name}/cordon", _cordon)
    app.router.add_post("/ui/api/nodes/{name}/uncordon", _cordon)
    app.router.add_get("/ui/api/cluster", _cluster)
    app.router.add_get("/ui/api/pods/{namespace}/{name}", _pod)
    app.router.add_get("/ui/api/queue", _queue)
    app.router.add_get("/ui/api/scheduler", _scheduler)
    app.router.add_get("/ui/api/stream", _stream)


TOKEN_COOKIE = "kubesched-ui-token"


def guard(token: str) -> Middleware:
    """A middleware keeping `/ui/` to whoever has the API server's token: as a bearer token, or in
    the cookie that opening `/ui/?token=TOKEN` once sets (the address is then shown without it).
    Anything else under `/ui` is 401; the scheduler's other endpoints are left as they are."""

    def shown(request: web.Request) -> bool:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        given = given or request.cookies.get(TOKEN_COOKIE, "")
        return bool(given) and hmac.compare_digest(given.encode(), token.encode())

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != "/ui" and not request.path.startswith("/ui/"):
            return await handler(request)
        offered = request.query.get("token")
        if offered is not None and hmac.compare_digest(offered.encode(), token.encode()):
            response = web.HTTPFound(
                request.rel_url.with_query({k: v for k, v in request.query.items() if k != "token"})
            )
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict", path="/ui")
            raise response
        if not shown(request):
            return _json({"message": "the UI needs the cluster's token: open /ui/?token=TOKEN once"}, status=401)
        return await handler(request)

    return check


def _mirror(request: web.Request) -> Mirror:
    mirror = request.app[MIRROR]
    mirror.follow_trace()  # timelines are kept from the first time the UI is used
    return mirror


def _json(document: object, status: int = 200) -> web.Response:
    return web.Response(body=msgspec.json.encode(document), status=status, content_type="application/json")


def _bad(message: str) -> web.Response:
    return _json({"message": message}, status=400)


async def _to_index(request: web.Request) -> web.Response:
    raise web.HTTPMovedPermanently("/ui/")


async def _index(request: web.Request) -> web.FileResponse:
    if MIRROR in request.app:
        _mirror(request)
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def _cluster(request: web.Request) -> web.Response:
    try:
        where = PodFilter.from_query(request.query)
    except BadParameter as e:
        return _bad(str(e))
    return _json(documents.cluster_document(_mirror(request), where))


async def _pod(request: web.Request) -> web.Response:
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    key = f"{namespace}/{name}"
    mirror = _mirror(request)
    document = documents.pod_document(mirror, key)
    if document is None:
        return _json({"message": f"pod {key} is not known to this scheduler"}, status=404)
    try:  # its Events, as the API has them (the scheduler's client may not be allowed to list them)
        async with asyncio.timeout(EVENTS_WITHIN):
            listed = await mirror.scheduler.cluster.list(
                core_v1.Event, namespace=namespace, field_selector=f"involvedObject.name={name}"
            )
        document["events"] = documents.events_of(listed.items)
    except (ApiError, TimeoutError) as e:
        document["events"] = None
        document["eventsUnavailable"] = str(e) or "the API did not answer in time"
    return _json(document)


async def _queue(request: web.Request) -> web.Response:
    return _json(documents.queue_page(_mirror(request)))


async def _scheduler(request: web.Request) -> web.Response:
    document = documents.scheduler_document(_mirror(request))
    document["actions"] = ACTIONS in request.app
    return _json(document)


# -- actions (cluster up --ui-actions) ----------------------------------------------------------------

ActionHandler = Callable[[Actions, web.Request, Mapping[str, object]], Awaitable[web.Response]]


def _action(handler: ActionHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An action's request: refused unless actions are on (403); a body, when it has one, must be a
    JSON object sent as JSON (415 otherwise: another site's form cannot send one); the API's own
    refusals passed on with their status."""

    async def handle(request: web.Request) -> web.Response:
        actions = request.app.get(ACTIONS)
        if actions is None:
            return _json(
                {"message": "actions are off: the UI may change the cluster only with cluster up --ui-actions"},
                status=403,
            )
        body: Mapping[str, object] = {}
        if request.method == "POST" and request.can_read_body:
            if request.content_type != "application/json":
                return _json(
                    {"message": f"expected a JSON body (application/json), got {request.content_type}"}, status=415
                )
            try:
                decoded = msgspec.json.decode(await request.read())
            except msgspec.DecodeError as e:
                return _bad(f"the body is not JSON: {e}")
            if not isinstance(decoded, dict):
                return _bad("the body is not a JSON object")
            body = decoded
        try:
            return await handler(actions, request, body)
        except ActionError as e:
            return _bad(str(e))
        except ApiError as e:
            return _json({"message": e.message, "reason": e.reason}, status=e.code)

    return handle


@_action
async def _create_pod(actions: Actions, request: web.Request, body: Mapping[str, object]) -> web.Response:
    pod = await actions.create_pod(body)
    return _json(documents.pod_brief(pod), status=201)


@_action
async def _delete_pod(actions: Actions, request: web.Request, body: object) -> web.Response:
    await actions.delete_pod(request.match_info["namespace"], request.match_info["name"])
    return _json({"deleted": f"{request.match_info['namespace']}/{request.match_info['name']}"})


@_action
async def _cordon(actions: Actions, request: web.Request, body: object) -> web.Response:
    name = request.match_info["name"]
    node = await actions.cordon(name, cordoned=request.path.endswith("/cordon"))
    return _json({"name": name, "cordoned": bool(node.spec is not None and node.spec.unschedulable)})


@_action
async def _add_nodes(actions: Actions, request: web.Request, body: Mapping[str, object]) -> web.Response:
    return _json({"added": await actions.add_nodes(body, set(request.app[MIRROR].nodes))}, status=201)


async def _stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: `changes` (the summaries of the pods and nodes that changed since the
    version the client has, and whether the queue did), or `reset` when the client is too far
    behind and must fetch the cluster again."""
    mirror = _mirror(request)
    text = request.query.get("since", "")
    try:
        since = int(text) if text else mirror.version
    except ValueError:
        return _bad(f"since: expected a version (an integer), got {text!r}")
    if since < 0:
        return _bad(f"since: expected a version of 0 or more, got {since}")
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):  # the page went away
        await _follow(mirror, since, response)
    return response


async def _follow(mirror: Mirror, since: int, response: web.StreamResponse) -> None:
    quiet = 0.0
    while True:
        changes = mirror.changes_since(since)
        if changes is None:
            since = mirror.version
            await response.write(_event("reset", {"version": since}))
            quiet = 0.0
        elif changes:
            pods = dict.fromkeys(c.key for c in changes if c.what == POD)
            nodes = dict.fromkeys(c.key for c in changes if c.what == NODE)
            document = documents.changed_documents(mirror, pods, nodes)
            document["queue"] = any(c.what == QUEUE for c in changes)
            since = changes[-1].version
            document["version"] = since
            await response.write(_event("changes", document))
            quiet = 0.0
        elif quiet >= HEARTBEAT:
            await response.write(b": alive\n\n")
            quiet = 0.0
        await asyncio.sleep(STREAM_INTERVAL)
        quiet += STREAM_INTERVAL


def _event(name: str, data: object) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (name.encode(), msgspec.json.encode(data))


# -- a comparison -----------------------------------------------------------------------------------


def mount_comparison(app: web.Application, report: dict[str, object]) -> None:
    """Serve a `kubesched compare` report to the compare page (`/ui/api/compare`); the pages
    themselves come with `mount` or `mount_replay`, or alone with `serve_pages`."""
    app[COMPARISON] = report
    app.router.add_get("/ui/api/compare", _comparison)


def serve_pages(app: web.Application) -> None:
    """The pages alone (for a comparison with nothing live or recorded beside it)."""
    _pages(app)


async def _comparison(request: web.Request) -> web.Response:
    return _json(request.app[COMPARISON])


# -- a recorded run ---------------------------------------------------------------------------------


def mount_replay(app: web.Application, recording: Recording) -> None:
    """Serve on `app`, under `/ui/`, the same pages over a recorded run: every document takes
    `?at=SECONDS` (the moment, in the recording's clock; default its end), and `/ui/api/replay`
    says the span and the moments worth stopping at. Nothing is live: there is no stream."""
    replayed(app).recording = recording


def replayed(app: web.Application) -> Replayed:
    """What the replay's routes on `app` show (the pages and the routes mounted the first time):
    its `recording` may be set while the server runs, to replay another run; while it is None,
    the replay's documents are 404."""
    if REPLAYED not in app:
        app[REPLAYED] = Replayed()
        _pages(app)
        app.router.add_get("/ui/api/replay", _replay)
        app.router.add_get("/ui/api/cluster", _replay_cluster)
        app.router.add_get("/ui/api/pods/{namespace}/{name}", _replay_pod)
        app.router.add_get("/ui/api/queue", _replay_queue)
        app.router.add_get("/ui/api/scheduler", _replay_scheduler)
    return app[REPLAYED]


def _nothing_replayed() -> web.Response:
    return _json({"message": "nothing is replayed yet: open one of the sweep's points (#/sweep)"}, status=404)


def _at(recording: Recording, request: web.Request) -> float:
    """`?at=`: the moment asked for (default: the recording's end); BadParameter when it is not a
    number."""
    text = request.query.get("at", "")
    if not text:
        return recording.end
    try:
        at = float(text)
    except ValueError:
        at = math.nan
    if not math.isfinite(at):
        raise BadParameter(f"at: expected seconds on the recording's clock, got {text!r}")
    return at


MomentHandler = Callable[[Recording, float, web.Request], web.Response]


def _at_moment(handler: MomentHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A replayed document's request: the recording and the moment asked for given to `handler`;
    a query that does not parse (`at`, or the page's filters) is 400; nothing replayed yet, 404."""

    async def handle(request: web.Request) -> web.Response:
        recording = request.app[REPLAYED].recording
        if recording is None:
            return _nothing_replayed()
        try:
            return handler(recording, _at(recording, request), request)
        except BadParameter as e:
            return _bad(str(e))

    return handle


async def _replay(request: web.Request) -> web.Response:
    recording = request.app[REPLAYED].recording
    if recording is None:
        return _nothing_replayed()
    return _json(recording.document())


@_at_moment
def _replay_cluster(recording: Recording, at: float, request: web.Request) -> web.Response:
    return _json(recording.cluster(at, PodFilter.from_query(request.query)))


@_at_moment
def _replay_pod(recording: Recording, at: float, request: web.Request) -> web.Response:
    key = f"{request.match_info['namespace']}/{request.match_info['name']}"
    document = recording.pod(key, at)
    if document is None:
        return _json({"message": f"pod {key} does not exist at this moment of the recording"}, status=404)
    return _json(document)


@_at_moment
def _replay_queue(recording: Recording, at: float, request: web.Request) -> web.Response:
    return _json(recording.queue(at))


async def _replay_scheduler(request: web.Request) -> web.Response:
    return _json({"profiles": [], "cache": {}, "pending": {}, "recorded": True})
