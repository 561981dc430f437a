"""`pando`: the admin command line. Arguments, dispatch and exit codes;
the HTTP client is mgrapi.py, dbus ganesha.py, the output render.py.

Exit codes (scripts may rely on them):
  0  done
  1  the command failed or was refused (404, 409, a failed dbus call, a
     bad answer)
  2  usage: bad arguments
  3  cannot reach pando-mgr, etcd (the mgr answered 503) or Ganesha
"""
from __future__ import annotations

import argparse
import grp
import pwd
import sys
from pathlib import Path
from typing import Any

from pando_mgr.osdmap import POOL_NAME_RULE, pool_name_ok
from rich.console import Console

from . import config, ganesha, units
from .commands import (BadAnswer, Ctx, cmd_df, cmd_file, cmd_junction, cmd_junction_add,
                       cmd_junction_rm, cmd_layout_get, cmd_layout_set,
                       cmd_mds_failover, cmd_mds_ls, cmd_mds_reload_key, cmd_osd_add, cmd_osd_ls,
                       cmd_osd_mark, cmd_osd_rm, cmd_quota, cmd_quota_set, cmd_rebuild,
                       cmd_rebuild_start, cmd_recall, cmd_scrub, cmd_scrub_action, cmd_status,
                       cmd_transcode)
from .mgrapi import MgrError, MgrUnreachable
from .policy import UsageError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


