"""RPCSEC_GSS (RFC 2203) over Kerberos v5 for the test clients: a context
made with the NULL procedure's INIT exchange, then calls whose verifier
is a MIC of their header, with the arguments and results as the service
asks: plain (krb5), with a checksum (krb5i) or sealed (krb5p).  Replies
are checked as a client must: the verifier is the MIC of the call's
sequence number, and the sequence number inside a krb5i or krb5p result
is the call's.

Tests may also change a call's body after it is sealed (`GssCall`), or
send the last call again (`last_record`), to see the server refuse it."""
from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Callable

import gssapi

from .oncrpc import Auth, Reply, RpcClient, RpcError, decode_reply
from .xdr import Packer, Unpacker

RPCSEC_GSS = 6
GSS_DATA, GSS_INIT, GSS_CONTINUE_INIT, GSS_DESTROY = 0, 1, 2, 3
SERVICE_NONE, SERVICE_INTEGRITY, SERVICE_PRIVACY = 1, 2, 3
# Ganesha's SecType words for each service.
SERVICES = {"krb5": SERVICE_NONE, "krb5i": SERVICE_INTEGRITY, "krb5p": SERVICE_PRIVACY}
MAX_GSS_TOKEN = 64 << 10


class GssError(RpcError):
    """The server's answer does not hold as RFC 2203 says it must."""


@dataclass
class GssCall:
    """How to send one call out of the ordinary: `tamper` turns the sealed
    body into the one sent, as a man in the middle would."""
    tamper: Callable[[bytes], bytes] | None = None


def _cred(proc: int, seq: int, service: int, handle: bytes) -> Auth:
    body = Packer().u32(1).u32(proc).u32(seq).u32(service).opaque(handle)
    return Auth(RPCSEC_GSS, body.bytes())


def _header(xid: int, prog: int, vers: int, proc: int, cred: Auth) -> bytes:
    """The call up to and including its credential, which the verifier signs."""
    p = Packer().u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc)
    return p.u32(cred.flavor).opaque(cred.body).bytes()


class GssRpcClient(RpcClient):
    """RpcClient whose calls travel in an RPCSEC_GSS context as `creds`
    (initiator credentials) to the service `target` ("nfs@HOST")."""

    def __init__(self, sock: socket.socket, prog: int, vers: int, creds: gssapi.Credentials,
                 target: str, service: str) -> None:
        super().__init__(sock, prog, vers)
        self.service = SERVICES[service]
        self.ctx = gssapi.SecurityContext(
            name=gssapi.Name(target, gssapi.NameType.hostbased_service), creds=creds,
            usage="initiate",
            flags=gssapi.RequirementFlag.mutual_authentication
            | gssapi.RequirementFlag.integrity | gssapi.RequirementFlag.confidentiality)
        self.handle = b""
        self.seq = 0
        self.last_record = b""      # the last call as sent, to send again
        self._establish()

    def _establish(self) -> None:
        token = self.ctx.step()
        gss_proc = GSS_INIT
        while True:
            xid = self.next_xid()
            cred = _cred(gss_proc, 0, self.service, self.handle)
            self.send_record(_header(xid, self.prog, self.vers, 0, cred)
                             + Packer().u32(0).opaque(b"").opaque(token or b"").bytes())
            reply = decode_reply(self.reply_record(xid))
            u = Unpacker(reply.body)
            self.handle = u.opaque(1024)
            major, minor, window = u.u32(), u.u32(), u.u32()
            server_token = u.opaque(MAX_GSS_TOKEN)
            if major not in (0, 1):     # GSS_S_COMPLETE, GSS_S_CONTINUE_NEEDED
                raise GssError(f"context refused: major {major:#x} minor {minor:#x}")
            token = self.ctx.step(server_token) if server_token else None
            if self.ctx.complete:
                self._check_verifier(reply.verf, window)
                return
            gss_proc = GSS_CONTINUE_INIT

    def _check_verifier(self, verf: Auth, seq: int) -> None:
        if verf.flavor != RPCSEC_GSS:
            raise GssError(f"reply verifier of flavour {verf.flavor}")
        try:
            self.ctx.verify_signature(Packer().u32(seq).bytes(), verf.body)
        except gssapi.exceptions.GSSError as e:
            raise GssError(f"reply verifier does not hold: {e}") from None

    def _seal(self, seq: int, body: bytes) -> bytes:
        data = Packer().u32(seq).bytes() + body
        if self.service == SERVICE_INTEGRITY:
            return Packer().opaque(data).opaque(self.ctx.get_signature(data)).bytes()
        if self.service == SERVICE_PRIVACY:
            return Packer().opaque(self.ctx.wrap(data, encrypt=True).message).bytes()
        return body

    def _unseal(self, seq: int, body: bytes) -> bytes:
        if self.service == SERVICE_NONE:
            return body
        u = Unpacker(body)
        if self.service == SERVICE_INTEGRITY:
            data = u.opaque()
            self.ctx.verify_signature(data, u.opaque(1024))
        else:
            data = self.ctx.unwrap(u.opaque()).message
        inner = Unpacker(data)
        if inner.u32() != seq:
            raise GssError("result sealed for another sequence number")
        return data[4:]

    def call_raw(self, proc: int, args: bytes, cred: Auth | None = None,
                 verf: Auth | None = None, xid: int | None = None,
                 how: GssCall | None = None) -> Reply:
        """The credential and verifier are the context's: pass neither."""
        assert cred is None and verf is None, "RPCSEC_GSS makes its own"
        how = how or GssCall()
        self.seq += 1
        seq = self.seq
        xid = self.next_xid() if xid is None else xid
        cred = _cred(GSS_DATA, seq, self.service, self.handle)
        header = _header(xid, self.prog, self.vers, proc, cred)
        body = self._seal(seq, args)
        if how.tamper:
            body = how.tamper(body)
        mic = Packer().u32(RPCSEC_GSS).opaque(self.ctx.get_signature(header)).bytes()
        self.last_record = header + mic + body
        self.send_record(self.last_record)
        reply = decode_reply(self.reply_record(xid))
        self._check_verifier(reply.verf, seq)
        return Reply(reply.xid, reply.verf, self._unseal(seq, reply.body))

    def call(self, proc: int, args: bytes = b"") -> Unpacker:
        return Unpacker(self.call_raw(proc, args).body)


def initiator(principal: str, keytab: str, ccache: str) -> gssapi.Credentials:
    """Credentials of `principal`, its ticket got with the key in `keytab`
    (the realm's KDC, as KRB5_CONFIG names it) and kept in `ccache`."""
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
    return gssapi.Credentials(name=name, usage="initiate",
                              store={"client_keytab": keytab, "ccache": f"FILE:{ccache}"})
