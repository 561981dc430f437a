"""pNFS clients and the cluster map in etcd.

* The map takes an OSD out while a guest holds a layout naming it: the
  manager recalls the layout, the guest returns it at once, nobody is
  fenced, and the guest writes on with a new layout; the file reads back
  whole.
* A fifth OSD joins the map while Ganesha runs: new files the guest
  writes land on it too, and the guest writes them there itself
  (GETDEVICEINFO names the new OSD, the manager moves no data).

The map is written into etcd by hand (no mgr), as mgr/README.md says the
leading mgr writes it."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from pando_testing.cluster_map import PREFIX, put_map
from pando_testing.cluster_map import osd_entry as map_osd
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
RECALL_TIMEOUT = 3


def osd_entry(o: OsdProcess, in_: bool = True) -> dict[str, Any]:
    return map_osd(o, in_=in_, advertise_host=GUEST_ADDR)


def etcd_options(etcd: EtcdCluster) -> list[str]:
    return [f'Etcd = "{etcd.endpoints}";', f'Etcd_Prefix = "{PREFIX}";',
            'Mds_Name = "mds-pnfs";']


def wait_presence(client: EtcdClient, key: str, pred: Callable[[Any], bool],
                  timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        p = client.get_json(key)
        if p and pred(p):
            return p
        assert time.monotonic() < deadline, f"presence {key}: {p}"
        time.sleep(0.3)


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
    extra = "\n".join([f"Recall_Timeout = {RECALL_TIMEOUT};", *etcd_options(etcd)])
    m = mds_factory(4, start=False, pseudo="/pando", pnfs=True, advertise_host=GUEST_ADDR,
                    mirrors=2, inline_max=1, extra_fsal=extra, log_components=STATE_DEBUG)
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
    victim = c.wait_components(ino, 2)[0].osd_id
    # The presence counts the holder and its layout.
    key = f"{PREFIX}mds/mds-pnfs"
    p = wait_presence(client, key, lambda p: p["layouts"] >= 1)
    assert p["clients"] == 1 and p["epoch"] == 1 and p["ops"]["layoutget"]["count"] >= 1, p

    put_map(client, 2, [osd_entry(o, in_=o.osd_id != victim) for o in m.osds])
    ls1 = c.wait_layouts(lambda s: s.segments == 0, 20,
                         "the guest returning the layout the map change recalled")
    assert ls1.recalls > ls0.recalls and ls1.fenced == 0, f"{ls0} -> {ls1}"
    assert f"osd.{victim} now up/out" in m.log_text()
    assert "an OSD it uses is out" in m.log_text()
    p = wait_presence(client, key, lambda p: p["epoch"] == 2 and p["recalls"] >= 1)
    assert p["fences"] == 0, p

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


FILES = 12
FILE_SIZE = 256 * 1024


def writer_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + f"""
getdata d /tmp/d
i=0
while [ $i -lt {FILES} ]; do
  dd if=/tmp/d of=f$i bs=64k conv=fsync 2>/tmp/dd.err || fail "writing f$i: $(cat /tmp/dd.err)"
  i=$((i + 1))
done
drop
i=0
while [ $i -lt {FILES} ]; do report f$i; i=$((i + 1)); done
"""


def test_pnfs_guest_writes_new_files_to_an_osd_added_to_the_map(
        pod: Pod, gate: Rendezvous, etcd: EtcdCluster,
        mds_factory: Callable[..., PandoMds], osd_factory: Callable[..., OsdProcess],
        guest: Callable[..., KernelClient]) -> None:
    # No objects made ahead: they would all predate the fifth OSD.
    m = mds_factory(4, start=False, pseudo="/pando", pnfs=True, advertise_host=GUEST_ADDR,
                    mirrors=2, object_pool=0, inline_max=1,
                    extra_fsal="\n".join(etcd_options(etcd)))
    client = etcd.client()
    put_map(client, 1, [osd_entry(o) for o in m.osds])
    m.start()
    fifth = osd_factory(5)
    put_map(client, 2, [*(osd_entry(o) for o in m.osds), osd_entry(fifth)])
    c = PnfsCluster(pod, m, [*m.osds, fifth], gate)
    deadline = time.monotonic() + 10
    while "cluster map epoch 2 applied" not in m.log_text():
        assert time.monotonic() < deadline, "map epoch 2 not applied"
        time.sleep(0.2)
    data = os.urandom(FILE_SIZE)
    gate.data["d"] = data
    before = c.osd_stats()
    vm = guest("7.x", c).start(Scenario().step("sh", "v4.1", writer_script(gate.guest_lib())),
                               timeout=300)
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    got = reports(res.steps[0])
    assert len(got) == FILES and all(r.size == FILE_SIZE and r.sha256 == sha256(data)
                                     for r in got.values()), got
    on_fifth = [r.ino for r in got.values() if any(k.osd_id == 5 for k in c.components(r.ino))]
    assert on_fifth, "no new file has a component on the OSD the map added"
    for ino in on_fifth:
        k = next(k for k in c.components(ino) if k.osd_id == 5)
        assert c.read_component(k)[:FILE_SIZE] == data
    delta = c.stats_delta(before, c.osd_stats())
    assert delta[5]["nfs_write_bytes"] >= FILE_SIZE, delta[5]
    assert c.layout_status().mds_write_bytes == 0, "the manager wrote data itself"
