"""Kerberos on the metadata path (cluster/README.md, "Kerberos"): an
export whose pando.conf says `sec = krb5, krb5i, krb5p` serves only
callers that prove who they are with a ticket of the site's realm, and
acts as the user their principal names (daemon@REALM is daemon).  A KDC
of the test's own (pando_testing.kdc) issues the tickets; the clients
speak RPCSEC_GSS (pando_testing.rpcsec_gss) to a real Ganesha, over
NFSv3 and NFSv4.1 with pNFS.

AUTH_SYS, which believes whatever uid a host claims, is refused; a call
changed on the wire is refused and one sent again is not run; krb5p puts
no byte of a WRITE's data on the wire in the clear."""
from __future__ import annotations

import pwd
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import gssapi
import pytest

from pando_cluster.ganesha_conf import KRB5_FLAVORS, Kerberos
from pando_testing.kdc import REALM, SERVICE_HOST, Kdc
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import (FILE_SYNC, NFS3_PROGRAM, NFS3_VERSION, PROC_WRITE, Nfs3Client,
                                Sattr3, write_args)
from pando_testing.nfs4 import (IOMODE_RW, NFS4_OK, NFS_PROGRAM, NFS_V4, Layout, Nfs4Client,
                                Nfs4Error)
from pando_testing.oncrpc import (AUTH_ERROR, AUTH_REJECTEDCRED, AUTH_TOOWEAK, GARBAGE_ARGS,
                                  RpcAccepted, RpcDenied, auth_sys)
from pando_testing.rpcsec_gss import GssCall, GssRpcClient, initiator

DIR = "/pando"
SERVICE = f"nfs@{SERVICE_HOST}"
NFS4ERR_WRONGSEC = 10016
DAEMON = pwd.getpwnam("daemon")
KIB64 = 65536


@dataclass
class Realm:
    kdc: Kdc
    service_keytab: Path
    ccache_dir: Path

    def creds(self, principal: str) -> gssapi.Credentials:
        """`principal`'s initiator credentials, its key made on first use."""
        keytab = self.kdc.principal(principal)
        cache = self.ccache_dir / f"{principal.replace('/', '_')}.cc"
        return initiator(f"{principal}@{REALM}", str(keytab), str(cache))


@pytest.fixture
def realm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Realm]:
    kdc = Kdc(tmp_path / "kdc").start()
    for key, value in kdc.env().items():      # for the GSS library in this process
        monkeypatch.setenv(key, value)
    yield Realm(kdc, kdc.principal(f"nfs/{SERVICE_HOST}"), tmp_path)
    assert kdc.stop() == 0


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds], realm: Realm) -> PandoMds:
    """Kerberos only, pNFS on and every file on the OSDs (Inline_Max 1)."""
    return mds_factory(2, pseudo=DIR, protocols=(3, 4), pnfs=True, inline_max=1,
                       sec=KRB5_FLAVORS, kerberos=Kerberos(realm.service_keytab, SERVICE),
                       env=realm.kdc.env(), idmap_conf=realm.kdc.idmap_conf)


def gss(m: PandoMds, realm: Realm, principal: str, service: str,
        prog: int = NFS3_PROGRAM, vers: int = NFS3_VERSION) -> GssRpcClient:
    return GssRpcClient(m.pod.connect(m.host, m.nfs_port), prog, vers,
                        realm.creds(principal), SERVICE, service)


@pytest.fixture
def scratch(mds: PandoMds, realm: Realm) -> bytes:
    """The export's root, 1777 (as root/admin, which Ganesha maps to root,
    from the trusted host): a directory every user may create in."""
    with Nfs3Client(gss(mds, realm, "root/admin", "krb5")) as admin:
        assert admin.setattr(mds.root_handle(), Sattr3(mode=0o1777)).status == 0
    return mds.root_handle()


def make_file(c: Nfs3Client, root: bytes, name: str, data: bytes) -> bytes:
    made = c.create(root, name, attrs=Sattr3(mode=0o644))
    assert made.status == 0 and made.fh
    assert c.write(made.fh, 0, data, FILE_SYNC).status == 0
    return made.fh


def test_auth_sys_is_refused_over_nfs3_and_nfs4(mds: PandoMds) -> None:
    with Nfs3Client.over(mds.pod.connect(mds.host, mds.nfs_port), auth_sys()) as c:
        with pytest.raises(RpcDenied) as e:
            c.getattr(mds.root_handle())
        assert (e.value.reject_stat, e.value.detail) == (AUTH_ERROR, AUTH_TOOWEAK)
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as c:
        assert c.reclaim_complete() == NFS4_OK
        with pytest.raises(Nfs4Error) as v4:
            c.create(DIR, "by-auth-sys")
        assert v4.value.status == NFS4ERR_WRONGSEC


