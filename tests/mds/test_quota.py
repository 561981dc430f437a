"""The export's quota (ganesha-fsal/README.md, "Quotas"): set with
`pando quota set`, shown by df (FSSTAT) as the size and what is left of
it as free; creates past its files and gateway writes past its bytes get
DQUOT with nothing written; a write layout reaches no further than the
bytes left, and a LAYOUTCOMMIT past them is refused with DQUOT.  A
user's or group's quota (`--user`, `--group`) does the same for the
files that user or group owns, and only for them."""
from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from pando_testing import nfs3
from pando_testing.cluster_map import dbus_json
from pando_testing.mds import PandoMds
from pando_testing.mds_files import components, connect, new_file, object_bytes
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_DQUOT, Sattr3
from pando_testing.nfs4 import EOF, IOMODE_RW, NFS4_OK, Layout, Nfs4Client
from pando_testing.pando_cli import run_cli

KIB = 1024
MIB = 1 << 20
DIR = "/pando"
NFS4ERR_DQUOT = 69
NFS4ERR_LAYOUTUNAVAILABLE = 10059


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Four OSDs, Mirrors 2, files past 4 KiB on objects, pNFS on."""
    return mds_factory(4, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=4096,
                       object_pool=0)


def pando(mds: PandoMds, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(mds.pod, *args, env=mds.dbus_env())


def quota(mds: PandoMds, *args: str) -> None:
    cp = pando(mds, "quota", "set", *args)
    assert cp.returncode == 0, cp.stderr


def used(mds: PandoMds) -> tuple[int, int]:
    ok, msg, j = dbus_json(mds, "quota_get")
    assert ok, msg
    return j["used_bytes"], j["used_files"]


def test_df_shows_the_quota_as_size_and_what_is_left_as_free(mds: PandoMds) -> None:
    c = connect(mds)
    root = mds.root_handle()
    before = c.fsstat(root)
    quota(mds, "--bytes", "1M", "--files", "50")
    new_file(c, root, "f", b"x" * (100 * KIB))
    st = c.fsstat(root)
    assert st.status == NFS3_OK
    assert (st.tbytes, st.abytes, st.fbytes) == (MIB, MIB - 100 * KIB, MIB - 100 * KIB)
    assert (st.tfiles, st.afiles, st.ffiles) == (50, 48, 48)     # the root and f
    cp = pando(mds, "quota")
    assert cp.returncode == 0, cp.stderr
    assert "bytes: 100 KiB used of 1.0 MiB (9.8%), 924 KiB left" in cp.stdout
    assert "files: 2 used of 50 (4.0%), 48 left" in cp.stdout
    quota(mds, "--clear")
    st = c.fsstat(root)
    assert st.tbytes == before.tbytes and st.tfiles == before.tfiles
    assert "no limit" in pando(mds, "quota").stdout


def test_creates_past_the_files_get_dquot_until_one_is_removed(mds: PandoMds) -> None:
    c = connect(mds)
    root = mds.root_handle()
    quota(mds, "--files", "3")
    new_file(c, root, "a")
    d = c.mkdir(root, "d", Sattr3(mode=0o755))
    assert d.status == NFS3_OK
    assert c.create(root, "b", nfs3.GUARDED, Sattr3(mode=0o644)).status == NFS3ERR_DQUOT
    assert c.mkdir(root, "e", Sattr3(mode=0o755)).status == NFS3ERR_DQUOT
    assert c.symlink(root, "l", "a").status == NFS3ERR_DQUOT
    assert c.lookup(root, "b").status != NFS3_OK
    assert used(mds)[1] == 3
    assert c.rmdir(root, "d").status == NFS3_OK
    assert c.create(root, "b", nfs3.GUARDED, Sattr3(mode=0o644)).status == NFS3_OK


def test_gateway_writes_past_the_bytes_get_dquot_and_put_nothing_on_the_osds(
        mds: PandoMds) -> None:
    c = connect(mds)
    root = mds.root_handle()
    quota(mds, "--bytes", "64K")
    fh = new_file(c, root, "f", b"a" * (60 * KIB))
    w = c.write(fh, 60 * KIB, b"b" * (8 * KIB), nfs3.FILE_SYNC)
    assert w.status == NFS3ERR_DQUOT
    grow = c.setattr(fh, Sattr3(size=65 * KIB))
    assert grow.status == NFS3ERR_DQUOT
    assert c.write(fh, 0, b"c" * (4 * KIB), nfs3.FILE_SYNC).status == NFS3_OK
    assert c.write(fh, 60 * KIB, b"d" * (4 * KIB), nfs3.FILE_SYNC).status == NFS3_OK
    attrs = c.getattr(fh).attrs
    assert attrs is not None and attrs.size == 64 * KIB
    for osd, oid in components(mds, "/f"):
        data = object_bytes(mds, osd, oid)
        assert len(data.rstrip(b"\0")) <= 64 * KIB, f"bytes past the quota on OSD {osd}"
    assert c.read_all(fh, 0, 64 * KIB) == b"c" * (4 * KIB) + b"a" * (56 * KIB) + b"d" * (4 * KIB)
    assert c.write(fh, 64 * KIB, b"e", nfs3.FILE_SYNC).status == NFS3ERR_DQUOT


def test_a_write_layout_reaches_the_bytes_left_and_a_commit_past_them_is_dquot(
        mds: PandoMds) -> None:
    """The layout is cut at the room left when it is granted; a commit
    inside it that the room no longer holds (another file took it
    meanwhile) is refused, and the size stays."""
    c = connect(mds)
    new_file(c, mds.root_handle(), "big", b"z" * (16 * KIB))     # on objects
    other = new_file(c, mds.root_handle(), "other")
    quota(mds, "--bytes", "100K")
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        fh, sid = nfs.open(DIR, "big", access=3)
        status, lo = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 0, EOF, 0))
        assert status == NFS4_OK and isinstance(lo, Layout), status
        assert lo.segments[0][:2] == (0, 100 * KIB), "16 KiB and the 84 KiB left"
        status, _ = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 100 * KIB, EOF, 4 * KIB))
        assert status == NFS4ERR_LAYOUTUNAVAILABLE
        status, _ = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 96 * KIB, EOF, 8 * KIB))
        assert status == NFS4ERR_LAYOUTUNAVAILABLE, "minlength past what is left"
        assert c.write(other, 0, b"o" * (50 * KIB), nfs3.FILE_SYNC).status == NFS3_OK
        status, _ = nfs.on(fh, nfs.layoutcommit(lo.stateid, 100 * KIB - 1))
        assert status == NFS4ERR_DQUOT
        assert nfs.size_and_mode(fh)[0] == 16 * KIB
        status, _ = nfs.on(fh, nfs.layoutcommit(lo.stateid, 50 * KIB - 1))
        assert status == NFS4_OK
        assert nfs.size_and_mode(fh)[0] == 50 * KIB
        assert used(mds)[0] == 100 * KIB


@pytest.mark.parametrize("args", [(), ("--clear", "--files", "3"), ("--bytes", "-1"),
                                  ("--user", "no-such-user", "--files", "1"),
                                  ("--user", "1000", "--group", "100", "--files", "1")])
def test_quota_set_without_limits_or_with_clear_and_limits_is_a_usage_error(
        mds: PandoMds, args: tuple[str, ...]) -> None:
    cp = pando(mds, "quota", "set", *args)
    assert cp.returncode == 2, cp.stderr
    assert used(mds)[1] >= 1


def shared_dir(mds: PandoMds) -> bytes:
    """/shared, 0777, made by root: where the users below create."""
    d = connect(mds).mkdir(mds.root_handle(), "shared", Sattr3(mode=0o777))
    assert d.status == NFS3_OK and d.fh is not None
    return d.fh


def test_a_users_quota_stops_that_user_alone_and_pando_quota_shows_it(mds: PandoMds) -> None:
    d = shared_dir(mds)
    alice, bob = connect(mds, uid=1000, gid=100), connect(mds, uid=1001, gid=100)
    quota(mds, "--user", "1000", "--files", "2", "--bytes", "64K")
    fh = new_file(alice, d, "a1", b"a" * (60 * KIB))
    new_file(alice, d, "a2")
    assert alice.create(d, "a3", nfs3.GUARDED, Sattr3(mode=0o644)).status == NFS3ERR_DQUOT
    new_file(bob, d, "b1", b"b" * (100 * KIB))            # another user, the same group
    assert alice.write(fh, 60 * KIB, b"x" * (8 * KIB), nfs3.FILE_SYNC).status == NFS3ERR_DQUOT
    for osd, oid in components(mds, "/shared/a1"):
        data = object_bytes(mds, osd, oid)
        assert len(data.rstrip(b"\0")) <= 60 * KIB, f"bytes past the quota on OSD {osd}"
    cp = pando(mds, "quota", "--user", "1000")
    assert cp.returncode == 0, cp.stderr
    assert "bytes: 60 KiB used of 64 KiB (93.8%), 4.0 KiB left" in cp.stdout
    assert "files: 2 used of 2 (100.0%), 0 left" in cp.stdout
    quota(mds, "--group", "100", "--bytes", "1M")
    rows = [r.split() for r in pando(mds, "quota").stdout.splitlines() if r.split()[:1]
            in (["user"], ["group"])]
    assert [r[:2] for r in rows] == [["group", "100"], ["user", "1000"]]
    assert " ".join(rows[0][3:]) == "160 KiB / 1.0 MiB 3 / -"
    quota(mds, "--user", "1000", "--clear")
    assert alice.create(d, "a3", nfs3.GUARDED, Sattr3(mode=0o644)).status == NFS3_OK


def test_a_chown_onto_a_user_past_its_quota_is_dquot(mds: PandoMds) -> None:
    c = connect(mds)
    fh = new_file(c, shared_dir(mds), "f", b"f" * (32 * KIB))
    quota(mds, "--user", "1000", "--bytes", "16K")
    assert c.setattr(fh, Sattr3(uid=1000)).status == NFS3ERR_DQUOT
    attrs = c.getattr(fh).attrs
    assert attrs is not None and attrs.uid == 0
    assert c.setattr(fh, Sattr3(uid=1001)).status == NFS3_OK


def test_a_write_layout_reaches_the_bytes_its_owners_quota_leaves(mds: PandoMds) -> None:
    c = connect(mds)
    fh = new_file(c, mds.root_handle(), "big", b"z" * (16 * KIB))
    assert c.setattr(fh, Sattr3(uid=1000, gid=100)).status == NFS3_OK
    quota(mds, "--group", "100", "--bytes", "40K")
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        fh4, sid = nfs.open(DIR, "big", access=3)
        status, lo = nfs.on(fh4, nfs.layoutget(sid, IOMODE_RW, 0, EOF, 0))
        assert status == NFS4_OK and isinstance(lo, Layout), status
        assert lo.segments[0][:2] == (0, 40 * KIB), "16 KiB and the 24 KiB the group has left"
