"""Helpers of the mgr suite: OSD and metadata-manager presence keys put by
hand (a lease kept alive by a thread, as pando-osd and the FSAL do) for
tests that need a presence they can stop at will, a cluster.conf seed,
readers of what the mgr wrote in etcd, and the FSAL's rebuild and
scrub progress keys put by hand."""
from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pando_cluster.mds_config import ConfOsd, render_conf
from pando_testing.etcd import EtcdClient, EtcdCluster, EtcdError
from pando_testing.mds import PandoMds
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.pod import Pod
from pando_testing.threads import RaisingThread

PREFIX = "/pando/"


class HandPresence:
    """A presence key on its own lease.  stop_keepalive() is a killed
    daemon (the key goes at lease expiry); revoke() a clean stop."""

    def __init__(self, pod: Pod, client: EtcdClient, key: str, value: dict[str, Any],
                 ttl: int = 2) -> None:
        self.pod, self.client, self.key, self.value, self.ttl = pod, client, key, value, ttl
        self.lease = 0
        self._stop = threading.Event()
        self._thread: RaisingThread | None = None

    def start(self) -> HandPresence:
        self.lease = int(self.client.call("/v3/lease/grant", {"TTL": self.ttl})["ID"])
        self.put()
        self._stop.clear()
        self._thread = RaisingThread(target=self._keepalive, daemon=True)
        self._thread.start()
        return self

    def put(self, **changes: Any) -> None:
        self.value.update(changes)
        self.value["time"] = time.time()
        self.client.put(self.key, json.dumps(self.value), lease=self.lease)

    def _keepalive(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            try:
                self.client.call("/v3/lease/keepalive", {"ID": str(self.lease)})
            except EtcdError:
                pass

    def stop_keepalive(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def revoke(self) -> None:
        self.stop_keepalive()
        try:
            self.client.call("/v3/lease/revoke", {"ID": str(self.lease)})
        except EtcdError:
            pass


def osd_value(osd_id: int, total: int = 10**9, free: int = 6 * 10**8,
              objects: int = 0, **fields: Any) -> dict[str, Any]:
    """A pando-osd presence value (mgr/README.md); fields override."""
    return {"id": osd_id, "ctl": f"127.0.0.1:{20590 + osd_id}",
            "nfs": f"127.0.0.1:{20490 + osd_id}", "advertise": f"127.0.0.1:{20490 + osd_id}",
            "domain": "", "pid": 1000 + osd_id, "host": "node1", "started_at": time.time(),
            "time": time.time(),
            "statfs": {"bytes_total": total, "bytes_free": free, "objects": objects},
            "counters": {"nfs_read_ops": 0, "nfs_read_bytes": 0, "nfs_write_ops": 0,
                         "nfs_write_bytes": 0, "ctl_read_ops": 0, "ctl_read_bytes": 0,
                         "ctl_write_ops": 0, "ctl_write_bytes": 0}} | fields


def mds_value(name: str = "mds-a") -> dict[str, Any]:
    bounds = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
              0.25, 0.5, 1, 2.5, 5, 10]
    buckets = [0] * (len(bounds) + 1)
    buckets[1], buckets[2] = 3, 5
    return {"name": name, "nfs": "127.0.0.1:2049", "pid": 99, "time": time.time(),
            "epoch": 1, "clients": 2, "layouts": 5, "recalls": 1, "fences": 0,
            "degraded": 0, "gateway_read_bytes": 0, "gateway_write_bytes": 0,
            "op_bounds": bounds,
            "ops": {"lookup": {"count": 8, "sum": 0.003, "buckets": buckets}}}


def quota(**fields: Any) -> dict[str, Any]:
    """An `mds/<name>` value's quota (mgr/README.md): no limit, nothing
    used; fields override."""
    return {"bytes": 0, "files": 0, "used_bytes": 0, "used_files": 0} | fields


def write_seed(path: Path, ids: list[int], capacity: int = 0) -> Path:
    path.write_text(render_conf(Path("cluster.key"), [
        ConfOsd(i, f"127.0.0.1:{20590 + i}", f"127.0.0.1:{20490 + i}", capacity=capacity)
        for i in ids], header=""))
    return path


def leader_of(client: EtcdClient) -> dict[str, Any] | None:
    v = client.get_json(PREFIX + "mgr/leader")
    return v if isinstance(v, dict) else None


def map_of(client: EtcdClient) -> dict[str, Any] | None:
    v = client.get_json(PREFIX + "map")
    return v if isinstance(v, dict) else None


def osd_in_map(client: EtcdClient, osd_id: int) -> dict[str, Any] | None:
    m = map_of(client) or {}
    return next((o for o in m.get("osds", []) if o["id"] == osd_id), None)


def parse_prometheus(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """name -> [(labels, value)]; asserts every line is well-formed."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
    label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            assert kind in ("gauge", "counter", "histogram"), line
            types[name] = kind
            continue
        if line.startswith("#") or not line:
            continue
        mt = sample.match(line)
        assert mt, f"bad line: {line!r}"
        labels = dict(label.findall(mt.group(3) or ""))
        value = float(mt.group(4).replace("+Inf", "inf"))
        out.setdefault(mt.group(1), []).append((labels, value))
    for name in out:
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in types or base in types, f"{name} has no TYPE"
    return out


def rebuild_progress(**fields: Any) -> dict[str, Any]:
    """A `rebuild/progress/<mds>` value as the FSAL puts it (mgr/README.md)."""
    now = time.time()
    return {"state": "rebuilding", "jobs_done": [], "jobs_active": [], "files_total": 0,
            "files_done": 0, "files_failed": 0, "bytes_total": 0, "bytes_done": 0,
            "rate_bps": 0.0, "eta_s": 0.0, "started": now, "updated": now, "parallel": 4,
            "bandwidth_bps": 0} | fields


def scrub_progress(**fields: Any) -> dict[str, Any]:
    """A `scrub/progress/<mds>` value as the FSAL puts it (mgr/README.md)."""
    now = time.time()
    return {"state": "running", "pass": 1, "files_total": 0, "files_done": 0, "bytes_done": 0,
            "mismatches": 0, "repaired": 0, "unrepairable": 0, "started": now, "updated": now,
            "last_pass_end": 0.0, "bandwidth_bps": 0} | fields


def put_progress(fsal: HandPresence, kind: str, value: dict[str, Any]) -> None:
    """What the FSAL whose presence is fsal (an `mds/<name>` key) puts as its
    `<kind>/progress/<name>` (kind: rebuild, scrub): on its presence lease."""
    name = fsal.key.rsplit("/", 1)[1]
    fsal.client.put(f"{PREFIX}{kind}/progress/{name}", json.dumps(value), lease=fsal.lease)


def jobs_of(client: EtcdClient) -> dict[int, dict[str, Any]]:
    """The rebuild jobs in etcd: {id from the key: value}."""
    raw = client.get_prefix(PREFIX + "rebuild/jobs/")
    return {int(k.rsplit("/", 1)[1]): json.loads(v) for k, v in raw.items()}


def rebuild_cluster(mgr_factory: Callable[..., MgrProcess],
                    presence: Callable[..., HandPresence], tmp_path: Path,
                    ids: tuple[int, ...] = (1, 2, 3), mds: tuple[str, ...] = ("mds-a",),
                    **mgr_kw: Any
                    ) -> tuple[MgrProcess, MgrApi, list[HandPresence], list[HandPresence]]:
    """Seeded OSDs ids (hand presence), metadata managers mds (hand
    presence) and a mgr; once every OSD is up: (mgr, its api, the OSDs'
    presence, the FSALs' presence)."""
    seed = write_seed(tmp_path / "cluster.conf", list(ids))
    osds = [presence(i) for i in ids]
    fsals = [presence(mds=n) for n in mds]
    mgr = mgr_factory(seed=seed, **mgr_kw)
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in ids}, timeout=15,
                 what="all osds up")
    return mgr, api, osds, fsals


def fsal_cluster(etcd: EtcdCluster, tmp_path: Path, mds_factory: Callable[..., PandoMds],
                 mgr_factory: Callable[..., MgrProcess], osds: int, mds_name: str,
                 fsal: str = "", mds_group: str = "") -> tuple[PandoMds, MgrProcess, MgrApi]:
    """A metadata manager `mds_name` (not started; fsal: more FSAL options)
    over `osds` real OSDs that keep their presence in etcd, and a mgr
    seeded with them; returned once the mgr has every OSD up and in."""
    presence = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    mds = mds_factory(osds, start=False, osd_args=presence, object_pool=0, mds_group=mds_group,
                      extra_fsal=f'Etcd = "{etcd.endpoints}"; Etcd_Prefix = "/pando/"; '
                                 f'Mds_Name = "{mds_name}";' + fsal)
    seed = tmp_path / "cluster.conf"
    seed.write_text(render_conf(Path("cluster.key"), [
        ConfOsd(o.osd_id, o.ctl_addr, f"{o.host}:{o.nfs_port}") for o in mds.osds], header=""))
    mgr = mgr_factory(seed=seed)
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {o.osd_id: (True, True) for o in mds.osds},
                 timeout=20, what="every OSD up and in")
    return mds, mgr, api
