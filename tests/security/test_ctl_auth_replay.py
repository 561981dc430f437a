"""The control protocol against an observer on the storage network (issue
22, finding 1 and part of 8): a manager's call seen on the wire must not
run again, with its own arguments or with others, on its OSD or on
another; a result changed on its way back must not be believed, by the C
client or the Python one; and the cluster key can be rotated, the
previous key accepted until it is dropped and an unknown one never.  Each
attack succeeded against a pando-osd built before AUTH_PANDO version 2
(osd-target/proto/osd_ctl.x)."""
from __future__ import annotations

import re
import socket
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing import oncrpc
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess, osd_binary
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_BADHANDLE
from pando_testing.oncrpc import Auth, RpcClient, RpcDenied
from pando_testing.osdctl import (BadReplyVerifier, CreateItem, Info, OsdCtl, Proc, Signer,
                                  Status, args_partition, args_setcap, args_write, ctl_key,
                                  open_ctl)
from pando_testing.pod import Pod

PART, OID = 4, 40


@pytest.fixture
def ctl(pod: Pod, osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(pod, osd) as c:
        c.create_partition(PART)
        status, _ = c.create_objects(PART, [CreateItem(OID, cap_version=1)])
        assert status == Status.OK
        yield c


@dataclass
class Seen:
    """A signed call as an observer copies it off the wire."""
    xid: int
    proc: int
    args: bytes
    cred: Auth
    verf: Auth


def seen_call(ctl: OsdCtl, proc: int, args: bytes) -> Seen:
    """A call signed as the manager signs it (not sent yet)."""
    assert ctl.signer is not None
    xid = ctl.rpc.next_xid()
    cred, verf, _ = ctl.signer.sign(xid, proc, args)
    return Seen(xid, proc, args, cred, verf)


def send(ctl: OsdCtl, seen: Seen, args: bytes | None = None) -> Status:
    """Sends a seen call's header, with its own arguments or others."""
    reply = ctl.call_raw(seen.proc, seen.args if args is None else args, cred=seen.cred,
                         verf=seen.verf, xid=seen.xid)
    return Status(struct.unpack(">I", reply.body[:4])[0])


def refused(fn: Callable[[], object]) -> int:
    """The auth_stat fn() was denied with."""
    with pytest.raises(RpcDenied) as e:
        fn()
    assert e.value.reject_stat == oncrpc.AUTH_ERROR
    return e.value.detail


def shutdown_counters(osd: OsdProcess) -> dict[str, int]:
    osd.stop()
    line = re.findall(r" info  counters at shutdown:(.*)$", osd.log_text(), re.M)[-1]
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split())}


def test_a_seen_fence_sent_again_with_other_arguments_is_refused(ctl: OsdCtl) -> None:
    """The manager fences a client (capability version 1 -> 7); the
    observer sends the same header with version 1, to let it back in."""
    fence = seen_call(ctl, Proc.SET_CAP_VERSION, args_setcap(PART, OID, 7))
    assert send(ctl, fence) == Status.OK
    assert refused(lambda: send(ctl, fence, args_setcap(PART, OID, 1))) == \
        oncrpc.AUTH_REJECTEDCRED
    assert ctl.info(PART, OID)[Info.CAP_VERSION] == 7


def test_a_header_taken_off_the_wire_cannot_carry_other_arguments(ctl: OsdCtl) -> None:
    """Held back and sent first with other bytes (a man in the middle):
    the MAC covers the arguments, so nothing is written."""
    write = seen_call(ctl, Proc.WRITE, args_write(PART, OID, 0, b"from the manager"))
    assert refused(lambda: send(ctl, write, args_write(PART, OID, 0, b"from the attacker"))) \
        == oncrpc.AUTH_BADVERF
    assert ctl.info(PART, OID)[Info.LENGTH] == 0
    # its credential is spent: refused from its header on, whatever follows
    assert refused(lambda: send(ctl, write, args_write(PART, OID, 1 << 30, b"x"))) == \
        oncrpc.AUTH_REJECTEDCRED
    # the manager's own call too (one in the middle could as well drop it):
    # it sees the denial, nothing ran twice
    assert refused(lambda: send(ctl, write)) == oncrpc.AUTH_REJECTEDCRED
    assert ctl.info(PART, OID)[Info.LENGTH] == 0


def test_an_identical_replay_is_refused_counted_and_logged(pod: Pod, osd: OsdProcess,
                                                          ctl: OsdCtl) -> None:
    """A WRITE replayed after a newer one would roll the object back."""
    first = seen_call(ctl, Proc.WRITE, args_write(PART, OID, 0, b"version 1"))
    assert send(ctl, first) == Status.OK
    assert ctl.write(PART, OID, 0, b"version 2").status == Status.OK
    assert refused(lambda: send(ctl, first)) == oncrpc.AUTH_REJECTEDCRED
    with open_ctl(pod, osd) as other:     # the cache is the target's, not the connection's
        assert refused(lambda: send(other, first)) == oncrpc.AUTH_REJECTEDCRED
    assert ctl.read_all(PART, OID) == b"version 2"
    ctl.close()
    assert re.search(r"ctl: 127\.0\.0\.1:\d+ denied: replayed call", osd.log_text())
    assert shutdown_counters(osd)["ctl_replays_refused"] == 2


