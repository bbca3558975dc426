"""Structured trace records: what happened, when, to which pod and node, and which code said so."""

from kubesched.trace.records import JsonLinesSink, Record, Sink, Tracer

__all__ = ["JsonLinesSink", "Record", "Sink", "Tracer"]
