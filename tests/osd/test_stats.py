"""The target's I/O counters (STATS, `pando-osd-tool stat`, the log): NFSv3
data-server I/O counted exactly, control-protocol I/O counted apart,
refused handles counted as rejections and never as I/O, everything back
at zero after a restart.  These are what pNFS tests use to prove that
file data went straight from clients to the targets."""
from __future__ import annotations

import os
import re
import time
from typing import Callable, Iterator

import pytest

from pando_testing import nfs3
from pando_testing.capability import RIGHTS_READ, handle_for, mint_handle
from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey
from pando_testing.nfs3 import NFS3_OK, Nfs3Client
from pando_testing.osdctl import OsdCtl, Stable, Stats, Status, open_ctl

MIB = 1 << 20
PART = 1
ZERO = {name: 0 for name in Stats(*[0] * 16).counters()}


@pytest.fixture
def ctl(osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(osd.pod, osd) as c:
        yield c


@pytest.fixture
def nfs(osd: OsdProcess) -> Iterator[Nfs3Client]:
    with osd.nfs3() as c:
        yield c


def counters(ctl: OsdCtl) -> dict[str, int]:
    return ctl.stats().counters()


def test_counters_start_at_zero(ctl: OsdCtl) -> None:
    st = ctl.stats()
    assert st.counters() == ZERO
    assert abs(st.started_ns / 1e9 - time.time()) < 60


def test_nfs_io_counted_exactly(ctl: OsdCtl, nfs: Nfs3Client,
                                make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    data = os.urandom(3 * MIB + 12345)                         # N bytes
    pieces = [(at, data[at:at + MIB]) for at in range(0, len(data), MIB)]
    stables = [nfs3.UNSTABLE, nfs3.UNSTABLE, nfs3.DATA_SYNC, nfs3.FILE_SYNC]
    for (at, piece), stable in zip(pieces, stables):
        assert nfs.write(fh, at, piece, stable).status == NFS3_OK
    assert nfs.commit(fh).status == NFS3_OK
    got = nfs.read(fh, 1000, MIB)                              # M bytes in two READs
    got2 = nfs.read(fh, 1000 + MIB, 777)
    assert got.data + got2.data == data[1000:1000 + MIB + 777]
    tail = nfs.read(fh, len(data) - 10, MIB)                   # short, at eof
    assert tail.eof and tail.data == data[-10:]
    nfs.getattr(fh)                                            # neither I/O nor error
    nfs.null()

    assert counters(ctl) == ZERO | {
        "nfs_write_ops": 4, "nfs_write_bytes": len(data),
        "nfs_write_unstable": 2, "nfs_write_data_sync": 1, "nfs_write_file_sync": 1,
        "nfs_commit_ops": 1,
        "nfs_read_ops": 3, "nfs_read_bytes": MIB + 777 + 10,
    }


def test_control_io_counted_apart(osd: OsdProcess, ctl: OsdCtl, nfs: Nfs3Client,
                                  make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    assert ctl.write(PART, 1, 0, b"g" * 5000, Stable.FILE_SYNC).status == Status.OK
    assert ctl.write(PART, 1, 5000, b"h" * 3000).status == Status.OK
    assert ctl.read(PART, 1, 100, 1000).data == b"g" * 1000
    assert ctl.read(PART, 2, 0, 10).status == Status.NOENT   # a failure moves nothing
    assert nfs.write(fh, 8000, b"n" * 100, nfs3.UNSTABLE).status == NFS3_OK
    assert counters(ctl) == ZERO | {
        "ctl_write_ops": 2, "ctl_write_bytes": 8000,
        "ctl_read_ops": 1, "ctl_read_bytes": 1000,
        "nfs_write_ops": 1, "nfs_write_bytes": 100, "nfs_write_unstable": 1,
    }
    # the tool's put and get are control-protocol I/O as well
    data = os.urandom(2 * MIB + 3)
    osd.tool("put", str(PART), "1", "-", input=data, text=False)
    assert osd.tool("get", str(PART), "1", "-", text=False).stdout == data
    c = counters(ctl)
    assert c["ctl_write_bytes"] == 8000 + len(data)
    assert c["ctl_read_bytes"] == 1000 + len(data)
    assert (c["nfs_write_bytes"], c["nfs_read_bytes"]) == (100, 0)


def test_refused_handles_count_as_rejections_only(
        osd: OsdProcess, ctl: OsdCtl, nfs: Nfs3Client, cluster_key: ClusterKey,
        make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    forged = fh[:-1] + bytes([fh[-1] ^ 1])                   # MAC broken
    assert nfs.read(forged, 0, 4096).status == nfs3.NFS3ERR_BADHANDLE
    assert nfs.write(forged, 0, b"x" * 4096, nfs3.FILE_SYNC).status == nfs3.NFS3ERR_BADHANDLE
    assert nfs.commit(forged).status == nfs3.NFS3ERR_BADHANDLE
    assert nfs.getattr(forged).status == nfs3.NFS3ERR_BADHANDLE
    other = mint_handle(cluster_key, osd.osd_id + 1, PART, 1)  # another target's
    assert nfs.read(other, 0, 10).status == nfs3.NFS3ERR_STALE
    read_only = handle_for(osd, PART, 1, rights=RIGHTS_READ)
    assert nfs.write(read_only, 0, b"x", nfs3.FILE_SYNC).status == nfs3.NFS3ERR_ACCES
    assert ctl.set_cap_version(PART, 1, 1) == (Status.OK, 0)   # fences fh
    assert nfs.write(fh, 0, b"x", nfs3.UNSTABLE).status == nfs3.NFS3ERR_STALE
    assert counters(ctl) == ZERO | {"nfs_err_rejected": 7}

    # a request refused for what it asks is not a rejection of its handle
    fresh = handle_for(osd, PART, 1, cap_version=1)
    assert nfs.write(fresh, 1 << 63, b"x", nfs3.UNSTABLE).status == nfs3.NFS3ERR_FBIG
    assert nfs.write(fresh, 0, b"abc", nfs3.UNSTABLE, count=4).status == nfs3.NFS3ERR_INVAL
    assert counters(ctl) == ZERO | {"nfs_err_rejected": 7, "nfs_err_other": 2}


def test_counters_restart_at_zero(osd: OsdProcess, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    with osd.nfs3() as c:
        assert c.write(fh, 0, b"before" * 100, nfs3.FILE_SYNC).status == NFS3_OK
        assert c.read(fh, 0, 600).status == NFS3_OK
    with open_ctl(osd.pod, osd) as ctl:
        before = ctl.stats()
        assert ctl.read(PART, 1, 0, 6).status == Status.OK
    assert (before.nfs_write_bytes, before.nfs_read_bytes) == (600, 600)
    osd.restart()
    with open_ctl(osd.pod, osd) as ctl:
        after = ctl.stats()
        assert after.counters() == ZERO
        assert after.started_ns > before.started_ns
        assert ctl.read_all(PART, 1) == b"before" * 100        # the data, not the counts, stayed
        assert counters(ctl)["ctl_read_bytes"] == 600


def test_tool_stat_prints_counters(osd: OsdProcess, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    forged = fh[:-1] + bytes([fh[-1] ^ 1])
    with osd.nfs3() as c:
        assert c.write(fh, 0, b"z" * 4321, nfs3.DATA_SYNC).status == NFS3_OK
        assert c.read(forged, 0, 1).status == nfs3.NFS3ERR_BADHANDLE
    lines = osd.tool("stat").stdout.splitlines()
    # the STATFS lines first, as they always were; then one line per counter
    assert [line.split()[0] for line in lines[:8]] == [
        "uuid", "osd_id", "key_id", "total_bytes", "free_bytes", "partitions", "objects",
        "created_ns"]
    fields = dict(line.split(None, 1) for line in lines[8:])
    with open_ctl(osd.pod, osd) as ctl:
        st = ctl.stats()
    assert list(fields) == ["started_ns", *st.counters()]
    assert {k: int(v) for k, v in fields.items()} == {"started_ns": st.started_ns,
                                                      **st.counters()}
    assert (st.nfs_write_bytes, st.nfs_write_data_sync, st.nfs_err_rejected) == (4321, 1, 1)


# The log line also carries the disk model's waits and the control
# protocol's denials, which STATS does not.
LOGGED_ZERO = ZERO | {"throttle_wait_ns_read": 0, "throttle_wait_ns_write": 0,
                      "ctl_auth_denied": 0, "ctl_replays_refused": 0}


def counter_lines(osd: OsdProcess, when: str) -> list[dict[str, int]]:
    return [{k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m)}
            for m in re.findall(rf" info  counters {when}:(.*)$", osd.log_text(), re.M)]


def test_counters_logged_when_changed_and_at_shutdown(
        osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=["--stats-interval", "1"])
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), "1")
    time.sleep(2.5)
    assert counter_lines(osd, "since start") == []             # nothing moved, nothing said
    with osd.nfs3() as c:
        assert c.write(handle_for(osd, PART, 1), 0, b"w" * 2048, nfs3.FILE_SYNC).status == NFS3_OK
    deadline = time.monotonic() + 10
    while not counter_lines(osd, "since start") and time.monotonic() < deadline:
        time.sleep(0.2)
    first = counter_lines(osd, "since start")
    assert first and first[-1] == LOGGED_ZERO | {"nfs_write_ops": 1, "nfs_write_bytes": 2048,
                                          "nfs_write_file_sync": 1}
    time.sleep(2.5)
    assert len(counter_lines(osd, "since start")) == len(first)  # unchanged: no new line
    assert osd.stop() == 0
    assert counter_lines(osd, "at shutdown") == [first[-1]]
