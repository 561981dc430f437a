"""API answers shaped as mgr/README.md documents them, for the unit tests."""
from __future__ import annotations

from typing import Any

GiB = 1 << 30

STATUS: dict[str, Any] = {
    "health": "HEALTH_WARN",
    "checks": [{"code": "OSD_DOWN", "severity": "HEALTH_WARN", "summary": "1 osds down",
                "detail": ["osd.3 down since 12:00:00"]}],
    "epoch": 12,
    "leader": "mgr-a",
    "mgr": "mgr-b",
    "mgrs": [{"name": "mgr-a", "url": "http://127.0.0.1:7480", "since": 1764070000,
              "leader": True},
             {"name": "mgr-b", "url": "http://127.0.0.1:7481", "since": 1764070001,
              "leader": False}],
    "osds": {"total": 4, "up": 3, "in": 4},
    "capacity": {"total": 40 * GiB, "used": 10 * GiB, "free": 30 * GiB},
    "clients": 3,
    "throughput": {"read_bps": 12 << 20, "write_bps": 3 << 20, "read_ops": 120, "write_ops": 30},
    "mds": [{"name": "node1", "nfs": "127.0.0.1:2049", "epoch": 12}],
    "etcd": {"members": [{"name": "e0", "url": "http://127.0.0.1:2379", "healthy": True}],
             "reachable": True, "quorum": True},
    "rebuild": {"running": False, "tasks": []},
}


def osd(i: int, up: bool = True, inn: bool = True, pool: str = "") -> dict[str, Any]:
    return {"id": i, "ctl": f"127.0.0.1:{20590 + i}", "nfs": f"127.0.0.1:{20490 + i}",
            "advertise": f"127.0.0.1:{20490 + i}", "weight": 10 * GiB, "domain": "host-a",
            "pool": pool, "up": up, "in": inn, "down_at": 0, "out_at": 0, "alive": up,
            "statfs": {"bytes_total": 10 * GiB, "bytes_free": 7 * GiB, "objects": 42}}


OSDS = [osd(1), osd(2), osd(3, up=False), osd(4)]

DF: dict[str, Any] = {
    "osds": [{"id": o["id"], "total": 10 * GiB, "used": 3 * GiB, "free": 7 * GiB} for o in OSDS],
    "pools": [{"name": "default", "scheme": "mirror", "copies": 2,
               "total": 20 * GiB, "used": 6 * GiB, "free": 14 * GiB}],
}
# The map's pools, then the named pools its OSDs are in (no scheme, copies).
DF_POOLS: dict[str, Any] = {**DF, "pools": [
    *DF["pools"],
    {"name": "archive", "osds": 1, "total": 10 * GiB, "used": 3 * GiB, "free": 7 * GiB},
    {"name": "fast", "osds": 2, "total": 20 * GiB, "used": 5 * GiB, "free": 15 * GiB}]}
DF_TOTAL: dict[str, Any] = {**DF, "total": {"total": 40 * GiB, "used": 12 * GiB,
                                            "free": 28 * GiB}}

MDS = [{"name": "node1", "nfs": "127.0.0.1:2049", "pid": 99, "time": 1764070042.3,
        "epoch": 12, "clients": 3, "layouts": 17, "recalls": 2, "fences": 0, "degraded": 0}]
# node1 as an older manager sends it (no quota), node2 with a quota on
# bytes, node3 with one on files only.
MDS_QUOTA = [*MDS,
             {**MDS[0], "name": "node2", "quota": {"bytes": 10 * GiB, "files": 0,
                                                   "used_bytes": 6 * GiB // 5, "used_files": 7}},
             {**MDS[0], "name": "node3", "quota": {"bytes": 0, "files": 100,
                                                   "used_bytes": 5 * GiB, "used_files": 99}}]

# `dbus-send --print-reply` answers as dbus-send 1.14 (Debian 12) prints them.
RECALL_FILE_REPLY = """\
method return time=1764070042.123456 sender=:1.3 -> destination=:1.9 serial=41 reply_serial=2
   boolean true
   string "recalling the layouts of /d/f (inode 17)"
"""

RECALL_CLIENT_REPLY = """\
method return time=1764070042.123456 sender=:1.3 -> destination=:1.9 serial=42 reply_serial=2
   boolean true
   string "recalling layouts of 2 file(s) from 10.0.2.15"
   uint32 2
"""

FILE_MAP_JSON = ('{"path": "/d/f", "ino": 17, "size": 3145728, "scheme": "mirror", '
                 '"stripe_unit": 1048576, "mirrors": 2, "inline": false, "groups": '
                 '[{"components": [{"osd": 1, "object": 4096, "state": "ok"}, '
                 '{"osd": 3, "object": 4097, "state": "stale"}]}]}')

FILE_MAP_REPLY = f"""\
method return time=1764070042.123456 sender=:1.3 -> destination=:1.9 serial=43 reply_serial=2
   boolean true
   string "OK"
   string "{FILE_MAP_JSON}"
"""

CLUSTER_STATUS_REPLY = """\
method return time=1764070042.123456 sender=:1.3 -> destination=:1.9 serial=44 reply_serial=2
   boolean true
   string "OK"
   array [
      struct {
         uint32 1
         string "127.0.0.1:20591"
         string "127.0.0.1:20491"
         boolean true
         int32 0
         uint64 12
         uint64 0
      }
      struct {
         uint32 2
         string "127.0.0.1:20592"
         string "127.0.0.1:20492"
         boolean false
         int32 -111
         uint64 3
         uint64 3
      }
   ]
   uint64 0
   uint64 1
"""

CREDENTIALS_REPLY = """\
method return time=1795614238.855403 sender=org.freedesktop.DBus -> destination=:1.0 serial=3 reply_serial=2
   array [
      dict entry(
         string "ProcessID"
         variant             uint32 14711
      )
      dict entry(
         string "UnixUserID"
         variant             uint32 0
      )
   ]
"""
