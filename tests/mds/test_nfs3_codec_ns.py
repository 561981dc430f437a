"""Known bytes for the NFSv3 namespace procedures of pando_testing.nfs3:
each argument encoder against the layout RFC 1813 section 3.3 gives it,
written out word by word, and each result decoder on a reply built the
same way (both arms, strict about trailing bytes and bad booleans).
No server: the pipelined calls run against a socketpair that answers out
of order."""
from __future__ import annotations

import socket
import struct

import pytest

from pando_testing import nfs3
from pando_testing.nfs3 import Nfs3Client, Sattr3
from pando_testing.oncrpc import AUTH_SYS, RpcClient, auth_sys
from pando_testing.threads import RaisingThread
from pando_testing.xdr import Unpacker, XdrError

FH = bytes.fromhex("0102030405")            # 5 bytes: padded to 8 on the wire
FH_XDR = "00000005" "0102030405000000"
FH2 = bytes.fromhex("a1a2a3a4a5a6a7a8")
FH2_XDR = "00000008" "a1a2a3a4a5a6a7a8"


def words(*parts: str) -> bytes:
    """Hex words, spaces allowed: the layouts below read word by word."""
    return bytes.fromhex("".join(parts).replace(" ", ""))


# sattr3 with nothing set: six discriminants of zero.
SATTR_NONE = "00000000 00000000 00000000 00000000 00000000 00000000"
# fattr3 of a regular file, 84 bytes (type, mode, nlink, uid, gid, size,
# used, rdev, fsid, fileid, atime, mtime, ctime).
FATTR = ("00000001 000001a4 00000002 000003e8 000007d0 0000000000001000 0000000000002000"
         " 00000004 00000005 0000000000000007 0000000000000063"
         " 00000001 00000002 00000003 00000004 00000005 00000006")
WCC_ATTR = "0000000000000010 00000011 00000012 00000013 00000014"


def check_fattr(a: nfs3.Fattr3 | None) -> None:
    assert a is not None
    assert (a.type, a.mode, a.nlink, a.uid, a.gid) == (nfs3.NF3REG, 0o644, 2, 1000, 2000)
    assert (a.size, a.used, a.rdev, a.fsid, a.fileid) == (0x1000, 0x2000, (4, 5), 7, 0x63)
    assert (a.atime_ns, a.mtime_ns, a.ctime_ns) == (1_000_000_002, 3_000_000_004,
                                                    5_000_000_006)


def check_wcc(w: nfs3.WccData | None) -> None:
    assert w is not None and w.before is not None
    assert (w.before.size, w.before.mtime_ns, w.before.ctime_ns) == (0x10, 0x11 * 10**9 + 0x12,
                                                                     0x13 * 10**9 + 0x14)
    check_fattr(w.after)


# --- argument encoders ---------------------------------------------------------

def test_sattr3_every_arm() -> None:
    p = nfs3.Packer()
    nfs3.pack_sattr3(p, Sattr3(mode=0o4755, uid=1000, gid=2000, size=0x100000000,
                               atime=nfs3.SERVER_TIME, mtime=1_000_000_002_000_000_003))
    assert p.bytes() == words(
        "00000001 000009ed",                 # set_mode3: TRUE, 04755
        "00000001 000003e8",                 # set_uid3: TRUE, 1000
        "00000001 000007d0",                 # set_gid3: TRUE, 2000
        "00000001 0000000100000000",         # set_size3: TRUE, 2^32
        "00000001",                          # set_atime: SET_TO_SERVER_TIME
        "00000002 3b9aca02 00000003")        # set_mtime: SET_TO_CLIENT_TIME, 1000000002 s 3 ns
    p = nfs3.Packer()
    nfs3.pack_sattr3(p, None)
    assert p.bytes() == words(SATTR_NONE)


def test_setattr_args_with_and_without_guard() -> None:
    assert nfs3.setattr_args(FH, Sattr3(size=0)) == words(
        FH_XDR, "00000000 00000000 00000000 00000001 0000000000000000 00000000 00000000",
        "00000000")                          # sattrguard3: check FALSE
    assert nfs3.setattr_args(FH, Sattr3(mode=0o600), guard_ctime_ns=7_000_000_008) == words(
        FH_XDR, "00000001 00000180 00000000 00000000 00000000 00000000 00000000",
        "00000001 00000007 00000008")        # check TRUE, obj_ctime


