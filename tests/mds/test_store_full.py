"""The metadata manager's own disk fills up.  The namespace store (RocksDB)
sits on a small tmpfs mounted inside the test's pod, and NFSv3 clients fill
it with small (inline) files.  Below the export's Db_Reserve_Mb of free
space, new names and inline data get NFS3ERR_NOSPC; Ganesha stays up,
everything acknowledged reads back, removals, renames, attribute changes
and moves to objects still work; once the disk grows, creates work again
without a restart; and pando-fsck finds nothing afterwards."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect
from pando_testing.nfs3 import NFS3_OK, FILE_SYNC, Sattr3, status_name
from pando_testing.pod import Pod

KIB, MIB = 1024, 1 << 20
DISK_MIB, RESERVE_MIB = 320, 192
PIECE = 60 * KIB            # under the 64 KiB inline threshold: all in RocksDB


def free_mib(pod: Pod, path: Path) -> float:
    st = pod.run(["stat", "-f", "-c", "%a %S", str(path)]).stdout.split()
    return int(st[0]) * int(st[1]) / MIB


def test_full_store_disk_refuses_growth_and_keeps_everything(
        pod: Pod, tmp_path: Path, mds_factory: Callable[..., PandoMds]) -> None:
    disk = tmp_path / "mdsdisk"
    disk.mkdir()
    pod.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MIB}m", "pando-mdsdisk", str(disk)])
    m = mds_factory(4, db_path=disk / "ns", object_pool=0,
                    extra_fsal=f"Db_Reserve_Mb = {RESERVE_MIB};")
    root = m.root_handle()
    data = {}
    with connect(m) as c:
        refused = None
        for i in range(DISK_MIB * MIB // PIECE):
            name = f"f{i}"
            r = c.create(root, name, nfs3.GUARDED, Sattr3(mode=0o644))
            if r.status != NFS3_OK:
                refused = ("CREATE", r.status)
                break
            assert r.fh is not None
            piece = os.urandom(PIECE)
            w = c.write(r.fh, 0, piece, FILE_SYNC)
            if w.status != NFS3_OK:
                refused = ("WRITE", w.status)
                data[name] = (r.fh, b"")      # made, but holds nothing
                break
            assert w.count == PIECE
            data[name] = (r.fh, piece)
        print(f"{len(data)} files before {refused}; {free_mib(pod, disk):.0f} MiB free")
        assert refused is not None and refused[1] == nfs3.NFS3ERR_NOSPC, \
            f"filling the store's disk ended with {refused}, want NFS3ERR_NOSPC"
        assert free_mib(pod, disk) > 0, "the reserve was not kept"
        assert m.alive(), "ganesha.nfsd died when its disk filled"
        assert "refusing new names and inline data" in m.log_path.read_text()

        # Growth stays refused: names of every kind, inline data.
        assert c.create(root, "more", nfs3.GUARDED, Sattr3(mode=0o644)).status == \
            nfs3.NFS3ERR_NOSPC
        assert c.mkdir(root, "dir", Sattr3(mode=0o755)).status == nfs3.NFS3ERR_NOSPC
        assert c.symlink(root, "ln", "f0", Sattr3()).status == nfs3.NFS3ERR_NOSPC
        fh0, piece0 = data["f0"]
        assert c.link(fh0, root, "f0.link").status == nfs3.NFS3ERR_NOSPC
        assert c.write(fh0, 0, b"x" * 100, FILE_SYNC).status == nfs3.NFS3ERR_NOSPC

        # Everything acknowledged is there.
        for name, (fh, piece) in data.items():
            assert c.read_all(fh, 0, PIECE + 1) == piece, f"{name} changed"

        # Cleaning up works from the reserve: remove, rename, setattr, and
        # a write past the inline threshold (the file moves to objects).
        for name in list(data)[-20:]:
            assert c.remove(root, name).status == NFS3_OK, f"REMOVE {name} on a full disk"
            del data[name]
        assert c.rename(root, "f1", root, "f1.renamed").status == NFS3_OK
        data["f1.renamed"] = data.pop("f1")
        assert c.setattr(fh0, Sattr3(mode=0o600)).status == NFS3_OK
        big = os.urandom(200 * KIB)
        assert c.write(fh0, 0, big, FILE_SYNC).status == NFS3_OK, \
            "a move to objects was refused on a full store disk"
        data["f0"] = (fh0, big)
        assert c.read_all(fh0, 0, len(big) + 1) == big

        # The admin grows the disk: creates work again, no restart.
        pod.run(["mount", "-o", f"remount,size={2 * DISK_MIB}m", str(disk)])
        time.sleep(0.2)
        r = c.create(root, "after-growth", nfs3.GUARDED, Sattr3(mode=0o644))
        assert r.status == NFS3_OK, f"CREATE after the disk grew: {status_name(r.status)}"
        assert r.fh is not None
        assert c.write(r.fh, 0, b"back", FILE_SYNC).status == NFS3_OK
        assert "room on the store's disk again" in m.log_path.read_text()
        for name, (fh, piece) in data.items():
            assert c.read_all(fh, 0, len(piece) + 1) == piece, f"{name} changed"

    assert m.stop() == 0
    code, out = m.fsck()
    assert code == 0, out
