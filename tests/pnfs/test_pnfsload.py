"""pnfsload (tests/bench/pnfsload/), the host-speed pNFS load generator,
against a real Pando manager over pando-osd targets and against Ganesha VFS:
its bytes reach every mirror's object, its LAYOUTCOMMITs leave the right
sizes, its namespace operations leave the namespace they should, and it
fails with a clear message where it cannot work."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import pytest

from pando_testing import mds_files
from pando_testing.ganesha import GaneshaVfs
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import Nfs3Client
from pando_testing.pnfsload import (PnfsloadError, PnfsloadResult, pattern, pnfsload_argv,
                                    run_pnfsload)
from pando_testing.pod import Pod

MiB = 1 << 20
BLOCK = 4 * MiB


def pando(mds_factory: Callable[..., PandoMds], osds: int = 4) -> PandoMds:
    return mds_factory(osds, pnfs=True, mirrors=2)


def load(m: PandoMds | GaneshaVfs, directory: str, **kw: object) -> PnfsloadResult:
    argv = pnfsload_argv(m.nfs_addr, directory, export=m.pseudo, **kw)  # type: ignore[arg-type]
    return run_pnfsload(argv, pod=m.pod, timeout=120)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lookup_path(c: Nfs3Client, root: bytes, path: str) -> bytes:
    fh = root
    for name in path.strip("/").split("/"):
        fh = c.lookup_fh(fh, name)
    return fh


def names_in(m: PandoMds | GaneshaVfs, path: str) -> set[str]:
    with mds_files.connect(m) as c:  # type: ignore[arg-type]
        fh = lookup_path(c, m.root_handle(), path)
        return {e.name.decode() for e in c.readdir_all(fh)} - {".", ".."}


def file_bytes(m: PandoMds | GaneshaVfs, path: str) -> tuple[int, bytes]:
    """Size and bytes of a file, read through the server's NFSv3 side."""
    with mds_files.connect(m) as c:  # type: ignore[arg-type]
        fh = lookup_path(c, m.root_handle(), path)
        attrs = c.getattr(fh).attrs
        assert attrs is not None
        return attrs.size, c.read_all(fh, 0, attrs.size)


def test_ior_file_per_process_writes_every_mirror_through_layouts_and_reads_back_verified(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    w = load(m, "fpp", clients=3, ior="write", block=BLOCK, verify=True)
    assert (w.bytes, w.layouts, w.mds_io_bytes) == (3 * BLOCK, 3, 0)
    assert w.ds_io_bytes == 2 * 3 * BLOCK, "every byte goes to both mirrors"
    for i in range(3):
        want = sha(pattern(i + 1, 0, BLOCK))
        comps = mds_files.components(m, f"/fpp/ior.{i}")
        assert len(comps) == 2, comps
        for osd, oid in comps:
            assert sha(mds_files.object_bytes(m, osd, oid)) == want, (i, osd, oid)
    r = load(m, "fpp", clients=3, ior="read", block=BLOCK, verify=True)
    assert (r.bytes, r.layouts, r.mds_io_bytes, r.ds_io_bytes) == (3 * BLOCK, 3, 0, 3 * BLOCK)
