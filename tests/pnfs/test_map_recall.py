"""The cluster map takes an OSD out while a pNFS client holds a layout
naming it: the manager (following the map in etcd) recalls the layout,
the guest returns it at once, nobody is fenced, and the guest writes on
with a new layout; the file reads back whole.

The map is written into etcd by hand (no mgr), as mgr/README.md says the
leading mgr writes it."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from pando_testing.daemons import OsdProcess
from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdClient, EtcdCluster
from pando_testing.ganesha import STATE_DEBUG
from pando_testing.mds import PandoMds
from pando_testing.pnfs_guest import DROP, REPORT, reports
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous, sha256
from pando_testing.pod import Pod
from pando_testing.vm import GUEST_ADDR, Scenario

MIB = 1 << 20
PREFIX = "/pando/"
RECALL_TIMEOUT = 3


def osd_entry(o: OsdProcess, in_: bool = True) -> dict[str, Any]:
    return {"id": o.osd_id, "ctl": o.ctl_addr, "nfs": f"{o.host}:{o.nfs_port}",
            "advertise": f"{GUEST_ADDR}:{o.nfs_port}", "weight": 1 << 40, "domain": "",
            "up": True, "in": in_}


def put_map(client: EtcdClient, epoch: int, osds: list[dict[str, Any]]) -> None:
    client.put(PREFIX + "map", json.dumps({"epoch": epoch, "partition": 1, "osds": osds}))


def holder_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + """
getdata a /tmp/a; getdata b /tmp/b
exec 3>f
cat /tmp/a >&3
sync
arrive holding "ino=$(stat -c %i f)"
cat /tmp/b >&3
sync
arrive written
exec 3>&-
drop
report f
"""


def test_osd_taken_out_of_the_map_has_its_layouts_recalled(
        pod: Pod, gate: Rendezvous, etcd: EtcdCluster,
        mds_factory: Callable[..., PandoMds],
        guest: Callable[..., KernelClient]) -> None:
    extra = "\n".join([f"Recall_Timeout = {RECALL_TIMEOUT};", f'Etcd = "{etcd.endpoints}";',
                       f'Etcd_Prefix = "{PREFIX}";', 'Mds_Name = "mds-pnfs";'])
    m = mds_factory(4, start=False, pseudo="/pando", pnfs=True, advertise_host=GUEST_ADDR,
                    mirrors=2, extra_fsal=extra, log_components=STATE_DEBUG)
    client = etcd.client()
    put_map(client, 1, [osd_entry(o) for o in m.osds])
    m.start()
    c = PnfsCluster(pod, m, list(m.osds), gate)
    a, b = os.urandom(2 * MIB), os.urandom(MIB + 77)
    gate.data.update(a=a, b=b)
    vm = guest("7.x", c).start(Scenario().step("sh", "v4.1", holder_script(gate.guest_lib())),
                               timeout=300)
    ino = int(gate.wait("holding", vms=[vm]).query["ino"])
    ls0 = c.layout_status()
    assert ls0.segments >= 1, f"the guest holds no layout: {ls0}"
    victim = c.components(ino)[0].osd_id

    put_map(client, 2, [osd_entry(o, in_=o.osd_id != victim) for o in m.osds])
    ls1 = c.wait_layouts(lambda s: s.segments == 0, 20,
                         "the guest returning the layout the map change recalled")
    assert ls1.recalls > ls0.recalls and ls1.fenced == 0, f"{ls0} -> {ls1}"
    assert f"osd.{victim} now up/out" in m.log_text()
    assert "an OSD it uses is out" in m.log_text()

    gate.release("holding")
    gate.wait("written", vms=[vm])
    assert c.layout_status().granted > ls1.granted, "no new layout after the recall"
    gate.release("written")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    rep = reports(res.steps[0])["f"]
    assert rep.size == len(a) + len(b) and rep.sha256 == sha256(a + b)
    time.sleep(RECALL_TIMEOUT + 1.5)
    assert c.layout_status().fenced == 0
