"""What each subcommand does: ask the mgr or Ganesha, then print JSON or
a human view (render.py). Failures are exceptions main.py maps to exit
codes."""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any, Callable, Iterator, TypeVar

from rich.console import Console

from . import (config, ganesha, junction_view, layout_view, policy, quota_view, rebuild_view,
               render, watch)
from .mgrapi import MgrClient

EXIT_OK = 0
TABLE_WIDTH = 200
ASK_MGR = "asking pando-mgr"
ASK_GANESHA = "asking Ganesha"
# How often `pando mds failover` looks for the new active.
HANDOVER_POLL_S = 0.2

T = TypeVar("T")


class BadAnswer(Exception):
    """An answer that parsed but cannot be shown."""


class Ctx:
    """What every subcommand gets: its arguments, the consoles, the mgr."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        # Laid out at least TABLE_WIDTH wide, at a terminal too: a narrow
        # one wraps a long row rather than rich cutting addresses to '…'.
        self.out = Console(highlight=False)
        self.out = Console(highlight=False, width=max(self.out.width, TABLE_WIDTH))
        self.err = Console(stderr=True, highlight=False)
        self._mgr: MgrClient | None = None

    @property
    def mgr(self) -> MgrClient:
        if self._mgr is None:
            url = config.resolve_mgr(getattr(self.args, "mgr", None))
            self._mgr = MgrClient(
                url, timeout=float(getattr(self.args, "timeout", 10.0)),
                token_file=config.resolve_token_file(getattr(self.args, "token_file", None)),
                conf=config.conf_path())
        return self._mgr

    @contextlib.contextmanager
    def busy(self, what: str) -> Iterator[None]:
        """A spinner on stderr while waiting, only for a person at a terminal."""
        if self.json or not self.err.is_terminal:
            yield
            return
        with self.err.status(what):
            yield

    def emit(self, data: Any, human: Callable[[], None]) -> None:
        if self.json:
            sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
            return
        try:
            with self.out.capture() as cap:     # all or nothing on stdout
                human()
            sys.stdout.write(cap.get())
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
            raise bad_shape(e) from None

    def show(self, what: str, ask: Callable[[], T], human: Callable[[T], None]) -> int:
        """ask() under a spinner saying what, then its answer printed."""
        with self.busy(what):
            ans = ask()
        self.emit(ans, lambda: human(ans))
        return EXIT_OK


def bad_shape(e: Exception) -> BadAnswer:
    """An answer field of an unexpected type: said so rather than a traceback."""
    return BadAnswer(f"the answer has an unexpected shape ({type(e).__name__}: {e}); "
                     "--json shows it as it is")


# ---- subcommands ---------------------------------------------------------------
def cmd_status(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.status(), lambda st: render.status(c.out, st))


def cmd_osd_ls(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.osds(),
                  lambda osds: render.table(c.out, render.osd_table(osds)) if osds
                  else c.out.print("no OSDs in the map"))


def cmd_osd_add(c: Ctx) -> int:
    a = c.args
    spec: dict[str, Any] = {"ctl": a.ctl, "nfs": a.nfs}
    for key in ("id", "advertise", "domain", "weight", "pool"):
        if getattr(a, key) is not None:
            spec[key] = getattr(a, key)
    with c.busy("adding the OSD"):
        osd = c.mgr.osd_add(spec)
    c.emit(osd, lambda: c.out.print(render.added(osd)))
    return EXIT_OK


def cmd_osd_mark(c: Ctx) -> int:
    state = c.args.state
    with c.busy(f"marking osd.{c.args.osd_id} {state}"):
        ans = c.mgr.osd_mark(c.args.osd_id, state)
    c.emit(ans, lambda: c.out.print(render.marked(c.args.osd_id, state, ans)))
    return EXIT_OK


def cmd_osd_rm(c: Ctx) -> int:
    with c.busy(f"removing osd.{c.args.osd_id}"):
        ans = c.mgr.osd_rm(c.args.osd_id, force=c.args.force)
    epoch = ans.get("epoch") if isinstance(ans, dict) else None
    c.emit(ans, lambda: c.out.print(f"removed osd.{c.args.osd_id}" +
                                    (f" (map epoch {epoch})" if epoch else "")))
    return EXIT_OK


def cmd_df(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.df(), lambda d: render.df(c.out, d))


def cmd_mds_ls(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.mds(),
                  lambda mds: render.table(c.out, render.mds_table(mds)) if mds
                  else c.out.print("no metadata manager is present"))


def cmd_file(c: Ctx) -> int:
    return c.show(ASK_GANESHA, lambda: ganesha.file_map(c.args.path, address=c.args.dbus),
                  lambda fm: render.file_map(c.out, fm))


def _new_active(c: Ctx, group: str, term: int, wait: float) -> dict[str, Any]:
    """Group `group` as /api/status shows it once an active of a term
    above `term` leads; BadAnswer after `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        for g in c.mgr.status().get("groups", []):
            if g.get("name") == group and g.get("active") and int(g.get("term", 0)) > term:
                return dict(g)
        if time.monotonic() > deadline:
            raise BadAnswer(f"group {group}: no new active after {wait:g} s")
        time.sleep(HANDOVER_POLL_S)


def cmd_mds_failover(c: Ctx) -> int:
    group = c.args.group
    with c.busy(f"asking group {group}'s active to hand over"):
        req = c.mgr.group_failover(group)
    asked = time.monotonic()
    with c.busy(f"{req['from']} hands over to a standby ({', '.join(req['standbys'])})"):
        g = _new_active(c, group, int(req["term"]), c.args.wait)
    took = time.monotonic() - asked
    out = {"group": group, "from": req["from"], "active": g["active"], "term": g["term"],
           "seconds": round(took, 1)}
    c.emit(out, lambda: c.out.print(
        f"{group}: {g['active']} is the active (term {g['term']}), {took:.1f} s after "
        f"{req['from']} was asked to hand over; start {req['from']} again to make it a "
        "standby"))
    return EXIT_OK


def cmd_mds_reload_key(c: Ctx) -> int:
    return c.show("reloading the cluster key", lambda: ganesha.reload_key(address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_recall(c: Ctx) -> int:
    return c.show("recalling layouts", lambda: ganesha.recall(c.args.target, address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_layout_set(c: Ctx) -> int:
    pol = policy.from_args(c.args)
    return c.show(ASK_GANESHA, lambda: ganesha.layout_set(c.args.path, pol, address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_layout_get(c: Ctx) -> int:
    return c.show(ASK_GANESHA, lambda: ganesha.layout_get(c.args.path, address=c.args.dbus),
                  lambda j: layout_view.layout(c.out, j))


def _owner(c: Ctx) -> tuple[str, int] | None:
    """("user", uid) or ("group", gid) from --user or --group, or None."""
    if getattr(c.args, "user", None) is not None:
        return ("user", c.args.user)
    if getattr(c.args, "group", None) is not None:
        return ("group", c.args.group)
    return None


def _owner_quotas(c: Ctx) -> list[dict[str, Any]] | None:
    """Every user's and group's quota; None from a manager older than
    owner quotas, whose export quota still shows."""
    try:
        return ganesha.owner_quota_list(address=c.args.dbus)
    except ganesha.GaneshaMissingMethod:
        return None


def cmd_quota(c: Ctx) -> int:
    owner = _owner(c)
    if owner:
        return c.show(ASK_GANESHA,
                      lambda: ganesha.owner_quota_get(*owner, address=c.args.dbus),
                      lambda q: quota_view.owner(c.out, q))
    return c.show(ASK_GANESHA,
                  lambda: {**ganesha.quota_get(address=c.args.dbus), "owners": _owner_quotas(c)},
                  lambda q: quota_view.export(c.out, q))


def cmd_quota_set(c: Ctx) -> int:
    limits = (c.args.bytes, c.args.files)
    if c.args.clear == any(v is not None for v in limits):
        raise policy.UsageError("say --bytes SIZE and/or --files N, or --clear alone")
    bytes_, files = (v or 0 for v in limits)
    owner = _owner(c)
    if owner:
        return c.show(ASK_GANESHA,
                      lambda: ganesha.owner_quota_set(*owner, bytes_, files, address=c.args.dbus),
                      lambda ans: c.out.print(ans["message"]))
    return c.show(ASK_GANESHA, lambda: ganesha.quota_set(bytes_, files, address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_junction(c: Ctx) -> int:
    return c.show(ASK_GANESHA, lambda: ganesha.junction_list(address=c.args.dbus),
                  lambda js: junction_view.junctions(c.out, js))


def cmd_junction_add(c: Ctx) -> int:
    # dbus-send splits an array's elements at commas.
    if any("," in s for s in c.args.server):
        raise policy.UsageError("a server is one host name or address: give --server "
                                "once for each")
    return c.show(ASK_GANESHA,
                  lambda: ganesha.junction_add(c.args.volume, c.args.path, c.args.server,
                                               address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_junction_rm(c: Ctx) -> int:
    return c.show(ASK_GANESHA, lambda: ganesha.junction_remove(c.args.volume, address=c.args.dbus),
                  lambda ans: c.out.print(ans["message"]))


def cmd_rebuild(c: Ctx) -> int:
    if getattr(c.args, "watch", False):
        try:
            watch.watch(c.mgr.rebuild, c.out, c.json, c.args.interval)
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise bad_shape(e) from None
        return EXIT_OK
    return c.show(ASK_MGR, lambda: c.mgr.rebuild(), lambda r: rebuild_view.rebuild(c.out, r))


def cmd_rebuild_start(c: Ctx) -> int:
    spec: dict[str, Any] = {"osd": c.args.osd_id}
    if c.args.target is not None:
        spec["target"] = c.args.target
    with c.busy(f"asking for a rebuild of osd.{c.args.osd_id}"):
        job = c.mgr.rebuild_start(spec)
    target = job.get("target")
    onto = "by the declustered placement" if target is None else f"onto osd.{target}"
    c.emit(job, lambda: c.out.print(f"rebuild job {job.get('id')} of osd.{job.get('osd')} "
                                    f"started, {onto}"))
    return EXIT_OK


def cmd_scrub(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.scrub(), lambda s: rebuild_view.scrub(c.out, s))


def cmd_scrub_action(c: Ctx) -> int:
    action = c.args.scrub_action
    with c.busy(f"asking for a scrub {action}"):
        req = c.mgr.scrub_action(action)
    what = "start a pass" if action == "start" else "stop their passes"
    c.emit(req, lambda: c.out.print(f"scrub {action} requested (request {req.get('id')}): "
                                    f"the metadata managers {what} at their next look"))
    return EXIT_OK


def cmd_transcode(c: Ctx) -> int:
    return c.show(ASK_MGR, lambda: c.mgr.transcode(), lambda t: rebuild_view.transcode(c.out, t))
