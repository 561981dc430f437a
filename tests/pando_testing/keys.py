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


def write_cluster_key(path: Path, key_id: int = 1, secret: bytes | None = None,
                      previous: ClusterKey | None = None) -> ClusterKey:
    """A key file; with `previous`, the key it replaces in a rotation
    (still accepted, never used to sign)."""
    secret = secret if secret is not None else secrets.token_bytes(32)
    text = f"id = {key_id}\nsecret = {secret.hex()}\n"
    if previous is not None:
        text += f"previous_id = {previous.key_id}\nprevious_secret = {previous.secret.hex()}\n"
    path.write_text(text)
    path.chmod(0o600)
    return ClusterKey(path, key_id, secret)
