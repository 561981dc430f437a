"""The metadata manager's NSM for NFSv3 locking: rpc.statd started beside
Ganesha, and sm-notify once Ganesha serves (argv and state directory:
statd.py).  Both are recorded by pid, so `down` stops exactly these."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from .mds_config import MdsPaths
from .net import WILDCARDS
from .paths import system_binary
from .process import is_running, spawn_detached, terminate, wait_ready
from .state import ClusterState, DaemonRecord
from .statd import (NLM_PROG, SM_NOTIFY_EXE, SM_PROG, STATD_EXE, notify_argv, prepare_state_dir,
                    statd_argv)
from .ui import Ui

STATE_DIR = "statd"


def _rpc_answers(prog: int, vers: int, host: str = "127.0.0.1") -> bool:
    """True when `prog` registered with the rpcbind on `host` answers NULL
    there over TCP."""
    try:
        cp = subprocess.run([str(system_binary("rpcinfo")), "-T", "tcp", host,
                             str(prog), str(vers)], capture_output=True, timeout=5, check=False)
    except subprocess.TimeoutExpired:
        return False
    return cp.returncode == 0


def statd_answers() -> bool:
    """A statd answers through rpcbind (what Ganesha's NSM client uses)."""
    return _rpc_answers(SM_PROG, 1)


def nlm_answers(host: str) -> bool:
    """Ganesha's NLM (version 4) answers through rpcbind at `host`, an
    address it serves: hosts told of a restart can reclaim their locks."""
    return _rpc_answers(NLM_PROG, 4, host)


def start_statd(st: ClusterState, paths: MdsPaths, timeout: float, ui: Ui,
                started: list[str]) -> bool:
    """A fresh rpc.statd for a Ganesha about to start; True when it is ours
    (then `notify` must follow once Ganesha serves).

    Ours is restarted even when it still runs: the Ganesha it served is
    gone, and with it every NLM lock, so its clients must be notified.
    A statd this command did not start (nfs-common's) is used, never
    stopped: a second one would take its rpcbind registration away."""
    if st.statd is not None and is_running(st.statd.pid, STATD_EXE):
        outcome = terminate(st.statd.pid, STATD_EXE, timeout)
        ui.say(f"rpc.statd: pid {st.statd.pid} {outcome}, to start afresh with Ganesha")
    st.statd = None
    if statd_answers():
        ui.say("rpc.statd: using the one already registered with rpcbind")
        st.save()
        return False
    state_dir = paths.file(STATE_DIR)
    prepare_state_dir(state_dir)
    out = paths.file("statd.out")
    pid = spawn_detached(statd_argv(system_binary(STATD_EXE), state_dir), cwd=paths.dir,
                         output=out)
    st.statd = DaemonRecord(pid=pid, log=str(out), address=str(state_dir))
    st.save()
    started.append(STATD_EXE)
    ui.say(f"rpc.statd: started pid {pid} (state in {state_dir})")
    wait_ready(ui, "rpc.statd", [("its rpcbind registration", statd_answers)], pid, timeout,
               [out])
    return True


def notify(st: ClusterState, paths: MdsPaths, bind: str, ui: Ui, started: list[str]) -> None:
    """sm-notify, detached: the NFSv3 hosts the last instance monitored
    reclaim their locks now, in Ganesha's grace period.  One still
    retrying a silent host for an earlier start is stopped first: its
    news is older, and the hosts it has not reached are in the notify
    list again."""
    if st.sm_notify is not None and is_running(st.sm_notify.pid, SM_NOTIFY_EXE):
        terminate(st.sm_notify.pid, SM_NOTIFY_EXE, 5.0)
    out = paths.file("sm-notify.out")
    source = None if bind in WILDCARDS else bind
    pid = spawn_detached(notify_argv(system_binary(SM_NOTIFY_EXE), paths.file(STATE_DIR),
                                     source), cwd=paths.dir, output=out)
    st.sm_notify = DaemonRecord(pid=pid, log=str(out))
    st.save()
    started.append(SM_NOTIFY_EXE)
    ui.say(f"sm-notify: pid {pid} tells the NFSv3 hosts of the last start to reclaim locks")


def unit_prepare(state_dir: Path, ui: Ui) -> int:
    """`pando-cluster nsm prepare`, before Ganesha starts under systemd:
    statd's monitor list becomes the notify list (statd.prepare_state_dir)."""
    try:
        prepare_state_dir(state_dir)
    except OSError as e:
        ui.say(f"nsm prepare: {state_dir}: {e}")
        return 1
    left = sorted(p.name for p in (state_dir / "sm.bak").iterdir())
    ui.say(f"nsm prepare: {len(left)} NFSv3 host(s) to notify in {state_dir / 'sm.bak'}")
    return 0


def _has_name(address: str) -> bool:
    """sm-notify -v ADDRESS needs a name for the address (measured,
    nfs-utils 2.6.2: "my_name '10.77.0.1' is unusable: Temporary failure
    in name resolution", exit 1)."""
    try:
        socket.getnameinfo((address, 0), socket.NI_NAMEREQD)
    except OSError:
        return False
    return True


def unit_notify(state_dir: Path, source: str | None, timeout: float, ui: Ui) -> int:
    """`pando-cluster nsm notify`, once Ganesha runs under systemd: waits
    until its NLM answers, then starts sm-notify in the background (it
    stays in the unit's cgroup while it retries silent hosts).  Ganesha
    serves `source` when given (its Bind_Addr), else every address."""
    deadline = time.monotonic() + timeout
    while not nlm_answers(source or "127.0.0.1"):
        if time.monotonic() > deadline:
            ui.say(f"nsm notify: Ganesha's NLM did not answer through rpcbind in {timeout:.0f} s;"
                   " NFSv3 hosts are not told of this start")
            return 1
        time.sleep(0.5)
    if source and not _has_name(source):
        ui.say(f"nsm notify: {source} has no host name; sm-notify names this server by "
               "its hostname, as at boot")
        source = None
    argv = notify_argv(system_binary(SM_NOTIFY_EXE), state_dir, source, foreground=False)
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if cp.returncode != 0:
        ui.say(f"nsm notify: sm-notify exited {cp.returncode}: {cp.stderr.strip()}")
        return 1
    ui.say(f"nsm notify: sm-notify tells the NFSv3 hosts in {state_dir / 'sm.bak'} "
           "to reclaim their locks")
    return 0


def status_row(st: ClusterState) -> tuple[str, int | None, str, str]:
    """rpc.statd's (name, pid, state, where) for the status table."""
    if st.statd is not None and is_running(st.statd.pid, STATD_EXE):
        return STATD_EXE, st.statd.pid, "up", st.statd.address
    return STATD_EXE, None, "up (not ours)" if statd_answers() else "down", "-"
