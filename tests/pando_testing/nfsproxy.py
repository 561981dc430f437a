"""A TCP proxy inside a Pod for ONC RPC over TCP (record marking), able to
damage the server's replies: the harness's negative checks use it to prove
that a kernel client's scenario *fails*, in the guest's own words, when the
server returns wrong data.

    proxy = RecordProxy(pod, listen_port=2050, upstream_port=2049,
                        mangle=flip_last_byte(min_size=16384)).start()
    ...            # guests mount 10.0.2.2:2050
    proxy.stop(); proxy.mangled  # how many replies were damaged

Client-to-server bytes pass unchanged; server-to-client bytes are split
into record fragments (4-byte header: last-fragment bit + length) and each
fragment goes through `mangle` before it is sent on.
"""
from __future__ import annotations

import socket
import struct
import threading
from typing import Callable

from .oncrpc import LAST_FRAGMENT
from .pod import Pod
from .threads import RaisingThread, join_all

Mangle = Callable[[bytes], bytes]


def flip_last_byte(min_size: int = 16384) -> Mangle:
    """Inverts the last byte of every fragment of at least `min_size` bytes:
    in a large NFS READ reply (v3, or a v4 COMPOUND ending in READ) that is
    the last byte of the file data."""
    def mangle(frag: bytes) -> bytes:
        if len(frag) < min_size:
            return frag
        return frag[:-1] + bytes([frag[-1] ^ 0xFF])
    return mangle


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def recv_fragment(sock: socket.socket) -> tuple[int, bytes] | None:
    """One record-marking fragment (RFC 5531 section 11): its header word
    (LAST_FRAGMENT bit and length) and its bytes; None at end of stream."""
    hdr = _recv_exact(sock, 4)
    if hdr is None:
        return None
    word, = struct.unpack(">I", hdr)
    frag = _recv_exact(sock, word & ~LAST_FRAGMENT)
    return None if frag is None else (word, frag)


class RecordProxy:
    def __init__(self, pod: Pod, listen_port: int, upstream_port: int,
                 host: str = "127.0.0.1", mangle: Mangle | None = None) -> None:
        self.pod, self.listen_port, self.upstream_port, self.host = pod, listen_port, upstream_port, host
        self.mangle = mangle
        self.mangled = 0
        self.replies = 0
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._socks: list[socket.socket] = []
        self._threads: list[RaisingThread] = []
        self._stopping = False

    def start(self) -> "RecordProxy":
        def listen() -> socket.socket:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((self.host, self.listen_port))
            s.listen(16)
            return s
        self._listener = self.pod.call_inside(listen)
        self._spawn(self._accept_loop)
        return self

    def _spawn(self, fn: Callable[..., None], *args: object) -> None:
        t = RaisingThread(target=fn, args=args, daemon=True, name="rpc-proxy")
        t.start()
        self._threads.append(t)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = self.pod.connect(self.host, self.upstream_port)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:           # stop() shuts and joins all it sees
                if self._stopping:
                    client.close()
                    upstream.close()
                    return
                self._socks += [client, upstream]
                self._spawn(self._pump_raw, client, upstream)
                self._spawn(self._pump_records, upstream, client)

    def _pump_raw(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._shut(dst)

    def _pump_records(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while (got := recv_fragment(src)) is not None:
                word, frag = got
                if self.mangle is not None:
                    new = self.mangle(frag)
                    if new != frag:
                        with self._lock:
                            self.mangled += 1
                        frag = new
                        word = (word & LAST_FRAGMENT) | len(frag)
                with self._lock:
                    self.replies += 1
                dst.sendall(struct.pack(">I", word) + frag)
        except OSError:
            pass
        finally:
            self._shut(dst)

    @staticmethod
    def _shut(s: socket.socket) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            socks = list(self._socks)
        if self._listener is not None:
            self._shut(self._listener)
            self._listener.close()
        for s in socks:
            self._shut(s)
            s.close()
        join_all(self._threads, timeout=5)

    def __enter__(self) -> "RecordProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
