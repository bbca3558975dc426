"""What the store writes: objects of served kinds whose metadata it may replace."""

from __future__ import annotations

from typing import Protocol

from lightkube.models import meta_v1

from kubesched.api.objects import Served


class Stored(Served, Protocol):
    """An object of a served kind as the store writes it: a model, whose `metadata` field may be
    set (`Served` only reads it)."""

    metadata: meta_v1.ObjectMeta | None
