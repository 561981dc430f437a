"""XDR (RFC 4506) packing and unpacking for the tests' protocol clients."""
from __future__ import annotations

import struct


class XdrError(Exception):
    """Raised when a buffer does not decode as the expected XDR."""


class Packer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def u32(self, v: int) -> "Packer":
        self._parts.append(struct.pack(">I", v & 0xFFFFFFFF))
        return self

    def i32(self, v: int) -> "Packer":
        self._parts.append(struct.pack(">i", v))
        return self

    def u64(self, v: int) -> "Packer":
        self._parts.append(struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF))
        return self

    def boolean(self, v: bool) -> "Packer":
        return self.u32(1 if v else 0)

    def fixed(self, data: bytes) -> "Packer":
        self._parts.append(data + b"\0" * (-len(data) % 4))
        return self

    def opaque(self, data: bytes) -> "Packer":
        self.u32(len(data))
        return self.fixed(data)

    def string(self, s: str) -> "Packer":
        return self.opaque(s.encode())

    def raw(self, data: bytes) -> "Packer":
        self._parts.append(data)
        return self

    def bytes(self) -> bytes:
        return b"".join(self._parts)


class Unpacker:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise XdrError(f"short buffer: need {n} at {self.pos}, have {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u32(self) -> int:
        return struct.unpack(">I", self._take(4))[0]

    def i32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def u64(self) -> int:
        return struct.unpack(">Q", self._take(8))[0]

    def boolean(self) -> bool:
        v = self.u32()
        if v > 1:
            raise XdrError(f"bad bool {v}")
        return v == 1

    def fixed(self, n: int) -> bytes:
        b = self._take(n)
        self._take(-n % 4)
        return b

    def opaque(self, maxlen: int = 1 << 30) -> bytes:
        n = self.u32()
        if n > maxlen:
            raise XdrError(f"opaque of {n} bytes over its bound {maxlen}")
        return self.fixed(n)

    def string(self) -> str:
        return self.opaque().decode()

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def done(self) -> None:
        if self.remaining():
            raise XdrError(f"{self.remaining()} trailing bytes")
