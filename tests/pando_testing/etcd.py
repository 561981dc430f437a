"""Real etcd members (Debian's etcd-server 3.4) inside a Pod, and a small
synchronous client over etcd's JSON gateway for tests to look at what the
daemons wrote.  One member by default; three for the tests that need a
quorum.  Members are started, killed and restarted by pid.

A secure cluster is set up as `pando-cluster up` sets up its own
(pando_cluster.etcd_auth): https with the test's own CA, peers checked
against it, users and roles for the daemons the test names, and
authentication on; its client() signs in as root."""
from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pando_cluster import etcd_auth
from pando_cluster.etcd import stopped_cleanly, tls_env
from pando_mgr import etcd_roles
from pando_mgr.etcd import b64, prefix_end, unb64

from .pod import Pod
from .podproc import PodProcess

CLIENT_PORT_BASE = 2379
PEER_PORT_BASE = 2380
ETCD = "/usr/bin/etcd"


@dataclass
class EtcdMember(PodProcess):
    pod: Pod
    workdir: Path
    name: str
    host: str
    client_port: int = CLIENT_PORT_BASE
    peer_port: int = PEER_PORT_BASE
    initial_cluster: str = ""
    tls_dir: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def scheme(self) -> str:
        return "https" if self.tls_dir else "http"

    @property
    def client_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.peer_port}"

    @property
    def data_dir(self) -> Path:
        return self.workdir / f"{self.name}.etcd"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self, wait: bool = True) -> "EtcdMember":
        self.workdir.mkdir(parents=True, exist_ok=True)
        state = "existing" if self.data_dir.exists() else "new"
        self.spawn([ETCD, "--name", self.name, "--data-dir", str(self.data_dir),
                    "--listen-client-urls", self.client_url,
                    "--advertise-client-urls", self.client_url,
                    "--listen-peer-urls", self.peer_url,
                    "--initial-advertise-peer-urls", self.peer_url,
                    "--initial-cluster", self.initial_cluster or f"{self.name}={self.peer_url}",
                    "--initial-cluster-state", state,
                    "--initial-cluster-token", "pando-test",
                    "--heartbeat-interval", "100", "--election-timeout", "1000",
                    "--log-outputs", "stderr"],
                   env={**os.environ, **tls_env(self.tls_dir)} if self.tls_dir else None)
        if wait:
            self.wait_port(self.host, self.client_port)
        return self

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; 0 for a clean stop, else the exit status.
        etcd 3.4 shuts down on SIGTERM and then re-raises the signal on
        itself (pkg/osutil), so its status is -SIGTERM even when clean: the
        log line it writes first tells the two apart (pando_cluster.etcd)."""
        code = super().stop(timeout)
        return 0 if stopped_cleanly(code, self.log_text()) else code


@dataclass
class EtcdCluster:
    """n members on 127.0.0.1 in one pod, client ports 2379, 2381, 2383...
    (peer ports one above each).  secure: TLS and users (above), for the
    OSDs osd_ids and the managers mds_names, under prefix."""
    pod: Pod
    workdir: Path
    size: int = 1
    host: str = "127.0.0.1"
    members: list[EtcdMember] = field(default_factory=list)
    secure: bool = False
    osd_ids: list[int] = field(default_factory=list)
    mds_names: list[str] = field(default_factory=list)
    prefix: str = "/pando/"

    def __post_init__(self) -> None:
        tls = None
        if self.secure:
            tls = self.auth_dir
            etcd_auth.ensure_ca(tls)
            etcd_auth.ensure_secret(tls)
            etcd_auth.ensure_member_cert(tls, [self.host])
        for i in range(self.size):
            self.members.append(EtcdMember(
                self.pod, self.workdir, f"etcd{i + 1}", self.host,
                client_port=CLIENT_PORT_BASE + 2 * i, peer_port=PEER_PORT_BASE + 2 * i,
                tls_dir=tls))
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        for m in self.members:
            m.initial_cluster = initial

    @property
    def endpoints(self) -> str:
        """The comma-separated client URLs daemons are given."""
        return ",".join(m.client_url for m in self.members)

    @property
    def auth_dir(self) -> Path:
        return self.workdir / etcd_auth.DIR_NAME

    @property
    def ca_file(self) -> str:
        return str(self.auth_dir / "ca.crt") if self.secure else ""

    def access(self) -> etcd_auth.EtcdAccess:
        """What a daemon is given (as_user, osd, mds, mgr for its user)."""
        return etcd_auth.EtcdAccess(self.endpoints, self.ca_file)

    def start(self) -> "EtcdCluster":
        for m in self.members:
            m.start(wait=False)
        for m in self.members:
            self.pod.wait_port(m.host, m.client_port, alive=m.alive)
        if self.secure:
            EtcdClient(self.pod, [m.client_url for m in self.members],
                       ca_file=self.ca_file).wait_healthy()
            self.provision()
        self.client().wait_healthy()
        return self

    def provision(self) -> None:
        """Users and roles for osd_ids and mds_names (again after a change
        of either), and their password files in auth_dir."""
        self.pod.call_inside(lambda: etcd_auth.provision(
            self.endpoints, self.auth_dir, self.prefix, self.osd_ids, self.mds_names))
        etcd_auth.write_passwords(self.auth_dir, etcd_auth.users(self.osd_ids, self.mds_names))

    def stop(self) -> dict[str, int]:
        return {m.name: m.stop() for m in self.members if m.alive()}

    def client(self, user: str = etcd_roles.ROOT) -> "EtcdClient":
        """A client of every member; on a secure cluster, signed in as user."""
        if not self.secure:
            return EtcdClient(self.pod, [m.client_url for m in self.members])
        pw = (self.auth_dir / f"{user}.password").read_text().strip()
        return EtcdClient(self.pod, [m.client_url for m in self.members],
                          ca_file=self.ca_file, user=user, password=pw)

    def leader(self) -> EtcdMember:
        """The member that leads now (each member's status names the leader)."""
        for m in self.members:
            if not m.alive():
                continue
            st = EtcdClient(self.pod, [m.client_url]).call("/v3/maintenance/status", {})
            if st.get("leader") and st["leader"] == st["header"]["member_id"]:
                return m
        raise EtcdError("no member says it leads")

    def remove_data(self) -> None:
        for m in self.members:
            shutil.rmtree(m.data_dir, ignore_errors=True)


class EtcdError(RuntimeError):
    pass


class EtcdRefused(EtcdError):
    """etcd answered with an error: code is its gRPC code (7: permission
    denied, 16: the token is unknown, 3: no user, or a wrong password)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class EtcdClient:
    """Blocking JSON-gateway calls made inside the pod, trying each
    endpoint in turn; with ca_file the members' certificates are checked,
    with a user it signs in (a new token when etcd forgot the last)."""

    def __init__(self, pod: Pod, urls: list[str], timeout: float = 3.0,
                 ca_file: str = "", user: str = "", password: str = "") -> None:
        self.pod = pod
        self.urls = urls
        self.timeout = timeout
        self.ssl = ssl.create_default_context(cafile=ca_file) if ca_file else None
        self.user = user
        self.password = password
        self.token = ""

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.user and not self.token:
            self.sign_in()
        try:
            return self.call_as(path, body, self.token)
        except EtcdRefused as e:
            if not self.user or e.code != 16:   # 16: etcd forgot the token
                raise
        self.sign_in()
        return self.call_as(path, body, self.token)

    def sign_in(self) -> None:
        self.token = str(self.call_as("/v3/auth/authenticate",
                                      {"name": self.user, "password": self.password},
                                      "")["token"])

    def call_as(self, path: str, body: dict[str, Any], token: str) -> dict[str, Any]:
        """One call with token ("": none); EtcdRefused when etcd answers
        with an error, EtcdError when no member answers."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = token
        errors: list[str] = []
        for url in self.urls:
            def post(url: str = url) -> dict[str, Any]:
                req = urllib.request.Request(url + path, data=data, method="POST",
                                             headers=headers)
                try:
                    with urllib.request.urlopen(req, timeout=self.timeout,
                                                context=self.ssl) as r:
                        out: dict[str, Any] = json.loads(r.read())
                        return out
                except urllib.error.HTTPError as e:
                    try:
                        err = json.loads(e.read() or b"{}")
                    except ValueError:
                        raise e from None
                    if int(err.get("code", 0)) in (4, 14):   # no leader, timed out
                        raise e from None
                    raise EtcdRefused(f"{url}: {err.get('error', e.code)}",
                                      int(err.get("code", 0))) from None
            try:
                return self.pod.call_inside(post)
            except EtcdRefused:
                raise
            except (OSError, urllib.error.URLError) as e:
                errors.append(f"{url}: {e}")
        raise EtcdError("no etcd endpoint answered: " + "; ".join(errors))

    def get(self, key: str) -> bytes | None:
        kvs = self.call("/v3/kv/range", {"key": b64(key)}).get("kvs", [])
        return unb64(kvs[0].get("value", "")) if kvs else None

    def get_json(self, key: str) -> Any:
        raw = self.get(key)
        return None if raw is None else json.loads(raw)

    def get_prefix(self, prefix: str) -> dict[str, bytes]:
        r = self.call("/v3/kv/range", {"key": b64(prefix), "range_end": prefix_end(prefix)})
        return {unb64(kv["key"]).decode(): unb64(kv.get("value", "")) for kv in r.get("kvs", [])}

    def put(self, key: str, value: str | bytes, lease: int = 0) -> None:
        body: dict[str, Any] = {"key": b64(key), "value": b64(value)}
        if lease:
            body["lease"] = str(lease)
        self.call("/v3/kv/put", body)

    def delete(self, key: str) -> None:
        self.call("/v3/kv/deleterange", {"key": b64(key)})

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.call("/v3/kv/range", {"key": b64("/health-probe")})
                return
            except EtcdError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def wait_for(self, pred: Callable[["EtcdClient"], Any], timeout: float = 30.0,
                 what: str = "condition") -> Any:
        """Polls pred(self) every 100 ms until it returns something truthy."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                v = pred(self)
            except EtcdError:
                v = None
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not reached in {timeout}s")
            time.sleep(0.1)
