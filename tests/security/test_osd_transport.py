"""The OSD transport against peers that misbehave on purpose (issue 22,
finding 2 and part of 8): one that never reads its replies, one that opens
connection after connection, one that declares a huge record without a
credential, one that goes quiet, one that stops half way through a record,
one that floods the log with denied calls.  Each would stall, exhaust or
flood a pando-osd built before osd-target/src/rpc_conn.c."""
from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import Callable

import pytest

from pando_testing import nfs3, oncrpc
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.oncrpc import LAST_FRAGMENT, Auth
from pando_testing.osdctl import PROG, VERS, Proc, open_ctl
from pando_testing.pod import Pod

MIB = 1 << 20


def dial(pod: Pod, port: int, source: str = "127.0.0.1", rcvbuf: int = 0,
         timeout: float = 10.0) -> socket.socket:
    """A connection to the target from `source` (any 127/8 address is
    ours on the pod's loopback), with a small receive buffer if asked."""
    def go() -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.bind((source, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        return s
    return pod.call_inside(go)


def null_call(s: socket.socket, prog: int, vers: int, xid: int = 7) -> None:
    """A NULL call and its reply on a raw connection (fails if closed)."""
    rpc = oncrpc.RpcClient(s, prog, vers)
    rpc.call_raw(0, b"", xid=xid)


def served(s: socket.socket, prog: int, vers: int) -> bool:
    try:
        null_call(s, prog, vers)
        return True
    except (oncrpc.ConnectionClosed, ConnectionError, socket.timeout, OSError):
        return False


def closed_within(s: socket.socket, seconds: float) -> float:
    """Seconds until the target closed s (reading and dropping anything
    it sends); fails if it is still open after `seconds`."""
    start = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - start < seconds:
        try:
            if not s.recv(MIB):
                return time.monotonic() - start
        except socket.timeout:
            continue
        except ConnectionError:
            return time.monotonic() - start
    pytest.fail(f"the connection is still open after {seconds} s")


def rss_kib(osd: OsdProcess) -> int:
    assert osd.proc is not None
    for line in Path(f"/proc/{osd.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def stall(pod: Pod, osd: OsdProcess) -> socket.socket:
    """A connection with 64 pipelined 1 MiB READs whose replies it never
    reads, and a small receive buffer so the target's socket fills."""
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "1")
    fh = handle_for(osd, 1, 1)
    with osd.nfs3() as c:
        assert c.write(fh, 0, bytes(MIB), nfs3.FILE_SYNC).status == nfs3.NFS3_OK
    staller = dial(pod, osd.nfs_port, rcvbuf=4096)
    args = nfs3.read_args(fh, 0, MIB)
    for xid in range(64):
        call = oncrpc.encode_call(xid, nfs3.NFS3_PROGRAM, 3, nfs3.PROC_READ, args,
                                  oncrpc.auth_sys())
        staller.sendall(struct.pack(">I", LAST_FRAGMENT | len(call)) + call)
    time.sleep(1.0)        # the workers have answered what they could
    return staller


def test_peer_that_never_reads_does_not_stall_others(pod: Pod, osd: OsdProcess) -> None:
    """Attack (a): before, every worker blocked sending to the staller (up
    to 60 s each), so another client's calls on the same port got no
    answer.  Now the replies wait in the staller's own queue."""
    staller = stall(pod, osd)
    other = dial(pod, osd.nfs_port, source="127.0.0.2", timeout=5.0)
    start = time.monotonic()
    for xid in range(20):
        null_call(other, nfs3.NFS3_PROGRAM, 3, xid)
    assert time.monotonic() - start < 3.0
    other.close()
    staller.close()


def test_peer_that_never_reads_is_closed(pod: Pod,
                                         osd_factory: Callable[..., OsdProcess]) -> None:
    """Attack (a), continued: once the staller's replies stop moving for
    send_timeout, the target closes it (the socket buffers still take a
    trickle for a few seconds), dropping what it had queued."""
    osd = osd_factory(1, extra_args=["--send-timeout", "3"])
    staller = stall(pod, osd)
    deadline = time.monotonic() + 30
    while "its replies were not read" not in osd.log_path.read_text():
        assert time.monotonic() < deadline, "the stalled connection is still open"
        time.sleep(0.2)
    closed_within(staller, 10.0)
    assert osd.alive()


def test_connections_per_source_are_limited(pod: Pod, osd: OsdProcess) -> None:
    """Attack (b): one address opens connection after connection.  Before,
    it could hold all 256 slots of a port; now it gets 32 (the default
    max_conns_per_source) and another address is still served."""
    conns = [dial(pod, osd.ctl_port, timeout=3.0) for _ in range(40)]
    ok = [served(s, PROG, VERS) for s in conns]
    assert sum(ok) == 32 and all(ok[:32]), ok
    other = dial(pod, osd.ctl_port, source="127.0.0.2")
    assert served(other, PROG, VERS)
    for s in conns:
        s.close()
    other.close()
    # The slots come back once the connections are gone.
    time.sleep(0.5)
    again = dial(pod, osd.ctl_port)
    assert served(again, PROG, VERS)
    again.close()


def test_unauthenticated_huge_record_costs_no_memory(pod: Pod, osd: OsdProcess) -> None:
    """Attack (c): peers with no credential each send 1 MiB of a record
    that declares more fragments to come.  Before, each such record took
    (and filled) a 1 MiB buffer: 32 peers, 32 MiB.  Now the header is
    refused (AUTH_TOOWEAK) and the rest dropped as it arrives."""
    peers = 32
    call = oncrpc.encode_call(1, PROG, VERS, Proc.WRITE, b"", Auth())
    body = call + bytes(MIB - len(call))
    conns = []
    for i in range(peers):
        s = dial(pod, osd.ctl_port, source=f"127.0.1.{i + 1}")
        s.sendall(struct.pack(">I", MIB) + body[:4096])   # not the last fragment
        conns.append(s)
    time.sleep(1.0)        # connections, threads and headers in place
    before = rss_kib(osd)
    for s in conns:
        s.sendall(body[4096:])
    time.sleep(1.0)
    grown = rss_kib(osd) - before
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB for {peers} unauthenticated records"
    with open_ctl(pod, osd) as c:
        c.null()
        assert c.statfs().osd_id == osd.osd_id
    for s in conns:
        s.close()


def test_idle_connection_is_closed(pod: Pod, osd_factory: Callable[..., OsdProcess]) -> None:
    """Attack (d): connections that say nothing hold slots forever.  Now
    one idle for idle_timeout is closed; a busy one is not."""
    osd = osd_factory(1, extra_args=["--idle-timeout", "2"])
    idle = dial(pod, osd.ctl_port)
    null_call(idle, PROG, VERS)
    busy = dial(pod, osd.ctl_port)
    start = time.monotonic()
    while time.monotonic() - start < 3.0:
        null_call(busy, PROG, VERS)
        time.sleep(0.5)
    assert closed_within(idle, 5.0) < 5.0
    null_call(busy, PROG, VERS)
    busy.close()


def test_unfinished_record_is_closed(pod: Pod, osd_factory: Callable[..., OsdProcess]) -> None:
    """Attack (e): a record that stops half way holds its connection (and,
    before, its buffer) for ever.  Now it must end within record_timeout."""
    osd = osd_factory(1, extra_args=["--record-timeout", "2", "--idle-timeout", "0"])
    for port in (osd.ctl_port, osd.nfs_port):
        s = dial(pod, port)
        call = oncrpc.encode_call(1, PROG, VERS, 0, b"")
        s.sendall(struct.pack(">I", LAST_FRAGMENT | (len(call) + 100)) + call)
        assert 1.5 < closed_within(s, 6.0) < 6.0


def test_denied_calls_do_not_flood_the_log(pod: Pod, osd: OsdProcess) -> None:
    """Finding 8: every call refused for its credential logged a line at
    info level, so a stranger could write the log as fast as it sends.
    Now such lines are rate limited, with a count of those dropped."""
    s = dial(pod, osd.ctl_port)
    rpc = oncrpc.RpcClient(s, PROG, VERS)
    for _ in range(300):
        with pytest.raises(oncrpc.RpcDenied):
            rpc.call_raw(Proc.STATFS, b"")
    s.close()
    lines = [ln for ln in osd.log_path.read_text().splitlines() if "too weak" in ln]
    assert 0 < len(lines) <= 20, len(lines)
