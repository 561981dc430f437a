"""The cluster key (`pando-cluster up` makes one per cluster): 0600 from
the moment it exists, and never written over an existing file or through
a link someone planted where it goes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from pando_cluster import tool


def test_a_new_cluster_key_is_0600(tmp_path: Path) -> None:
    key = tmp_path / "cluster.key"
    tool.genkey(key)
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.read_text().strip()


def test_a_cluster_key_is_never_written_over_a_file_or_through_a_link(tmp_path: Path) -> None:
    key = tmp_path / "cluster.key"
    key.write_text("an admin's key\n")
    with pytest.raises(FileExistsError):
        tool.genkey(key)
    assert key.read_text() == "an admin's key\n"
    victim = tmp_path / "elsewhere"
    planted = tmp_path / "planted.key"
    os.symlink(victim, planted)
    with pytest.raises(FileExistsError):
        tool.genkey(planted)
    assert not victim.exists()
