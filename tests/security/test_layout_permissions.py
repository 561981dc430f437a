"""Layouts follow permissions (ganesha-fsal/patches 0141), from a plain
NFSv4.1 client (pando_testing.nfs4) as an unprivileged user against the
metadata manager:

* a reader cannot get a write layout, so it holds no write capability for
  the file's objects on the OSDs, and the file keeps its set-id bits;
* the owner can, even of a file it made read-only (knfsd's owner
  override, as WRITE has it); nobody can on a read-only export;
* LAYOUTCOMMIT is a writer's: through a read layout it is BADIOMODE and
  the size stays.

Run them on the previous series (PANDO_GANESHA_ROOT,
ganesha-fsal/patches/README.md) to see them fail."""
from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pando_testing.mds import PandoMds
from pando_testing.nfs4 import (IOMODE_READ, IOMODE_RW, NFS4_OK, NFS4ERR_ACCESS,
                                NFS4ERR_BADIOMODE, NFS4ERR_ROFS, OPEN4_SHARE_ACCESS_BOTH,
                                Layout, Nfs4Client, Nfs4Error)

DIR = "/pando"
USER = 1111
PAGE = 4096


def manager(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """pNFS on; Inline_Max 1, so that every file is on the OSDs and gets layouts."""
    return mds_factory(4, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=1)


def client(m: PandoMds, uid: int = 0) -> Nfs4Client:
    nfs = Nfs4Client(m.pod.connect(m.host, m.nfs_port), uid=uid, gid=uid)
    assert nfs.reclaim_complete() == NFS4_OK
    return nfs


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return manager(mds_factory)


@pytest.fixture
def root(mds: PandoMds) -> Iterator[Nfs4Client]:
    with client(mds) as nfs:
        yield nfs


@pytest.fixture
def user(mds: PandoMds) -> Iterator[Nfs4Client]:
    with client(mds, USER) as nfs:
        yield nfs


def layoutget(nfs: Nfs4Client, fh: bytes, sid: object, iomode: int) -> tuple[int, object]:
    return nfs.on(fh, nfs.layoutget(sid, iomode, 0, PAGE, PAGE))  # type: ignore[arg-type]


def test_a_reader_gets_a_read_layout_but_no_write_layout(root: Nfs4Client,
                                                         user: Nfs4Client) -> None:
    root.create(DIR, "root-owned", mode=0o644)
    fh, sid = user.open(DIR, "root-owned")
    status, lo = layoutget(user, fh, sid, IOMODE_READ)
    assert status == NFS4_OK and isinstance(lo, Layout), f"read LAYOUTGET: {status}"
    assert layoutget(user, fh, sid, IOMODE_RW)[0] == NFS4ERR_ACCESS


def test_a_readers_write_layoutget_leaves_the_set_id_bits(root: Nfs4Client,
                                                          user: Nfs4Client) -> None:
    root.create(DIR, "setuid", mode=0o4755)
    fh, sid = user.open(DIR, "setuid")
    assert layoutget(user, fh, sid, IOMODE_RW)[0] == NFS4ERR_ACCESS
    assert root.size_and_mode(fh)[1] & 0o7777 == 0o4755


def test_the_owner_gets_a_write_layout_of_a_file_it_made_read_only(
        mds: PandoMds, user: Nfs4Client) -> None:
    setup = mds.client()
    try:
        fh3 = setup.create(mds.root_handle(), "mine", mode=0o644, owner=USER)
        fh, sid = user.open(DIR, "mine", OPEN4_SHARE_ACCESS_BOTH)
        setup.chmod(fh3, 0o444)
    finally:
        setup.close()
    status, lo = layoutget(user, fh, sid, IOMODE_RW)
    assert status == NFS4_OK and isinstance(lo, Layout), f"write LAYOUTGET: {status}"


def test_a_read_layout_cannot_commit_a_size(root: Nfs4Client, user: Nfs4Client) -> None:
    root.create(DIR, "sized", mode=0o644)
    fh, sid = user.open(DIR, "sized")
    status, lo = layoutget(user, fh, sid, IOMODE_READ)
    assert status == NFS4_OK and isinstance(lo, Layout), f"read LAYOUTGET: {status}"
    status, _ = user.on(fh, user.layoutcommit(lo.stateid, 1 << 40))
    assert status == NFS4ERR_BADIOMODE
    assert root.size_and_mode(fh)[0] == 0


def test_a_writer_commits_through_its_write_layout(root: Nfs4Client) -> None:
    fh, sid = root.create(DIR, "written", mode=0o644)
    status, lo = layoutget(root, fh, sid, IOMODE_RW)
    assert status == NFS4_OK and isinstance(lo, Layout), f"write LAYOUTGET: {status}"
    status, _ = root.on(fh, root.layoutcommit(lo.stateid, PAGE - 1))
    assert status == NFS4_OK
    assert root.size_and_mode(fh)[0] == PAGE


def test_nobody_gets_a_write_layout_on_a_read_only_export(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = manager(mds_factory)
    m.create_files(["ro-file"])
    assert m.stop_ganesha() == 0
    m.access_type = "RO"
    m.start()
    with client(m) as nfs:
        fh, sid = nfs.open(DIR, "ro-file")
        assert layoutget(nfs, fh, sid, IOMODE_READ)[0] == NFS4_OK
        assert layoutget(nfs, fh, sid, IOMODE_RW)[0] == NFS4ERR_ROFS
        with pytest.raises(Nfs4Error):
            nfs.open(DIR, "ro-file", OPEN4_SHARE_ACCESS_BOTH)
