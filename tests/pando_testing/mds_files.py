"""Files through a metadata manager's NFSv3 gateway, and where their bytes
are: what the rebuild, scrub and cluster-map tests share."""
from __future__ import annotations

from . import nfs3
from .cluster_map import file_map
from .mds import PandoMds
from .nfs3 import FILE_SYNC, NFS3_OK, Nfs3Client, Sattr3

PARTITION = 1


def connect(mds: PandoMds) -> Nfs3Client:
    return Nfs3Client.over(mds.pod.connect(mds.host, mds.nfs_port))


def write_file(c: Nfs3Client, root: bytes, name: str, data: bytes) -> bytes:
    """A new file in root with data, written FILE_SYNC; its handle."""
    res = c.create(root, name, nfs3.GUARDED, Sattr3(mode=0o644))
    assert res.status == NFS3_OK and res.fh is not None, f"CREATE {name}: {res.status}"
    c.write_all(res.fh, 0, data, stable=FILE_SYNC)
    return res.fh


def components(mds: PandoMds, path: str) -> list[tuple[int, int]]:
    """(OSD id, object id) of each component of the file, from dbus file_map."""
    ok, msg, j = file_map(mds, path)
    assert ok, msg
    return [(k["osd"], k["object"]) for g in j["groups"] for k in g["components"]]


def object_bytes(mds: PandoMds, osd: int, oid: int) -> bytes:
    """An object's bytes read straight from its OSD (pando-osd-tool get)."""
    out: bytes = mds.osds[osd - 1].tool("get", str(PARTITION), str(oid), "-",
                                        text=False).stdout
    return out
