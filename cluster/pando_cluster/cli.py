"""`pando-cluster up|down|status`: a Pando cluster on this machine."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from . import cluster, render, tool
from .paths import default_cluster_dir


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pando-cluster", description=__doc__)
    p.add_argument("--dir", type=Path, default=None,
                   help="cluster directory (default $PANDO_CLUSTER_DIR or ~/.pando-cluster)")
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="format, configure and start the OSD targets")
    u.add_argument("--osds", type=int, default=4, help="number of OSD targets (default 4)")
    u.add_argument("--base-port", type=int, default=20490,
                   help="OSD i listens on BASE+i (NFSv3) and BASE+100+i (control); default 20490")
    u.add_argument("--bind", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    u.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each OSD")
    d = sub.add_parser("down", help="stop every OSD target (SIGTERM by pid); data is kept")
    d.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")
    s = sub.add_parser("status", help="show the OSD targets: pid alive, control answer, space")
    for sp in (u, d, s):  # --dir also after the command
        sp.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # logs and pipes: keep addresses whole
    cdir: Path = (args.dir or default_cluster_dir()).expanduser().resolve()

    def say(msg: str) -> None:
        console.print(f"[bold]pando-cluster[/]: {msg}", highlight=False, soft_wrap=True)

    try:
        if args.cmd == "up":
            rows = cluster.up(cdir, args.osds, args.base_port, args.bind, say, args.timeout)
            console.print(render.status_table(rows, f"Pando cluster in {cdir}"))
            return 0 if rows and all(r.state == "up" for r in rows) else 1
        if args.cmd == "status":
            rows = cluster.status(cdir)
            if not rows:
                say(f"no cluster in {cdir} (run `pando-cluster up`)")
                return 1
            console.print(render.status_table(rows, f"Pando cluster in {cdir}"))
            return 0 if all(r.state == "up" for r in rows) else 1
        results = cluster.down(cdir, say, args.timeout)
        if not results:
            say(f"no cluster in {cdir}")
            return 0
        console.print(render.down_table(results, f"Pando cluster in {cdir}: down"))
        return 0 if all(r[2] in ("stopped", "not running") for r in results) else 1
    except (tool.ToolError, FileNotFoundError, ValueError) as e:
        say(f"[red]error[/]: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
