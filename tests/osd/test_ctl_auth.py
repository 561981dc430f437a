"""AUTH_PANDO on the control port: who is let in, who is turned away with
which auth_stat, and the reply verifier that proves the target holds the
key too and that the results are its own (the header comment of
osd-target/proto/osd_ctl.x).  Replays, changed arguments and results,
other targets' calls and a key rotation: tests/security/
test_ctl_auth_replay.py."""
from __future__ import annotations

import hashlib
import hmac
import struct
import time
from typing import Iterator

import pytest

from pando_testing import oncrpc
from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey
from pando_testing.oncrpc import Auth, RpcAccepted, RpcDenied
from pando_testing.osdctl import (AUTH_PANDO, PROG, OsdCtl, Proc, Signer, Status,
                                  args_list, args_partition, open_ctl)
from pando_testing.pod import Pod


@pytest.fixture
def ctl(pod: Pod, osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(pod, osd) as c:
        yield c


def denial(fn: object) -> int:
    """The auth_stat of an AUTH_ERROR denial raised by fn()."""
    with pytest.raises(RpcDenied) as e:
        fn()  # type: ignore[operator]
    assert e.value.reject_stat == oncrpc.AUTH_ERROR
    return e.value.detail


def signed_with(ctl: OsdCtl, signer: Signer, proc: int, args: bytes = b"") -> oncrpc.Reply:
    xid = ctl.rpc.next_xid()
    cred, verf, _ = signer.sign(xid, proc, args)
    return ctl.call_raw(proc, args, cred=cred, verf=verf, xid=xid)


def test_null_needs_no_credential(ctl: OsdCtl) -> None:
    reply = ctl.call_raw(Proc.NULL)
    assert (reply.verf.flavor, reply.body) == (oncrpc.AUTH_NONE, b"")
    reply = ctl.call_raw(Proc.NULL, cred=oncrpc.auth_sys())
    assert reply.body == b""


def test_every_other_procedure_needs_auth_pando(ctl: OsdCtl) -> None:
    for proc in Proc:
        if proc == Proc.NULL:
            continue
        assert denial(lambda: ctl.call_raw(proc)) == oncrpc.AUTH_TOOWEAK, proc.name
    assert denial(lambda: ctl.call_raw(Proc.CREATE_PARTITION, args_partition(1),
                                       cred=oncrpc.auth_sys())) == oncrpc.AUTH_TOOWEAK
    # nothing ran: the partition does not exist
    assert ctl.list_all(0) == []


def spec_key(cluster_key: ClusterKey, osd_id: int = 1) -> bytes:
    """The target's control key, from the osd_ctl.x comment."""
    return hmac.new(cluster_key.secret, b"pando-ctl osd %d" % osd_id, hashlib.sha256).digest()


def test_reply_verifier_is_the_mac_over_the_results(ctl: OsdCtl,
                                                   cluster_key: ClusterKey) -> None:
    signer = Signer.for_key(cluster_key, 1)
    xid = 0x01020304
    cred, verf, nonce = signer.sign(xid, Proc.STATFS)
    reply = ctl.call_raw(Proc.STATFS, cred=cred, verf=verf, xid=xid)
    want = hmac.new(spec_key(cluster_key),
                    b"pando-ctl-reply" + struct.pack(">IQI", xid, nonce, 0) + reply.body,
                    hashlib.sha256).digest()
    assert reply.verf.flavor == AUTH_PANDO == 0x50414E44
    assert reply.verf.body == want
    assert struct.unpack(">I", reply.body[:4])[0] == Status.OK
    # signed NULL is checked like any call and answered with a verifier
    ctl.call_signed(Proc.NULL)
    # so is an accepted reply other than SUCCESS (over its accept_stat)
    with pytest.raises(RpcAccepted) as e:
        ctl.call_signed(Proc.STATFS, b"\0\0\0\0")
    assert e.value.stat == oncrpc.GARBAGE_ARGS


def test_credential_layout_matches_the_spec(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    """A credential and verifier built byte by byte from the osd_ctl.x
    comment are accepted."""
    xid, nonce, now = 77, 0x1122334455667788, int(time.time())
    args = args_list(0)
    body = struct.pack(">IIIQQ", 2, cluster_key.key_id, 1, now, nonce)
    head = struct.pack(">IIII", xid, PROG, 1, Proc.LIST) + body
    key = spec_key(cluster_key)
    verf = (hmac.new(key, b"pando-ctl-hdr" + head, hashlib.sha256).digest()[:16] +
            hmac.new(key, b"pando-ctl-call" + head + args, hashlib.sha256).digest())
    reply = ctl.call_raw(Proc.LIST, args, cred=Auth(AUTH_PANDO, body),
                         verf=Auth(AUTH_PANDO, verf), xid=xid)
    assert struct.unpack(">I", reply.body[:4])[0] == Status.OK


def test_a_version_1_credential_is_badcred(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    """The format before arguments were MAC'd: refused, not misread."""
    xid, now = 78, int(time.time())
    body = struct.pack(">IQQ", cluster_key.key_id, now, 5)
    mac = hmac.new(cluster_key.secret, struct.pack(">IIII", xid, PROG, 1, Proc.STATFS) + body,
                   hashlib.sha256).digest()
    assert denial(lambda: ctl.call_raw(Proc.STATFS, cred=Auth(AUTH_PANDO, body),
                                       verf=Auth(AUTH_PANDO, mac), xid=xid)) == \
        oncrpc.AUTH_BADCRED


def test_wrong_secret_is_badverf(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    forger = Signer(cluster_key.key_id, bytes(b ^ 1 for b in cluster_key.secret), 1)
    assert denial(lambda: signed_with(ctl, forger, Proc.STATFS)) == oncrpc.AUTH_BADVERF
    assert denial(lambda: signed_with(ctl, forger, Proc.NULL)) == oncrpc.AUTH_BADVERF


def test_unknown_key_id_is_badcred(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    stranger = Signer(cluster_key.key_id + 1, cluster_key.secret, 1)
    assert denial(lambda: signed_with(ctl, stranger, Proc.STATFS)) == oncrpc.AUTH_BADCRED


@pytest.mark.parametrize("skew", [3600, -3600, 301])
def test_clock_skew_is_rejectedcred(ctl: OsdCtl, cluster_key: ClusterKey, skew: int) -> None:
    late = Signer(cluster_key.key_id, cluster_key.secret, 1, skew_s=skew)
    assert denial(lambda: signed_with(ctl, late, Proc.STATFS)) == oncrpc.AUTH_REJECTEDCRED


def test_skew_within_300_s_is_accepted(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    for skew in (-250, 250):
        ok = Signer(cluster_key.key_id, cluster_key.secret, 1, skew_s=skew)
        assert struct.unpack(">I", signed_with(ctl, ok, Proc.STATFS).body[:4])[0] == 0


def test_mac_covers_the_procedure(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    """A verifier lifted from a harmless call cannot authorise another."""
    signer = Signer.for_key(cluster_key, 1)
    xid = ctl.rpc.next_xid()
    cred, verf, _ = signer.sign(xid, Proc.STATFS)
    assert denial(lambda: ctl.call_raw(Proc.CREATE_PARTITION, args_partition(5), cred=cred,
                                       verf=verf, xid=xid)) == oncrpc.AUTH_BADVERF
    # ... nor the same call under another xid
    assert denial(lambda: ctl.call_raw(Proc.STATFS, cred=cred, verf=verf,
                                       xid=xid + 1)) == oncrpc.AUTH_BADVERF
    assert ctl.list_all(0) == []


def test_malformed_credentials(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    signer = Signer.for_key(cluster_key, 1)
    xid = ctl.rpc.next_xid()
    cred, verf, _ = signer.sign(xid, Proc.STATFS)
    short = Auth(AUTH_PANDO, cred.body[:16])
    assert denial(lambda: ctl.call_raw(Proc.STATFS, cred=short, verf=verf,
                                       xid=xid)) == oncrpc.AUTH_BADCRED
    assert denial(lambda: ctl.call_raw(Proc.STATFS, cred=cred, verf=Auth(),
                                       xid=xid)) == oncrpc.AUTH_BADVERF
    assert denial(lambda: ctl.call_raw(Proc.STATFS, cred=cred,
                                       verf=Auth(AUTH_PANDO, verf.body[:16]),
                                       xid=xid)) == oncrpc.AUTH_BADVERF


def test_connection_survives_denials(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    forger = Signer(cluster_key.key_id, bytes(32), 1)
    for _ in range(3):
        denial(lambda: signed_with(ctl, forger, Proc.STATFS))
    assert ctl.statfs().osd_id == 1


def test_version_mismatch_and_unknown_procedure(ctl: OsdCtl) -> None:
    with pytest.raises(RpcAccepted) as e:
        ctl.call_raw(Proc.STATFS, vers=2)
    assert e.value.stat == oncrpc.PROG_MISMATCH
    assert struct.unpack(">II", e.value.body) == (1, 1)
    # far past the last procedure (the Python client does not list them all)
    unknown = max(Proc) + 1000
    with pytest.raises(RpcAccepted) as e:
        ctl.call_signed(unknown)
    assert e.value.stat == oncrpc.PROC_UNAVAIL
    # unauthenticated callers learn nothing about which procedures exist
    assert denial(lambda: ctl.call_raw(unknown)) == oncrpc.AUTH_TOOWEAK
