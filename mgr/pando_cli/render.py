"""Human output of every subcommand (rich): `pando status` like `ceph -s`,
tables for osd ls, df and mds ls, `pando file` like `lfs getstripe`.
Functions take the API's JSON as it comes and tolerate missing fields, so
an older or newer mgr still prints what it can."""
from __future__ import annotations

import time
from typing import Any, Iterable

from pando_mgr.health import QUOTA_NEARFULL_PCT
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import rebuild_view, units

HEALTH_STYLE = {"HEALTH_OK": "bold green", "HEALTH_WARN": "bold yellow",
                "HEALTH_ERR": "bold red"}
SEVERITY_STYLE = {"HEALTH_WARN": "yellow", "WARN": "yellow", "HEALTH_ERR": "red", "ERR": "red"}
BAR_WIDTH = 30


def _name(v: Any) -> str:
    """A mgr, leader or member as the API gives it: a name or an object."""
    if isinstance(v, dict):
        return str(v.get("name") or v.get("url") or "?")
    return "-" if v is None else str(v)


def bar(used: float | int | None, total: float | int | None, width: int = BAR_WIDTH) -> Text:
    """[#########.........] 31.2%, coloured by how full it is."""
    pct = units.percent(used, total)
    fill = min(width, round(width * pct / 100))
    style = "red" if pct > 95 else "yellow" if pct > 85 else "green"
    t = Text("[")
    t.append("#" * fill, style=style)
    t.append("." * (width - fill), style="dim")
    t.append(f"] {pct:.1f}%")
    return t


LABEL_WIDTH = 9


def _section(title: str, rows: Iterable[tuple[str, Text | str]]) -> Text:
    """'  title:' then '    label: value' lines, labels right-aligned (ceph -s)."""
    out = Text()
    out.append(f"  {title}:\n", style="bold")
    for k, v in rows:
        out.append(" " * 2 + (k + ":" if k else "").rjust(LABEL_WIDTH) + " ")
        out.append_text(v if isinstance(v, Text) else Text(v))
        out.append("\n")
    return out


def _health_rows(st: dict[str, Any]) -> list[tuple[str, Text | str]]:
    health = str(st.get("health", "HEALTH_UNKNOWN"))
    rows: list[tuple[str, Text | str]] = [
        ("health", Text(health, style=HEALTH_STYLE.get(health, "bold")))]
    for c in st.get("checks") or []:
        if not isinstance(c, dict):
            continue
        sev = str(c.get("severity", ""))
        line = Text(f"{c.get('code', '?')}: ", style=SEVERITY_STYLE.get(sev, ""))
        line.append(str(c.get("summary", "")))
        rows.append(("", line))
    if st.get("cached"):
        rows.append(("", Text("CACHED: pando-mgr cannot read etcd; this is the last state "
                              "it read", style="bold yellow")))
    return rows


def _mgr_text(st: dict[str, Any]) -> Text:
    """'mgr-a (leader), standbys: mgr-b' from status's leader (a name or
    null) and mgrs ([{"name", "leader"}])."""
    leader = st.get("leader")
    leader_name = _name(leader) if leader else None
    mgrs = [m for m in st.get("mgrs") or []]
    standbys = [_name(m) for m in mgrs
                if _name(m) != leader_name and not (isinstance(m, dict) and m.get("leader"))]
    t = Text(f"{leader_name} (leader)") if leader_name else Text("no leader", style="bold red")
    if standbys:
        t.append(f", standbys: {', '.join(standbys)}")
    return t


def _mds_text(mds: list[Any], epoch: Any) -> Text:
    if not mds:
        return Text("none", style="bold red")
    t = Text()
    for i, m in enumerate(mds):
        t.append(", " if i else "")
        t.append(_name(m))
        if isinstance(m, dict) and "epoch" in m:
            behind = isinstance(epoch, int) and int(m["epoch"] or 0) < epoch
            t.append(f" (epoch {m['epoch']}{', behind' if behind else ''})",
                     style="yellow" if behind else "")
    return t


