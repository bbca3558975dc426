"""The plugin API is pinned: its names and signatures, tier by tier, are those docs/plugin-api.txt
holds, the top tier stays small, and out-of-tree code reaches everything through the tiers."""

from __future__ import annotations

import difflib
import importlib

import pytest

import kubesched.plugin
from tools.plugin_surface import SNAPSHOT, TIERS, surface


def test_the_surface_is_the_one_released():
    live, released = surface(), SNAPSHOT.read_text()
    if live != released:
        diff = "\n".join(
            difflib.unified_diff(released.splitlines(), live.splitlines(), "released", "live", lineterm="")
        )
        pytest.fail(
            "the plugin API changed; if it is meant to, bump PLUGIN_API as docs/plugins.md says and run "
            f"`python tools/plugin_surface.py --write`:\n{diff}"
        )


def test_the_top_tier_holds_at_most_45_names_and_its_version():
    assert len(kubesched.plugin.__all__) <= 45
    assert kubesched.plugin.PLUGIN_API == "1.2"


@pytest.mark.parametrize("tier", TIERS)
def test_every_name_a_tier_exports_is_there_and_in_one_tier_only(tier):
    module = importlib.import_module(tier)
    assert all(hasattr(module, name) for name in module.__all__)
    others = {n for t in TIERS if t != tier for n in importlib.import_module(t).__all__}
    assert set(module.__all__) & others == set()


def test_a_removed_name_or_a_changed_signature_shows_in_the_surface(monkeypatch):
    monkeypatch.setattr(kubesched.plugin, "__all__", [n for n in kubesched.plugin.__all__ if n != "Status"])
    assert "class Status(" not in surface()
    monkeypatch.undo()

    def decode_args(raw, args_type, *, strict=True):  # one keyword more than the released one
        return None

    monkeypatch.setattr(kubesched.plugin, "decode_args", decode_args)
    assert surface() != SNAPSHOT.read_text()
