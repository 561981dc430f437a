"""A stock kernel client on a Kerberos export (tests/security/
test_kerberos.py has the protocol cases): the guest runs Debian's
rpc.gssd with a keytab of its own, nfs/NAME@PANDO.TEST, from a KDC the
test starts in the pod (pando_testing.kdc), and mounts the manager with
sec=krb5p, krb5i and krb5 in turn.  Through each it writes 2 MiB with
fsync, and the data goes to the OSDs over pNFS; what one mount wrote,
another reads back whole.  Root's machine principal is root on the
server (Ganesha maps nfs/ principals to root; the guest's address is
trusted), so the file is root's.  A sec=sys mount of the same export is
refused."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pando_cluster.ganesha_conf import KRB5_FLAVORS, Kerberos
from pando_testing.e2e import KernelClient
from pando_testing.guest_gss import GuestKerberos
from pando_testing.kdc import SERVICE_HOST, Kdc
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.pod import Pod
from pando_testing.vm import GUEST_ADDR, Scenario

MIB = 1 << 20
GUEST_OWN_ADDR = "10.0.2.15"     # tests/e2e/guest/lib.sh, net_up

SCRIPT = """
dd if=/dev/urandom of=/tmp/data bs=1M count=2 2>/dev/null
dd if=/tmp/data of=by-krb5p bs=1M conv=fsync 2>/dev/null || fail "writing through sec=krb5p"
here=${PWD#/mnt/$VERS}
for sec in krb5i krb5; do
  mkdir -p /mnt/$sec
  mount -t nfs -o vers=4.1,proto=tcp,addr=$S,port=$P,sec=$sec "$S:$PANDO_EXPORT4" /mnt/$sec ||
    fail "mount sec=$sec failed"
  dd if=/tmp/data of=/mnt/$sec$here/by-$sec bs=1M conv=fsync 2>/dev/null ||
    fail "writing through sec=$sec"
  umount /mnt/$sec
done
for f in by-krb5p by-krb5i by-krb5; do cmp /tmp/data $f || fail "$f differs"; done
mkdir -p /mnt/sys
must_fail "permission denied" mount -t nfs -o vers=4.1,proto=tcp,addr=$S,port=$P,sec=sys \
  "$S:$PANDO_EXPORT4" /mnt/sys
echo "owner $(stat -c '%u:%g' by-krb5p)"
"""


@pytest.fixture
def kdc(pod: Pod, tmp_path: Path) -> Iterator[Kdc]:
    k = Kdc(tmp_path / "kdc", pod=pod).start()
    yield k
    assert k.stop() == 0


@pytest.mark.parametrize("kernel", ["6.1", "6.12", "7.x"])
def test_a_kernel_client_writes_over_pnfs_under_each_kerberos_flavour(
        kernel: str, kdc: Kdc, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    service = kdc.principal(f"nfs/{SERVICE_HOST}")
    c = pnfs_cluster(mirrors=2, sec=KRB5_FLAVORS,
                     kerberos=Kerberos(service, f"nfs@{SERVICE_HOST}"), env=kdc.env(),
                     idmap_conf=kdc.idmap_conf)
    kc = guest(kernel, c)
    name = kc.next_vm_name()
    realm = GuestKerberos(
        krb5_conf=kdc.krb5_conf_for(GUEST_ADDR),
        keytab=kdc.principal(f"nfs/{name}").read_bytes(),
        hosts=f"127.0.0.1 localhost\n{GUEST_ADDR} {SERVICE_HOST}\n{GUEST_OWN_ADDR} {name}\n")
    before = c.osd_stats()
    res = kc.run(Scenario().step("sh", "v4.1", SCRIPT), kerberos=realm,
                 params={"PANDO_MOUNT_OPTS": "sec=krb5p"}, timeout=300)
    res.assert_ok()
    out = res.steps[0].output
    assert "owner 0:0" in out, out
    written = c.total(c.stats_delta(before, c.osd_stats()), "nfs_write_bytes")
    assert written >= 3 * 2 * 2 * MIB, f"the OSDs took {written} bytes over pNFS, want 3 x 2 x 2 MiB"