def test_lookup_readlink_remove_rmdir_args() -> None:
    dirop = words(FH_XDR, "00000003 6e616d00")       # "nam", padded
    assert nfs3.lookup_args(FH, "nam") == dirop
    assert nfs3.remove_args(FH, b"nam") == dirop
    assert nfs3.rmdir_args(FH, "nam") == dirop
    assert nfs3.readlink_args(FH) == words(FH_XDR)
    # Any bytes go on the wire as they are, even ones a server must refuse.
    assert nfs3.lookup_args(FH, b"a/\xff\x00") == words(FH_XDR, "00000004 612fff00")
    assert nfs3.lookup_args(FH, "") == words(FH_XDR, "00000000")


def test_create_args_each_mode() -> None:
    assert nfs3.create_args(FH, "f", nfs3.UNCHECKED, Sattr3(mode=0o644)) == words(
        FH_XDR, "00000001 66000000", "00000000",
        "00000001 000001a4 00000000 00000000 00000000 00000000 00000000")
    assert nfs3.create_args(FH, "f", nfs3.GUARDED, Sattr3(size=0)) == words(
        FH_XDR, "00000001 66000000", "00000001",
        "00000000 00000000 00000000 00000001 0000000000000000 00000000 00000000")
    assert nfs3.create_args(FH, "f", nfs3.EXCLUSIVE, verf=b"verifier") == words(
        FH_XDR, "00000001 66000000", "00000002", b"verifier".hex())
    with pytest.raises(AssertionError):
        nfs3.create_args(FH, "f", nfs3.EXCLUSIVE, verf=b"short")


def test_mkdir_symlink_args() -> None:
    assert nfs3.mkdir_args(FH, "dir", Sattr3(mode=0o755)) == words(
        FH_XDR, "00000003 64697200",
        "00000001 000001ed 00000000 00000000 00000000 00000000 00000000")
    assert nfs3.symlink_args(FH, "ln", "../target") == words(
        FH_XDR, "00000002 6c6e0000", SATTR_NONE,
        "00000009 2e2e2f7461726765 74000000")        # nfspath3 "../target"


def test_mknod_args_each_type() -> None:
    where = FH_XDR + "00000001 6e000000"
    assert nfs3.mknod_args(FH, "n", nfs3.NF3CHR, Sattr3(mode=0o600), (4, 64)) == words(
        where, "00000004",                           # NF3CHR: devicedata3
        "00000001 00000180 00000000 00000000 00000000 00000000 00000000",
        "00000004 00000040")                         # specdata3 major, minor
    assert nfs3.mknod_args(FH, "n", nfs3.NF3BLK, None, (8, 1)) == words(
        where, "00000003", SATTR_NONE, "00000008 00000001")
    assert nfs3.mknod_args(FH, "n", nfs3.NF3FIFO, Sattr3(uid=5)) == words(
        where, "00000007", "00000000 00000001 00000005 00000000 00000000 00000000 00000000")
    assert nfs3.mknod_args(FH, "n", nfs3.NF3SOCK) == words(where, "00000006", SATTR_NONE)
    # Other types carry nothing (the server answers NFS3ERR_BADTYPE).
    assert nfs3.mknod_args(FH, "n", nfs3.NF3REG) == words(where, "00000001")
    assert nfs3.mknod_args(FH, "n", nfs3.NF3DIR) == words(where, "00000002")


def test_rename_link_args() -> None:
    assert nfs3.rename_args(FH, "a", FH2, "bcde") == words(
        FH_XDR, "00000001 61000000", FH2_XDR, "00000004 62636465")
    assert nfs3.link_args(FH2, FH, "lnk") == words(FH2_XDR, FH_XDR, "00000003 6c6e6b00")


def test_readdir_readdirplus_args() -> None:
    assert nfs3.readdir_args(FH, 0x1122334455667788, b"cookieV!", 4096) == words(
        FH_XDR, "1122334455667788", b"cookieV!".hex(), "00001000")
    assert nfs3.readdirplus_args(FH, 3, bytes(8), 1024, 65536) == words(
        FH_XDR, "0000000000000003 0000000000000000", "00000400 00010000")
    with pytest.raises(AssertionError):
        nfs3.readdir_args(FH, 0, b"1234567")


def test_auth_sys_with_groups() -> None:
    a = nfs3.auth_sys_groups(1001, 1002, [2000, 2001], machine="m", stamp=9)
    assert a.flavor == AUTH_SYS
    assert a.body == words("00000009 00000001 6d000000 000003e9 000003ea",
                           "00000002 000007d0 000007d1")
    # Without groups it is what oncrpc.auth_sys sends.
    assert nfs3.auth_sys_groups(0, 0).body == auth_sys().body


