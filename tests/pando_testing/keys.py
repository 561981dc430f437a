"""Cluster key files (format in osd-target/README.md)."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ClusterKey:
    path: Path
    key_id: int
    secret: bytes


def write_cluster_key(path: Path, key_id: int = 1, secret: bytes | None = None) -> ClusterKey:
    secret = secret if secret is not None else secrets.token_bytes(32)
    path.write_text(f"id = {key_id}\nsecret = {secret.hex()}\n")
    path.chmod(0o600)
    return ClusterKey(path, key_id, secret)