@pytest.mark.parametrize("service", KRB5_FLAVORS)
def test_each_kerberos_service_writes_and_reads_as_the_principals_user(
        mds: PandoMds, realm: Realm, scratch: bytes, service: str) -> None:
    data = bytes(range(256)) * (KIB64 // 256)
    with Nfs3Client(gss(mds, realm, "daemon", service)) as c:
        fh = make_file(c, scratch, f"by-{service}", data)
        attrs = c.getattr(fh).attrs
        assert attrs is not None and (attrs.uid, attrs.gid) == (DAEMON.pw_uid, DAEMON.pw_gid)
        assert c.read(fh, 0, KIB64).data == data


def test_nfs41_with_krb5p_creates_and_gets_a_write_layout_as_the_principals_user(
        mds: PandoMds, realm: Realm, scratch: bytes) -> None:
    rpc = gss(mds, realm, "daemon", "krb5p", NFS_PROGRAM, NFS_V4)
    with Nfs4Client(rpc.sock, rpc=rpc) as c:
        assert c.reclaim_complete() == NFS4_OK
        fh, sid = c.create(DIR, "by-krb5p-v4", mode=0o600)
        status, lo = c.on(fh, c.layoutget(sid, IOMODE_RW, 0, KIB64, KIB64))
        assert status == NFS4_OK and isinstance(lo, Layout), f"write LAYOUTGET: {status}"
    with Nfs3Client(gss(mds, realm, "daemon", "krb5")) as c3:
        found = c3.lookup(scratch, "by-krb5p-v4")
        assert found.attrs is not None and found.attrs.uid == DAEMON.pw_uid


def test_a_service_whose_key_the_manager_lacks_is_refused(mds: PandoMds, realm: Realm) -> None:
    realm.kdc.principal("nfs/other.test")
    with pytest.raises(RpcDenied) as e:
        GssRpcClient(mds.pod.connect(mds.host, mds.nfs_port), NFS3_PROGRAM, NFS3_VERSION,
                     realm.creds("daemon"), "nfs@other.test", "krb5")
    assert (e.value.reject_stat, e.value.detail) == (AUTH_ERROR, AUTH_REJECTEDCRED)


def flip_last_bytes(body: bytes) -> bytes:
    """One bit of the data inside a krb5i body (its checksum is the last
    16 bytes and their length)."""
    return body[:-40] + bytes([body[-40] ^ 1]) + body[-39:]


def test_a_krb5i_call_changed_on_the_wire_is_refused_and_not_run(
        mds: PandoMds, realm: Realm, scratch: bytes) -> None:
    rpc = gss(mds, realm, "daemon", "krb5i")
    with Nfs3Client(rpc) as c:
        fh = make_file(c, scratch, "tampered", b"A" * 4096)
        args = write_args(fh, 0, b"B" * 4096, FILE_SYNC)
        with pytest.raises(RpcAccepted) as e:
            rpc.call_raw(PROC_WRITE, args, how=GssCall(tamper=flip_last_bytes))
        assert e.value.stat == GARBAGE_ARGS
        assert c.read(fh, 0, 4096).data == b"A" * 4096


def test_a_call_sent_again_is_not_run_again(
        mds: PandoMds, realm: Realm, scratch: bytes) -> None:
    """RFC 2203 5.3.3.1: a sequence number seen before is dropped silently."""
    rpc = gss(mds, realm, "daemon", "krb5i")
    with Nfs3Client(rpc) as c:
        fh = make_file(c, scratch, "replayed", b"A" * 4096)
        first = rpc.last_record
        assert c.write(fh, 0, b"B" * 4096, FILE_SYNC).status == 0
        rpc.send_record(first)
        rpc.sock.settimeout(2.0)
        with pytest.raises(socket.timeout):
            rpc.recv_record()
    with Nfs3Client(gss(mds, realm, "daemon", "krb5i")) as again:
        assert again.read(fh, 0, 4096).data == b"B" * 4096


@pytest.mark.parametrize("service,in_clear", [("krb5i", True), ("krb5p", False)])
def test_krb5p_seals_what_krb5i_only_signs(
        mds: PandoMds, realm: Realm, scratch: bytes, service: str, in_clear: bool) -> None:
    marker = b"pando-secret-" * 64
    rpc = gss(mds, realm, "daemon", service)
    with Nfs3Client(rpc) as c:
        made = c.create(scratch, f"sealed-{service}", attrs=Sattr3(mode=0o600))
        assert made.fh and c.write(made.fh, 0, marker, FILE_SYNC).status == 0
        assert (marker in rpc.last_record) == in_clear
        assert c.read(made.fh, 0, len(marker)).data == marker
