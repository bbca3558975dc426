"""Structured trace records: what happened, when, to which pod and node, and which code said so."""

from kubesched.trace.records import JsonLinesSink, ListSink, Record, Sink, Tracer
from kubesched.trace.upstream import SITES, UpstreamSite, citations, cite, extension_point

__all__ = [
    "SITES",
    "JsonLinesSink",
    "ListSink",
    "Record",
    "Sink",
    "Tracer",
    "UpstreamSite",
    "citations",
    "cite",
    "extension_point",
]
