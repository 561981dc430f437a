"""The metadata manager's NSM for NFSv3 locking: rpc.statd started beside
Ganesha, and sm-notify once Ganesha serves (argv and state directory:
statd.py).  Both are recorded by pid, so `down` stops exactly these."""
from __future__ import annotations

import subprocess

from .mds_config import MdsPaths
from .net import WILDCARDS
from .paths import system_binary
from .process import is_running, spawn_detached, terminate, wait_ready
from .state import ClusterState, DaemonRecord
from .statd import SM_NOTIFY_EXE, SM_PROG, STATD_EXE, notify_argv, prepare_state_dir, statd_argv
from .ui import Ui

STATE_DIR = "statd"


def statd_answers() -> bool:
    """True when a statd registered with the local rpcbind answers NULL
    over TCP (what Ganesha's NSM client uses)."""
    try:
        cp = subprocess.run([str(system_binary("rpcinfo")), "-T", "tcp", "127.0.0.1",
                             str(SM_PROG), "1"], capture_output=True, timeout=5, check=False)
    except subprocess.TimeoutExpired:
        return False
    return cp.returncode == 0


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


def status_row(st: ClusterState) -> tuple[str, int | None, str, str]:
    """rpc.statd's (name, pid, state, where) for the status table."""
    if st.statd is not None and is_running(st.statd.pid, STATD_EXE):
        return STATD_EXE, st.statd.pid, "up", st.statd.address
    return STATD_EXE, None, "up (not ours)" if statd_answers() else "down", "-"
