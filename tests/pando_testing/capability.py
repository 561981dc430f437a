"""File handles (capabilities) minted in Python, byte for byte as
osd-target/README.md lays them out, so tests can make forged, expired,
revoked and wrong-target handles the C code would never mint."""
from __future__ import annotations

import hashlib
import hmac
import struct
import subprocess
from dataclasses import dataclass, replace

from .daemons import OsdProcess, osd_binary
from .keys import ClusterKey

HANDLE_SIZE = 56
SIGNED_SIZE = 40
MAC_SIZE = 16
FORMAT = 1
RIGHTS_READ = 1
RIGHTS_RW = 3

# version, rights, key id, osd id, partition, object, cap version, expiry, holder
_LAYOUT = struct.Struct(">BBHIQQIQI")
assert _LAYOUT.size == SIGNED_SIZE


@dataclass(frozen=True)
class Capability:
    osd_id: int
    partition: int
    object: int
    key_id: int = 1
    rights: int = RIGHTS_RW
    cap_version: int = 0
    expiry: int = 0
    format: int = FORMAT
    holder: int = 0         # the AUTH_SYS uid calls must carry; 0: any caller

    def with_(self, **changes: int) -> "Capability":
        return replace(self, **changes)

    def signed_bytes(self) -> bytes:
        return _LAYOUT.pack(self.format, self.rights, self.key_id, self.osd_id, self.partition,
                            self.object, self.cap_version, self.expiry, self.holder)

    def mint(self, secret: bytes) -> bytes:
        """The handle with its MAC under `secret` (key_id is taken as given)."""
        body = self.signed_bytes()
        return body + hmac.new(secret, body, hashlib.sha256).digest()[:MAC_SIZE]


def mint_handle(key: ClusterKey, osd_id: int, partition: int, object: int,
                rights: int = RIGHTS_RW, cap_version: int = 0, expiry: int = 0,
                holder: int = 0) -> bytes:
    cap = Capability(osd_id, partition, object, key.key_id, rights, cap_version, expiry,
                     holder=holder)
    return cap.mint(key.secret)


def parse_handle(handle: bytes) -> tuple[Capability, bytes]:
    """The fields and the MAC of a 56-byte handle (nothing is verified)."""
    if len(handle) != HANDLE_SIZE:
        raise ValueError(f"a handle is {HANDLE_SIZE} bytes, not {len(handle)}")
    f = _LAYOUT.unpack(handle[:SIGNED_SIZE])
    cap = Capability(osd_id=f[3], partition=f[4], object=f[5], key_id=f[2], rights=f[1],
                     cap_version=f[6], expiry=f[7], format=f[0], holder=f[8])
    return cap, handle[SIGNED_SIZE:]


def handle_for(osd: OsdProcess, partition: int, object: int, rights: int = RIGHTS_RW,
               cap_version: int = 0, expiry: int = 0, holder: int = 0) -> bytes:
    """A valid handle for an object on `osd`, minted here."""
    return mint_handle(osd.key, osd.osd_id, partition, object, rights, cap_version, expiry,
                       holder)


def tool_mint_handle(key: ClusterKey, osd_id: int, partition: int, object: int,
                     rights: int = RIGHTS_RW, cap_version: int = 0, expiry: int = 0,
                     holder: int = 0) -> bytes:
    """The same handle minted by the C code, through `pando-osd-tool mint-handle`."""
    argv = [str(osd_binary("pando-osd-tool")), "mint-handle", "--key-file", str(key.path),
            "--osd-id", str(osd_id), "--rights", "rw" if rights == RIGHTS_RW else "r",
            "--cap-version", str(cap_version), "--expiry", str(expiry),
            *(["--holder", str(holder)] if holder else []),
            str(partition), str(object)]
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return bytes.fromhex(cp.stdout.strip())
