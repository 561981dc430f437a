"""File handle = capability: every NFS request is checked in the README's
order, and a handle that fails gets its status and never any data.  The
handles are minted in Python, so they can be forged, expired, revoked or
meant for another target; one known vector ties that minting to the C one."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from pando_testing import nfs3
from pando_testing.capability import (RIGHTS_READ, RIGHTS_RW, Capability, handle_for,
                                      mint_handle, parse_handle, tool_mint_handle)
from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.nfs3 import (NFS3_OK, NFS3ERR_ACCES, NFS3ERR_BADHANDLE, NFS3ERR_STALE,
                                Nfs3Client)

PART, OBJ = 3, 9
SECRET = b"object data, only for its owner"

# Computed once from the README layout and checked with `openssl dgst
# -sha256 -mac HMAC` over bytes 0..39: key id 1, secret bytes 0..31, OSD 7, partition
# 0x0102030405060708, object 0x1112131415161718, read-write, version 5,
# expiry 1893456000.
KNOWN_FIELDS = dict(osd_id=7, partition=0x0102030405060708, object=0x1112131415161718,
                    rights=RIGHTS_RW, cap_version=5, expiry=1893456000)
KNOWN_HANDLE = bytes.fromhex(
    "0103000100000007010203040506070811121314151617180000000500000000"
    "70dbd880000000003eadc134188abc95ffe8245e4f14497c")

AttrResult = (nfs3.GetattrRes | nfs3.AccessRes | nfs3.ReadRes | nfs3.FsstatRes
              | nfs3.FsinfoRes | nfs3.PathconfRes)
WccResult = nfs3.WriteRes | nfs3.CommitRes


@pytest.fixture
def target(osd: OsdProcess) -> Iterator[tuple[OsdProcess, Nfs3Client]]:
    """A target holding one object, version 0, that starts with SECRET."""
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), str(OBJ))
    with osd.nfs3() as c:
        assert c.write(handle_for(osd, PART, OBJ), 0, SECRET, nfs3.FILE_SYNC).status == NFS3_OK
        yield osd, c


def refused_everywhere(c: Nfs3Client, fh: bytes) -> set[int]:
    """The statuses every handle-taking procedure gives `fh`.  A refusal
    must carry no attributes and no data; the strict decoders also fail
    on any byte beyond the failure arm."""
    read = c.read(fh, 0, 4096)
    plain: list[AttrResult] = [c.getattr(fh), c.access(fh), read, c.fsstat(fh), c.fsinfo(fh),
                               c.pathconf(fh)]
    with_wcc: list[WccResult] = [c.write(fh, 0, b"overwritten!"), c.commit(fh)]
    for r in plain:
        assert r.status == NFS3_OK or r.attrs is None
    for w in with_wcc:
        assert w.wcc is not None
        assert w.status == NFS3_OK or (w.wcc.before, w.wcc.after, w.verf) == (None, None, b"")
    assert read.status == NFS3_OK or read.data == b""
    return {r.status for r in [*plain, *with_wcc]}


def assert_untouched(osd: OsdProcess, c: Nfs3Client) -> None:
    r = c.read(handle_for(osd, PART, OBJ), 0, 4096)
    assert (r.status, r.data) == (NFS3_OK, SECRET)


def test_known_vector_matches_python_and_c_minting(tmp_path: Path) -> None:
    key = write_cluster_key(tmp_path / "vector.key", key_id=1, secret=bytes(range(32)))
    cap = Capability(key_id=1, **KNOWN_FIELDS)
    assert cap.mint(key.secret) == KNOWN_HANDLE
    assert parse_handle(KNOWN_HANDLE) == (cap, KNOWN_HANDLE[40:])
    assert tool_mint_handle(key, **KNOWN_FIELDS) == KNOWN_HANDLE
    ro = tool_mint_handle(key, **{**KNOWN_FIELDS, "rights": RIGHTS_READ})
    assert ro == cap.with_(rights=RIGHTS_READ).mint(key.secret)


def test_valid_handle_works_everywhere(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    fh = handle_for(osd, PART, OBJ, expiry=int(time.time()) + 3600)
    assert refused_everywhere(c, fh) == {NFS3_OK}
    assert c.read(fh, 0, 100).data == b"overwritten!" + SECRET[12:]


def test_forged_mac_is_badhandle(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    good = handle_for(osd, PART, OBJ)
    for at in (40, 47, 55):  # first, middle and last MAC byte
        forged = bytearray(good)
        forged[at] ^= 0x01
        assert refused_everywhere(c, bytes(forged)) == {NFS3ERR_BADHANDLE}
    # fields changed without the key: another object, more rights, no expiry
    cap = Capability(osd.osd_id, PART, OBJ, osd.key.key_id, RIGHTS_READ, 0,
                     int(time.time()) - 10)
    signed = cap.mint(osd.key.secret)
    for field in (cap.with_(object=OBJ + 1), cap.with_(rights=RIGHTS_RW), cap.with_(expiry=0)):
        tampered = field.signed_bytes() + signed[40:]
        assert refused_everywhere(c, tampered) == {NFS3ERR_BADHANDLE}
    assert_untouched(osd, c)


def test_malformed_handles_are_badhandle(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    good = handle_for(osd, PART, OBJ)
    cap = Capability(osd.osd_id, PART, OBJ, osd.key.key_id)
    malformed = [
        b"", good[:55], good + b"\0", good + bytes(8), bytes(56), b"\xff" * 64,
        cap.with_(format=2).mint(osd.key.secret),      # correctly signed, but
        cap.with_(format=0).mint(osd.key.secret),      # each one is malformed
        cap.with_(rights=2).mint(osd.key.secret),
        cap.with_(rights=0).mint(osd.key.secret),
    ]
    for fh in malformed:
        assert refused_everywhere(c, fh) == {NFS3ERR_BADHANDLE}, fh.hex()
    assert_untouched(osd, c)


def test_unknown_key_or_wrong_secret_is_badhandle(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    other = ClusterKey(osd.key.path, osd.key.key_id + 1, osd.key.secret)
    assert refused_everywhere(c, mint_handle(other, osd.osd_id, PART, OBJ)) == {NFS3ERR_BADHANDLE}
    stranger = ClusterKey(osd.key.path, osd.key.key_id, bytes(32))
    assert refused_everywhere(c, mint_handle(stranger, osd.osd_id, PART, OBJ)) \
        == {NFS3ERR_BADHANDLE}
    assert_untouched(osd, c)


def test_expired_handle_is_stale(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    past = handle_for(osd, PART, OBJ, expiry=int(time.time()) - 5)
    assert refused_everywhere(c, past) == {NFS3ERR_STALE}
    ancient = handle_for(osd, PART, OBJ, expiry=1)
    assert refused_everywhere(c, ancient) == {NFS3ERR_STALE}
    assert_untouched(osd, c)


def test_other_target_or_missing_object_is_stale(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    elsewhere = mint_handle(osd.key, osd.osd_id + 1, PART, OBJ)
    assert refused_everywhere(c, elsewhere) == {NFS3ERR_STALE}
    for part, obj in ((PART, OBJ + 1), (PART + 1, OBJ), (0, 0)):
        assert refused_everywhere(c, handle_for(osd, part, obj)) == {NFS3ERR_STALE}
    assert_untouched(osd, c)


def test_checks_run_in_readme_order(target: tuple[OsdProcess, Nfs3Client]) -> None:
    """A forged handle says nothing about the object; staleness comes
    before rights."""
    osd, c = target
    forged = bytearray(mint_handle(osd.key, osd.osd_id + 1, PART, OBJ + 1, expiry=1))
    forged[50] ^= 0x80
    assert c.getattr(bytes(forged)).status == NFS3ERR_BADHANDLE
    ro_stale = handle_for(osd, PART, OBJ, RIGHTS_READ, expiry=1)
    assert c.write(ro_stale, 0, b"x").status == NFS3ERR_STALE
    ro_revoked = handle_for(osd, PART, OBJ, RIGHTS_READ, cap_version=4)
    assert c.commit(ro_revoked).status == NFS3ERR_STALE


def test_revoked_handle_is_stale_and_new_version_works(
        target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    old = handle_for(osd, PART, OBJ)
    new = handle_for(osd, PART, OBJ, cap_version=1)
    assert c.getattr(new).status == NFS3ERR_STALE  # not yet valid
    osd.tool("setcap", str(PART), str(OBJ), "1")
    assert refused_everywhere(c, old) == {NFS3ERR_STALE}
    w = c.write(new, len(SECRET), b" and its new owner", nfs3.FILE_SYNC)
    assert w.status == NFS3_OK
    assert c.read(new, 0, 4096).data == SECRET + b" and its new owner"
    # a fresh connection sees the same: the version lives in the store
    with osd.nfs3() as c2:
        assert c2.read(old, 0, 10).status == NFS3ERR_STALE
        assert c2.read(new, 0, 10).data == SECRET[:10]


def test_read_only_handle_cannot_write_or_commit(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    ro = handle_for(osd, PART, OBJ, RIGHTS_READ)
    for stable in (nfs3.UNSTABLE, nfs3.DATA_SYNC, nfs3.FILE_SYNC):
        w = c.write(ro, 0, b"overwritten!", stable)
        assert w.status == NFS3ERR_ACCES
        assert w.wcc is not None and w.wcc.before is None and w.wcc.after is None
        assert w.count == 0 and w.verf == b""
    cm = c.commit(ro)
    assert cm.status == NFS3ERR_ACCES and cm.verf == b""
    r = c.read(ro, 0, 4096)
    assert (r.status, r.data, r.eof) == (NFS3_OK, SECRET, True)
    g = c.getattr(ro)
    assert g.status == NFS3_OK and g.attrs is not None and g.attrs.mode == 0o444
    assert c.access(ro, nfs3.ACCESS3_ALL).access == nfs3.ACCESS3_READ
    assert_untouched(osd, c)


def test_tool_handle_is_accepted_by_the_target(target: tuple[OsdProcess, Nfs3Client]) -> None:
    osd, c = target
    fh = tool_mint_handle(osd.key, osd.osd_id, PART, OBJ)
    assert fh == handle_for(osd, PART, OBJ)
    assert c.read(fh, 0, 4096).data == SECRET
