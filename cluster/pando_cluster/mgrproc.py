"""pando-mgr for `pando-cluster up`: started after Ganesha, once etcd and
the OSDs answer, with the same arguments the pando-mgr unit gives it
(mgr_argv), recorded by pid and stopped first by `down`."""
from __future__ import annotations

import importlib.util
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

from .etcd_auth import EtcdAccess
from .net import client_host, host_port
from .process import StartError, is_running, spawn_detached, wait_ready
from .state import ClusterState, DaemonRecord
from .ui import Ui

# The daemon runs as `python -m pando_mgr.daemon` with this interpreter (the
# `pando-mgr` entry point's module): pyenv's shims are not always rehashed,
# and this interpreter is the one that has the package. is_running()
# recognises it by the module name.
MGR_MODULE = "pando_mgr.daemon"
MGR_PORT = 7480
DEFAULT_PREFIX = "/pando/"
TOKEN_FILE = "mgr.token"          # pando_mgr.token.FILE_NAME, in the cluster directory


def mgr_args(etcd: EtcdAccess, prefix: str, name: str, listen: str, seed: Path,
             token_file: Path) -> list[str]:
    """pando-mgr's arguments (mgr/README.md), for `up` and the unit alike."""
    auth = [f"--etcd-{k}={v}" for k, v in (("ca", etcd.ca_file), ("user", etcd.user),
                                            ("password-file", etcd.password_file)) if v]
    return ["--etcd", etcd.endpoints, *auth, "--prefix", prefix, "--name", name,
            "--listen", listen, "--seed", str(seed), "--token-file", str(token_file)]


def make_token(path: Path) -> bool:
    """Makes the mgr API's token at path unless one is there (True: made);
    TokenError (an OSError) when the one there is not fit to use (readable
    by others, not a token)."""
    # Imported here: pando-cluster runs where pando_mgr is not installed
    # (installed() says so), and needs it only for the mgr.
    from pando_mgr import token
    made = token.create(path)
    token.load(path)
    return made


def installed() -> bool:
    try:
        return importlib.util.find_spec(MGR_MODULE) is not None
    except ModuleNotFoundError:
        return False


def answers(url: str, timeout: float = 2.0) -> bool:
    """True when GET /api/status gives a JSON object (any health)."""
    try:
        with urllib.request.urlopen(f"{url}/api/status", timeout=timeout) as r:
            return isinstance(json.loads(r.read()), dict)
    except urllib.error.HTTPError as e:
        return e.code == 503  # alive, its etcd not reachable yet: still a mgr
    except (OSError, ValueError, urllib.error.URLError):
        return False


def start(st: ClusterState, etcd: EtcdAccess, bind: str, port: int, timeout: float, ui: Ui,
          started: list[str]) -> DaemonRecord | None:
    """Makes pando-mgr run and answer; leaves a running one alone. None
    (said) when the pando_mgr package is not installed."""
    if st.mgr is not None and is_running(st.mgr.pid, MGR_MODULE):
        ui.say(f"pando-mgr: already running (pid {st.mgr.pid}, {st.mgr.address})")
        return st.mgr
    if not installed():
        ui.say(f"[yellow]pando-mgr: not installed ({MGR_MODULE} is missing): "
               f"not started[/]")
        st.mgr = None
        st.save()
        return None
    listen = host_port(bind, port)
    url = f"http://{host_port(client_host(bind), port)}"
    log, out, token_file = st.dir / "mgr.log", st.dir / "mgr.out", st.dir / TOKEN_FILE
    try:
        made = make_token(token_file)
    except OSError as e:            # a token file there that is not fit to use
        raise StartError(f"pando-mgr: {e}") from None
    if made:
        ui.say(f"generating the mgr's token {token_file} (changes through the API need it)")
    argv = [sys.executable, "-m", MGR_MODULE,
            *mgr_args(etcd, DEFAULT_PREFIX, "mgr-1", listen, st.dir / "cluster.conf",
                      token_file),
            "--log-file", str(log)]
    pid = spawn_detached(argv, cwd=st.dir, output=out)
    st.mgr = DaemonRecord(pid=pid, log=str(log), address=url)
    st.save()
    started.append("pando-mgr")
    ui.say(f"pando-mgr: started pid {pid} ({url})")
    wait_ready(ui, "pando-mgr", [(f"{url}/api/status", lambda: answers(url))], pid, timeout,
               [log, out])
    return st.mgr


def status_row(st: ClusterState) -> tuple[str, int | None, str, str] | None:
    if st.mgr is None:
        return None
    alive = is_running(st.mgr.pid, MGR_MODULE)
    state = "down" if not alive else "up" if answers(st.mgr.address) else "no answer"
    return ("pando-mgr", st.mgr.pid if alive else None, state, st.mgr.address)

