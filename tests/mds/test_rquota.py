"""rquota (ganesha-fsal/README.md, "Quotas"): users' and groups' quotas
through Ganesha's RQUOTA service, as Linux's quota and setquota reach
them, with quotactl's permissions: anyone reads their own user's and
groups' quotas, root any; only root on a host the export trusts sets one,
and the store enforces it as one `pando quota set` made.  Limits Pando
would not keep (soft limits, quota types it has not) are refused and
change nothing.  Stock quota tools in a guest: tests/pnfs/test_rquota_kernel.py."""
from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_DQUOT, Sattr3
from pando_testing.oncrpc import RpcAccepted
from pando_testing.pando_cli import run_cli
from pando_testing.rquota import (GRPQUOTA, Q_EPERM, Q_OK, RQUOTAPROC_GETQUOTA, USRQUOTA,
                                  rquota_client)

KIB = 1024
DIR = "/pando"
UNTRUSTED = "127.0.0.2"   # a host no CLIENT block names: its root is squashed
GARBAGE_ARGS = 4


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return mds_factory(3, pseudo=DIR, protocols=(3, 4), mirrors=2, inline_max=4096)


def pando(mds: PandoMds, *args: str) -> subprocess.CompletedProcess[str]:
    cp = run_cli(mds.pod, *args, env=mds.dbus_env())
    assert cp.returncode == 0, cp.stderr
    return cp


def shared_dir(mds: PandoMds) -> bytes:
    with connect(mds) as c:
        d = c.mkdir(mds.root_handle(), "shared", Sattr3(mode=0o1777))
        assert d.status == NFS3_OK and d.fh is not None
        return d.fh


def test_quota_reads_a_users_limits_and_usage(mds: PandoMds) -> None:
    d = shared_dir(mds)
    pando(mds, "quota", "set", "--user", "1000", "--bytes", "64K", "--files", "10")
    with connect(mds, uid=1000, gid=100) as alice:
        new_file(alice, d, "a", b"a" * (60 * KIB - 100))
    with rquota_client(mds.pod, 1000, 100) as rq:
        status, q = rq.get(DIR, USRQUOTA, 1000)
    assert status == Q_OK and q is not None
    assert (q.bsize, q.bhardlimit, q.bsoftlimit, q.curblocks) == (1024, 64, 64, 60)
    assert (q.fhardlimit, q.fsoftlimit, q.curfiles) == (10, 10, 1)
    assert q.active and (q.btimeleft, q.ftimeleft) == (0, 0)


def test_a_user_reads_their_own_and_their_groups_quotas_and_root_reads_any(
        mds: PandoMds) -> None:
    with rquota_client(mds.pod, 1000, 100, groups=(300,)) as rq:
        assert rq.get(DIR, USRQUOTA, 1000)[0] == Q_OK
        assert rq.get(DIR, GRPQUOTA, 100)[0] == Q_OK
        assert rq.get(DIR, GRPQUOTA, 300)[0] == Q_OK
        assert rq.get(DIR, USRQUOTA, 1001) == (Q_EPERM, None)
        assert rq.get(DIR, GRPQUOTA, 200) == (Q_EPERM, None)
    with rquota_client(mds.pod) as root:
        assert root.get(DIR, USRQUOTA, 1001)[0] == Q_OK
        assert root.get(DIR, GRPQUOTA, 200)[0] == Q_OK


def test_root_sets_a_quota_and_the_store_holds_creates_and_writes_to_it(mds: PandoMds) -> None:
    d = shared_dir(mds)
    with rquota_client(mds.pod) as root:
        status, q = root.set(DIR, USRQUOTA, 1000, kib=16, files=2)
    assert status == Q_OK and q is not None
    assert (q.limit_bytes, q.fhardlimit) == (16 * KIB, 2)
    assert "bytes: 0 B used of 16 KiB" in pando(mds, "quota", "--user", "1000").stdout
    with connect(mds, uid=1000, gid=100) as alice:
        fh = new_file(alice, d, "a", b"a" * (12 * KIB))
        assert alice.write(fh, 12 * KIB, b"x" * (8 * KIB), nfs3.FILE_SYNC).status == NFS3ERR_DQUOT
        new_file(alice, d, "b")
        assert alice.create(d, "c", nfs3.GUARDED, Sattr3(mode=0o644)).status == NFS3ERR_DQUOT
    with rquota_client(mds.pod) as root:
        status, q = root.set(DIR, USRQUOTA, 1000)
    assert status == Q_OK and q is not None and (q.bhardlimit, q.fhardlimit) == (0, 0)
    assert "no limit" in pando(mds, "quota", "--user", "1000").stdout


def test_only_root_on_a_trusted_host_sets_a_quota(mds: PandoMds) -> None:
    with rquota_client(mds.pod, 1000, 100) as user:
        assert user.set(DIR, USRQUOTA, 1000, kib=1 << 20) == (Q_EPERM, None)
    with rquota_client(mds.pod, source=UNTRUSTED) as squashed_root:
        assert squashed_root.set(DIR, USRQUOTA, 1000, kib=1 << 20) == (Q_EPERM, None)
        assert squashed_root.set(DIR, GRPQUOTA, 65534, kib=1 << 20) == (Q_EPERM, None)
        # Squashed, it is nobody: it reads nobody's quota, not root's choice of any.
        assert squashed_root.get(DIR, USRQUOTA, 1000) == (Q_EPERM, None)
        assert squashed_root.get(DIR, USRQUOTA, 65534)[0] == Q_OK
    out = pando(mds, "quota").stdout
    assert "user" not in out and "group" not in out, out


def test_limits_pando_would_not_keep_are_refused_and_change_nothing(mds: PandoMds) -> None:
    with rquota_client(mds.pod) as root:
        assert root.set(DIR, USRQUOTA, 1000, kib=64, files=5)[0] == Q_OK
        assert root.set(DIR, USRQUOTA, 1000, kib=128, soft_kib=100) == (Q_EPERM, None)
        assert root.set(DIR, USRQUOTA, 1000, files=9, soft_files=8) == (Q_EPERM, None)
        assert root.set(DIR, 2, 1000, kib=128) == (Q_EPERM, None)  # a project quota
        assert root.get(DIR, 2, 1000) == (Q_EPERM, None)
        assert root.get("/not-exported", USRQUOTA, 1000) == (Q_EPERM, None)
        status, q = root.get(DIR, USRQUOTA, 1000)
    assert status == Q_OK and q is not None and (q.bhardlimit, q.fhardlimit) == (64, 5)


def test_malformed_calls_get_garbage_args_and_the_service_goes_on(mds: PandoMds) -> None:
    with rquota_client(mds.pod) as rq:
        for args in (b"", b"\0\0\0\x05/pa", b"\xff\xff\xff\xff" + b"x" * 64,
                     b"\0\0\x04\x01" + b"/" * 1025 + b"\0\0\0" + bytes(8)):
            with pytest.raises(RpcAccepted) as e:
                rq.rpc.call(RQUOTAPROC_GETQUOTA, args)
            assert e.value.stat == GARBAGE_ARGS, args[:16]
        assert rq.get(DIR, USRQUOTA, 0)[0] == Q_OK
