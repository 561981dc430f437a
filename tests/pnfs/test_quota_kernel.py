"""The export's quota with stock kernels (ganesha-fsal/README.md,
"Quotas"): df on the mount shows the quota as the size and what is left
as available; a write past it fails with EDQUOT in the application, over
NFSv4.1 with layouts and over NFSv3 (a write, then its fsync: the
application sees EDQUOT at one of them), and nothing past the quota is left
on the manager."""
from __future__ import annotations

import json
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.vm import Scenario

MIB = 1 << 20
QUOTA_BYTES = 12 * MIB
QUOTA_FILES = 1000
SCRIPT = """
df -P -k . | awk 'NR == 2 { print "df " $2 " " $4 }'
dd if=/dev/zero of=a bs=1M count=4 conv=fsync 2>/dev/null || fail "dd a under the quota"
rc=0
ops=$(i=0; while [ $i -lt 4096 ]; do echo "w:$((i * 4096)):4096"; i=$((i + 1)); done)
ptool io b $ops f >/tmp/err 2>&1 || rc=$?
tail -n 2 /tmp/err
[ "$rc" != 0 ] || fail "b went past the quota"
grep -q "Disk quota exceeded" /tmp/err || fail "b: no EDQUOT"
"""


def used_bytes(c: PnfsCluster) -> int:
    v = c.dbus("quota_get")
    assert v[0] is True, v
    return int(json.loads(v[2])["used_bytes"])


@pytest.mark.parametrize("version", ["7.x", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("6.1", marks=pytest.mark.slow)])
def test_df_shows_the_quota_and_writes_past_it_fail_with_edquot(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    c.dbus("quota_set", f"uint64:{QUOTA_BYTES}", f"uint64:{QUOTA_FILES}")
    kc = guest(version, c)
    res = kc.run(Scenario().step("sh", "v4.1", SCRIPT), timeout=300)
    out = res.steps[0].output
    print(out)
    res.assert_ok()
    size_k, avail_k = (int(x) for x in out.split("df ", 1)[1].split()[:2])
    assert size_k == QUOTA_BYTES // 1024 and 0 < avail_k <= size_k, out
    a = c.nfs3_read(f"{kc.name}/s1-sh/a")
    b = c.nfs3_read(f"{kc.name}/s1-sh/b")
    assert len(a) == 4 * MIB and not a.strip(b"\0")
    assert len(a) + len(b) <= QUOTA_BYTES, f"b kept {len(b)} bytes past the quota"
    assert used_bytes(c) <= QUOTA_BYTES
    # The same through the manager alone, over NFSv3, once b is gone.
    dir_fh, _ = c.nfs3_lookup(f"{kc.name}/s1-sh")
    with c.nfs3() as n:
        assert n.remove(dir_fh, "b").status == 0
    res = kc.run(Scenario().step("sh", "v3", SCRIPT), timeout=300)
    print(res.steps[0].output)
    res.assert_ok()
    assert used_bytes(c) <= QUOTA_BYTES