def _group_text(g: dict[str, Any]) -> Text:
    """'g1: a (active, term 41, since 2026-11-30 23:01:02), standbys: b
    (lag 3), down: c (at seq 409)' from one of status's groups; a lag is
    in journal records."""
    t = Text(f"{_name(g)}: ")
    active = g.get("active")
    since = g.get("since")
    when = (f", since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}"
            if isinstance(since, int) and since > 0 else "")
    if active:
        t.append(f"{_name(active)} (active, term {g.get('term', '-')}{when})")
    else:
        t.append("no active", style="bold red")
    standbys = [m for m in g.get("members") or []
                if isinstance(m, dict) and m.get("role") == "standby"]
    if not standbys:
        t.append(", no standby", style="yellow")
    for i, m in enumerate(standbys):
        t.append(", standbys: " if i == 0 else ", ")
        lag = m.get("lag")
        t.append(f"{_name(m)} (lag {'unknown' if lag is None else lag})")
    down = [m for m in g.get("down") or [] if isinstance(m, dict)]
    for i, m in enumerate(down):
        t.append(", down: " if i == 0 else ", ")
        t.append(f"{_name(m)} (at seq {m.get('seq', '-')})", style="yellow")
    return _snapshot_text(t, g)


def _snapshot_text(t: Text, g: dict[str, Any]) -> Text:
    """', snapshot at seq 880 (2026-11-30 23:05:00), journal from seq 850'
    after a group's members; 'no snapshot' when none is listed."""
    snap = g.get("snapshot")
    journal = g.get("journal")
    first = journal.get("first_seq") if isinstance(journal, dict) else None
    if not isinstance(snap, dict):
        t.append(", no snapshot", style="yellow")
    else:
        at = snap.get("at")
        when = (f" ({time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(at))})"
                if isinstance(at, int) and at > 0 else "")
        t.append(f", snapshot at seq {snap.get('seq', '-')}{when}")
    if isinstance(first, int):
        followed = not isinstance(snap, dict) or first <= int(snap.get("seq", 0)) + 1
        t.append(f", journal from seq {first}", style="" if followed else "bold red")
    return t


def _service_rows(st: dict[str, Any]) -> list[tuple[str, Text | str]]:
    rows: list[tuple[str, Text | str]] = [
        ("mgr", _mgr_text(st)), ("mds", _mds_text(st.get("mds") or [], st.get("epoch")))]
    rows += [("group", _group_text(g)) for g in st.get("groups") or [] if isinstance(g, dict)]
    etcd = st.get("etcd")
    if isinstance(etcd, dict):
        members = [m for m in etcd.get("members") or [] if isinstance(m, dict)]
        healthy = sum(1 for m in members if m.get("healthy"))
        quorum = etcd.get("quorum")
        t = Text(f"{len(members)} members, {healthy} healthy, ")
        t.append("quorum ok" if quorum else "NO QUORUM", style="" if quorum else "bold red")
        rows.append(("etcd", t))
    rows.append(("map", f"epoch {st.get('epoch', '-')}"))
    return rows


def _data_rows(st: dict[str, Any]) -> list[tuple[str, Text | str]]:
    o = st.get("osds") or {}
    cap = st.get("capacity") or {}
    total, used = cap.get("total"), cap.get("used")
    usage = Text(f"{units.size(used)} used of {units.size(total)}, "
                 f"{units.size(cap.get('free'))} free  ")
    usage.append_text(bar(used, total))
    return [("osds", f"{o.get('total', 0)} osds: {o.get('up', 0)} up, {o.get('in', 0)} in"),
            ("usage", usage)]


def _io_rows(st: dict[str, Any]) -> list[tuple[str, Text | str]]:
    t = st.get("throughput") or {}
    return [("client", f"{units.rate(t.get('read_bps', 0))} rd, "
                       f"{units.rate(t.get('write_bps', 0))} wr, "
                       f"{units.ops(t.get('read_ops', 0))} rd, "
                       f"{units.ops(t.get('write_ops', 0))} wr"),
            ("clients", str(st.get("clients", 0))), *rebuild_view.status_rows(st)]


def status(con: Console, st: dict[str, Any]) -> None:
    sections = (("cluster", _health_rows), ("services", _service_rows), ("data", _data_rows),
                ("io", _io_rows))
    text = Text("\n").join(_section(title, rows(st)) for title, rows in sections)
    con.print(text, end="", no_wrap=True, overflow="ignore", crop=False)


