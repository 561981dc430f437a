"""Root squash (cluster/README.md, "Who may mount"): root on a host that
no `[clients NAME]` section of pando.conf trusts is nobody (65534) on
every path, NFSv3, NFSv4.1 and pNFS layouts alike.

The harness trusts its pod's own address, 127.0.0.1
(pando_testing.ganesha.TRUSTED_CLIENTS); these tests reach the same
manager from 127.0.0.2, a host the export does not name, as a squashed
client, and from 127.0.0.1 as the trusted admin host that sets up the
files.  The export's root is 1777 here, as a scratch directory is, so
that a squashed root may create in it.  A stock kernel client's root is
squashed in tests/pnfs/test_root_squash_kernel.py."""
from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pando_cluster.ganesha_conf import ANON_ID
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import NFS3ERR_ACCES, NFS3ERR_PERM, FILE_SYNC, Nfs3Client, Sattr3
from pando_testing.nfs4 import (IOMODE_RW, NFS4_OK, NFS4ERR_ACCESS, OPEN4_SHARE_ACCESS_BOTH,
                                Layout, Nfs4Client, Nfs4Error)
from pando_testing.squash import nfs3, root_owned

DIR = "/pando"
UNTRUSTED = "127.0.0.2"
PAGE = 4096


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """pNFS on, every file on the OSDs (Inline_Max 1), trusting 127.0.0.1."""
    return mds_factory(4, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=1)


def nfs4(m: PandoMds, source: str | None = None) -> Nfs4Client:
    c = Nfs4Client(m.pod.connect(m.host, m.nfs_port, source=source))
    assert c.reclaim_complete() == NFS4_OK
    return c


@pytest.fixture
def admin(mds: PandoMds) -> Iterator[Nfs3Client]:
    with nfs3(mds) as c:
        assert c.setattr(mds.root_handle(), Sattr3(mode=0o1777)).status == 0
        yield c


@pytest.fixture
def squashed(mds: PandoMds) -> Iterator[Nfs3Client]:
    with nfs3(mds, UNTRUSTED) as c:
        yield c


def owner(c: Nfs3Client, fh: bytes) -> tuple[int, int]:
    res = c.getattr(fh)
    assert res.status == 0 and res.attrs is not None
    return res.attrs.uid, res.attrs.gid


def test_root_on_an_untrusted_host_cannot_write_a_root_owned_file(
        mds: PandoMds, admin: Nfs3Client, squashed: Nfs3Client) -> None:
    root = mds.root_handle()
    fh = root_owned(admin, root, "etc-passwd")
    assert squashed.write(fh, 0, b"root::0:0::/:/bin/sh\n", FILE_SYNC).status == NFS3ERR_ACCES
    assert squashed.setattr(fh, Sattr3(mode=0o666)).status == NFS3ERR_PERM
    assert squashed.setattr(fh, Sattr3(uid=ANON_ID)).status == NFS3ERR_PERM
    assert admin.getattr(fh).attrs.size == 0  # type: ignore[union-attr]


def test_what_root_on_an_untrusted_host_creates_belongs_to_nobody(
        mds: PandoMds, admin: Nfs3Client, squashed: Nfs3Client) -> None:
    res = squashed.create(mds.root_handle(), "made-by-squashed-root", attrs=Sattr3(mode=0o644))
    assert res.status == 0 and res.fh
    assert owner(admin, res.fh) == (ANON_ID, ANON_ID)
    assert squashed.write(res.fh, 0, b"x" * PAGE, FILE_SYNC).status == 0


def test_the_trusted_host_keeps_root(mds: PandoMds, admin: Nfs3Client) -> None:
    fh = root_owned(admin, mds.root_handle(), "admins")
    assert owner(admin, fh) == (0, 0)
    assert admin.setattr(fh, Sattr3(uid=1234)).status == 0


def test_root_on_an_untrusted_host_gets_no_write_open_nor_write_layout(
        mds: PandoMds, admin: Nfs3Client) -> None:
    root_owned(admin, mds.root_handle(), "shadow", mode=0o644)
    with nfs4(mds, UNTRUSTED) as c:
        with pytest.raises(Nfs4Error) as e:
            c.open(DIR, "shadow", OPEN4_SHARE_ACCESS_BOTH)
        assert e.value.status == NFS4ERR_ACCESS
        fh, sid = c.open(DIR, "shadow")
        status, _ = c.on(fh, c.layoutget(sid, IOMODE_RW, 0, PAGE, PAGE))
        assert status == NFS4ERR_ACCESS


def test_root_on_an_untrusted_host_writes_its_own_files_through_a_layout(
        mds: PandoMds, admin: Nfs3Client) -> None:
    with nfs4(mds, UNTRUSTED) as c:
        fh, sid = c.create(DIR, "own", mode=0o600)
        status, lo = c.on(fh, c.layoutget(sid, IOMODE_RW, 0, PAGE, PAGE))
        assert status == NFS4_OK and isinstance(lo, Layout), f"write LAYOUTGET: {status}"