# --- result decoders -------------------------------------------------------------

def decode(fn, *parts: str):  # type: ignore[no-untyped-def]
    return fn(Unpacker(words(*parts)))


def test_decode_setattr() -> None:
    res = decode(nfs3.decode_setattr, "00000000", "00000001", WCC_ATTR, "00000001", FATTR)
    assert res.status == nfs3.NFS3_OK
    check_wcc(res.wcc)
    res = decode(nfs3.decode_setattr, "00002712", "00000000 00000000")
    assert res.status == nfs3.NFS3ERR_NOT_SYNC
    assert res.wcc == nfs3.WccData(None, None)


def test_decode_lookup_both_arms() -> None:
    res = decode(nfs3.decode_lookup, "00000000", FH2_XDR, "00000001", FATTR, "00000000")
    assert (res.status, res.fh, res.dir_attrs) == (nfs3.NFS3_OK, FH2, None)
    check_fattr(res.attrs)
    res = decode(nfs3.decode_lookup, "00000002", "00000001", FATTR)
    assert (res.status, res.fh, res.attrs) == (nfs3.NFS3ERR_NOENT, b"", None)
    check_fattr(res.dir_attrs)
    with pytest.raises(XdrError, match="trailing"):
        decode(nfs3.decode_lookup, "00000002", "00000000", "00000000")
    with pytest.raises(XdrError, match="over its bound"):          # fh past NFS3_FHSIZE
        decode(nfs3.decode_lookup, "00000000", "00000041", "00" * 68, "00000000 00000000")


def test_decode_readlink() -> None:
    res = decode(nfs3.decode_readlink, "00000000", "00000000", "00000005 612f622f63000000")
    assert (res.status, res.attrs, res.target) == (nfs3.NFS3_OK, None, b"a/b/c")
    res = decode(nfs3.decode_readlink, "00000016", "00000001", FATTR)
    assert res.status == nfs3.NFS3ERR_INVAL and res.target == b""
    check_fattr(res.attrs)


def test_decode_create_shape() -> None:
    """CREATE, MKDIR, SYMLINK and MKNOD: post_op_fh3, post_op_attr, wcc_data."""
    res = decode(nfs3.decode_create, "00000000", "00000001", FH2_XDR, "00000001", FATTR,
                 "00000001", WCC_ATTR, "00000001", FATTR)
    assert res.status == nfs3.NFS3_OK and res.fh == FH2
    check_fattr(res.attrs)
    check_wcc(res.dir_wcc)
    res = decode(nfs3.decode_create, "00000000", "00000000", "00000000", "00000000 00000000")
    assert res.status == nfs3.NFS3_OK and res.fh is None and res.attrs is None
    res = decode(nfs3.decode_create, "00000011", "00000000", "00000001", FATTR)
    assert res.status == nfs3.NFS3ERR_EXIST and res.fh is None
    assert res.dir_wcc is not None and res.dir_wcc.before is None
    check_fattr(res.dir_wcc.after)
    with pytest.raises(XdrError, match="bad bool"):
        decode(nfs3.decode_create, "00000000", "00000002")


def test_decode_remove_rename_link() -> None:
    res = decode(nfs3.decode_remove, "00000042", "00000001", WCC_ATTR, "00000000")
    assert res.status == nfs3.NFS3ERR_NOTEMPTY
    assert res.dir_wcc is not None and res.dir_wcc.after is None
    res = decode(nfs3.decode_rename, "00000000", "00000000 00000000",
                 "00000001", WCC_ATTR, "00000001", FATTR)
    assert res.status == nfs3.NFS3_OK and res.fromdir_wcc == nfs3.WccData(None, None)
    check_wcc(res.todir_wcc)
    res = decode(nfs3.decode_link, "00000000", "00000001", FATTR, "00000000 00000000")
    assert res.status == nfs3.NFS3_OK
    check_fattr(res.attrs)
    res = decode(nfs3.decode_link, "0000001f", "00000000", "00000000 00000000")
    assert res.status == nfs3.NFS3ERR_MLINK and res.attrs is None


