"""Content negotiation as kube-apiserver does it: the `Accept` header's media ranges tried best
`q` first, then in the order given; the first one the server can answer decides."""

from __future__ import annotations

PROTOBUF = "application/vnd.kubernetes.protobuf"
_JSON_RANGES = frozenset({"application/json", "application/yaml", "*/*", "application/*"})


def media_ranges(accept: str) -> list[tuple[float, str, dict[str, str]]]:
    ranges: list[tuple[float, str, dict[str, str]]] = []
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if not media:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, sep, value = piece.partition("=")
            if sep:
                params[key.strip().lower()] = value.strip().strip('"')
        try:
            quality = float(params.pop("q", "1"))
        except ValueError:
            quality = 0.0
        ranges.append((quality, media, params))
    return ranges


def wants_table(accept: str | None) -> bool:
    """Whether an `Accept` header asks for a ``meta.k8s.io/v1`` Table in JSON.

    Media ranges are tried best ``q`` first, then in the order given, as upstream's negotiation
    does: the first one the server can answer decides. A Table in another group or version
    (kubectl's ``v1beta1`` fallback, which current servers no longer serve) is skipped, so the
    next range decides; a plain JSON, YAML, protobuf or wildcard range means "no Table".
    """
    if not accept:
        return False
    ranges = media_ranges(accept)
    ordered = sorted(range(len(ranges)), key=lambda i: (-ranges[i][0], i))
    for i in ordered:
        quality, media, params = ranges[i]
        if quality <= 0:
            continue
        as_kind = params.get("as")
        if as_kind is None:
            return False
        if (
            as_kind == "Table"
            and media == "application/json"
            and params.get("g") == "meta.k8s.io"
            and params.get("v") == "v1"
        ):
            return True
    return False


def wants_protobuf(accept: str | None) -> bool:
    """Whether an `Accept` header asks for protobuf before JSON (a Table range answers in JSON)."""
    if not accept:
        return False
    ranges = media_ranges(accept)
    for i in sorted(range(len(ranges)), key=lambda i: (-ranges[i][0], i)):
        quality, media, params = ranges[i]
        if quality <= 0:
            continue
        if media == PROTOBUF and "as" not in params:
            return True
        if media in _JSON_RANGES:
            return False
    return False
