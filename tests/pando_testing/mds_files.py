"""Files through a metadata manager's NFSv3 gateway, and where their bytes
are on the OSDs: what the tests/mds suites (and a few others) share.
Objects are listed and read on the OSDs themselves with pando-osd-tool,
in partition 1."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from . import nfs3
from .cluster_map import file_map
from .ganesha import GaneshaServer
from .mds import PandoMds
from .nfs4 import Nfs4Client
from .nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_JUKEBOX, Nfs3Client, Sattr3, auth_sys_groups, status_name
from .threads import RaisingThread

PARTITION = 1


def ok(res: Any, what: str = "") -> Any:
    """res, when its status is NFS3_OK; else the test fails naming what."""
    assert res.status == NFS3_OK, f"{what or type(res).__name__}: {status_name(res.status)}"
    return res


def connect(server: GaneshaServer, uid: int = 0, gid: int = 0,
            gids: Sequence[int] = (), timeout: float = 10.0) -> Nfs3Client:
    """A client of the server's NFSv3 side (a manager's gateway), as
    AUTH_SYS uid/gid (root by default), waiting `timeout` s for a reply."""
    return Nfs3Client.over(server.pod.connect(server.host, server.nfs_port, timeout=timeout),
                           auth_sys_groups(uid, gid, gids))


def connect_v4(server: GaneshaServer, name: str | None = None,
               verifier: bytes | None = None) -> Nfs4Client:
    """An NFSv4.1 client of the server; the same name and verifier are
    the same client come back, one that may reclaim."""
    return Nfs4Client(server.pod.connect(server.host, server.nfs_port), name=name,
                      verifier=verifier)


def new_file(c: Nfs3Client, dir_fh: bytes, name: str, data: bytes = b"",
             mode: int = 0o644) -> bytes:
    """A new file in dir_fh (GUARDED), data written FILE_SYNC; its handle."""
    fh = ok(c.create(dir_fh, name, nfs3.GUARDED, Sattr3(mode=mode)), f"CREATE {name}").fh
    assert fh is not None
    if data:
        c.write_all(fh, 0, data, FILE_SYNC)
    return fh


def fileid_of(c: Nfs3Client, fh: bytes) -> int:
    a = ok(c.getattr(fh)).attrs
    assert a is not None
    return a.fileid


def components(mds: PandoMds, path: str, scheme: str | None = None) -> list[tuple[int, int]]:
    """(OSD id, object id) of each component of the file, from dbus file_map;
    scheme, when given, is the one the map must have ("mirror", "rs")."""
    ok_, msg, j = file_map(mds, path)
    assert ok_, msg
    assert scheme is None or j["scheme"] == scheme, j
    return [(k["osd"], k["object"]) for g in j["groups"] for k in g["components"]]


def objects(mds: PandoMds) -> dict[int, set[int]]:
    """Object ids in the partition of each running OSD."""
    out: dict[int, set[int]] = {}
    for o in mds.osds:
        if not o.alive():
            continue
        cp = o.tool("ls", str(PARTITION), check=False)
        if cp.returncode != 0 and "No such file" in cp.stderr:
            out[o.osd_id] = set()        # the partition is made with the first object
            continue
        assert cp.returncode == 0, cp.stderr
        out[o.osd_id] = {int(x) for x in cp.stdout.split()}
    return out


def object_attrs(mds: PandoMds, osd: int, oid: int) -> dict[str, int]:
    """The object's numeric attributes; empty when it has gone since it was listed."""
    cp = mds.osds[osd - 1].tool("getattr", str(PARTITION), str(oid), check=False)
    out: dict[str, int] = {}
    for line in cp.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def objects_of(mds: PandoMds, fileid: int) -> list[tuple[int, int]]:
    """(OSD id, object id) of every object whose owner_file is fileid."""
    return sorted((osd, oid) for osd, oids in objects(mds).items() for oid in oids
                  if object_attrs(mds, osd, oid).get("owner_file") == fileid)


def object_bytes(mds: PandoMds, osd: int, oid: int) -> bytes:
    """An object's bytes read straight from its OSD (pando-osd-tool get)."""
    out: bytes = mds.osds[osd - 1].tool("get", str(PARTITION), str(oid), "-",
                                        text=False).stdout
    return out


class BackgroundWriter:
    """Writes pieces into one file from a thread while the body of the
    `with` runs, keeping `data` what the file must hold.  A write answered
    NFS3ERR_JUKEBOX (the file frozen for a rebuild's switch) is counted in
    `delayed` and left out; `written` counts the others.  Any other answer,
    or an exception in the thread, is raised again when the `with` ends."""

    def __init__(self, mds: PandoMds, fh: bytes, data: bytearray,
                 piece: Callable[[int], tuple[int, bytes]], pause: float) -> None:
        self.mds, self.fh, self.data, self.piece, self.pause = mds, fh, data, piece, pause
        self.written = 0
        self.delayed = 0
        self._stop = threading.Event()
        self._thread = RaisingThread(target=self._run, name="background-writer")

    def _run(self) -> None:
        with connect(self.mds) as w:
            while not self._stop.is_set():
                off, piece = self.piece(self.written)
                res = w.write(self.fh, off, piece, FILE_SYNC)
                if res.status == NFS3ERR_JUKEBOX:
                    self.delayed += 1
                    time.sleep(0.2)
                    continue
                assert res.status == NFS3_OK, f"background WRITE at {off}: {status_name(res.status)}"
                self.data[off:off + len(piece)] = piece
                self.written += 1
                time.sleep(self.pause)

    def assert_goes_on(self, count: int, within: float, what: str) -> None:
        """`count` more writes acknowledged within `within` seconds: the
        writes go on (a failure of the thread is raised as it is)."""
        first = self.written
        deadline = time.monotonic() + within
        while self.written < first + count:
            if not self._thread.is_alive():
                self._thread.join()
            assert time.monotonic() < deadline, \
                f"{what}: {self.written - first} writes acknowledged in {within:.0f} s: the writes stopped"
            time.sleep(0.05)

    def __enter__(self) -> "BackgroundWriter":
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()


def lookup_path(c: Nfs3Client, root: bytes, path: str) -> bytes:
    fh = root
    for name in path.strip("/").split("/"):
        fh = c.lookup_fh(fh, name)
    return fh


def file_bytes(m: GaneshaServer, path: str) -> tuple[int, bytes]:
    """Size and bytes of a file, read through the server's NFSv3 side."""
    with connect(m) as c:
        fh = lookup_path(c, m.root_handle(), path)
        attrs = c.getattr(fh).attrs
        assert attrs is not None
        return attrs.size, c.read_all(fh, 0, attrs.size)
