"""The disk model: `read_bandwidth` / `write_bandwidth` cap what one target
reads and writes (a token bucket per direction), so that one machine can
stand for many disks.  Only lower bounds on time are asserted for capped
targets: a loaded test machine can only make them slower."""
from __future__ import annotations

import os
import re
import time
from typing import Callable

import pytest

from pando_testing import nfs3
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess, osd_binary
from pando_testing.etcd import EtcdCluster
from pando_testing.nfs3 import NFS3_OK
from pando_testing.osdctl import Status, open_ctl
from pando_testing.threads import RaisingThread, join_all

MIB = 1 << 20
PART = 1
TOTAL = 8 * MIB
# 8 MiB at 4 MiB/s, less a burst of 0.4 MiB, is 1.9 s; 1.6 s leaves room.
CAPPED_FLOOR_S = 1.6
UNCAPPED_CEILING_S = 1.0


def start(osd_factory: Callable[..., OsdProcess], *caps: str) -> OsdProcess:
    osd = osd_factory(1, extra_args=list(caps))
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), "1")
    return osd


def nfs_write_8mib(osd: OsdProcess) -> float:
    data = os.urandom(MIB)
    fh = handle_for(osd, PART, 1)
    with osd.nfs3() as c:
        t0 = time.monotonic()
        for off in range(0, TOTAL, MIB):
            assert c.write(fh, off, data, nfs3.UNSTABLE).status == NFS3_OK
        return time.monotonic() - t0


def nfs_read_8mib(osd: OsdProcess) -> float:
    fh = handle_for(osd, PART, 1)
    with open_ctl(osd.pod, osd) as ctl:
        for off in range(0, TOTAL, MIB):
            assert ctl.write(PART, 1, off, b"r" * MIB).status == Status.OK
    with osd.nfs3() as c:
        t0 = time.monotonic()
        for off in range(0, TOTAL, MIB):
            res = c.read(fh, off, MIB)
            assert res.status == NFS3_OK and len(res.data) == MIB
        return time.monotonic() - t0


def shutdown_counters(osd: OsdProcess) -> dict[str, int]:
    assert osd.stop() == 0
    line = re.findall(r" info  counters at shutdown:(.*)$", osd.log_text(), re.M)[-1]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def test_capped_osd_writes_no_faster_than_its_write_bandwidth(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--write-bandwidth", "4M")
    took = nfs_write_8mib(osd)
    assert took >= CAPPED_FLOOR_S, f"8 MiB written in {took:.2f} s at a 4 MiB/s cap"
    assert "disk model: write bandwidth capped at 4194304 bytes/s" in osd.log_text()
    assert "disk model: read bandwidth unlimited" in osd.log_text()
    c = shutdown_counters(osd)
    assert c["throttle_wait_ns_write"] >= (CAPPED_FLOOR_S - 0.2) * 1e9
    assert c["throttle_wait_ns_read"] == 0


def test_uncapped_osd_writes_the_same_far_faster(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory)
    took = nfs_write_8mib(osd)
    assert took < UNCAPPED_CEILING_S, f"8 MiB written in {took:.2f} s with no cap"
    assert shutdown_counters(osd)["throttle_wait_ns_write"] == 0


def test_capped_osd_reads_no_faster_than_its_read_bandwidth(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--read-bandwidth", "4M")
    took = nfs_read_8mib(osd)
    assert took >= CAPPED_FLOOR_S, f"8 MiB read in {took:.2f} s at a 4 MiB/s cap"
    c = shutdown_counters(osd)
    assert c["throttle_wait_ns_read"] >= (CAPPED_FLOOR_S - 0.2) * 1e9
    assert c["throttle_wait_ns_write"] == 0    # the writes before were not capped


def test_uncapped_osd_reads_the_same_far_faster(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory)
    assert (took := nfs_read_8mib(osd)) < UNCAPPED_CEILING_S, f"8 MiB read in {took:.2f} s"


def test_control_protocol_io_is_capped_too(osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--write-bandwidth", "4M", "--read-bandwidth", "4M")
    with open_ctl(osd.pod, osd) as ctl:
        t0 = time.monotonic()
        for off in range(0, 4 * MIB, MIB):
            assert ctl.write(PART, 1, off, b"c" * MIB).status == Status.OK
        wrote = time.monotonic() - t0
        t0 = time.monotonic()
        assert len(ctl.read_all(PART, 1)) == 4 * MIB
        read = time.monotonic() - t0
    # 4 MiB at 4 MiB/s less a 0.4 MiB burst: 0.9 s each way
    assert wrote >= 0.75 and read >= 0.75, (wrote, read)


def test_reads_past_the_end_cost_nothing(osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--read-bandwidth", "1M")
    fh = handle_for(osd, PART, 1)
    with osd.nfs3() as c:
        assert c.write(fh, 0, b"x" * 100, nfs3.FILE_SYNC).status == NFS3_OK
        t0 = time.monotonic()
        for _ in range(20):                     # 20 MiB asked, 2000 bytes there
            assert c.read(fh, 0, MIB).data == b"x" * 100
        assert time.monotonic() - t0 < 1.0


@pytest.mark.parametrize("bad", ["4MB", "-1", "1.5G", "fast"])
def test_bad_bandwidth_refuses_to_start_with_a_clear_message(
        osd_factory: Callable[..., OsdProcess], bad: str) -> None:
    osd = osd_factory(1, start=False)
    res = osd.pod.run([osd_binary(), "--osd-id", "1", "--data-dir", osd.data_path,
                       "--key-file", osd.key.path, "--write-bandwidth", bad], check=False)
    assert res.returncode == 2
    assert f"bad value '{bad}' for write_bandwidth" in res.stderr


def test_presence_in_etcd_shows_the_time_spent_waiting_for_the_disk_model(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--write-bandwidth", "1M", "--etcd", etcd.endpoints,
                "--etcd-interval", "1")
    fh = handle_for(osd, PART, 1)
    with osd.nfs3() as c:
        for off in range(0, 2 * MIB, MIB):          # 2 MiB at 1 MiB/s: ~1.75 s of waits
            assert c.write(fh, off, b"w" * MIB, nfs3.UNSTABLE).status == NFS3_OK
    v = etcd.client().wait_for(
        lambda cl: (p := cl.get_json("/pando/osd/1")) and
        p["counters"]["nfs_write_ops"] == 2 and p, timeout=15, what="presence after writes")
    assert v["counters"]["throttle_wait_ns_write"] >= 1.4e9
    assert v["counters"]["throttle_wait_ns_read"] == 0


def test_sigterm_does_not_wait_for_writes_queued_at_a_low_cap(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = start(osd_factory, "--write-bandwidth", "256K")
    fh = handle_for(osd, PART, 1)
    statuses: list[int] = []

    def writer(off: int) -> None:                 # 1 MiB at 256 KiB/s: seconds each
        try:
            with osd.nfs3() as c:
                statuses.append(c.write(fh, off, b"q" * MIB, nfs3.UNSTABLE).status)
        except Exception:                         # the connection closed under it
            statuses.append(-1)
    threads = [RaisingThread(target=writer, args=(i * MIB,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)                               # all four queued in the bucket
    t0 = time.monotonic()
    assert osd.stop() == 0
    assert time.monotonic() - t0 < 5.0            # not the ~15 s the queue would take
    join_all(threads, 10)
    assert NFS3_OK in statuses                    # requests in flight were finished
