"""The protobuf codec reads what kube-apiserver writes and writes what it reads: upstream's own
serialization fixtures byte for byte, and every kind kubesched serves both ways."""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lightkube.resources.events_v1 import Event as EventsEvent

from builders import make_node, make_pod, model_class
from kubesched.storage.protobuf import envelope
from kubesched.storage.protobuf.codec import ProtobufError, decode, encode
from kubesched.storage.protobuf.durations import format_duration, parse_duration

UPSTREAM = Path(__file__).parent / "upstream"
FIXTURES = sorted(p.stem for p in UPSTREAM.glob("*.pb"))


@pytest.mark.parametrize("name", FIXTURES)
def test_upstreams_bytes_read_as_upstreams_json_and_are_written_back_the_same(name):
    data = (UPSTREAM / f"{name}.pb").read_bytes()
    expected = json.loads((UPSTREAM / f"{name}.json").read_text())
    assert envelope.decode_object(data) == expected
    assert envelope.encode_object(expected) == data


@pytest.mark.parametrize("name", [n for n in FIXTURES if n != "policy.v1beta1.PodDisruptionBudget"])  # no model
def test_a_model_is_written_as_its_json_shape_is(name):
    data = json.loads((UPSTREAM / f"{name}.json").read_text())
    obj = msgspec.convert(data, model_class(data["apiVersion"], data["kind"]))
    assert envelope.encode_object(obj) == envelope.encode_object(msgspec.to_builtins(obj))


def _served_objects():
    pod = make_pod("web").req(cpu="500m", memory="1Gi").labels(app="web").toleration(key="gpu", operator="Exists")
    pod = pod.pod_affinity(anti=True, app="web").node_affinity_in("zone", ["a", "b"]).obj
    pod.spec.automountServiceAccountToken = False  # a pointer: false is kept
    node = make_node("n1").labels(zone="a").taint("gpu").capacity(cpu="4", memory="16Gi", pods="110").obj
    return {"Pod": pod, "Node": node}


@pytest.mark.parametrize("kind", ["Pod", "Node"])
def test_an_object_of_kubesched_round_trips(kind):
    obj = _served_objects()[kind]
    data = msgspec.to_builtins(obj)
    data["metadata"]["creationTimestamp"] = "2026-12-02T05:41:48Z"
    data["metadata"]["resourceVersion"] = "42"
    assert envelope.decode_object(envelope.encode_object(data)) == data


def test_every_served_kind_has_its_message_and_round_trips_its_metadata():
    from kubesched.cluster.kinds import KINDS

    for kind in KINDS.values():
        data = {
            "apiVersion": kind.api_version,
            "kind": kind.kind,
            "metadata": {"name": "x", "labels": {"a": "b"}, "creationTimestamp": "2026-12-02T05:41:48Z"},
        }
        if kind.namespaced:
            data["metadata"]["namespace"] = "default"
        assert envelope.decode_object(envelope.encode_object(data)) == data, kind.kind


POD = "k8s.io.api.core.v1.Pod"


