"""pando-mgr: the cluster manager daemon (mgr/README.md)."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import urllib.parse
from pathlib import Path

from aiohttp import web

from . import health, token
from .api import make_app
from .etcd import Etcd, EtcdAuth
from .manager import Manager
from .osdmap import Settings, parse_seed

log = logging.getLogger("pando_mgr")


def _hostport(v: str) -> tuple[str, int]:
    host, sep, port = v.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {v!r}")
    return host.strip("[]"), int(port)


def _positive(v: str) -> float:
    try:
        f = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {v!r}") from None
    if f <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {v}")
    return f


def _ratio(v: str) -> float:
    f = _positive(v)
    if f >= 1:
        raise argparse.ArgumentTypeError(f"must be < 1, got {v}")
    return f


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="pando-mgr", description=__doc__)
    p.add_argument("--etcd", default="http://127.0.0.1:2379",
                   help="etcd client URLs, comma-separated (default %(default)s)")
    p.add_argument("--etcd-ca", default="",
                   help="the CA that signs etcd's certificates (https endpoints)")
    p.add_argument("--etcd-user", default="",
                   help="the etcd user to sign in as (mgr/README.md, \"etcd users and roles\")")
    p.add_argument("--etcd-password-file", default="",
                   help="that user's password, a file only its owner may read")
    p.add_argument("--prefix", default="/pando/", help="key prefix (default %(default)s)")
    p.add_argument("--name", default=socket.gethostname(), help="this mgr's name (host name)")
    p.add_argument("--listen", type=_hostport, default=("127.0.0.1", 7480),
                   help="HOST:PORT of the HTTP API (default 127.0.0.1:7480)")
    p.add_argument("--url", help="the URL other mgrs redirect to (default http://LISTEN)")
    p.add_argument("--token-file", type=Path,
                   default=Path(os.environ.get(token.ENV) or token.DEFAULT_FILE),
                   help="the token every change must carry, a file only its owner may "
                        f"read (default ${token.ENV}, else %(default)s)")
    p.add_argument("--seed", type=Path, help="cluster.conf that seeds a new cluster's map")
    p.add_argument("--down-out-interval", type=_positive, default=600.0,
                   help="seconds down before out (default %(default)s)")
    p.add_argument("--lease", type=_positive, default=5.0,
                   help="lease TTL in seconds (default %(default)s)")
    p.add_argument("--presence-grace", type=_positive, default=4.0,
                   help="seconds after reaching etcd again before an OSD without "
                        "presence is marked down (default %(default)s)")
    p.add_argument("--poll", type=_positive, default=0.25,
                   help="seconds between reads of etcd (default %(default)s)")
    p.add_argument("--nearfull-ratio", type=_ratio, default=health.FullRatios.nearfull,
                   help="share of an OSD's file system in use past which it is nearfull, "
                        "OSD_NEARFULL (default %(default)s)")
    p.add_argument("--full-ratio", type=_ratio, default=health.FullRatios.full,
                   help="share past which it is full, OSD_FULL (default %(default)s)")
    p.add_argument("--log-file", type=Path, help="log here instead of stderr")
    p.add_argument("--log-level", default="info",
                   choices=["debug", "info", "warning", "error"])
    a = p.parse_args(argv)
    a.prefix = a.prefix if a.prefix.endswith("/") else a.prefix + "/"
    if not a.prefix.startswith("/"):
        p.error("--prefix must start with /")
    if a.seed is not None:
        try:
            parse_seed(a.seed.read_text(), 0, "check")
        except (OSError, ValueError) as e:
            p.error(f"--seed {a.seed}: {e}")
    try:
        a.token = token.load(a.token_file)
    except token.TokenError as e:
        p.error(f"--token-file: {e} (pando-cluster up and render make it)")
    if a.nearfull_ratio >= a.full_ratio:
        p.error("--nearfull-ratio must be below --full-ratio")
    if a.etcd_user and not a.etcd_password_file:
        p.error("--etcd-user needs --etcd-password-file")
    a.etcd_auth = EtcdAuth(a.etcd_ca, a.etcd_user, a.etcd_password_file)
    try:
        a.etcd_client = Etcd([e.strip() for e in a.etcd.split(",") if e.strip()],
                             timeout=min(1.5, max(0.5, a.lease / 4)), auth=a.etcd_auth)
    except (OSError, ValueError) as e:
        p.error(f"--etcd: {e}")
    return a


def _setup_logging(a: argparse.Namespace) -> None:
    handler: logging.Handler = (logging.FileHandler(a.log_file) if a.log_file
                                else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter(
        "%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(a.log_level.upper())
    # aiohttp's access log at debug would drown the state changes.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


async def serve(a: argparse.Namespace) -> None:
    host, port = a.listen
    url = a.url or f"http://{host}:{port}"
    etcd = a.etcd_client
    mgr = Manager(etcd, a.prefix, a.name, url, a.lease,
                  Settings(name=a.name, down_out_interval=a.down_out_interval,
                           presence_grace=a.presence_grace),
                  seed=a.seed, poll=a.poll,
                  ratios=health.FullRatios(a.nearfull_ratio, a.full_ratio))
    names = frozenset({host, socket.gethostname(), urllib.parse.urlsplit(url).hostname or ""})
    runner = web.AppRunner(make_app(mgr, a.token, names - {""}), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("pando-mgr %s listening on %s, etcd %s (user %s), prefix %s, lease %gs, "
             "down-out-interval %gs", a.name, url, a.etcd, a.etcd_user or "none", a.prefix,
             a.lease, a.down_out_interval)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await mgr.run(stop)
    finally:
        log.info("stopping: revoking the lease so a standby takes over")
        await mgr.shutdown()
        await runner.cleanup()
        log.info("stopped")


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    _setup_logging(a)
    try:
        asyncio.run(serve(a))
    except OSError as e:
        log.error("cannot serve: %s", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
