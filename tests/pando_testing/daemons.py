"""pando-osd processes inside a Pod, started, killed and restarted by pid."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pando_cluster.paths import binary

from .keys import ClusterKey
from .nfs3 import Nfs3Client
from .pod import Pod
from .podproc import PodProcess

NFS_PORT_BASE = 20490
CTL_PORT_BASE = 20590


def osd_binary(name: str = "pando-osd") -> Path:
    return binary(name)


@dataclass
class OsdProcess(PodProcess):
    pod: Pod
    workdir: Path
    key: ClusterKey
    osd_id: int = 1
    host: str = "127.0.0.1"
    threads: int = 4
    data_dir: Path | None = None
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)    # more environment
    nofile: int | None = None       # RLIMIT_NOFILE, which sizes the open-object cache
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.data_dir is None:
            self.data_dir = self.workdir / f"osd.{self.osd_id}"

    @property
    def nfs_port(self) -> int:
        return NFS_PORT_BASE + self.osd_id

    @property
    def ctl_port(self) -> int:
        return CTL_PORT_BASE + self.osd_id

    @property
    def ctl_addr(self) -> str:
        return f"{self.host}:{self.ctl_port}"

    def nfs3(self) -> Nfs3Client:
        """A client of this target's NFSv3 data server (root AUTH_SYS)."""
        return Nfs3Client.connect(self.pod, self.host, self.nfs_port)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"osd.{self.osd_id}.log"

    def tool(self, *args: str, check: bool = True, key: ClusterKey | None = None,
             **kw: object) -> subprocess.CompletedProcess[Any]:
        """pando-osd-tool against this target's control port, signing with
        its key or `key` (stdout is bytes when text=False is passed)."""
        argv = [osd_binary("pando-osd-tool"), "--ctl", self.ctl_addr, "--osd-id",
                str(self.osd_id), "--key-file", (key or self.key).path, *args]
        return self.pod.run(argv, check=check, **kw)  # type: ignore[arg-type]

    @property
    def data_path(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir

    def superblock_key(self) -> str:
        """The data directory's key line ("key_id = N")."""
        sb = (self.data_path / "superblock").read_text()
        return next(line for line in sb.splitlines() if line.startswith("key_id"))

    def format(self) -> None:
        self.pod.run([osd_binary("pando-osd-tool"), "format", "--data-dir", self.data_path,
                      "--osd-id", str(self.osd_id), "--key-file", self.key.path])

    def start(self) -> "OsdProcess":
        argv: list[str | Path] = [osd_binary(), "--osd-id", str(self.osd_id), "--data-dir",
                                  self.data_path, "--key-file", self.key.path,
                                  "--nfs-listen", f"{self.host}:{self.nfs_port}",
                                  "--ctl-listen", f"{self.host}:{self.ctl_port}",
                                  "--threads", str(self.threads), "--log-level", "debug",
                                  *self.extra_args]
        if self.nofile is not None:
            argv = ["prlimit", f"--nofile={self.nofile}", "--", *argv]
        self.spawn(argv, env={**os.environ, **self.env} if self.env else None)
        self.wait_port(self.host, self.nfs_port)
        self.wait_port(self.host, self.ctl_port)
        return self

    def restart(self) -> "OsdProcess":
        if self.alive():
            self.stop()
        return self.start()

    def reload(self, want: str, timeout: float = 10.0) -> None:
        """SIGHUP (its key file again), then waits for the log line `want`."""
        assert self.proc is not None
        seen = self.log_text().count(want)
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while self.log_text().count(want) == seen:
            assert time.monotonic() < deadline, f"no '{want}' after SIGHUP:\n{self.log_text()}"
            time.sleep(0.05)
