"""etcd for a Pando cluster: one member's settings as etcd's own ETCD_*
environment variables (the same file Debian's etcd.service reads, and what
`up` starts its single member with), and the single member `up` runs.

etcd 3.4 shuts down cleanly on SIGTERM and then re-raises the signal on
itself, so a clean stop ends "killed by SIGTERM", never exit 0; the line it
logs first tells (stopped_cleanly)."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import etcd_auth

from .net import client_host, host_port
from .process import StartError, is_running, spawn_detached, wait_ready
from .state import ClusterState, DaemonRecord
from .ui import Ui

ETCD_EXE = "etcd"
ETCD_BIN = Path("/usr/bin/etcd")
CLIENT_PORT = 2379
# What etcd 3.4 logs on SIGTERM before it shuts down (zap logger, then the
# older capnslog one): with it, "killed by SIGTERM" was a clean stop.
CLEAN_STOP_LINES = ("received signal; shutting down",
                    "received terminated signal, shutting down")


def stopped_cleanly(returncode: int, log_text: str) -> bool:
    return returncode == 0 or (returncode == -15 and
                               any(line in log_text for line in CLEAN_STOP_LINES))


@dataclass(frozen=True)
class EtcdMember:
    """One member: its name, where it keeps data, where it listens, the
    whole initial cluster (`name=peer-url,...`) it bootstraps with, and
    the directory of its certificates (etcd_auth.py; None: plain HTTP)."""
    name: str
    data_dir: Path
    address: str
    client_port: int = CLIENT_PORT
    initial_cluster: str = ""       # "" : a cluster of this member alone
    token: str = "pando"
    tls_dir: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_dir else "http"

    @property
    def peer_port(self) -> int:
        return self.client_port + 1

    @property
    def client_url(self) -> str:
        return f"{self.scheme}://{host_port(client_host(self.address), self.client_port)}"

    @property
    def peer_url(self) -> str:
        return f"{self.scheme}://{host_port(client_host(self.address), self.peer_port)}"

    def env(self) -> dict[str, str]:
        """etcd's settings as the ETCD_* variables it reads itself. The
        cluster state is always "new": etcd ignores it (and the initial
        cluster) once its data directory holds a member."""
        listen = host_port(self.address, self.client_port)
        return {
            "ETCD_NAME": self.name,
            "ETCD_DATA_DIR": str(self.data_dir),
            "ETCD_LISTEN_CLIENT_URLS": f"{self.scheme}://{listen}",
            "ETCD_ADVERTISE_CLIENT_URLS": self.client_url,
            "ETCD_LISTEN_PEER_URLS":
                f"{self.scheme}://{host_port(self.address, self.peer_port)}",
            "ETCD_INITIAL_ADVERTISE_PEER_URLS": self.peer_url,
            "ETCD_INITIAL_CLUSTER": self.initial_cluster or f"{self.name}={self.peer_url}",
            "ETCD_INITIAL_CLUSTER_STATE": "new",
            "ETCD_INITIAL_CLUSTER_TOKEN": self.token,
            "ETCD_LOGGER": "zap",
            "ETCD_LOG_OUTPUTS": "stderr",
            **tls_env(self.tls_dir),
        }


def tls_env(tls_dir: Path | None) -> dict[str, str]:
    """A member's TLS settings, from the files of etcd_auth.py in tls_dir:
    clients check it against the CA (and sign in as users); it takes peers
    only with a certificate of the CA."""
    if tls_dir is None:
        return {}
    crt, key, ca = (str(tls_dir / f) for f in ("member.crt", "member.key", "ca.crt"))
    return {"ETCD_CERT_FILE": crt, "ETCD_KEY_FILE": key,
            "ETCD_PEER_CERT_FILE": crt, "ETCD_PEER_KEY_FILE": key,
            "ETCD_PEER_TRUSTED_CA_FILE": ca, "ETCD_PEER_CLIENT_CERT_AUTH": "true"}


def render_env(member: EtcdMember, header: str) -> str:
    """An EnvironmentFile for systemd (KEY=value lines)."""
    return header + "\n" + "".join(f"{k}={v}\n" for k, v in member.env().items())


def healthy(client_url: str, ca_file: str = "", timeout: float = 2.0) -> bool:
    """True when the member answers /health with "true" (it has a leader);
    an https member must show a certificate of ca_file's CA."""
    ctx = ssl.create_default_context(cafile=ca_file) if ca_file else None
    try:
        with urllib.request.urlopen(f"{client_url}/health", timeout=timeout,
                                    context=ctx) as r:
            return bool(json.loads(r.read()).get("health") == "true")
    except (OSError, ValueError, urllib.error.URLError):
        return False


def start(st: ClusterState, bind: str, port: int, timeout: float, ui: Ui,
          started: list[str], prefix: str, osd_ids: list[int],
          mds_names: list[str]) -> etcd_auth.EtcdAccess:
    """Makes the cluster's single etcd member run (data in DIR/etcd, output
    in DIR/etcd.log, TLS and users from DIR/etcd-auth) and answer; leaves a
    running one alone.  Then sets up the users of the mgr, the managers
    mds_names and the OSDs osd_ids (etcd_auth.provision)."""
    d = st.dir / etcd_auth.DIR_NAME
    if etcd_auth.ensure_ca(d):
        ui.say(f"etcd: made the CA of its certificates in {d}")
    etcd_auth.ensure_secret(d)
    etcd_auth.ensure_member_cert(d, [client_host(bind)])
    member = EtcdMember("pando", st.dir / "etcd", bind, port, tls_dir=d)
    ca = str(d / "ca.crt")
    if st.etcd is not None and is_running(st.etcd.pid, ETCD_EXE):
        ui.say(f"etcd: already running (pid {st.etcd.pid}, {st.etcd.address})")
    else:
        if not ETCD_BIN.exists():
            raise StartError(f"{ETCD_BIN} is missing: install Debian's etcd-server "
                             f"(ci/install-deps does)")
        log = st.dir / "etcd.log"
        pid = spawn_detached([ETCD_BIN], cwd=st.dir, output=log, env=member.env())
        st.etcd = DaemonRecord(pid=pid, log=str(log), address=member.client_url)
        st.save()
        started.append(ETCD_EXE)
        ui.say(f"etcd: started pid {pid} ({member.client_url})")
        wait_ready(ui, "etcd", [(f"/health on {member.client_url}",
                                 lambda: healthy(member.client_url, ca))], pid, timeout, [log])
    try:
        etcd_auth.provision(st.etcd.address, d, prefix, osd_ids, mds_names)
    except (OSError, RuntimeError) as e:
        raise StartError(f"etcd: setting up its users: {e}") from None
    etcd_auth.write_passwords(d, list(etcd_auth.users(osd_ids, mds_names)))
    ui.say(f"etcd: users of {len(osd_ids)} OSDs, {len(mds_names)} managers and the mgr "
           f"set up; authentication on")
    return etcd_auth.EtcdAccess(st.etcd.address, ca)


def status_row(st: ClusterState) -> tuple[str, int | None, str, str] | None:
    if st.etcd is None:
        return None
    alive = is_running(st.etcd.pid, ETCD_EXE)
    ca = str(st.dir / etcd_auth.DIR_NAME / "ca.crt")
    state = "down" if not alive else "up" if healthy(st.etcd.address, ca) else "no answer"
    return (ETCD_EXE, st.etcd.pid if alive else None, state, st.etcd.address)
