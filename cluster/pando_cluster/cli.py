"""`pando-cluster up|down|status`: a Pando cluster on this machine."""
from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import cluster, conf_file, etcd, etcd_auth, mgrproc, nsm, render, render_host, tool
from .cluster import ClusterView, UpOptions
from .mds import MdsOptions
from .paths import default_cluster_dir
from .process import StartError
from .ui import Ui


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pando-cluster", description=__doc__)
    p.add_argument("--dir", type=Path, default=None,
                   help="cluster directory (default $PANDO_CLUSTER_DIR or ~/.pando-cluster)")
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start etcd, the OSD targets, Ganesha with the Pando FSAL, "
                                  "then pando-mgr")
    u.add_argument("--osds", type=int, default=4, help="number of OSD targets (default 4)")
    u.add_argument("--base-port", type=int, default=20490,
                   help="OSD i listens on BASE+i (NFSv3) and BASE+100+i (control); default 20490")
    u.add_argument("--bind", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    u.add_argument("--nfs-port", type=int, default=2049, help="Ganesha's NFS port (default 2049)")
    u.add_argument("--mnt-port", type=int, default=20048,
                   help="Ganesha's MOUNT (NFSv3 mountd) port (default 20048)")
    u.add_argument("--no-mds", action="store_true",
                   help="start the OSD targets only, not Ganesha (no root needed)")
    u.add_argument("--etcd-port", type=int, default=etcd.CLIENT_PORT,
                   help="etcd's client port (default 2379; its peer port is the next one)")
    u.add_argument("--mgr-port", type=int, default=mgrproc.MGR_PORT,
                   help="pando-mgr's HTTP API and dashboard port (default 7480)")
    u.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for each daemon to answer (default 30)")
    d = sub.add_parser("down", help="stop pando-mgr, Ganesha, the OSDs, and the dbus-daemon, "
                                    "rpcbind and etcd `up` started (SIGTERM by pid); "
                                    "data is kept")
    d.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")
    r = sub.add_parser("render", help="write one host's configuration files from the "
                                      "cluster configuration file (pando.conf)")
    r.add_argument("--config", type=Path, default=conf_file.DEFAULT_PATH,
                   help=f"the cluster configuration file (default {conf_file.DEFAULT_PATH})")
    r.add_argument("--host", default=socket.gethostname().split(".")[0],
                   help="the [host NAME] to render for (default this host's short name)")
    r.add_argument("--out", type=Path, default=conf_file.DEFAULT_PATH.parent,
                   help="where to write the files (default /etc/pando)")
    r.add_argument("--conf-dir", type=Path, default=None,
                   help="where the files will be installed, as they name each other "
                        "(default --out)")
    e = sub.add_parser("etcd-users", help="set up etcd's users and roles from the cluster "
                                          "configuration file and turn authentication on "
                                          "(once, on one etcd host, after render)")
    e.add_argument("--config", type=Path, default=conf_file.DEFAULT_PATH,
                   help=f"the cluster configuration file (default {conf_file.DEFAULT_PATH})")
    e.add_argument("--conf-dir", type=Path, default=conf_file.DEFAULT_PATH.parent,
                   help="where render installed this host's files (default /etc/pando)")
    s = sub.add_parser("status", help="show the OSD targets, etcd, Ganesha and pando-mgr")
    _nsm_parser(sub)
    for sp in (u, d, s, r):  # --dir also after the command
        sp.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return p


def _nsm_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    n = sub.add_parser("nsm", help="NFSv3 lock recovery around a start of Ganesha under systemd "
                                   "(pando-mds.service runs both steps)")
    nsub = n.add_subparsers(dest="nsm_cmd", required=True)
    pp = nsub.add_parser("prepare", help="before Ganesha starts: statd's monitor list "
                                         "(DIR/sm) becomes the notify list (DIR/sm.bak)")
    nn = nsub.add_parser("notify", help="once Ganesha runs: wait until its NLM answers, then "
                                        "run sm-notify, which tells the hosts in DIR/sm.bak")
    for sp in (pp, nn):
        sp.add_argument("state_dir", type=Path, metavar="DIR",
                        help="statd's state directory (nfs-common's: /var/lib/nfs)")
    nn.add_argument("--source", default="",
                    help="the address to notify from and name this server by (sm-notify -v)")
    nn.add_argument("--timeout", type=float, default=60.0,
                    help="seconds to wait for Ganesha's NLM (default 60)")
    nn.add_argument("--group", default="",
                    help="the manager group this manager is in (\"\": none): a group's "
                         "active runs sm-notify itself when it takes over, so nothing here")


def _nsm(args: argparse.Namespace, ui: Ui) -> int:
    if args.nsm_cmd == "prepare":
        return nsm.unit_prepare(args.state_dir, ui)
    if args.group:
        ui.say(f"nsm notify: manager group {args.group}: its active tells the NFSv3 hosts "
               f"when it takes over")
        return 0
    return nsm.unit_notify(args.state_dir, args.source or None, args.timeout, ui)


def _show(console: Console, view: ClusterView, cdir: Path) -> None:
    console.print(render.status_table(view.osds, f"Pando cluster in {cdir}"))
    if view.services:
        console.print(render.services_table(view.services, "Services"))


def _show_failure(console: Console, ui: Ui, e: StartError) -> None:
    ui.say(f"[red]error[/]: {escape(str(e))}")
    for log, tail in e.tails.items():
        if tail:
            console.rule(f"last lines of {log}", style="dim")
            for line in tail:
                console.print(line, markup=False, highlight=False, soft_wrap=True)


def _render(args: argparse.Namespace, ui: Ui) -> int:
    try:
        conf = conf_file.parse(args.config)
        out = args.out.expanduser().resolve()
        done = render_host.render_host(conf, args.host, out, args.conf_dir)
    except (conf_file.ConfError, OSError) as e:
        ui.say(f"[red]error[/]: {escape(str(e))}")
        return 1
    ui.say(f"host {args.host} ({done.host.address}): wrote {len(done.files)} files in {out}")
    for f in done.files:
        print(f"  {f}")
    print("Then, on this host (as root):")
    for line in done.todo:
        print(f"  {line}")
    return 0


def _etcd_users(args: argparse.Namespace, ui: Ui) -> int:
    try:
        conf = conf_file.parse(args.config)
        d = args.conf_dir / etcd_auth.DIR_NAME
        osds = [o.osd_id for o in conf.osds()]
        mds = [h.name for h in conf.hosts.values() if h.mds]
        etcd_auth.provision(conf.etcd_endpoints, d, conf.prefix, osds, mds)
    except (conf_file.ConfError, OSError, RuntimeError) as e:
        ui.say(f"[red]error[/]: {escape(str(e))}")
        return 1
    ui.say(f"etcd {conf.etcd_endpoints}: users of the mgr, {len(mds)} managers and "
           f"{len(osds)} OSDs set up; authentication on")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # logs and pipes: keep addresses whole
    ui = Ui(console)
    cdir: Path = (args.dir or default_cluster_dir()).expanduser().resolve()

    if args.cmd == "render":
        return _render(args, ui)
    if args.cmd == "etcd-users":
        return _etcd_users(args, ui)
    if args.cmd == "nsm":
        return _nsm(args, ui)
    try:
        if args.cmd == "up":
            mds = None if args.no_mds else MdsOptions(args.bind, args.nfs_port, args.mnt_port,
                                                      args.timeout)
            view = cluster.up(cdir, UpOptions(args.osds, args.base_port, args.bind,
                                              args.timeout, mds, args.etcd_port,
                                              args.mgr_port), ui)
            _show(console, view, cdir)
            for line in render.how_to_use(view.state):
                console.print(line, markup=False, highlight=False, soft_wrap=True)
            return 0 if view.healthy else 1
        if args.cmd == "status":
            view = cluster.status(cdir)
            if not view.osds and not view.services:
                ui.say(f"no cluster in {cdir} (run `pando-cluster up`)")
                return 1
            _show(console, view, cdir)
            return 0 if view.healthy else 1
        results = cluster.down(cdir, ui, args.timeout)
        if not results:
            ui.say(f"no cluster in {cdir}")
            return 0
        console.print(render.down_table(results, f"Pando cluster in {cdir}: down"))
        return 0 if all(r.outcome in ("stopped", "not running") for r in results) else 1
    except StartError as e:
        _show_failure(console, ui, e)
        return 1
    except (tool.ToolError, FileNotFoundError, ValueError) as e:
        ui.say(f"[red]error[/]: {escape(str(e))}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