# ---- arguments -------------------------------------------------------------------
def _osd_id(text: str) -> int:
    """'3' or 'osd.3'."""
    try:
        v = int(text.removeprefix("osd."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an OSD id: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"not an OSD id: {text!r}")
    return v


def _size(text: str) -> int:
    try:
        return units.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _url(text: str) -> str:
    try:
        return config.normalise_url(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 < v < 86400:
        raise argparse.ArgumentTypeError(f"not a number of seconds above 0: {text!r}")
    return v


def _count(text: str) -> int:
    """A non-negative integer option (the FSAL checks its range)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(text)


def _hostport(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text!r}")
    return text


def _pool(text: str) -> str:
    if not pool_name_ok(text):
        raise argparse.ArgumentTypeError(f"not a pool name ({POOL_NAME_RULE}): {text!r}")
    return text


def _common(sub: bool) -> argparse.ArgumentParser:
    """Options every subcommand takes, before or after its name. On the
    subcommands they default to SUPPRESS so they never undo the top level's."""
    p = argparse.ArgumentParser(add_help=False)
    d: dict[str, Any] = {"default": argparse.SUPPRESS} if sub else {}
    p.add_argument("--json", action="store_true", help="machine output (JSON) on stdout", **d)
    p.add_argument("--mgr", metavar="URL", type=_url, help="pando-mgr's URL (else $PANDO_MGR, "
                   "else [mgr] url in $PANDO_CONF or /etc/pando/pando.conf, "
                   f"else {config.DEFAULT_MGR})", **d)
    p.add_argument("--token-file", metavar="FILE", type=Path, help="the mgr's token, which "
                   f"changes need (else ${config.TOKEN_ENV}, else {config.TOKEN_NAME} in "
                   f"/etc/pando or {config.CLUSTER_DIR})", **d)
    p.add_argument("--dbus", metavar="ADDRESS", help="Ganesha's dbus bus address "
                   "(else $DBUS_SYSTEM_BUS_ADDRESS, else the system bus)", **d)
    p.add_argument("--timeout", type=_seconds, metavar="S", help="seconds to wait for an answer "
                   "(default 10)", **({"default": argparse.SUPPRESS} if sub else {"default": 10.0}))
    return p


def _osd_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    osd = sub.add_parser("osd", help="list, add, mark out/in or remove OSDs", parents=[common])
    osub = osd.add_subparsers(dest="osd_cmd", metavar="{ls,add,out,in,rm}", required=True)
    osub.add_parser("ls", help="the OSDs, their states and usage",
                    parents=[common]).set_defaults(fn=cmd_osd_ls)
    add = osub.add_parser("add", help="add an OSD to the cluster map", parents=[common])
    add.add_argument("--ctl", required=True, type=_hostport, metavar="HOST:PORT",
                     help="its control (ctl) address")
    add.add_argument("--nfs", required=True, type=_hostport, metavar="HOST:PORT",
                     help="its NFSv3 data address")
    add.add_argument("--advertise", type=_hostport, metavar="HOST:PORT",
                     help="the data address clients are given (default: --nfs)")
    add.add_argument("--domain", help="failure domain (default: the OSD alone)")
    add.add_argument("--weight", type=_size, metavar="SIZE",
                     help="placement weight: its capacity (bytes, or 512G, 1T)")
    add.add_argument("--pool", type=_pool, metavar="NAME",
                     help="the named pool it is in (default: none); once it is up, the pool "
                          "its config gives wins")
    add.add_argument("--id", type=_osd_id, help="the id (default: the mgr picks the next)")
    add.set_defaults(fn=cmd_osd_add)
    for state, what in (("out", "take no new components; layouts naming it are recalled"),
                        ("in", "take new components again")):
        p = osub.add_parser(state, help=f"mark an OSD {state}: {what}", parents=[common])
        p.add_argument("osd_id", type=_osd_id, metavar="ID")
        p.set_defaults(fn=cmd_osd_mark, state=state)
    rm = osub.add_parser("rm", help="remove an OSD from the map (refused while it holds data)",
                         parents=[common])
    rm.add_argument("osd_id", type=_osd_id, metavar="ID")
    rm.add_argument("--force", action="store_true",
                    help="skip the mgr's objects check (it must still be out)")
    rm.set_defaults(fn=cmd_osd_rm)


def _rebuild_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    rb = sub.add_parser("rebuild", help="rebuild progress: jobs, files and bytes done, rate, ETA; "
                        "start a rebuild", parents=[common])
    rb.add_argument("--watch", action="store_true",
                    help="a progress bar until no job is left (Ctrl-C to stop watching)")
    rb.add_argument("--interval", type=_seconds, default=1.0, metavar="S",
                    help="seconds between looks with --watch (default 1)")
    rb.set_defaults(fn=cmd_rebuild)
    rsub = rb.add_subparsers(dest="rebuild_cmd", metavar="{start}")
    st = rsub.add_parser("start", help="rebuild every component of an OSD now (an admin job)",
                         parents=[common])
    st.add_argument("osd_id", type=_osd_id, metavar="OSD")
    st.add_argument("--target", type=_osd_id, metavar="OSD",
                    help="rebuild onto this one OSD (a dedicated spare), "
                         "not by the declustered placement")
    st.set_defaults(fn=cmd_rebuild_start)
    sc = sub.add_parser("scrub", help="scrub progress per metadata manager; start or stop a pass",
                        parents=[common])
    sc.set_defaults(fn=cmd_scrub)
    ssub = sc.add_subparsers(dest="scrub_cmd", metavar="{start,stop}")
    for action, what in (("start", "start a scrub pass on every metadata manager now"),
                         ("stop", "stop the scrub passes running now")):
        ssub.add_parser(action, help=what, parents=[common]).set_defaults(
            fn=cmd_scrub_action, scrub_action=action)
    sub.add_parser("transcode", help="transcoding of cold files to RS per metadata manager: "
                   "files and bytes done, failures", parents=[common]).set_defaults(
        fn=cmd_transcode)


def _layout_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    lay = sub.add_parser("layout", help="storage policies of directories (like lfs setstripe), "
                         "through Ganesha", parents=[common])
    lsub = lay.add_subparsers(dest="layout_cmd", metavar="{set,get}", required=True)
    st = lsub.add_parser("set", help="a directory's policy: what files and directories made in "
                         "it from now on are laid out as", parents=[common])
    st.add_argument("path", metavar="DIR", help="the directory in the Pando export, e.g. /dir")
    st.add_argument("--scheme", choices=("mirror", "raid0", "rs"))
    st.add_argument("--copies", type=_count, metavar="N", help="mirror: 2 or 3 (default 2)")
    st.add_argument("--k", type=_count, metavar="K", help="rs: data chunks (0: automatic width)")
    st.add_argument("--m", type=_count, metavar="M", help="rs: parity chunks, 1 to 4")
    st.add_argument("--stripe-unit", type=_size, metavar="SIZE",
                    help="bytes, or 64K, 1M: a multiple of 4 KiB (default: the export's)")
    st.add_argument("--width", type=_count, metavar="W",
                    help="raid0/mirror data columns (default: the export's)")
    st.add_argument("--cold-after", type=_count, metavar="SECONDS",
                    help="closed this long, a file is to be transcoded to rs(cold-k, cold-m)")
    st.add_argument("--cold-k", type=_count, metavar="K")
    st.add_argument("--cold-m", type=_count, metavar="M")
    st.add_argument("--pool", type=_pool, metavar="NAME",
                    help="place files only on this pool's OSDs; alone: the export's default "
                         "shape in that pool")
    st.add_argument("--clear", action="store_true",
                    help="no policy: new files take the export's defaults")
    st.set_defaults(fn=cmd_layout_set)
    gt = lsub.add_parser("get", help="the policy of a directory or file, and a file's map",
                         parents=[common])
    gt.add_argument("path", metavar="PATH", help="the path in the Pando export")
    gt.set_defaults(fn=cmd_layout_get)


def _id_of(kind: str, text: str) -> int:
    """A user or group by name (as this host knows it) or by number."""
    if text.isdigit() and int(text) < 2**32:
        return int(text)
    try:
        return pwd.getpwnam(text).pw_uid if kind == "user" else grp.getgrnam(text).gr_gid
    except KeyError:
        raise argparse.ArgumentTypeError(f"no {kind} {text!r} on this host "
                                         "(a number is taken as it is)") from None


def _owner_options(p: argparse.ArgumentParser, sub: bool) -> None:
    # A subcommand's own default would hide `pando quota --user U show`'s.
    d: dict[str, Any] = {"default": argparse.SUPPRESS} if sub else {}
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", type=lambda t: _id_of("user", t), metavar="USER",
                     help="a user's quota (name or uid) instead of the export's", **d)
    who.add_argument("--group", type=lambda t: _id_of("group", t), metavar="GROUP",
                     help="a group's quota (name or gid) instead of the export's", **d)


def _quota_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    q = sub.add_parser("quota", help="the export's quota on bytes and files, as df shows it, "
                       "and each user's and group's, through Ganesha", parents=[common])
    _owner_options(q, sub=False)
    q.set_defaults(fn=cmd_quota)
    qsub = q.add_subparsers(dest="quota_cmd", metavar="{show,set}")
    sh = qsub.add_parser("show", help="each limit and what is used of it", parents=[common])
    _owner_options(sh, sub=True)
    sh.set_defaults(fn=cmd_quota)
    st = qsub.add_parser("set", help="the limits (an option left out: no limit on it)",
                         parents=[common])
    _owner_options(st, sub=True)
    st.add_argument("--bytes", type=_size, metavar="SIZE",
                    help="regular files' sizes in all: bytes, or 500G, 2T")
    st.add_argument("--files", type=_count, metavar="N", help="files and directories in all")
    st.add_argument("--clear", action="store_true", help="no quota")
    st.set_defaults(fn=cmd_quota_set)


def _junction_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    j = sub.add_parser("junction", help="the volumes other manager groups serve, as "
                       "directories in the root that refer NFSv4 clients there, through Ganesha",
                       parents=[common])
    j.set_defaults(fn=cmd_junction)
    jsub = j.add_subparsers(dest="junction_cmd", metavar="{ls,add,rm}")
    jsub.add_parser("ls", help="every junction, where it refers to",
                    parents=[common]).set_defaults(fn=cmd_junction)
    a = jsub.add_parser("add", help="make /VOLUME refer to PATH on the volume's servers",
                        parents=[common])
    a.add_argument("volume", metavar="VOLUME", help="the volume, also the junction's name")
    a.add_argument("--server", action="append", required=True, metavar="HOST",
                   help="its manager group's service address, then its members (1 to 4; "
                   "they serve NFS on port 2049)")
    a.add_argument("--path", default="/pando", metavar="PATH",
                   help="the volume's export path on its servers (default /pando)")
    a.set_defaults(fn=cmd_junction_add)
    rm = jsub.add_parser("rm", help="remove the junction /VOLUME (the volume is untouched)",
                         parents=[common])
    rm.add_argument("volume", metavar="VOLUME")
    rm.set_defaults(fn=cmd_junction_rm)


def parser() -> argparse.ArgumentParser:
    common = _common(sub=True)
    p = argparse.ArgumentParser(
        prog="pando", parents=[_common(sub=False)],
        description="Administer a Pando cluster through pando-mgr and Ganesha's dbus.",
        epilog="exit codes: 0 ok, 1 failed or refused, 2 usage, "
               "3 cannot reach pando-mgr, etcd or Ganesha")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True)
    sub.add_parser("status", help="cluster health, services, capacity, io (like ceph -s)",
                   parents=[common]).set_defaults(fn=cmd_status)
    _osd_parsers(sub, common)
    _rebuild_parsers(sub, common)
    sub.add_parser("df", help="capacity per OSD and per pool",
                   parents=[common]).set_defaults(fn=cmd_df)
    mds = sub.add_parser("mds", help="metadata managers", parents=[common])
    msub = mds.add_subparsers(dest="mds_cmd", metavar="{ls,failover,reload-key}", required=True)
    msub.add_parser("ls", help="metadata managers present, the map epoch each applied",
                    parents=[common]).set_defaults(fn=cmd_mds_ls)
    fo = msub.add_parser("failover", help="a planned switchover: the group's active stops "
                         "(as on SIGTERM) and a standby takes over; waits for it",
                         parents=[common])
    fo.add_argument("group", metavar="GROUP", help="the manager group (Mds_Group)")
    fo.add_argument("--wait", type=_seconds, default=60.0, metavar="S",
                    help="seconds to wait for the new active (default 60)")
    fo.set_defaults(fn=cmd_mds_failover)
    msub.add_parser("reload-key", help="this host's metadata manager reads its cluster key "
                    "file again (a key rotation, without a restart), over Ganesha's dbus",
                    parents=[common]).set_defaults(fn=cmd_mds_reload_key)
    f = sub.add_parser("file", help="a file's storage map (like lfs getstripe), from Ganesha",
                       parents=[common])
    f.add_argument("path", metavar="PATH", help="the path in the Pando export, e.g. /dir/file")
    f.set_defaults(fn=cmd_file)
    r = sub.add_parser("recall", help="recall the layouts of a file (PATH, starts with /) "
                       "or of a client (its address)", parents=[common])
    r.add_argument("target", metavar="PATH|CLIENT")
    r.set_defaults(fn=cmd_recall)
    _layout_parsers(sub, common)
    _quota_parsers(sub, common)
    _junction_parsers(sub, common)
    return p


def run(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.fn(Ctx(args)))
    except (MgrUnreachable, ganesha.GaneshaUnreachable) as e:
        return _fail(str(e), EXIT_UNREACHABLE)
    except MgrError as e:
        return _fail(f"{e} (HTTP {e.status})" if e.status != 200 else str(e), EXIT_FAILED)
    except (ganesha.GaneshaError, config.ConfigError, BadAnswer) as e:
        return _fail(str(e), EXIT_FAILED)
    except UsageError as e:
        return _fail(str(e), EXIT_USAGE)


def _fail(msg: str, code: int) -> int:
    """One line on stderr (never wrapped: scripts grep it)."""
    Console(stderr=True, highlight=False).print(f"pando: {msg}", markup=False, soft_wrap=True)
    return code


def main(argv: list[str] | None = None) -> None:
    try:
        code = run(argv)
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
