"""pando-mgr processes inside a Pod, started, killed and restarted by pid,
and a small client for their HTTP API (mgr/README.md)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pando_mgr import token as mgr_token

from .pod import Pod
from .podproc import PodProcess

MGR_PORT_BASE = 7480


@dataclass
class MgrProcess(PodProcess):
    """`pando-mgr` as `python -m pando_mgr.daemon` (the installed entry
    point's module), listening on 127.0.0.1:(7480 + index), with the token
    workdir/mgr.token: every mgr of one workdir shares it, as the mgrs of a
    cluster do."""
    pod: Pod
    workdir: Path
    etcd: str                       # endpoints
    name: str = "mgr-a"
    index: int = 0
    seed: Path | None = None        # cluster.conf
    host: str = "127.0.0.1"
    prefix: str = "/pando/"
    lease: float | None = None
    down_out_interval: float | None = None
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def port(self) -> int:
        return MGR_PORT_BASE + self.index

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    @property
    def token_file(self) -> Path:
        return self.workdir / mgr_token.FILE_NAME

    @property
    def token(self) -> str:
        return mgr_token.load(self.token_file)

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "pando_mgr.daemon", "--etcd", self.etcd,
                "--prefix", self.prefix, "--name", self.name,
                "--listen", f"{self.host}:{self.port}", "--log-level", "debug",
                "--token-file", str(self.token_file)]
        if self.seed is not None:
            argv += ["--seed", str(self.seed)]
        if self.lease is not None:
            argv += ["--lease", str(self.lease)]
        if self.down_out_interval is not None:
            argv += ["--down-out-interval", str(self.down_out_interval)]
        # Every test's OSDs report the host's one file system, which the
        # rest of the suite fills: past 85 % each test would see
        # OSD_NEARFULL.  Raised as Ceph's vstart.sh raises its ratios;
        # extra_args may lower them again.
        argv += ["--nearfull-ratio", "0.98", "--full-ratio", "0.99"]
        return argv + self.extra_args

    def start(self, wait: bool = True) -> "MgrProcess":
        self.workdir.mkdir(parents=True, exist_ok=True)
        mgr_token.create(self.token_file)
        self.spawn(self.argv())
        if wait:
            self.wait_port(self.host, self.port)
        return self

    def api(self) -> "MgrApi":
        return MgrApi(self.pod, self.url, token=self.token)


class MgrApiError(RuntimeError):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class MgrApi:
    """Blocking calls to one mgr's HTTP API, made inside the pod, with the
    mgr's token when given one (changes need it; reads do not).  A
    follower's 307 is followed to the leader named in its body, for every
    method (urllib itself follows a 307 only for GET and HEAD)."""

    def __init__(self, pod: Pod, url: str, timeout: float = 5.0,
                 token: str | None = None) -> None:
        self.pod = pod
        self.url = url
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: Any = None, follow: bool = True) -> Any:
        try:
            return self._call(self.url, method, path, body)
        except MgrApiError as e:
            leader = e.body.get("leader") if isinstance(e.body, dict) else None
            if e.status != 307 or not leader or not follow:
                raise
            return self._call(str(leader), method, path, body)

    def _call(self, url: str, method: str, path: str, body: Any) -> Any:
        data = None if body is None else json.dumps(body).encode()

        def go() -> Any:
            req = urllib.request.Request(url + path, data=data, method=method,
                                         headers=self.headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    raw = r.read()
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = raw.decode(errors="replace")
                raise MgrApiError(e.code, parsed) from None
            ctype = r.headers.get("Content-Type", "")
            return json.loads(raw) if "json" in ctype else raw.decode(errors="replace")
        return self.pod.call_inside(go)

    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def post(self, path: str, body: Any = None, follow: bool = True) -> Any:
        return self.call("POST", path, body if body is not None else {}, follow)

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = self.get("/api/status")
        return out

    def osd_states(self) -> dict[int, tuple[bool, bool]]:
        """{osd id: (up, in)} from the map the mgr serves."""
        return {int(o["id"]): (bool(o["up"]), bool(o["in"])) for o in self.get("/api/osds")}

    def wait_for(self, pred: Any, timeout: float = 30.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                v = pred(self)
            except (OSError, MgrApiError):
                v = None
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not reached in {timeout}s")
            time.sleep(0.2)
