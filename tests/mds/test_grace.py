"""The grace period after a restart of the metadata manager ends as soon as
recovery is done, with NLM on (ganesha-fsal/patches 0140): once every
NFSv4 client of the previous run has sent RECLAIM_COMPLETE and every
NFSv3 host that held locks has been told of the restart (sm-notify, as
`pando-cluster up` and the harness run it) and has had its reclaim window;
with nothing to recover, at once.  Until then a client that reclaims gets
its state back and one that asks for new state waits (GRACE); a host
sm-notify cannot reach keeps everyone waiting, up to Grace_Period.

Stock Ganesha 4.3 keeps the whole 45 s with NLM on: run these on it
(PANDO_GANESHA_ROOT, ganesha-fsal/patches/README.md) to see them fail."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Iterator

import pytest

from pando_cluster.ganesha_conf import GRACE_PERIOD_S, NSM_RECLAIM_WINDOW_S
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect_v4
from pando_testing.nfs4 import NFS4_OK, NFS4ERR_GRACE, Nfs4Client
from pando_testing.nlm import NLM4_DENIED_GRACE_PERIOD, NLM4_GRANTED, nlm_host

DIR = "/pando"
# Starting Ganesha and a client's first calls on the shared 2-core VM.
SLACK_S = 5.0


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> Iterator[PandoMds]:
    """A manager as users run it: NFSv3 with NLM and NFSv4.1, the grace period on."""
    yield mds_factory(4, object_pool=0, protocols=(3, 4), pseudo=DIR, graceless=False)


def seconds_until_new_state(nfs: Nfs4Client, since: float, limit: float) -> float:
    """Seconds from `since` until a new OPEN is granted (GRACE until then)."""
    n = 0
    while True:
        n += 1
        status = nfs.create_status(DIR, f"after-grace-{n}")
        if status == NFS4_OK:
            return time.monotonic() - since
        assert status == NFS4ERR_GRACE, f"OPEN: {status}"
        assert time.monotonic() - since < limit, f"still in grace after {limit:.0f} s"
        time.sleep(0.2)


def test_with_nothing_to_recover_the_grace_period_ends_at_start(mds: PandoMds) -> None:
    with connect_v4(mds) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        assert nfs.create_status(DIR, "first") == NFS4_OK
    host = nlm_host(mds.pod, "127.0.0.2")
    try:
        fh = mds.create_files(["locked"])[0]
        assert host.lock(fh, 0, 10) == NLM4_GRANTED
    finally:
        host.close()


def test_grace_ends_once_every_nfsv4_client_of_the_last_run_reclaimed(mds: PandoMds) -> None:
    verifier = os.urandom(8)
    with connect_v4(mds, "returning", verifier) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        assert nfs.create_status(DIR, "held") == NFS4_OK
    mds.kill9()
    mds.start()
    started = time.monotonic()
    with connect_v4(mds) as newcomer:
        assert newcomer.reclaim_complete() == NFS4_OK
        assert newcomer.create_status(DIR, "too-early") == NFS4ERR_GRACE
        time.sleep(2)   # the client comes back late: grace waits for it
        assert newcomer.create_status(DIR, "still-too-early") == NFS4ERR_GRACE
        with connect_v4(mds, "returning", verifier) as back:
            assert back.reclaim_complete() == NFS4_OK
            reclaimed = time.monotonic()
            took = seconds_until_new_state(newcomer, reclaimed, GRACE_PERIOD_S)
    print(f"grace ended {took:.1f} s after the last RECLAIM_COMPLETE, "
          f"{reclaimed - started + took:.1f} s after the start")
    assert took < 2.0 + SLACK_S


def test_grace_waits_for_nfsv3_hosts_to_be_told_and_to_reclaim_their_locks(
        mds: PandoMds) -> None:
    fh = mds.create_files(["locked"])[0]
    holder = nlm_host(mds.pod, "127.0.0.2")
    try:
        assert holder.lock(fh, 0, 100) == NLM4_GRANTED
    finally:
        holder.close()
    mds.kill9()
    mds.start()
    started = time.monotonic()
    newcomer, back = nlm_host(mds.pod, "127.0.0.3"), nlm_host(mds.pod, "127.0.0.2")
    try:
        assert newcomer.lock(fh, 200, 10) == NLM4_DENIED_GRACE_PERIOD
        assert back.lock(fh, 0, 100, reclaim=True) == NLM4_GRANTED
        while (status := newcomer.lock(fh, 200, 10)) != NLM4_GRANTED:
            assert status == NLM4_DENIED_GRACE_PERIOD, status
            assert time.monotonic() - started < GRACE_PERIOD_S, "the whole grace period"
            time.sleep(0.2)
        took = time.monotonic() - started
        # The reclaimed lock survived the grace period's end.
        assert newcomer.lock(fh, 0, 1) != NLM4_GRANTED
    finally:
        newcomer.close()
        back.close()
    print(f"grace ended {took:.1f} s after the start (reclaim window {NSM_RECLAIM_WINDOW_S} s)")
    assert NSM_RECLAIM_WINDOW_S <= took < NSM_RECLAIM_WINDOW_S + SLACK_S
    assert not any((mds.statd_dir / "sm.bak").iterdir()), "sm-notify left hosts untold"


def test_a_host_sm_notify_cannot_reach_keeps_the_grace_period(mds: PandoMds) -> None:
    """A host that held locks but does not answer (a crashed compute node)
    may still come back and reclaim: the grace period goes on for it."""
    fh = mds.create_files(["locked"])[0]
    holder = nlm_host(mds.pod, "127.0.0.2")
    try:
        assert holder.lock(fh, 0, 100) == NLM4_GRANTED
    finally:
        holder.close()
    monitored = mds.statd_dir / "sm" / "127.0.0.2"
    assert monitored.exists(), "statd does not monitor the host"
    # The same host, at an address nothing answers at in the pod
    # (statd's record names it in its file name and in its text).
    gone = monitored.with_name("192.0.2.1")
    gone.write_text(monitored.read_text().replace("127.0.0.2", "192.0.2.1"))
    monitored.unlink()
    mds.kill9()
    mds.start()
    started = time.monotonic()
    with connect_v4(mds) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        time.sleep(NSM_RECLAIM_WINDOW_S + SLACK_S)
        assert nfs.create_status(DIR, "too-early") == NFS4ERR_GRACE
    assert (mds.statd_dir / "sm.bak" / "192.0.2.1").exists()
    assert time.monotonic() - started < GRACE_PERIOD_S, "the test was too slow to tell"
