"""A private network + mount namespace for one test's daemons.

A holder process (`sleep`) is started by `unshare --net --mount`; it
brings up its own loopback (127.0.0.1 and 127.0.0.2) and a private tmpfs
on /run, so rpcbind registrations and sockets of parallel test runs never
collide.  Daemons and tools join it with `nsenter`; the test process
itself opens sockets inside it by switching one short-lived thread into
the namespace (network namespaces are per thread).
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import threading
import time
from typing import Any, Callable, Sequence, TypeVar

# Where the tree and its build are: pando-cluster's answer, which the
# harness's modules import from here.
from pando_cluster.paths import build_dir as build_dir
from pando_cluster.paths import repo_root as repo_root

CLONE_NEWNET = 0x40000000
T = TypeVar("T")

_SETUP = (
    "set -e; ip link set lo up; ip addr add 127.0.0.2/8 dev lo; "
    "mount --make-rprivate / ; mount -t tmpfs pando-run /run; "
    "mkdir -p /run/rpcbind /run/ganesha; echo ready; exec sleep 1000000"
)

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, nstype: int) -> None:
    if _libc.setns(fd, nstype) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


class Pod:
    """Network + mount namespace; stop() ends every process started in it."""

    def __init__(self, name: str = "pod") -> None:
        self.name = name
        self.holder: subprocess.Popen[bytes] | None = None
        self._procs: list[subprocess.Popen[Any]] = []

    @property
    def pid(self) -> int:
        assert self.holder is not None, "pod not started"
        return self.holder.pid

    def start(self) -> "Pod":
        self.holder = subprocess.Popen(
            ["unshare", "--net", "--mount", "sh", "-c", _SETUP],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.holder.stdout is not None
        line = self.holder.stdout.readline()
        if line.strip() != b"ready":
            err = self.holder.stderr.read() if self.holder.stderr else b""
            self.holder.kill()
            raise RuntimeError(f"pod {self.name} failed to start: {err.decode(errors='replace')}")
        return self

    def argv(self, argv: Sequence[str | os.PathLike[str]]) -> list[str]:
        return ["nsenter", "-t", str(self.pid), "-n", "-m", "--", *map(str, argv)]

    def run(self, argv: Sequence[str | os.PathLike[str]], check: bool = True,
            **kw: Any) -> subprocess.CompletedProcess[Any]:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 120)
        cp = subprocess.run(self.argv(argv), **kw)
        if check and cp.returncode != 0:
            raise subprocess.CalledProcessError(cp.returncode, cp.args, cp.stdout, cp.stderr)
        return cp

    def popen(self, argv: Sequence[str | os.PathLike[str]], **kw: Any) -> subprocess.Popen[Any]:
        """Starts a process in the pod.  nsenter execs the command, so the
        returned pid is the daemon's own pid."""
        p = subprocess.Popen(self.argv(argv), **kw)
        self._procs.append(p)
        return p

    def call_inside(self, fn: Callable[[], T]) -> T:
        """Runs fn on a fresh thread that has joined the pod's network."""
        box: dict[str, Any] = {}

        def body() -> None:
            try:
                fd = os.open(f"/proc/{self.pid}/ns/net", os.O_RDONLY)
                try:
                    _setns(fd, CLONE_NEWNET)
                finally:
                    os.close(fd)
                box["value"] = fn()
            except BaseException as e:  # re-raised on the caller's thread
                box["error"] = e

        t = threading.Thread(target=body, name=f"{self.name}-netns")
        t.start()
        t.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    def connect(self, host: str, port: int, timeout: float = 10.0,
                source: str | None = None) -> socket.socket:
        """A TCP connection opened inside the pod (it stays there), from
        the address `source` when given (127.0.0.2: another host, to the
        server's eye)."""
        def dial() -> socket.socket:
            s = socket.create_connection((host, port), timeout=timeout,
                                         source_address=(source, 0) if source else None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        return self.call_inside(dial)

    def wait_port(self, host: str, port: int, timeout: float = 20.0,
                  alive: Callable[[], bool] | None = None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.connect(host, port, timeout=1.0).close()
                return
            except OSError:
                if alive is not None and not alive():
                    raise RuntimeError(f"process died before {host}:{port} opened")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{host}:{port} did not open in {timeout}s")
                time.sleep(0.05)

    def stop(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
        if self.holder and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()
            for f in (self.holder.stdout, self.holder.stderr):
                if f:
                    f.close()

    def __enter__(self) -> "Pod":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
