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
  h.textContent = s.health + (s.cached ? " (cached: etcd unreachable)" : "");
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

// The named pools: /api/df's rows with "osds" (the export's rows have
// scheme and copies instead).  Red with no OSD up and in, amber with
// one, as health's POOL_NO_OSD_UP and POOL_DEGRADED.
function drawPools(pools) {
  document.getElementById("pools").replaceChildren(...pools.filter(p => "osds" in p).map(p =>
    el("li", {id: "pool-" + p.name, class: !p.up ? "err" : p.up < 2 ? "warn" : ""},
      `pool ${p.name}: ${p.up}/${p.osds} osds up and in, ${bytes(p.total)}, ` +
      `${bytes(p.free)} free`)));
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
      el("td", {}, o.domain || "–"), el("td", {}, o.pool || "–"), el("td", {}, bytes(o.weight)),
      el("td", {}, used), el("td", {}, st.objects ?? "–"),
      el("td", {}, bytes(r.read_bps || 0) + "/s"), el("td", {}, bytes(r.write_bps || 0) + "/s"));
  });
  replaceRows(document.querySelector("#osds tbody"), rows);
}

// The export's quota on bytes as `pando mds ls` shows it ("–": none, or a
// manager that sends no quota), amber and red where health raises
// QUOTA_NEARFULL (90 %) and QUOTA_FULL.
function quotaCell(m) {
  const q = m.quota, id = "quota-" + m.name;
  if (!q || !q.bytes) return el("td", {id, class: "quota"}, "–");
  const cls = q.used_bytes >= q.bytes ? "err" : 100 * q.used_bytes >= 90 * q.bytes ? "warn" : "";
  return el("td", {id, class: ("quota " + cls).trim()},
    `${bytes(q.used_bytes)}/${bytes(q.bytes)}`);
}

function drawMds(list) {
  const rows = list.map(m => el("tr", {},
    el("td", {}, m.name), el("td", {}, m.nfs || "–"), el("td", {}, m.epoch ?? "–"),
    el("td", {}, m.clients ?? 0), el("td", {}, m.layouts ?? 0), el("td", {}, m.degraded ?? 0),
    quotaCell(m)));
  if (!rows.length) rows.push(el("tr", {}, el("td", {colspan: 7}, "no metadata manager present")));
  replaceRows(document.querySelector("#mds tbody"), rows);
}

// The snapshot a group whose every store is lost starts again from, and
// the journal's first record: the two must meet (health's
// MDS_GROUP_SNAPSHOT_BEHIND).
function snapshotText(g) {
  const first = (g.journal || {}).first_seq;
  const snap = g.snapshot ? `, snapshot at seq ${g.snapshot.seq}` : ", no snapshot";
  return snap + (first != null ? `, journal from seq ${first}` : "");
}

// A manager group as `pando status` words it: its active and term,
// each standby's lag in journal records, the members down, its snapshot
// and journal; red without an active, amber without a standby or with a
// snapshot the journal no longer follows.
function drawGroups(groups) {
  document.getElementById("groups").replaceChildren(...groups.map(g => {
    const standbys = (g.members || []).filter(m => m.role === "standby");
    const first = (g.journal || {}).first_seq;
    const behind = g.snapshot && first != null && first > g.snapshot.seq + 1;
    const cls = !g.active ? "err" : standbys.length && !behind ? "" : "warn";
    const since = g.since ? `, since ${new Date(g.since * 1000).toLocaleString()}` : "";
    const lead = g.active ? `${g.active} (active, term ${g.term}${since})` : "no active";
    const rest = standbys.length ? ", standbys: " + standbys.map(m =>
      `${m.name} (lag ${m.lag ?? "unknown"})`).join(", ") : ", no standby";
    const down = (g.down || []).length ? ", down: " + g.down.map(m =>
      `${m.name} (at seq ${m.seq})`).join(", ") : "";
    return el("li", {id: "group-" + g.name, class: cls},
      `group ${g.name}: ${lead}${rest}${down}${snapshotText(g)}`);
  }));
}

function drawMgrs(s) {
  document.getElementById("mgrs").replaceChildren(...(s.mgrs || []).map(m =>
    el("li", {}, `mgr ${m.name} ${m.url || ""}${m.leader ? " (leader)" : ""}`)));
  const e = s.etcd || {};
  document.getElementById("etcd").replaceChildren(...(e.members || []).map(m =>
    el("li", {}, `etcd ${m.name} ${m.url} ${m.healthy ? "healthy" : "DOWN"}`)));
}

