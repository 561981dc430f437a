// The Pando dashboard: reads the mgr's JSON API every 2 s and draws it.
// No libraries (the cluster may be offline); data goes into the page as
// text nodes only.
"use strict";

const REFRESH_MS = 2000;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  n = Number(n) || 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n.toFixed(0)) + " " + units[i];
}

function replaceRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function drawHealth(s) {
  const h = document.getElementById("health");
  h.className = "health " + s.health;
  h.dataset.health = s.health;
  h.textContent = s.health + (s.stale ? " (stale: etcd unreachable)" : "");
  const items = (s.checks || []).map(c => el("li", {class: c.severity, "data-code": c.code},
    el("b", {}, c.code), " ", c.summary,
    el("div", {class: "detail"}, (c.detail || []).join("; "))));
  document.getElementById("checks").replaceChildren(...items);
  document.getElementById("meta").textContent =
    `epoch ${s.epoch} · leader ${s.leader || "none"} · served by ${s.mgr} · ` +
    `${s.osds.up}/${s.osds.total} osds up, ${s.osds.in} in · ${s.clients} clients`;
  document.getElementById("epoch").textContent = `(epoch ${s.epoch})`;
}

function drawCapacity(c) {
  const pct = c.total ? 100 * c.used / c.total : 0;
  const bar = document.getElementById("capacity-used");
  bar.style.width = pct.toFixed(1) + "%";
  bar.className = "used" + (pct > 95 ? " full" : pct > 85 ? " near" : "");
  document.getElementById("capacity-text").textContent =
    `${bytes(c.used)} used of ${bytes(c.total)} (${pct.toFixed(1)} %), ${bytes(c.free)} free`;
}

function stateCell(o) {
  return el("td", {class: "state"},
    el("span", {class: o.up ? "st-up" : "st-down"}, o.up ? "up" : "down"),
    el("span", {class: o.in ? "st-in" : "st-out"}, o.in ? "in" : "out"));
}

function drawOsds(osds) {
  const rows = osds.map(o => {
    const st = o.statfs || {};
    const used = st.bytes_total ? (100 * (st.bytes_total - st.bytes_free) / st.bytes_total)
      .toFixed(1) + " %" : "–";
    const r = o.rates || {};
    return el("tr", {id: "osd-" + o.id, "data-up": o.up, "data-in": o.in},
      el("td", {}, "osd." + o.id), stateCell(o), el("td", {}, o.advertise || o.nfs),
      el("td", {}, o.domain || "–"), el("td", {}, bytes(o.weight)), el("td", {}, used),
      el("td", {}, st.objects ?? "–"), el("td", {}, bytes(r.read_bps || 0) + "/s"),
      el("td", {}, bytes(r.write_bps || 0) + "/s"));
  });
  replaceRows(document.querySelector("#osds tbody"), rows);
}

function drawMds(list) {
  const rows = list.map(m => el("tr", {},
    el("td", {}, m.name), el("td", {}, m.nfs || "–"), el("td", {}, m.epoch ?? "–"),
    el("td", {}, m.clients ?? 0), el("td", {}, m.layouts ?? 0), el("td", {}, m.degraded ?? 0)));
  if (!rows.length) rows.push(el("tr", {}, el("td", {colspan: 6}, "no metadata manager present")));
  replaceRows(document.querySelector("#mds tbody"), rows);
}

function drawMgrs(s) {
  document.getElementById("mgrs").replaceChildren(...(s.mgrs || []).map(m =>
    el("li", {}, `mgr ${m.name} ${m.url || ""}${m.leader ? " (leader)" : ""}`)));
  const e = s.etcd || {};
  document.getElementById("etcd").replaceChildren(...(e.members || []).map(m =>
    el("li", {}, `etcd ${m.name} ${m.url} ${m.healthy ? "healthy" : "DOWN"}`)));
  const rec = s.recovery || {};
  document.getElementById("recovery").textContent =
    rec.running ? `${(rec.tasks || []).length} recovery tasks running` : "no recovery running";
}

function drawPlot(samples) {
  const svg = document.getElementById("plot");
  const W = 600, H = 160, now = Date.now() / 1000, span = 600;
  const pts = samples.filter(p => p.t > now - span);
  const top = Math.max(1024, ...pts.map(p => Math.max(p.read_bps, p.write_bps)));
  const line = key => pts.map(p =>
    `${((p.t - (now - span)) / span * W).toFixed(1)},${(H - 4 - p[key] / top * (H - 8)).toFixed(1)}`)
    .join(" ");
  const ns = "http://www.w3.org/2000/svg";
  const mk = (key, color) => {
    const pl = document.createElementNS(ns, "polyline");
    pl.setAttribute("points", line(key));
    pl.setAttribute("fill", "none");
    pl.setAttribute("stroke", color);
    pl.setAttribute("stroke-width", "1.5");
    pl.setAttribute("vector-effect", "non-scaling-stroke");
    return pl;
  };
  svg.replaceChildren(mk("read_bps", "#1976d2"), mk("write_bps", "#d84315"));
  document.getElementById("plot-scale").textContent = `last 10 min, top ${bytes(top)}/s`;
}

async function getJson(path) {
  const r = await fetch(path, {cache: "no-store"});
  if (!r.ok && r.status !== 503) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

async function refresh() {
  const foot = document.getElementById("updated");
  try {
    const [s, osds, mds, hist] = await Promise.all(
      [getJson("/api/status"), getJson("/api/osds"), getJson("/api/mds"),
       getJson("/api/history")]);
    drawHealth(s);
    drawCapacity(s.capacity);
    drawOsds(osds);
    drawMds(mds);
    drawMgrs(s);
    drawPlot(hist);
    const t = s.throughput || {};
    document.getElementById("throughput-now").textContent =
      `now: read ${bytes(t.read_bps)}/s (${(t.read_ops || 0).toFixed(0)} ops/s), ` +
      `write ${bytes(t.write_bps)}/s (${(t.write_ops || 0).toFixed(0)} ops/s)`;
    foot.className = s.stale ? "stale" : "";
    foot.textContent = "updated " + new Date().toLocaleTimeString() +
      (s.stale ? " — etcd unreachable, showing the last state read" : "");
  } catch (err) {
    foot.className = "stale";
    foot.textContent = "cannot reach the mgr: " + err.message;
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
