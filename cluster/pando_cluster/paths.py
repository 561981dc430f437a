"""Where the binaries and the cluster directory are."""
from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    """The source tree this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    env = os.environ.get("PANDO_BUILD_DIR")
    return Path(env) if env else repo_root() / "build"


def binary(name: str) -> Path:
    """A built binary: pando-osd and pando-osd-tool live in build/osd-target."""
    path = build_dir() / "osd-target" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run ci/build (or cluster/up) first")
    return path


def default_cluster_dir() -> Path:
    """$PANDO_CLUSTER_DIR, else ~/.pando-cluster (per user: no root needed)."""
    env = os.environ.get("PANDO_CLUSTER_DIR")
    return Path(env) if env else Path.home() / ".pando-cluster"