@pytest.mark.parametrize(
    ("spec", "read"),
    [
        ({"hostNetwork": False}, {}),  # a value with omitempty: Go's zero reads as absent
        ({"automountServiceAccountToken": False}, {"automountServiceAccountToken": False}),  # a pointer: kept
        ({"priority": 0}, {"priority": 0}),
        ({"nodeName": ""}, {}),
        ({"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}, None),
        ({"overhead": {"cpu": "250m"}}, None),
        ({"activeDeadlineSeconds": -5}, None),  # a negative varint
    ],
)
def test_zero_values_read_as_go_writes_them_in_json(spec, read):
    got = decode(POD, encode(POD, {"spec": spec}))
    assert got == {"spec": spec if read is None else read}


EVENT = "k8s.io.api.events.v1.Event"


@pytest.mark.parametrize(
    ("message", "field", "written", "read"),
    [
        (POD, "creationTimestamp", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"),
        (POD, "creationTimestamp", "2024-01-02T03:04:05+02:00", "2024-01-02T01:04:05Z"),
        (POD, "creationTimestamp", "2024-01-02T03:04:05-07:30", "2024-01-02T10:34:05Z"),
        (POD, "creationTimestamp", "1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),  # before the epoch
        (POD, "creationTimestamp", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),  # the epoch is not Go's zero time
        (POD, "creationTimestamp", "2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59Z"),  # a Time keeps seconds
        (POD, "creationTimestamp", "2024-01-02 03:04:05", "2024-01-02T03:04:05Z"),  # not RFC 3339: read as ISO
        (EVENT, "eventTime", "2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04:05.123456Z"),
        (EVENT, "eventTime", "2024-01-02T03:04:05.5+01:00", "2024-01-02T02:04:05.500000Z"),
    ],
)
def test_times_are_written_as_the_instant_they_name(message, field, written, read):
    data = {"metadata": {"creationTimestamp": written}} if field == "creationTimestamp" else {field: written}
    got = decode(message, encode(message, data))
    assert (got["metadata"] if field == "creationTimestamp" else got)[field] == read


@pytest.mark.parametrize(
    ("timestamp", "read"),
    [
        (b"", {}),  # an empty Timestamp: Go's zero time, null in JSON (metav1.Time's Unmarshal)
        (b"\x08\x00\x10\x00", {"creationTimestamp": "1970-01-01T00:00:00Z"}),  # seconds 0 written: the epoch
    ],
)
def test_only_an_empty_timestamp_is_an_unset_time(timestamp, read):
    meta = b"\x42" + bytes([len(timestamp)]) + timestamp  # ObjectMeta.creationTimestamp is field 8
    assert decode(POD, b"\x0a" + bytes([len(meta)]) + meta) == {"metadata": read}


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative number as its 64-bit two's complement, as Go writes it
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


@pytest.mark.parametrize(
    ("seconds", "nanos", "time", "micro_time"),
    [
        (1704164645, 123456789, "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456Z"),
        (-1, 0, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.000000Z"),
        (1704164645, -1000, "2024-01-02T03:04:04Z", "2024-01-02T03:04:04.999999Z"),  # carried, as time.Unix does
        (253402300800, 0, "10000-01-01T00:00:00Z", "10000-01-01T00:00:00.000000Z"),  # a fifth digit of year
    ],
)
def test_timestamps_read_as_go_formats_them(seconds, nanos, time, micro_time):
    timestamp = b"\x08" + _varint(seconds) + b"\x10" + _varint(nanos)
    meta = b"\x42" + bytes([len(timestamp)]) + timestamp  # ObjectMeta.creationTimestamp is field 8
    assert decode(POD, b"\x0a" + bytes([len(meta)]) + meta) == {"metadata": {"creationTimestamp": time}}
    event_time = b"\x12" + bytes([len(timestamp)]) + timestamp  # events.v1.Event.eventTime is field 2
    assert decode(EVENT, event_time)["eventTime"] == micro_time


@pytest.mark.parametrize(
    "labels",
    [
        {"b": "1", "a": "2", "c": "3"},  # out of order
        {f"k{i:02}": str(i) for i in reversed(range(40))},  # more than a few, out of order
        {"é": "x", "e": "y", "z": "w"},  # not ASCII: ordered by code point, as UTF-8 bytes order
    ],
)
def test_map_entries_are_written_in_key_order_whatever_order_the_dict_holds(labels):
    ordered = dict(sorted(labels.items()))
    assert list(labels) != list(ordered)
    written = encode(POD, {"metadata": {"labels": labels}})
    assert written == encode(POD, {"metadata": {"labels": ordered}})
    assert list(decode(POD, written)["metadata"]["labels"].items()) == list(ordered.items())


def test_many_distinct_map_keys_read_back_each_as_written():
    labels = {f"app.kubernetes.io/part-{i}": f"v{i}" for i in range(5000)} | {"ключ": "значение"}
    for _ in range(2):  # the second time the short keys come from the reader's memory of them
        assert decode(POD, encode(POD, {"metadata": {"labels": labels}}))["metadata"]["labels"] == labels


def test_objects_of_different_kinds_read_one_after_another_keep_their_kinds():
    pod, node = make_pod("p").obj, make_node("n").obj
    for obj in (pod, node, pod, node):
        read = envelope.decode_object(envelope.encode_object(obj))
        assert (read["apiVersion"], read["kind"], read["metadata"]["name"]) == (
            obj.apiVersion,
            obj.kind,
            obj.metadata.name,
        )


@given(
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)),
    st.integers(min_value=-14 * 60, max_value=14 * 60),
)
def test_any_time_and_offset_round_trips_to_its_utc_instant(moment, offset_minutes):
    written = moment.replace(tzinfo=timezone(timedelta(minutes=offset_minutes)))
    expected = written.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    for form in (written.isoformat(), written, written.astimezone(UTC)):  # text; a model's datetime, UTC or not
        assert decode(EVENT, encode(EVENT, EventsEvent(eventTime=form)))["eventTime"] == expected
        assert decode(EVENT, encode(EVENT, {"eventTime": form}))["eventTime"] == expected


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"spec": {"priority": "high"}}, "Pod: invalid literal for int"),
        ({"spec": "nope"}, "expected an object, got str"),
    ],
)
def test_data_that_is_not_the_message_is_a_clear_error(data, error):
    with pytest.raises(ProtobufError, match=error):
        encode(POD, data)


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("0s", 0),
        ("1h0m0s", 3_600_000_000_000),
        ("1m30s", 90_000_000_000),
        ("1.5s", 1_500_000_000),
        ("500ms", 500_000_000),
        ("1.5ms", 1_500_000),
        ("2µs", 2_000),
        ("7ns", 7),
        ("-2m3s", -123_000_000_000),
    ],
)
def test_durations_read_and_write_as_go_does(text, nanos):
    assert format_duration(nanos) == text
    assert parse_duration(text) == nanos