def test_decode_readdir_entries() -> None:
    res = decode(nfs3.decode_readdir, "00000000", "00000000", b"verf0001".hex(),
                 "00000001", "0000000000000005", "00000001 2e000000", "0000000000000001",
                 "00000001", "0000000000000063", "00000003 61626300", "0000000000000011",
                 "00000000",                     # no more entries
                 "00000001")                     # eof
    assert res.status == nfs3.NFS3_OK and res.cookieverf == b"verf0001" and res.eof
    assert [(e.fileid, e.name, e.cookie) for e in res.entries] == [(5, b".", 1),
                                                                  (0x63, b"abc", 0x11)]
    assert res.entries[1].text == "abc" and res.entries[1].attrs is None
    res = decode(nfs3.decode_readdir, "00000000", "00000000", "0000000000000000",
                 "00000000", "00000000")
    assert res.entries == [] and not res.eof
    res = decode(nfs3.decode_readdir, "00002713", "00000000")
    assert res.status == nfs3.NFS3ERR_BAD_COOKIE and res.entries == []
    with pytest.raises(XdrError, match="over its bound"):         # a name past 255 bytes
        decode(nfs3.decode_readdir, "00000000", "00000000", "0000000000000000",
               "00000001", "0000000000000005", "00000100", "61" * 256, "0000000000000003",
               "00000000", "00000001")


def test_decode_readdirplus_entries() -> None:
    res = decode(nfs3.decode_readdirplus, "00000000", "00000001", FATTR, b"verf0002".hex(),
                 "00000001", "0000000000000063", "00000001 66000000", "0000000000000007",
                 "00000001", FATTR, "00000001", FH2_XDR,
                 "00000001", "0000000000000064", "00000001 67000000", "0000000000000008",
                 "00000000", "00000000",
                 "00000000", "00000000")
    assert res.status == nfs3.NFS3_OK and not res.eof and res.cookieverf == b"verf0002"
    check_fattr(res.dir_attrs)
    f, g = res.entries
    assert (f.fileid, f.name, f.cookie, f.fh) == (0x63, b"f", 7, FH2)
    check_fattr(f.attrs)
    assert (g.fileid, g.name, g.cookie, g.attrs, g.fh) == (0x64, b"g", 8, None, None)


def test_status_names() -> None:
    assert nfs3.status_name(nfs3.NFS3ERR_NAMETOOLONG) == "NFS3ERR_NAMETOOLONG"
    assert nfs3.status_name(0) == "NFS3_OK"
    assert nfs3.status_name(12345) == "12345"
    # RFC 1813 section 2.6 numbers.
    assert (nfs3.NFS3ERR_EXIST, nfs3.NFS3ERR_NOTDIR, nfs3.NFS3ERR_ISDIR, nfs3.NFS3ERR_NOTEMPTY,
            nfs3.NFS3ERR_NAMETOOLONG, nfs3.NFS3ERR_BAD_COOKIE, nfs3.NFS3ERR_BADTYPE) == (
        17, 20, 21, 66, 63, 10003, 10007)


# --- pipelining over a fake server ------------------------------------------------

def fake_server(sock: socket.socket, n: int) -> None:
    """Reads n calls, then answers them in reverse order: LOOKUP gets
    NOENT with no attributes, anything else a GETATTR-shaped NFS3ERR_STALE."""
    rpc = RpcClient(sock, 0, 0)
    calls = []
    for _ in range(n):
        rec = rpc.recv_record()
        xid, _mtype, _rpcvers, _prog, _vers, proc = struct.unpack(">6I", rec[:24])
        calls.append((xid, proc))
    for xid, proc in reversed(calls):
        body = struct.pack(">I", nfs3.NFS3ERR_NOENT) + struct.pack(">I", 0) \
            if proc == nfs3.PROC_LOOKUP else struct.pack(">I", nfs3.NFS3ERR_STALE)
        # reply: xid, REPLY, MSG_ACCEPTED, verf AUTH_NONE, SUCCESS
        rpc.send_record(struct.pack(">5I", xid, 1, 0, 0, 0) + struct.pack(">I", 0) + body)


def test_pipeline_matches_replies_by_xid() -> None:
    a, b = socket.socketpair()
    calls = [(nfs3.PROC_LOOKUP, nfs3.lookup_args(FH, "x")), (nfs3.PROC_GETATTR, nfs3.fh_args(FH)),
             (nfs3.PROC_LOOKUP, nfs3.lookup_args(FH, "y"))]
    t = RaisingThread(target=fake_server, args=(b, len(calls)))
    t.start()
    try:
        results = Nfs3Client.over(a).pipeline(calls, depth=8)
    finally:
        t.join()
        a.close()
        b.close()
    assert [type(r).__name__ for r in results] == ["LookupRes", "GetattrRes", "LookupRes"]
    assert [r.status for r in results] == [nfs3.NFS3ERR_NOENT, nfs3.NFS3ERR_STALE,  # type: ignore[attr-defined]
                                           nfs3.NFS3ERR_NOENT]