function duration(s) {
  if (typeof s !== "number") return "unknown";
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor(s % 3600 / 60)} min`;
}

function drawRebuild(rb) {
  const text = document.getElementById("rebuild");
  text.dataset.running = !!rb.running;
  text.textContent = rb.running
    ? `rebuilding at ${bytes(rb.rate_bps)}/s: ${rb.files_done}/${rb.files_total} files, ` +
      `${bytes(rb.bytes_done)} of ${bytes(rb.bytes_total)}, ETA ${duration(rb.eta_s)}` +
      (rb.files_failed ? `, ${rb.files_failed} failed` : "")
    : "no rebuild running";
  const pct = rb.bytes_total ? 100 * rb.bytes_done / rb.bytes_total : (rb.running ? 0 : 100);
  document.getElementById("rebuild-done").style.width = Math.min(100, pct).toFixed(1) + "%";
  document.getElementById("rebuild-jobs").replaceChildren(...(rb.jobs || []).map(j =>
    el("li", {"data-job": j.id},
      `job ${j.id}: osd.${j.osd} (${j.reason}` +
      (j.target === null || j.target === undefined ? "" : `, onto osd.${j.target}`) + ")" +
      ((j.pending_on || []).length ? `, pending on ${j.pending_on.join(", ")}` : ""))));
  plotLines("rate-plot", rb.history || [], [["rate_bps", "#6a1b9a"]], "rate-scale");
}

function drawScrub(sc) {
  const e = document.getElementById("scrub");
  e.dataset.running = !!sc.running;
  e.className = sc.unrepairable ? "err" : "";
  e.textContent = `scrub: ${sc.running ? "running" : "idle"}, ` +
    (sc.files_total ? `${sc.files_done}/${sc.files_total} files, ` : "") +
    `${sc.mismatches || 0} mismatches, ${sc.repaired || 0} repaired, ` +
    `${sc.unrepairable || 0} unrepairable`;
}

// Cold files rewritten from mirrors to RS(k,m) by each manager's transcoder.
function drawTranscode(tc) {
  const e = document.getElementById("transcode");
  e.dataset.running = !!tc.running;
  e.className = tc.failed ? "err" : "";
  e.textContent = !tc.managers ? "no metadata manager transcodes"
    : `${tc.files_done || 0} files, ${bytes(tc.bytes_done)} transcoded, ` +
      `${tc.failed || 0} failed, ` +
      (tc.running ? `transcoding on ${tc.running} of ${tc.managers} managers` : "idle");
  document.getElementById("transcode-mds").replaceChildren(
    ...Object.entries(tc.mds || {}).map(([name, p]) => el("li", {"data-mds": name},
      `${name}: ${p.files_done || 0} files, ${bytes(p.bytes_done)}, ${p.failed || 0} failed, ` +
      `${p.passes || 0} passes every ${duration(p.interval_s)}` +
      (p.current_ino ? `, now inode ${p.current_ino}` : ""))));
}

// One polyline per [key, colour] over the last 10 minutes of samples
// ({t, key...}), scaled to the highest value shown.
function plotLines(svgId, samples, series, scaleId) {
  const svg = document.getElementById(svgId);
  const [, , W, H] = svg.getAttribute("viewBox").split(" ").map(Number);
  const now = Date.now() / 1000, span = 600;
  const pts = samples.filter(p => p.t > now - span);
  const top = Math.max(1024, ...pts.map(p => Math.max(...series.map(([k]) => p[k] || 0))));
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
    pl.setAttribute("id", `${svgId}-${key}`);
    return pl;
  };
  svg.replaceChildren(...series.map(([k, c]) => mk(k, c)));
  document.getElementById(scaleId).textContent = `last 10 min, top ${bytes(top)}/s`;
}

async function getJson(path) {
  const r = await fetch(path, {cache: "no-store"});
  if (!r.ok && r.status !== 503) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

async function refresh() {
  const foot = document.getElementById("updated");
  try {
    const [s, osds, mds, hist, rb, tc, df] = await Promise.all(
      [getJson("/api/status"), getJson("/api/osds"), getJson("/api/mds"),
       getJson("/api/history"), getJson("/api/rebuild"), getJson("/api/transcode"),
       getJson("/api/df")]);
    drawHealth(s);
    drawCapacity(s.capacity);
    drawPools(df.pools || []);
    drawOsds(osds);
    drawMds(mds);
    drawGroups(s.groups || []);
    drawMgrs(s);
    plotLines("plot", hist, [["read_bps", "#1976d2"], ["write_bps", "#d84315"]], "plot-scale");
    drawRebuild(rb);
    drawScrub(s.scrub || {});
    drawTranscode(tc);
    const t = s.throughput || {};
    document.getElementById("throughput-now").textContent =
      `now: read ${bytes(t.read_bps)}/s (${(t.read_ops || 0).toFixed(0)} ops/s), ` +
      `write ${bytes(t.write_bps)}/s (${(t.write_ops || 0).toFixed(0)} ops/s)`;
    foot.className = s.cached ? "cached" : "";
    foot.textContent = "updated " + new Date().toLocaleTimeString() +
      (s.cached ? " — etcd unreachable, showing the last state read" : "");
  } catch (err) {
    foot.className = "cached";
    foot.textContent = "cannot reach the mgr: " + err.message;
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
