"""Users' quotas with stock kernels and Linux's own quota tools
(ganesha-fsal/README.md, "Quotas"): root's `setquota -r` in the guest sets
a user's quota through the server's RQUOTA, over NFSv3 and NFSv4.1 mounts;
that user's `quota` shows what it uses and its limits; its write past
the limit fails with EDQUOT (over NFSv4.1 with layouts), and nothing past
the limit is counted on the manager.

The guest is on a tap device, as a client on a real network is: quota
tools find RQUOTA through the server's rpcbind, whose answer names the
address the question came to, and behind qemu's user networking (NAT)
that is the pod's loopback, which the guest cannot reach.  So the
manager and the OSDs listen on the tap address too.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import pytest

from pando_testing.cluster_map import dbus_json
from pando_testing.e2e import KernelClient
from pando_testing.mds import PandoMds
from pando_testing.mountstats import parse_mountstats
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario
from pando_testing.vmnet import GUEST_NET_SH, TapNet

KIB = 1024
LIMIT_KIB = 2048
LIMIT_FILES = 10
# $1: the user, $2: its group.  Each version's step has a user of its own,
# since a user's quota covers the whole export.
SCRIPT = """
u=$1 g=$2
m=$(df -P . | awk 'NR == 2 { print $6 }')
setquota -r -u "$u" 0 {kib} 0 {files} "$m" || fail "setquota -r"
chmod 1777 .
ptool as "$u" "$g" dd if=/dev/zero of=u1 bs=1K count=1000 conv=fsync 2>/dev/null ||
  fail "dd under the quota"
echo "quota-before"; ptool as "$u" "$g" quota -v -w -p || fail "quota"
rc=0
ptool as "$u" "$g" dd if=/dev/zero of=u2 bs=1M count=4 conv=fsync 2>/tmp/err || rc=$?
cat /tmp/err
[ "$rc" != 0 ] || fail "u2 went past the quota"
grep -q "Disk quota exceeded" /tmp/err || fail "u2: no EDQUOT"
# quota exits 1 for a user at or past a limit: its rows are what is checked.
echo "quota-after"; ptool as "$u" "$g" quota -v -w -p || true
""".replace("{kib}", str(LIMIT_KIB)).replace("{files}", str(LIMIT_FILES))
USERS = {"v3": (1000, 100), "v4.1": (1001, 100)}


def quota_row(out: str, after: str, server: str) -> list[str]:
    """The row `quota -v -w -p` printed for the mount, after the marker."""
    rows = [r.split() for r in out.split(after, 1)[1].splitlines()
            if r.startswith(f"{server}:")]
    assert rows, out
    return rows[0]


def used_bytes(m: PandoMds, uid: int) -> int:
    ok, msg, j = dbus_json(m, "owner_quota_get", "string:user", f"uint32:{uid}")
    assert ok, msg
    assert (j["bytes"], j["files"]) == (LIMIT_KIB * KIB, LIMIT_FILES), j
    return int(j["used_bytes"])


@pytest.mark.parametrize("version", ["7.x", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("6.1", marks=pytest.mark.slow)])
def test_setquota_and_quota_work_through_rquota_and_the_limit_holds(
        version: str, pod: Pod, tap: TapNet, tmp_path: Path,
        mds_factory: Callable[..., PandoMds]) -> None:
    m = mds_factory(4, osd_host=tap.host_addr, advertise_host=tap.host_addr, pseudo="/pando",
                    protocols=(3, 4), pnfs=True, mirrors=2, inline_max=1)
    target = dataclasses.replace(m.mount_target(), address=tap.host_addr)
    kc = KernelClient(pod, version, tmp_path / "vms",
                      NfsServerHandle(name="pando", target=target, logs=[m.log_path]),
                      f"rq{version.replace('.', '_')}")
    sc = Scenario().raw(GUEST_NET_SH)
    for vers, (uid, gid) in USERS.items():
        sc.step("sh", vers, f"set -- {uid} {gid}; {SCRIPT}")
    sc.step("mountstats", "v4.1")
    vm = kc.vm(sc, params=tap.guest_params(), quota_tools=True, timeout=400)
    vm.netdev = tap.netdev()
    vm.start()
    res = vm.wait()
    for step in res.steps:
        print(step.output)
    res.assert_ok()
    v41 = [ms for ms in parse_mountstats(res.step("mountstats", "v4.1").output)
           if ms.mountpoint == "/mnt/v4.1"]
    assert v41 and v41[0].count("LAYOUTGET") > 0, "the NFSv4.1 writes took no layout"
    for step, (vers, (uid, _)) in zip(res.steps, USERS.items()):
        before = quota_row(step.output, "quota-before", tap.host_addr)
        # blocks quota limit grace files quota limit grace, in KiB
        assert before[1:] == ["1000", str(LIMIT_KIB), str(LIMIT_KIB), "0",
                              "1", str(LIMIT_FILES), str(LIMIT_FILES), "0"], (vers, before)
        after = quota_row(step.output, "quota-after", tap.host_addr)
        assert int(after[1].rstrip("*")) <= LIMIT_KIB, (vers, after)
        assert after[5] == "2", (vers, after)
        assert used_bytes(m, uid) <= LIMIT_KIB * KIB, vers