def added(osd: dict[str, Any]) -> str:
    """The answer to osd add: the OSD as the map holds it."""
    pool = f", pool {osd['pool']}" if osd.get("pool") else ""
    return (f"added osd.{osd.get('id')} (ctl {osd.get('ctl')}, nfs {osd.get('nfs')}, "
            f"weight {units.size(osd.get('weight'))}{pool})")


def marked(osd_id: int, state: str, ans: Any) -> str:
    """The answer to osd out/in: {OSD view, "changed", "epoch"}."""
    if isinstance(ans, dict) and ans.get("changed") is False:
        return f"osd.{osd_id} is already {state}"
    epoch = ans.get("epoch") if isinstance(ans, dict) else None
    return f"marked osd.{osd_id} {state}" + (f" (map epoch {epoch})" if epoch else "")


def table(con: Console, t: Table) -> None:
    con.print(t, crop=False)


# ---- osd ls, df, mds ls --------------------------------------------------------
def _statfs(o: dict[str, Any]) -> dict[str, Any]:
    s = o.get("statfs")
    if not isinstance(s, dict):
        p = o.get("presence")
        s = p.get("statfs") if isinstance(p, dict) else None
    return s if isinstance(s, dict) else {}


def osd_used_total(o: dict[str, Any]) -> tuple[int | None, int | None]:
    s = _statfs(o)
    total, free = s.get("bytes_total"), s.get("bytes_free")
    if total is None:
        return None, None
    return (int(total) - int(free) if free is not None else None), int(total)


def osd_table(osds: list[dict[str, Any]]) -> Table:
    def advertised(o: dict[str, Any]) -> str:
        nfs = str(o.get("nfs", ""))
        adv = str(o.get("advertise") or nfs)
        return "" if adv == nfs else adv
    show_adv = any(advertised(o) for o in osds)
    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("ID", "STATE", "IN", "WEIGHT", "DOMAIN", "POOL", "CTL", "NFS", "ADVERTISE", "USED",
                "SIZE", "%USE"):
        if col != "ADVERTISE" or show_adv:
            t.add_column(col, no_wrap=True, justify="right" if col in (
                "ID", "WEIGHT", "USED", "SIZE", "%USE") else "left")
    for o in sorted(osds, key=lambda o: int(o.get("id", 0))):
        used, total = osd_used_total(o)
        up, inn = bool(o.get("up")), bool(o.get("in"))
        t.add_row(f"osd.{o.get('id')}",
                  Text("up" if up else "down", style="green" if up else "bold red"),
                  Text("in" if inn else "out", style="" if inn else "yellow"),
                  units.size(o.get("weight")), str(o.get("domain") or "-"),
                  str(o.get("pool") or "-"), str(o.get("ctl", "")), str(o.get("nfs", "")),
                  *([advertised(o)] if show_adv else []),
                  units.size(used), units.size(total),
                  f"{units.percent(used, total):.1f}" if total else "-")
    return t


def df(con: Console, d: dict[str, Any]) -> None:
    osds = [o for o in d.get("osds") or [] if isinstance(o, dict)]
    pools = [p for p in d.get("pools") or [] if isinstance(p, dict)]
    given = d.get("total")
    tot: dict[str, Any] = given if isinstance(given, dict) else {
        k: sum(int(o.get(k) or 0) for o in osds) for k in ("total", "used", "free")}
    raw = Table(box=None, header_style="bold", title="RAW STORAGE", title_justify="left")
    for col in ("SIZE", "AVAIL", "USED", "%USED"):
        raw.add_column(col, justify="right")
    raw.add_row(units.size(tot.get("total")), units.size(tot.get("free")),
                units.size(tot.get("used")),
                f"{units.percent(tot.get('used'), tot.get('total')):.2f}")
    table(con, raw)
    con.print()
    table(con, _usage_table("OSDS", "OSD", osds, lambda o: f"osd.{o.get('id')}",
                            extra=("state", "objects")))
    con.print()
    table(con, _usage_table("POOLS", "POOL", pools, lambda p: str(p.get("name", "?")),
                           extra=("scheme", "copies", "osds")))


