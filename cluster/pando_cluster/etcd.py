"""etcd for a Pando cluster: one member's settings as etcd's own ETCD_*
environment variables (the same file Debian's etcd.service reads, and what
`up` starts its single member with), and the single member `up` runs.

etcd 3.4 shuts down cleanly on SIGTERM and then re-raises the signal on
itself, so a clean stop ends "killed by SIGTERM", never exit 0; the line it
logs first tells (stopped_cleanly)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

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
    """One member: its name, where it keeps data, where it listens, and the
    whole initial cluster (`name=peer-url,...`) it bootstraps with."""
    name: str
    data_dir: Path
    address: str
    client_port: int = CLIENT_PORT
    initial_cluster: str = ""       # "" : a cluster of this member alone
    token: str = "pando"

    @property
    def peer_port(self) -> int:
        return self.client_port + 1

    @property
    def client_url(self) -> str:
        return f"http://{host_port(client_host(self.address), self.client_port)}"

    @property
    def peer_url(self) -> str:
        return f"http://{host_port(client_host(self.address), self.peer_port)}"

    def env(self) -> dict[str, str]:
        """etcd's settings as the ETCD_* variables it reads itself. The
        cluster state is always "new": etcd ignores it (and the initial
        cluster) once its data directory holds a member."""
        listen = host_port(self.address, self.client_port)
        return {
            "ETCD_NAME": self.name,
            "ETCD_DATA_DIR": str(self.data_dir),
            "ETCD_LISTEN_CLIENT_URLS": f"http://{listen}",
            "ETCD_ADVERTISE_CLIENT_URLS": self.client_url,
            "ETCD_LISTEN_PEER_URLS": f"http://{host_port(self.address, self.peer_port)}",
            "ETCD_INITIAL_ADVERTISE_PEER_URLS": self.peer_url,
            "ETCD_INITIAL_CLUSTER": self.initial_cluster or f"{self.name}={self.peer_url}",
            "ETCD_INITIAL_CLUSTER_STATE": "new",
            "ETCD_INITIAL_CLUSTER_TOKEN": self.token,
            "ETCD_LOGGER": "zap",
            "ETCD_LOG_OUTPUTS": "stderr",
        }


def render_env(member: EtcdMember, header: str) -> str:
    """An EnvironmentFile for systemd (KEY=value lines)."""
    return header + "\n" + "".join(f"{k}={v}\n" for k, v in member.env().items())


def healthy(client_url: str, timeout: float = 2.0) -> bool:
    """True when the member answers /health with "true" (it has a leader)."""
    try:
        with urllib.request.urlopen(f"{client_url}/health", timeout=timeout) as r:
            return bool(json.loads(r.read()).get("health") == "true")
    except (OSError, ValueError, urllib.error.URLError):
        return False


def start(st: ClusterState, bind: str, port: int, timeout: float, ui: Ui,
          started: list[str]) -> DaemonRecord:
    """Makes the cluster's single etcd member run (data in DIR/etcd, output
    in DIR/etcd.log) and answer; leaves a running one alone."""
    if st.etcd is not None and is_running(st.etcd.pid, ETCD_EXE):
        ui.say(f"etcd: already running (pid {st.etcd.pid}, {st.etcd.address})")
        return st.etcd
    if not ETCD_BIN.exists():
        raise StartError(f"{ETCD_BIN} is missing: install Debian's etcd-server "
                         f"(ci/install-deps does)")
    member = EtcdMember("pando", st.dir / "etcd", bind, port)
    log = st.dir / "etcd.log"
    pid = spawn_detached([ETCD_BIN], cwd=st.dir, output=log, env=member.env())
    st.etcd = DaemonRecord(pid=pid, log=str(log), address=member.client_url)
    st.save()
    started.append(ETCD_EXE)
    ui.say(f"etcd: started pid {pid} ({member.client_url})")
    wait_ready(ui, "etcd", [(f"/health on {member.client_url}",
                             lambda: healthy(member.client_url))], pid, timeout, [log])
    return st.etcd


def status_row(st: ClusterState) -> tuple[str, int | None, str, str] | None:
    if st.etcd is None:
        return None
    alive = is_running(st.etcd.pid, ETCD_EXE)
    state = "down" if not alive else "up" if healthy(st.etcd.address) else "no answer"
    return (ETCD_EXE, st.etcd.pid if alive else None, state, st.etcd.address)
