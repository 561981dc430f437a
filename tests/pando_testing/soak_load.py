"""The applications of tests/bench/soak on their client machines:
pnfsload writers (`pnfsload --writer`, one process per directory:
files per process in /mirror and /rs, one shared file in /shared) and
the verifier rounds (`pnfsload --verifier` over the same files, from a
machine of its own).  What each writer acknowledged and when is read
from its progress lines; an error any of them meets, as an application
would see it, is kept in `errors`.

Every writer's progress times are this machine's CLOCK_MONOTONIC, as
time.monotonic() (pnfsload prints CLOCK_MONOTONIC)."""
from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .bench_restart import Progress
from .pnfsload import PnfsloadResult, pnfsload_argv, progress_of
from .pod import Pod
from .rack import RackNode
from .threads import RaisingThread

VERIFY_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Role:
    """One pnfsload --writer process: `clients` clients writing in `dir`
    (file per process, or their parts of ior.shared)."""
    name: str               # the kind of its progress: pnfsload_<name>
    dir: str
    node: str               # its client machine
    shared: bool = False


ROLES = (Role("mirror", "mirror", "load-mirror"), Role("shared", "shared", "load-shared", True),
         Role("rs", "rs", "load-rs"))


@dataclass(frozen=True)
class LoadSpec:
    mds_addr: str
    export: str
    clients: int            # per role
    transfer: int
    pace_ms: int
    part: int               # bytes of a part of ior.shared (and most any file may take)
    timeout_s: int


@dataclass
class Errors:
    """What the applications saw go wrong, in order (thread-safe)."""
    lines: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)

    def __len__(self) -> int:
        with self.lock:
            return len(self.lines)


class WriterProcess:
    """One role's pnfsload --writer on its machine, read as it goes."""

    def __init__(self, role: Role, node: RackNode, spec: LoadSpec, log: Path,
                 errors: Errors) -> None:
        self.role, self.spec, self.errors = role, spec, errors
        argv = pnfsload_argv(spec.mds_addr, role.dir, spec.clients, export=spec.export,
                             shared=role.shared, transfer=spec.transfer, block=spec.part,
                             depth=1, timeout=spec.timeout_s,
                             extra=["--writer", "--pace", str(spec.pace_ms)])
        self.writers = [Progress(f"{role.name}.{i}", f"pnfsload_{role.name}")
                        for i in range(spec.clients)]
        self.acked = [0] * spec.clients
        self.result: PnfsloadResult | None = None
        self.log = log
        with open(log, "ab") as err:
            self.proc = node.pod.popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        self._reader = RaisingThread(target=self._read, daemon=True, name=f"pnfsload-{role.name}")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if (p := progress_of(line)) is not None:
                i, at, acked = p
                self.writers[i].times.append(at)
                self.acked[i] = acked
            elif line.startswith("{"):
                self.result = PnfsloadResult.parse(line)
        code = self.proc.wait()
        if code != 0:
            self.errors.add(f"pnfsload --writer in /{self.role.dir} exited {code}: "
                            f"{self.last_words()}")

    def last_words(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(nothing on stderr)"

    def stop(self) -> None:
        """SIGTERM: each client ends after its transfer in flight."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self._reader.join(timeout=120)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class VerifyRound:
    role: str
    seconds: float
    bytes: int


class Verifiers:
    """Rounds of pnfsload --verifier, one role after the other, on the
    verify machine, until stop(): each client's part must be the pattern
    at least as far as its writer had acknowledged when the round began."""

    def __init__(self, pod: Pod, spec: LoadSpec, writers: list[WriterProcess], log: Path,
                 errors: Errors, pause_s: float) -> None:
        self.pod, self.spec, self.writers, self.log = pod, spec, writers, log
        self.errors, self.pause_s = errors, pause_s
        self.rounds: list[VerifyRound] = []
        self._stop = threading.Event()
        self._thread = RaisingThread(target=self._run, daemon=True, name="soak-verifiers")

    def start(self) -> "Verifiers":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for w in self.writers:
                if self._stop.is_set():
                    break
                if w.proc.poll() is None and any(w.acked):
                    self.rounds.append(self.verify(w))
            self._stop.wait(self.pause_s)

    def verify(self, w: WriterProcess) -> VerifyRound:
        """One verifier run over what `w` writes."""
        s = self.spec
        want = list(w.acked)
        t0 = time.monotonic()
        argv = pnfsload_argv(s.mds_addr, w.role.dir, s.clients, export=s.export,
                             shared=w.role.shared, transfer=1 << 20, block=s.part,
                             timeout=VERIFY_TIMEOUT_S, extra=["--verifier"])
        with open(self.log, "ab") as err:
            proc = self.pod.popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
            out, _ = proc.communicate()
        got = {int(ln.split()[1]): int(ln.split()[2]) for ln in out.splitlines()
               if ln.startswith("verified")}
        if proc.returncode != 0:
            self.errors.add(f"pnfsload --verifier in /{w.role.dir} exited {proc.returncode}: "
                            f"{self._last_words()}")
        for i, acked in enumerate(want):
            if i in got and got[i] < acked:
                self.errors.add(f"verifier: /{w.role.dir} client {i}: the pattern ends at "
                                f"{got[i]} of its part, {acked} bytes were acknowledged")
        res = [ln for ln in out.splitlines() if ln.startswith("{")]
        nbytes = PnfsloadResult.parse(res[-1]).bytes if res else 0
        return VerifyRound(w.role.name, time.monotonic() - t0, nbytes)

    def _last_words(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(nothing on stderr)"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=VERIFY_TIMEOUT_S + 60)