def test_durations_go_refuses_are_refused():
    for bad in ("", "5", "1x", "h"):
        with pytest.raises(ValueError, match="invalid duration"):
            parse_duration(bad)


def test_a_watch_frame_carries_the_event_type_and_the_wrapped_object():
    wrapped = envelope.encode_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    frame = envelope.watch_frame("ADDED", wrapped)
    (length,) = struct.unpack(">I", frame[:4])
    assert length == len(frame) - 4
    event_type, inner = envelope.read_watch_frame(frame[4:])
    assert event_type == "ADDED" and envelope.decode_object(inner)["metadata"] == {"name": "a"}


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b'{"kind":"Pod"}', "does not start with the protobuf prefix"),
        (envelope.MAGIC + b"\x0a\x05\x0a\x02v1", "message ends inside a field"),
    ],
)
def test_bytes_that_are_not_an_object_are_a_clear_error(data, error):
    with pytest.raises(ProtobufError, match=error):
        envelope.decode_object(data)


@given(st.binary(max_size=200), st.sampled_from([b"", b"\x0a\x09\x0a\x02v1\x12\x03Pod\x12"]))
def test_any_bytes_after_the_prefix_read_as_an_object_or_a_clear_error(data, start):
    try:
        read = envelope.decode_object(envelope.MAGIC + start + data)
    except (ProtobufError, KeyError):
        return
    assert isinstance(read, dict) and read["kind"]


def test_a_kind_the_schema_lacks_is_named():
    with pytest.raises(KeyError, match=r"example\.com/v1, Kind=Widget"):
        envelope.decode_object(envelope.wrap("example.com/v1", "Widget", b""))
