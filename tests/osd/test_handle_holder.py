"""Handles bound to a holder (osd-target/README.md, "File handle
(capability) format"): bytes 36..39 name the AUTH_SYS uid the holder's
NFSv3 calls must carry.  A bound handle serves that uid only, and answers
NFS3ERR_ACCES to any other uid and to AUTH_NONE; holder 0, what every
handle minted before the field carries, serves any caller."""
from __future__ import annotations

import time

from pando_testing.capability import RIGHTS_READ, handle_for, parse_handle, tool_mint_handle
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_ACCES, NFS3ERR_STALE, Nfs3Client
from pando_testing.oncrpc import Auth, auth_sys

PART, OBJ = 4, 40
HOLDER = 4000
DATA = b"the holder's bytes"


def client(osd: OsdProcess, cred: Auth) -> Nfs3Client:
    return Nfs3Client.connect(osd.pod, osd.host, osd.nfs_port, cred)


def statuses(c: Nfs3Client, fh: bytes) -> set[int]:
    """What READ, WRITE, GETATTR and COMMIT answer through fh."""
    return {c.read(fh, 0, 64).status, c.write(fh, 0, DATA, FILE_SYNC).status,
            c.getattr(fh).status, c.commit(fh).status}


def target_with_object(osd: OsdProcess) -> None:
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), str(OBJ))


def test_a_bound_handle_serves_its_holder_only(osd: OsdProcess) -> None:
    target_with_object(osd)
    fh = handle_for(osd, PART, OBJ, holder=HOLDER)
    with client(osd, auth_sys(uid=HOLDER, gid=100)) as c:
        assert statuses(c, fh) == {NFS3_OK}
        assert c.read(fh, 0, 64).data == DATA
    for stranger in (auth_sys(uid=HOLDER + 1, gid=100), auth_sys(uid=0), Auth()):
        with client(osd, stranger) as c:
            assert statuses(c, fh) == {NFS3ERR_ACCES}, stranger


def test_holder_zero_serves_any_caller(osd: OsdProcess) -> None:
    target_with_object(osd)
    fh = handle_for(osd, PART, OBJ)
    assert parse_handle(fh)[0].holder == 0
    for anyone in (auth_sys(uid=HOLDER, gid=100), auth_sys(uid=HOLDER + 1), Auth()):
        with client(osd, anyone) as c:
            assert statuses(c, fh) == {NFS3_OK}, anyone


def test_the_holder_is_checked_after_the_expiry_and_before_the_object(
        osd: OsdProcess) -> None:
    target_with_object(osd)
    expired = handle_for(osd, PART, OBJ, holder=HOLDER, expiry=int(time.time()) - 5)
    gone = handle_for(osd, PART, OBJ + 1, holder=HOLDER)
    with client(osd, auth_sys(uid=HOLDER + 1)) as c:
        assert c.read(expired, 0, 1).status == NFS3ERR_STALE
        assert c.read(gone, 0, 1).status == NFS3ERR_ACCES
    with client(osd, auth_sys(uid=HOLDER)) as c:
        assert c.read(gone, 0, 1).status == NFS3ERR_STALE


def test_the_tool_mints_the_same_bound_handle(osd: OsdProcess) -> None:
    target_with_object(osd)
    fh = tool_mint_handle(osd.key, osd.osd_id, PART, OBJ, RIGHTS_READ, holder=HOLDER)
    assert fh == handle_for(osd, PART, OBJ, RIGHTS_READ, holder=HOLDER)
    assert fh[36:40] == HOLDER.to_bytes(4, "big")
    with client(osd, auth_sys(uid=HOLDER)) as c:
        assert c.read(fh, 0, 1).status == NFS3_OK
    with client(osd, auth_sys(uid=HOLDER + 1)) as c:
        assert c.read(fh, 0, 1).status == NFS3ERR_ACCES
