"""The kubeconfig `cluster up` writes: owner-only from the first byte, atomic, never through a link."""

from __future__ import annotations

import os
import stat

import pytest
import yaml

from kubesched.apiserver.kubeconfig import write_kubeconfig


@pytest.mark.parametrize("before", ["missing", "world-readable", "symlink"])
def test_the_kubeconfig_is_replaced_owner_only_and_a_link_is_not_followed(tmp_path, before):
    path, target = tmp_path / "kubeconfig", tmp_path / "elsewhere"
    target.write_text("someone else's file\n")
    if before == "world-readable":
        path.write_text("old\n")
        path.chmod(0o644)
    elif before == "symlink":
        path.symlink_to(target)
    write_kubeconfig(path, "https://127.0.0.1:6443", token="s3cret")
    assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert yaml.safe_load(path.read_text())["users"][0]["user"] == {"token": "s3cret"}
    assert target.read_text() == "someone else's file\n"  # the link's target is untouched
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "kubeconfig"]  # no temporary file left
