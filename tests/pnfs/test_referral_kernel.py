"""Stock kernels crossing a junction (ganesha-fsal/README.md, "Volumes and
referrals"): a guest mounts the root manager over NFSv4.1, sees the
volume's junction in the root, and writes a file into it with no new
mount command: Linux follows the referral to the volume's manager (a
submount), takes layouts there and writes the file's bytes to the OSDs,
none through the manager.
The file is then in the volume's store, byte for byte, and nowhere in the
root's; the same guest mounts the volume by its path on its manager over
NFSv3 and reads it back.

Both managers share the pod, its OSDs (each in its own partition) and the
guest's tap device, each on an address of its own on port 2049: NFSv4
referrals carry no port.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.keys import ClusterKey
from pando_testing.logs import check_clean_exits
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, file_bytes
from pando_testing.mgr_cluster import written_bytes
from pando_testing.mountstats import parse_mountstats
from pando_testing.nfs3 import NFS3ERR_NOENT
from pando_testing.pando_cli import run_cli
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario
from pando_testing.vmnet import GUEST_NET_SH, TapNet

PSEUDO = "/pando"
VOLUME_ADDR = "10.0.3.3"      # on the tap's subnet, beside TapNet's host address
MIB = 1 << 20
# The guest's file: 4 MiB of a pattern it can make again to compare.
SCRIPT = f"""
m=$(df -P . | awk 'NR == 2 {{ print $6 }}')
ls "$m" | grep -qx vol1 || fail "no vol1 in the root: $(ls "$m")"
awk 'BEGIN {{ for (i = 0; i < 65536; i++) printf "%063d\\n", i }}' > /tmp/src
cp /tmp/src "$m/vol1/f" || fail "cp into the volume"
sync
grep " $m/vol1 " /proc/mounts || fail "no submount at $m/vol1: $(cat /proc/mounts)"
echo 3 > /proc/sys/vm/drop_caches
cmp /tmp/src "$m/vol1/f" || fail "the file read back differs"
mkdir -p /mnt/vol3
mount -t nfs -o vers=3,proto=tcp,port=2049,mountport={{mountport}},nolock \\
  {VOLUME_ADDR}:{{export3}} /mnt/vol3 || fail "NFSv3 mount of the volume"
cmp /tmp/src /mnt/vol3/f || fail "the file over NFSv3 differs"
umount /mnt/vol3
"""


def expected() -> bytes:
    return "".join(f"{i:063d}\n" for i in range(65536)).encode()


@pytest.fixture
def volume(pod: Pod, tap: TapNet, tmp_path: Path, cluster_key: ClusterKey,
           request: pytest.FixtureRequest,
           mds_factory: Callable[..., PandoMds]) -> Iterator[tuple[PandoMds, PandoMds]]:
    """(the root manager, the volume's manager) over two OSDs."""
    root = mds_factory(2, osd_host=tap.host_addr, advertise_host=tap.host_addr,
                       host=tap.host_addr, bind=tap.host_addr, pseudo=PSEUDO, protocols=(3, 4),
                       pnfs=True,
                       mirrors=2, inline_max=1)
    pod.run(["ip", "addr", "add", f"{VOLUME_ADDR}/{tap.prefix}", "dev", tap.ifname])
    vol = PandoMds(pod, tmp_path / "vol1", osds=root.osds, key=cluster_key, partition=2,
                   host=VOLUME_ADDR, bind=VOLUME_ADDR, advertise_host=tap.host_addr, pseudo=PSEUDO,
                   protocols=(3, 4), pnfs=True, mirrors=2, inline_max=1, nsm=False)
    vol.rpcbind = root.rpcbind      # one rpcbind per pod: the root's stops it
    try:
        vol.start()
        yield root, vol
    finally:
        vol.rpcbind = None
        check_clean_exits(request, {"vol1": vol.stop()}, [vol.log_path], "ganesha.nfsd")


@pytest.mark.parametrize("version", ["7.x", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("6.1", marks=pytest.mark.slow)])
def test_a_kernel_follows_the_junction_and_writes_over_pnfs_in_the_volume(
        version: str, pod: Pod, tap: TapNet, tmp_path: Path,
        volume: tuple[PandoMds, PandoMds]) -> None:
    root, vol = volume
    cp = run_cli(pod, "junction", "add", "vol1", "--server", VOLUME_ADDR, "--path", PSEUDO,
                 env=root.dbus_env())
    assert cp.returncode == 0, cp.stderr
    target = dataclasses.replace(root.mount_target(), address=tap.host_addr)
    kc = KernelClient(pod, version, tmp_path / "vms",
                      NfsServerHandle(name="pando", target=target,
                                      logs=[root.log_path, vol.log_path]),
                      f"ref{version.replace('.', '_')}")
    script = SCRIPT.replace("{mountport}", str(vol.mnt_port)).replace(
        "{export3}", str(vol.export_dir))
    sc = Scenario().raw(GUEST_NET_SH).step("sh", "v4.1", script).step("mountstats", "v4.1")
    vm = kc.vm(sc, params=tap.guest_params(), timeout=400)
    vm.netdev = tap.netdev()
    vm.start()
    res = vm.wait()
    for step in res.steps:
        print(step.output)
    res.assert_ok()
    sub = [ms for ms in parse_mountstats(res.step("mountstats", "v4.1").output)
           if ms.mountpoint == "/mnt/v4.1/vol1"]
    assert sub and sub[0].device == f"{VOLUME_ADDR}:{PSEUDO}", "no submount of the volume"
    # Linux asks for the layout inside OPEN (no LAYOUTGET of its own), so
    # the manager's counters say where the bytes went.
    cluster = PnfsCluster(pod, vol, list(vol.osds))
    st = cluster.layout_status()
    assert st.granted > 0, "the volume's manager granted no layout"
    assert st.mds_write_bytes == 0, "bytes went through the volume's manager"
    assert written_bytes(cluster) >= 2 * 4 * MIB, "both mirrors' bytes on the OSDs"
    size, data = file_bytes(vol, "/f")
    assert size == 4 * MIB
    assert hashlib.sha256(data).digest() == hashlib.sha256(expected()).digest()
    with connect(root) as c:
        assert c.lookup(root.root_handle(), "f").status == NFS3ERR_NOENT
        j = c.lookup_fh(root.root_handle(), "vol1")
        assert c.lookup(j, "f").status == NFS3ERR_NOENT, "the file is in the root's store"
