"""What the tests do to a daemon they started in a Pod, by its pid: start
it with its output appended to a log (one marker line per start), ask
whether it lives, stop it with SIGTERM (its exit status says whether the
stop was clean), kill -9 it, freeze and thaw it, read its log.  OSDs, etcd
members and mgrs share this; each says how it starts."""
from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path

from .pod import Pod


def terminate(p: subprocess.Popen[bytes], timeout: float, strict: bool = False) -> int:
    """p's exit status, after a SIGTERM if it still ran; SIGKILL once
    timeout passed (and then TimeoutExpired if strict)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            if strict:
                raise
    return p.returncode


class PodProcess:
    pod: Pod
    proc: subprocess.Popen[bytes] | None
    starts: int

    @property
    def log_path(self) -> Path:
        raise NotImplementedError

    def spawn(self, argv: Sequence[str | PathLike[str]],
              env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Starts argv in the pod, output appended to the log."""
        assert not self.alive(), "already running"
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"--- start {self.starts} ---\n".encode())
            log.flush()
            self.proc = self.pod.popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        return self.proc

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_port(self, host: str, port: int, timeout: float = 20.0) -> None:
        """Until host:port accepts in the pod; fails early if the daemon dies."""
        alive: Callable[[], bool] = self.alive
        self.pod.wait_port(host, port, timeout=timeout, alive=alive)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; the exit status (0 is a clean stop)."""
        assert self.proc is not None
        return terminate(self.proc, timeout, strict=True)

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