def _usage_table(title: str, key: str, rows: list[dict[str, Any]], name: Any,
                 extra: tuple[str, ...] = ()) -> Table:
    t = Table(box=None, header_style="bold", title=title, title_justify="left")
    t.add_column(key, no_wrap=True)
    for e in extra:
        t.add_column(e.upper())
    for col in ("SIZE", "AVAIL", "USED", "%USED"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(name(r), *(_extra(r, e) for e in extra),
                  units.size(r.get("total")), units.size(r.get("free")), units.size(r.get("used")),
                  f"{units.percent(r.get('used'), r.get('total')):.2f}")
    return t


def _extra(r: dict[str, Any], key: str) -> str:
    if key == "state":                  # a df row's up and in
        if "up" not in r and "in" not in r:
            return "-"
        return f"{'up' if r.get('up') else 'down'},{'in' if r.get('in') else 'out'}"
    return str(r.get(key, "-"))


def quota_bytes(q: Any) -> Text:
    """The export's quota on bytes as used/limit ("-": no limit, or a
    manager that sends no quota), yellow and red where health raises
    QUOTA_NEARFULL and QUOTA_FULL."""
    if not isinstance(q, dict) or not q.get("bytes"):
        return Text("-")
    limit, used = int(q["bytes"]), int(q.get("used_bytes", 0))
    style = ("bold red" if used >= limit else
             "yellow" if 100 * used >= QUOTA_NEARFULL_PCT * limit else "")
    return Text(f"{units.size(used)}/{units.size(limit)}", style=style)


def mds_table(mds: list[dict[str, Any]], now: float | None = None) -> Table:
    now = time.time() if now is None else now
    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("NAME", "NFS", "PID", "EPOCH", "CLIENTS", "LAYOUTS", "RECALLS", "FENCES",
                "DEGRADED", "QUOTA", "SEEN"):
        t.add_column(col, no_wrap=True, justify="left" if col in ("NAME", "NFS") else "right")
    for m in mds:
        pres = m.get("presence")
        p: dict[str, Any] = pres if isinstance(pres, dict) else m
        seen = p.get("time")
        t.add_row(str(m.get("name", p.get("name", "?"))), str(p.get("nfs", "")),
                  *(str(p.get(k, "-")) for k in ("pid", "epoch", "clients", "layouts",
                                                 "recalls", "fences", "degraded")),
                  quota_bytes(p.get("quota")),
                  f"{max(0.0, now - float(seen)):.0f}s ago" if seen else "-")
    return t


# ---- pando file ------------------------------------------------------------------
def file_map(con: Console, fm: dict[str, Any]) -> None:
    """Like `lfs getstripe`: the file's scheme, then each group's components
    (object ids in decimal, as pando-osd-tool ls prints them, and hex)."""
    su, size = fm.get("stripe_unit"), fm.get("size")
    head = Text(str(fm.get("path", "?")) + "\n", style="bold")
    for label, value in (("ino", fm.get("ino")),
                         ("size", f"{units.size(size)} ({size})" if size is not None else None),
                         ("scheme", fm.get("scheme")),
                         ("stripe_unit", f"{units.size(su)} ({su})" if su is not None else None),
                         ("mirrors", fm.get("mirrors")),
                         ("inline", "yes" if fm.get("inline") else "no")):
        head.append(f"  {label + ':':<13} {value if value is not None else '-'}\n")
    con.print(head, end="", no_wrap=True, overflow="ignore", crop=False)
    groups = fm.get("groups") or []
    if not groups:
        con.print("  (no components" + (": the data is inline)" if fm.get("inline") else ")"))
    for gi, g in enumerate(groups):
        comps = (g.get("components") or []) if isinstance(g, dict) else []
        t = Table(box=None, header_style="bold", title=f"  group {gi}", title_justify="left")
        for col in ("IDX", "OSD", "OBJID", "OBJID(HEX)", "STATE"):
            t.add_column(col, justify="left" if col == "STATE" else "right")
        for ci, c in enumerate(comps):
            obj = c.get("object")
            state = str(c.get("state", "?"))
            t.add_row(str(ci), f"osd.{c.get('osd')}", str(obj),
                      f"{obj:#x}" if isinstance(obj, int) else "-",
                      Text(state, style="green" if state == "ok" else "bold yellow"))
        table(con, t)
