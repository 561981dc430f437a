"""Junctions (ganesha-fsal/README.md, "Volumes and referrals"): a volume
another manager group serves appears in the root as a junction, made with
`pando junction add`.  An NFSv4 client crossing it gets NFS4ERR_MOVED on
GETFH and the volume's servers and path in fs_locations, under an fsid of
its own; nothing is made in it or moved into it through this manager,
over NFSv3 or NFSv4; it is never renamed; `pando junction rm` removes it
and nothing else."""
from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect
from pando_testing.nfs3 import NFS3ERR_ROFS, NFS3ERR_XDEV, Sattr3
from pando_testing.nfs4 import NFS4_OK, Nfs4Client
from pando_testing.pando_cli import run_cli
from pando_testing.xdr import Unpacker

DIR = "/pando"
FATTR4_FSID = 8
FATTR4_FS_LOCATIONS = 24
NFS4ERR_MOVED = 10019
NFS4ERR_ROFS = 30


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return mds_factory(2, pseudo=DIR, protocols=(3, 4), object_pool=0)


def pando(mds: PandoMds, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(mds.pod, *args, env=mds.dbus_env())


def add(mds: PandoMds, volume: str, *args: str) -> None:
    cp = pando(mds, "junction", "add", volume, *args)
    assert cp.returncode == 0, cp.stderr


def pathname(u: Unpacker) -> list[str]:
    return [u.string() for _ in range(u.u32())]


def fsid_and_locations(raw: bytes) -> tuple[tuple[int, int], list[str], list[tuple[list[str],
                                                                                  list[str]]]]:
    """fsid, fs_root and the (servers, rootpath) of each location."""
    u = Unpacker(raw)
    fsid = (u.u64(), u.u64())
    root = pathname(u)
    locations = []
    for _ in range(u.u32()):
        servers = [u.string() for _ in range(u.u32())]
        locations.append((servers, pathname(u)))
    u.done()
    return fsid, root, locations


def test_an_nfsv4_client_is_referred_to_the_volume_s_servers(mds: PandoMds) -> None:
    add(mds, "vol1", "--server", "10.77.0.3", "--server", "10.77.0.4", "--path", "/pando/vol1")
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        r = nfs.compound([*nfs.lookup_path(f"{DIR}/vol1"), nfs.getfh()])
        assert r.results[-1][:2] == (10, NFS4ERR_MOVED), r.results
        status, parent = nfs.compound([*nfs.lookup_path(DIR), nfs.getattr(FATTR4_FSID)]).last()
        assert status == NFS4_OK and isinstance(parent, bytes)
        r = nfs.compound([*nfs.lookup_path(f"{DIR}/vol1"),
                          nfs.getattr(FATTR4_FSID, FATTR4_FS_LOCATIONS)])
        status, raw = r.last()
        assert status == NFS4_OK and isinstance(raw, bytes)
    fsid, root, locations = fsid_and_locations(raw)
    assert root == ["pando", "vol1"], "the path the client walked"
    assert locations == [(["10.77.0.3", "10.77.0.4"], ["pando", "vol1"])]
    pu = Unpacker(parent)
    assert fsid != (pu.u64(), pu.u64()), "a file system of its own"


def test_nothing_is_made_in_a_junction_or_moved_into_it(mds: PandoMds) -> None:
    add(mds, "vol1", "--server", "10.77.0.3")
    c = connect(mds)
    root = mds.root_handle()
    j = c.lookup_fh(root, "vol1")
    assert c.create(j, "f", attrs=Sattr3(mode=0o644)).status == NFS3ERR_ROFS
    assert c.mkdir(j, "d", Sattr3(mode=0o755)).status == NFS3ERR_ROFS
    f = c.create(root, "f", attrs=Sattr3(mode=0o644))
    assert f.status == nfs3.NFS3_OK
    assert c.rename(root, "f", j, "f").status == NFS3ERR_ROFS
    assert c.rename(root, "vol1", root, "elsewhere").status == NFS3ERR_XDEV
    assert c.lookup(root, "vol1").status == nfs3.NFS3_OK
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        # A client that follows referrals never gets here (GETFH was MOVED).
        assert nfs.create_status(f"{DIR}/vol1", "g") == NFS4ERR_ROFS


def test_the_list_shows_each_junction_and_rm_removes_only_a_junction(mds: PandoMds) -> None:
    add(mds, "vol1", "--server", "10.77.0.3")
    add(mds, "scratch", "--server", "mds-b.example.org", "--path", "/pando")
    cp = pando(mds, "junction", "--json")
    assert cp.returncode == 0, cp.stderr
    assert '"volume": "vol1"' in cp.stdout and '"mds-b.example.org"' in cp.stdout
    cp = pando(mds, "junction")
    assert "/vol1" in cp.stdout and "/scratch" in cp.stdout and "10.77.0.3" in cp.stdout
    c = connect(mds)
    assert c.mkdir(mds.root_handle(), "plain", Sattr3(mode=0o755)).status == nfs3.NFS3_OK
    cp = pando(mds, "junction", "rm", "plain")
    assert cp.returncode == 1 and "not a junction" in cp.stderr
    cp = pando(mds, "junction", "rm", "vol1")
    assert cp.returncode == 0, cp.stderr
    assert c.lookup(mds.root_handle(), "vol1").status == nfs3.NFS3ERR_NOENT
    assert c.lookup(mds.root_handle(), "plain").status == nfs3.NFS3_OK
    cp = pando(mds, "junction", "--json")
    assert '"vol1"' not in cp.stdout and '"scratch"' in cp.stdout


@pytest.mark.parametrize(("args", "words"), [
    (("../x", "--server", "h"), "volume name"),
    (("v", "--server", "h", "--path", "relative"), "volume path"),
    (("v", "--server", "h", "--path", "/a/../b"), "volume path"),
    (("v", "--server", "bad host"), "server"),
    (("v", *[a for i in range(5) for a in ("--server", f"h{i}")]), "1 to 4 servers"),
])
def test_a_junction_with_a_bad_field_is_refused_and_says_why(
        mds: PandoMds, args: tuple[str, ...], words: str) -> None:
    cp = pando(mds, "junction", "add", *args)
    assert cp.returncode == 1, cp.stdout
    assert words in cp.stderr
    assert connect(mds).lookup(mds.root_handle(), args[0]).status != nfs3.NFS3_OK


def test_servers_joined_by_a_comma_are_a_usage_error(mds: PandoMds) -> None:
    cp = pando(mds, "junction", "add", "v", "--server", "10.77.0.3,10.77.0.4")
    assert cp.returncode == 2 and "--server" in cp.stderr
    assert connect(mds).lookup(mds.root_handle(), "v").status != nfs3.NFS3_OK


def test_a_junction_that_exists_is_not_made_again(mds: PandoMds) -> None:
    add(mds, "vol1", "--server", "10.77.0.3")
    cp = pando(mds, "junction", "add", "vol1", "--server", "10.77.0.9")
    assert cp.returncode == 1 and "exists" in cp.stderr
    cp = pando(mds, "junction", "--json")
    assert "10.77.0.9" not in cp.stdout
