"""The HTTP API (mgr/README.md, "HTTP API"), the dashboard and /metrics.

GETs answer from the state last read from etcd; when etcd cannot be
reached they still answer, with "cached": true.  Changes go to the leader:
a follower answers 307 with the leader's URL (also in the JSON body),
503 when there is no leader or etcd is unreachable.  Changes are taken
only from the token's holder, in JSON, and never from a page of another
origin (guard; mgr/README.md, "Who may change the cluster")."""
from __future__ import annotations

import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from . import groups, health, metrics, osdmap, progress, rebuild, token
from .etcd import EtcdError, EtcdUnavailable
from .manager import Manager, NotLeader
from .osdmap import ClusterMap, MapError
from .pools import named_pools

log = logging.getLogger("pando_mgr.api")
DASHBOARD = Path(__file__).parent / "dashboard"
if hasattr(web, "AppKey"):
    MGR: web.AppKey[Manager] = web.AppKey("mgr", Manager)
    TOKEN: web.AppKey[str] = web.AppKey("token", str)
    NAMES: web.AppKey[frozenset[str]] = web.AppKey("names", frozenset)
else:  # aiohttp before 3.9 (Debian 12's python3-aiohttp is 3.8): string keys
    MGR = "mgr"  # type: ignore[assignment]
    TOKEN = "token"  # type: ignore[assignment]
    NAMES = "names"  # type: ignore[assignment]
CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(body: Any, status: int = 200) -> web.Response:
    return web.json_response(body, status=status, dumps=lambda v: json.dumps(v, indent=None))


def _error(status: int, message: str, **extra: Any) -> web.Response:
    return _json({"error": message, **extra}, status)


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes {"error"} with its status, never a traceback."""
    try:
        return await handler(request)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _error(e.status, e.reason)
    except MapError as e:
        return _error(e.status, str(e))
    except NotLeader as e:
        if e.leader_url is None:
            return _error(503, "no leader mgr right now; retry shortly")
        loc = e.leader_url.rstrip("/") + str(request.rel_url)
        return web.Response(status=307, headers={"Location": loc},
                            content_type="application/json",
                            text=json.dumps({"error": "not the leader; retry at the leader",
                                             "leader": e.leader_url}))
    except EtcdUnavailable as e:
        return _error(503, f"etcd unreachable: {e}")
    except EtcdError as e:
        return _error(503, f"etcd error: {e}")
    except Exception:                       # a bug: say so, keep serving
        log.exception("%s %s failed", request.method, request.path)
        return _error(500, "internal error (see the mgr log)")


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuses a request for a name that is not this mgr's (a web page
    that rebinds its own DNS name to the mgr's address), and a change
    from another origin's page, in another body than JSON (an HTML form,
    or a fetch the browser sends without asking the mgr first), or
    without the token."""
    if not _our_host(request):
        return _error(403, f"Host {request.host[:100]!r} is not a name of this mgr")
    if request.method not in CHANGES:
        return await handler(request)
    origin = request.headers.get("Origin")
    if origin is not None and origin.lower() != f"{request.scheme}://{request.host}".lower():
        return _error(403, "a change from another origin's page is refused")
    if request.content_type != "application/json":
        return _error(415, "changes take a JSON body (Content-Type: application/json)")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.matches(request.app[TOKEN], given.strip()):
        return web.json_response(
            {"error": "a change needs the mgr's token (Authorization: Bearer TOKEN, "
                      "from /etc/pando/mgr.token)"},
            status=401, headers={"WWW-Authenticate": "Bearer"})
    return await handler(request)


def _our_host(request: web.Request) -> bool:
    """An address (any: the network can reach it anyway) or a name this mgr
    was given (NAMES)."""
    host = (request.url.host or "").strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return host in request.app[NAMES]


def _mgr(request: web.Request) -> Manager:
    return request.app[MGR]


def _cached(mgr: Manager, body: dict[str, Any]) -> dict[str, Any]:
    if not mgr.reachable:
        body["cached"] = True
    return body


def _checks(mgr: Manager) -> list[health.Check]:
    s = mgr.snap
    return health.checks(s.cmap, s.presence, s.mds, mgr.reachable, mgr.etcd_members, s.scrub,
                         s.malformed, s.groups, ratios=mgr.ratios)


def _capacity(mgr: Manager) -> dict[str, int]:
    s = mgr.snap
    ids = {o.id for o in s.cmap.osds} if s.cmap else set()
    total = sum(p.statfs("bytes_total") for i, p in s.presence.items() if i in ids)
    free = sum(p.statfs("bytes_free") for i, p in s.presence.items() if i in ids)
    return {"total": total, "used": max(0, total - free), "free": free}


