"""Helpers of the root-squash tests (tests/security/test_root_squash.py,
tests/pnfs/test_root_squash_kernel.py): an NFSv3 root client from a chosen
address, and a root-owned file made through it."""
from __future__ import annotations

from .ganesha import GaneshaServer
from .nfs3 import Nfs3Client, Sattr3
from .oncrpc import auth_sys


def nfs3(server: GaneshaServer, source: str | None = None) -> Nfs3Client:
    """Root (AUTH_SYS 0:0) over NFSv3, connecting from `source`."""
    return Nfs3Client.over(server.pod.connect(server.host, server.nfs_port, source=source),
                           auth_sys(0, 0))


def root_owned(admin: Nfs3Client, dir_fh: bytes, name: str, mode: int = 0o644) -> bytes:
    """A new file made by `admin`, a host whose root is root."""
    res = admin.create(dir_fh, name, attrs=Sattr3(mode=mode))
    assert res.status == 0 and res.fh, f"CREATE {name}: {res.status}"
    return res.fh
