"""The cluster map as tests write it into etcd by hand (the JSON of
mgr/README.md, as the leading mgr writes it), and the metadata manager's
view of it over dbus (map_status, file_map)."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from .daemons import OsdProcess
from .etcd import EtcdClient, EtcdCluster
from .mds import PandoMds

PREFIX = "/pando/"


def etcd_fsal(etcd: EtcdCluster, mds_name: str = "mds-test", prefix: str = PREFIX) -> str:
    """The FSAL option lines that make a manager follow the map in etcd."""
    return "\n".join([f'Etcd = "{etcd.endpoints}";', f'Etcd_Prefix = "{prefix}";',
                      f'Mds_Name = "{mds_name}";'])


def osd_entry(o: OsdProcess, up: bool = True, in_: bool = True, weight: int = 1 << 40,
              advertise_host: str | None = None) -> dict[str, Any]:
    nfs = f"{o.host}:{o.nfs_port}"
    adv = f"{advertise_host}:{o.nfs_port}" if advertise_host else nfs
    return {"id": o.osd_id, "ctl": o.ctl_addr, "nfs": nfs, "advertise": adv,
            "weight": weight, "domain": "", "up": up, "in": in_, "down_at": 0, "out_at": 0}


def put_map(client: EtcdClient, epoch: int, osds: list[dict[str, Any]],
            prefix: str = PREFIX) -> None:
    m = {"epoch": epoch, "partition": 1, "osds": sorted(osds, key=lambda o: o["id"]),
         "pools": [], "updated_at": time.time(), "updated_by": "test", "reason": "test"}
    client.put(prefix + "map", json.dumps(m))


def dbus_json(mds: PandoMds, method: str, *args: str) -> tuple[bool, str, Any]:
    """(status, message, the JSON) of a Pando dbus method answering (b, s, s)."""
    cp = mds.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                      "/org/ganesha/nfsd/pando", f"org.ganesha.nfsd.pando.{method}", *args],
                     check=False, env=mds.dbus_env(), timeout=30)
    assert cp.returncode == 0, f"{method}: {cp.stderr}"
    status = re.search(r"^\s*boolean (true|false)$", cp.stdout, re.MULTILINE)
    strings = re.findall(r'^\s*string "(.*)"$', cp.stdout, re.MULTILINE)
    assert status and len(strings) == 2, cp.stdout
    return status.group(1) == "true", strings[0], json.loads(strings[1])


def map_status(mds: PandoMds) -> dict[str, Any]:
    ok, msg, j = dbus_json(mds, "map_status")
    assert ok, msg
    return j


def file_map(mds: PandoMds, path: str) -> tuple[bool, str, Any]:
    return dbus_json(mds, "file_map", f"string:{path}")


def osds_of(mds: PandoMds, path: str) -> set[int]:
    """The OSDs holding a component of the file at path (under the export)."""
    ok, msg, j = file_map(mds, path)
    assert ok, msg
    return {k["osd"] for g in j["groups"] for k in g["components"]}


def wait_for(what: str, cond: Callable[[], Any], timeout: float = 15.0) -> Any:
    """cond()'s first truthy value, polled every 200 ms; AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.2)


def wait_epoch(mds: PandoMds, epoch: int, timeout: float = 15.0) -> dict[str, Any]:
    return wait_for(f"map epoch {epoch} applied",
                    lambda: (s := map_status(mds))["epoch"] == epoch and s, timeout)


def start_on_map(etcd: EtcdCluster, mds_factory: Callable[..., PandoMds], osds: int,
                 fsal: str = "", **kw: Any) -> PandoMds:
    """A manager over `osds` new OSDs that follows the map in etcd: started
    once epoch 1 (every OSD up and in) is there, returned once it applied
    it.  fsal: more FSAL option lines; kw go to mds_factory."""
    m = mds_factory(osds, start=False, extra_fsal=etcd_fsal(etcd) + fsal, **kw)
    put_map(etcd.client(), 1, [osd_entry(o) for o in m.osds])
    m.start()
    wait_epoch(m, 1)
    return m
