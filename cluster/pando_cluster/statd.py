"""rpc.statd and sm-notify (Debian's nfs-common) for Ganesha's NLM, used by
`pando-cluster up` and by the test harness alike.

Ganesha's NSM client asks the statd registered with the local rpcbind
(SM_MON over TCP to "localhost") to monitor every NFSv3 host that takes a
lock; without one, NLM locks are refused.  What nfs-utils 2.6.2 needs,
measured (cluster/README.md, "NFSv3 locking"):

* a state directory (-P) holding `sm/` and `sm.bak/`: statd creates the
  `state` file but not those two and exits without them;
* -F keeps it in the foreground, so its pid is the daemon's, and -d sends
  its log to stderr (a file beside Ganesha's) instead of syslog;
* -L: statd would otherwise run sm-notify, and without -P (it passes none),
  so on /var/lib/nfs, the machine's own NSM state.  sm-notify is run here
  instead, with our directory, once Ganesha serves (notify_argv);
* it has no option for its listen address: it listens on every address
  (UDP and TCP, IPv4 and IPv6, on ports from -p or ephemeral ones), and
  accepts SM_MON and SM_UNMON only from the loopback.
"""
from __future__ import annotations

from pathlib import Path

STATD_EXE = "rpc.statd"
SM_NOTIFY_EXE = "sm-notify"
SM_PROG = 100024    # NSM, what statd registers with rpcbind
NLM_PROG = 100021   # nlockmgr, what Ganesha's NLM registers
# nfs-common's statd, which the systemd units use: its state directory.
SYSTEM_STATE_DIR = Path("/var/lib/nfs")


def notify_dir(state_dir: Path) -> Path:
    """The hosts sm-notify has yet to tell of this start (sm-notify deletes
    each once it answers): Ganesha's NSM_Notify_Dir."""
    return state_dir / "sm.bak"


def prepare_state_dir(state_dir: Path) -> None:
    """Makes `state_dir` what statd needs, and turns the hosts the previous
    instance monitored into this start's notify list.

    The move is sm-notify's own first step, done before statd and Ganesha
    start because Ganesha's SM_UNMON_ALL at start makes statd delete those
    entries, and sm-notify runs only once Ganesha serves (a client told of
    the restart earlier would reclaim its locks from nobody).

    statd runs as the owner of the directory, which stays the user who
    made it: statd reaches its files by absolute path, so another owner
    (nfs-common's `statd`) could not write them under a private parent
    such as root's home or pytest's temporary directories (measured:
    "creating .../sm/localhost: Permission denied", SM_MON refused)."""
    sm, bak = state_dir / "sm", notify_dir(state_dir)
    for d in (sm, bak):
        d.mkdir(parents=True, exist_ok=True)
    for host in sm.iterdir():
        host.replace(bak / host.name)


def statd_argv(exe: Path | str, state_dir: Path) -> list[str]:
    """rpc.statd in the foreground, logging to stderr, on `state_dir`, not
    notifying (above).  No -p: its ports are ephemeral, found through
    rpcbind as Ganesha's NLM port is."""
    return [str(exe), "-F", "-d", "-L", "-P", str(state_dir)]


def notify_argv(exe: Path | str, state_dir: Path, source: str | None,
                foreground: bool = True) -> list[str]:
    """sm-notify: tells the hosts in `state_dir`'s notify list that this
    server restarted, so they reclaim their locks in the grace period, then
    exits (it retries a silent host for 15 minutes).  In the foreground
    (-d) it logs to stderr; else it goes to the background at once and logs
    to syslog.  -f: another sm-notify on this machine (nfs-common's, at
    boot) leaves /run/sm-notify.pid, which would make this one do nothing.
    `source`: the address to send from and to name this server by (-v);
    None for a cluster bound to every address."""
    return [str(exe), *(["-d"] if foreground else []), "-f", "-P", str(state_dir),
            *(["-v", source] if source else [])]