def test_a_call_for_one_osd_is_refused_by_another(pod: Pod,
                                                 osd_factory: Callable[..., OsdProcess]) -> None:
    """Both hold the same cluster key; a call seen on osd.1's traffic must
    not run on osd.2 (whose replay cache never saw its nonce)."""
    one, two = osd_factory(1), osd_factory(2)
    with open_ctl(pod, one) as c1, open_ctl(pod, two) as c2:
        mkpart = seen_call(c1, Proc.CREATE_PARTITION, args_partition(9))
        assert refused(lambda: send(c2, mkpart)) == oncrpc.AUTH_BADCRED
        assert c2.list_all(0) == []
        assert send(c1, mkpart) == Status.OK
        assert c1.list_all(0) == [9]
    # a credential that says osd.1, MAC'd with osd.2's control key
    forged = Signer(two.key.key_id, two.key.secret, osd_id=1,
                    ctl_key=ctl_key(two.key.secret, 2))
    with open_ctl(pod, one, forged) as c:
        assert refused(lambda: c.create_partition(10)) == oncrpc.AUTH_BADVERF


class TamperingProxy:
    """Between a client and a target's control port, inside the pod: calls
    pass as they are; every reply that carries results goes back with the
    last byte of its results flipped (a value changed on its way)."""

    def __init__(self, pod: Pod, target: OsdProcess) -> None:
        self.pod, self.target = pod, target

        def listen() -> socket.socket:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(4)
            return s
        self.listener = pod.call_inside(listen)
        self.addr = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.flipped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = self.pod.connect(self.target.host, self.target.ctl_port)
            threading.Thread(target=self._calls, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _calls(client: socket.socket, upstream: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
        except OSError:
            pass
        upstream.close()

    def _replies(self, upstream: socket.socket, client: socket.socket) -> None:
        rpc = RpcClient(upstream, 0, 0)
        try:
            while True:
                rec = bytearray(rpc.recv_record())
                stat, _, verf_len = struct.unpack(">III", rec[8:20])
                if stat == oncrpc.MSG_ACCEPTED and len(rec) > 24 + (verf_len + 3) // 4 * 4:
                    rec[-1] ^= 1
                    self.flipped += 1
                client.sendall(struct.pack(">I", oncrpc.LAST_FRAGMENT | len(rec)) + rec)
        except (OSError, oncrpc.ConnectionClosed):
            client.close()

    def close(self) -> None:
        self.listener.close()


def test_a_result_changed_on_its_way_back_is_rejected(pod: Pod, osd: OsdProcess,
                                                      ctl: OsdCtl) -> None:
    proxy = TamperingProxy(pod, osd)
    try:
        host, port = proxy.addr.split(":")
        with OsdCtl.open(pod, host, int(port), ctl.signer) as through:
            through.null()                      # no results: passes untouched
            with pytest.raises(BadReplyVerifier):
                through.statfs()
        cp = pod.run([osd_binary("pando-osd-tool"), "--ctl", proxy.addr, "--key-file",
                      osd.key.path, "stat"], check=False)
        assert cp.returncode == 1 and "free_bytes" not in cp.stdout, cp.stdout
        assert "stat: Protocol error" in cp.stderr, cp.stderr
        assert proxy.flipped >= 2
    finally:
        proxy.close()


def test_the_previous_key_works_during_a_rotation_and_an_unknown_one_does_not(
        pod: Pod, tmp_path: Path, osd: OsdProcess, cluster_key: ClusterKey) -> None:
    """Rotation: the targets restart one by one with the new key and the
    old one as previous, the managers then sign with the new key, and the
    previous key is dropped.  Control calls and capabilities minted with
    either key work in between; a key of another id never does."""
    with open_ctl(pod, osd) as c:
        c.create_partition(PART)
        c.create(PART, OID)
    old_handle = handle_for(osd, PART, OID)
    rotated = write_cluster_key(tmp_path / "rotated.key", key_id=2, previous=cluster_key)
    osd.key = rotated
    osd.restart()
    with open_ctl(pod, osd, cluster_key) as old, open_ctl(pod, osd, rotated) as new:
        assert old.list_all(0) == [PART]
        assert new.statfs().key_id == 2         # the data directory follows the new key
    with osd.nfs3() as nfs:
        assert nfs.getattr(old_handle).status == NFS3_OK
        assert nfs.getattr(handle_for(osd, PART, OID)).status == NFS3_OK
    unknown = write_cluster_key(tmp_path / "unknown.key", key_id=3)
    with open_ctl(pod, osd, unknown) as c:
        assert refused(c.statfs) == oncrpc.AUTH_BADCRED
    same_id = write_cluster_key(tmp_path / "same-id.key", key_id=1)
    with open_ctl(pod, osd, same_id) as c:
        assert refused(c.statfs) == oncrpc.AUTH_BADVERF

    osd.key = write_cluster_key(tmp_path / "done.key", key_id=2, secret=rotated.secret)
    osd.restart()
    with open_ctl(pod, osd, cluster_key) as old:
        assert refused(old.statfs) == oncrpc.AUTH_BADCRED
    with open_ctl(pod, osd) as new:
        assert new.list_all(0) == [PART]
    with osd.nfs3() as nfs:
        assert nfs.getattr(old_handle).status == NFS3ERR_BADHANDLE
