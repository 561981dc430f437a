"""The FSAL's cluster_status dbus method (ganesha-fsal/fsal/dbus.c): what the
manager knows of each OSD (address, reachable, last error, calls, failures)
and the reaper's counters, parsed from `dbus-send --print-reply`."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .mds import PandoMds


@dataclass
class OsdStatus:
    id: int
    ctl: str
    data: str
    reachable: bool
    last_error: int
    calls: int
    failures: int


@dataclass
class ClusterStatus:
    ok: bool
    message: str
    osds: dict[int, OsdStatus] = field(default_factory=dict)
    removals_done: int = 0
    removals_retried: int = 0


STRUCT_RE = re.compile(r'struct \{\s*uint32 (\d+)\s*string "([^"]*)"\s*string "([^"]*)"\s*'
                       r'boolean (true|false)\s*int32 (-?\d+)\s*uint64 (\d+)\s*uint64 (\d+)\s*\}')


def cluster_status(mds: PandoMds) -> ClusterStatus:
    cp = mds.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                      "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.cluster_status"],
                     env={**os.environ, **mds.dbus_env()}, check=False, timeout=30)
    assert cp.returncode == 0, f"cluster_status: {cp.stderr}"
    out = cp.stdout
    head = re.search(r'boolean (true|false)\s*string "([^"]*)"\s*array \[', out)
    assert head, out
    st = ClusterStatus(head.group(1) == "true", head.group(2))
    for m in STRUCT_RE.finditer(out):
        o = OsdStatus(int(m.group(1)), m.group(2), m.group(3), m.group(4) == "true",
                      int(m.group(5)), int(m.group(6)), int(m.group(7)))
        st.osds[o.id] = o
    tail = re.search(r'\]\s*uint64 (\d+)\s*uint64 (\d+)\s*$', out)
    assert tail, out
    st.removals_done, st.removals_retried = int(tail.group(1)), int(tail.group(2))
    return st