def _mgrs(mgr: Manager) -> list[dict[str, Any]]:
    leader = (mgr.snap.leader or {}).get("name")
    return [{**v, "name": n, "leader": n == leader} for n, v in sorted(mgr.snap.mgrs.items())]


async def status(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    s = mgr.snap
    cs = _checks(mgr)
    osds = s.cmap.osds if s.cmap else []
    members = mgr.etcd_members
    return _json(_cached(mgr, {
        "health": health.overall(cs), "checks": [c.to_json() for c in cs],
        "epoch": s.cmap.epoch if s.cmap else 0,
        "leader": (s.leader or {}).get("name"), "mgr": mgr.name,
        "mgrs": _mgrs(mgr),
        "osds": {"total": len(osds), "up": sum(o.up for o in osds),
                 "in": sum(o.in_ for o in osds)},
        "capacity": _capacity(mgr),
        "clients": sum(int(v.get("clients", 0) or 0) for v in s.mds.values()),
        "throughput": mgr.history.total(),
        "mds": [{"name": n, **v} for n, v in sorted(s.mds.items())],
        "groups": groups.view(s.groups, time.time()),
        "etcd": {"members": members, "reachable": mgr.reachable,
                 "quorum": mgr.reachable and (not members or 2 * sum(
                     m["healthy"] for m in members) > len(members))},
        "rebuild": {k: v for k, v in mgr.rebuild_summary().items() if k != "mds"},
        "scrub": {k: v for k, v in _scrub(mgr).items()
                  if k in ("running", "mismatches", "repaired", "unrepairable")},
        "transcode": {k: v for k, v in _transcode(mgr).items() if k != "mds"},
    }))


def _osd_view(mgr: Manager, o: osdmap.Osd) -> dict[str, Any]:
    p = mgr.snap.presence.get(o.id)
    v = o.to_json()
    v.pop("weight_auto", None)
    v["alive"] = p is not None
    v["statfs"] = p.value.get("statfs") if p else None
    v["host"] = p.value.get("host") if p else None
    v["rates"] = mgr.history.rate(o.id)
    return v


async def osds(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    m = mgr.snap.cmap
    return _json([_osd_view(mgr, o) for o in (m.osds if m else [])])


def _osd_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isdigit() or not 0 < int(raw) < 2**32:
        raise MapError(400, f"bad OSD id {raw!r}")
    return int(raw)


async def add_osd(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    req = await _body(request)
    added: list[osdmap.Osd] = []

    def fn(m: ClusterMap, _rev: int) -> ClusterMap:
        new, o = osdmap.add_osd(m, req, time.time(), mgr.name)
        added[:] = [o]
        return new
    await mgr.change(fn)
    return _json(_osd_view(mgr, added[0]), 201)


async def _mark(request: web.Request, out: bool) -> web.Response:
    mgr = _mgr(request)
    osd_id = _osd_id(request)
    f = osdmap.mark_out if out else osdmap.mark_in
    new = await mgr.change(lambda m, _rev: f(m, osd_id, time.time(), mgr.name))
    m = new or mgr.snap.cmap
    o = m.osd(osd_id) if m else None
    if o is None:
        raise MapError(404, f"no such OSD: {osd_id}")
    return _json({**_osd_view(mgr, o), "changed": new is not None,
                  "epoch": m.epoch if m else 0})


async def mark_out(request: web.Request) -> web.Response:
    return await _mark(request, True)


async def mark_in(request: web.Request) -> web.Response:
    return await _mark(request, False)


async def remove_osd(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    osd_id = _osd_id(request)
    force = request.query.get("force", "0") not in ("0", "", "false", "no")

    def fn(m: ClusterMap, rev: int) -> ClusterMap:
        return osdmap.remove_osd(m, osd_id, mgr.snap.presence.get(osd_id), force,
                                 time.time(), mgr.name, rev)
    new = await mgr.change(fn)
    return _json({"removed": osd_id, "epoch": new.epoch if new else 0})


def _df_row(total: int, free: int) -> dict[str, int]:
    return {"total": total, "used": max(0, total - free), "free": free}


async def df(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    m = mgr.snap.cmap
    rows = []
    for o in (m.osds if m else []):
        p = mgr.snap.presence.get(o.id)
        row = _df_row(p.statfs("bytes_total"), p.statfs("bytes_free")) if p else _df_row(0, 0)
        rows.append({"id": o.id, "up": o.up, "in": o.in_, "weight": o.weight,
                     "objects": p.statfs("objects") if p else 0, **row})
    raw = _capacity(mgr)
    pools = []
    for pool in (m.pools if m else []):
        copies = max(1, int(pool.get("copies", 1) or 1))
        pools.append({"name": pool.get("name", ""), "scheme": pool.get("scheme", ""),
                      "copies": copies, "total": raw["total"] // copies,
                      "used": raw["used"] // copies, "free": raw["free"] // copies})
    return _json(_cached(mgr, {"osds": rows, "pools": pools + _named_pools(mgr),
                               "total": raw}))


def _named_pools(mgr: Manager) -> list[dict[str, Any]]:
    """A row per pool the map's OSDs are in, by name; `up`: its OSDs up
    and in."""
    return [{"name": p.name, "osds": len(p.osds), "up": len(p.up), **_df_row(p.total, p.free)}
            for p in named_pools(mgr.snap.cmap, mgr.snap.presence)]


async def mds(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    epoch = mgr.snap.cmap.epoch if mgr.snap.cmap else 0
    return _json([{"name": n, **v, "alive": True, "epoch": v.get("epoch", 0),
                   "behind": int(v.get("epoch", 0) or 0) < epoch}
                  for n, v in sorted(mgr.snap.mds.items())])


async def raw_map(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    if mgr.snap.cmap is None:
        raise MapError(404, "no cluster map yet")
    return _json(mgr.snap.cmap.to_json())


async def _body(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        raise MapError(400, "body is not JSON") from None


async def rebuild_get(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    return _json(_cached(mgr, {**mgr.rebuild_summary(),
                              "history": mgr.rate_history.to_json()}))


async def rebuild_post(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    job = await mgr.rebuild(await _body(request))
    return _json(job.to_json(), 201)


def _scrub(mgr: Manager) -> dict[str, Any]:
    return rebuild.scrub_summary(mgr.snap.scrub, mgr.snap.scrub_request)


async def scrub_get(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    return _json(_cached(mgr, _scrub(mgr)))


async def scrub_post(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    req = await _body(request)
    if not isinstance(req, dict) or set(req) - {"action"}:
        raise MapError(400, "expected {\"action\": \"start\"|\"stop\"}")
    return _json(await mgr.scrub(req.get("action")), 202)


async def group_failover(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    if await _body(request) != {}:
        raise MapError(400, "expected {}")
    return _json(await mgr.failover(request.match_info["group"]), 202)


def _transcode(mgr: Manager) -> dict[str, Any]:
    return progress.transcode_summary(mgr.snap.transcode)


async def transcode_get(request: web.Request) -> web.Response:
    return _json(_cached(_mgr(request), _transcode(_mgr(request))))


async def history(request: web.Request) -> web.Response:
    return _json(_mgr(request).history.to_json())


async def prometheus(request: web.Request) -> web.Response:
    mgr = _mgr(request)
    text = metrics.render(mgr, health.overall(_checks(mgr)))
    return web.Response(text=text, content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(DASHBOARD / "index.html")


def make_app(mgr: Manager, api_token: str, names: frozenset[str] = frozenset()) -> web.Application:
    """api_token: what a change must carry; names: the host names requests
    may be addressed to, besides "localhost" and any address."""
    app = web.Application(middlewares=[guard, errors], client_max_size=64 * 1024)
    app[MGR] = mgr
    app[TOKEN] = api_token
    app[NAMES] = frozenset(n.lower() for n in names) | {"localhost"}
    r = app.router
    r.add_get("/", index)
    r.add_static("/static/", DASHBOARD)
    r.add_get("/api/status", status)
    r.add_get("/api/osds", osds)
    r.add_post("/api/osds", add_osd)
    r.add_post("/api/osd/{id}/out", mark_out)
    r.add_post("/api/osd/{id}/in", mark_in)
    r.add_delete("/api/osd/{id}", remove_osd)
    r.add_get("/api/df", df)
    r.add_get("/api/mds", mds)
    r.add_get("/api/map", raw_map)
    r.add_get("/api/history", history)
    r.add_get("/api/rebuild", rebuild_get)
    r.add_post("/api/rebuild", rebuild_post)
    r.add_get("/api/scrub", scrub_get)
    r.add_post("/api/scrub", scrub_post)
    r.add_get("/api/transcode", transcode_get)
    r.add_post("/api/groups/{group}/failover", group_failover)
    r.add_get("/metrics", prometheus)
    return app
