"""A stock kernel client's root is squashed on every path (root squash,
tests/security/test_root_squash.py): the guest, which reaches the manager
from the pod's 127.0.0.1, is not trusted here; the Python client at
127.0.0.2 is, and sets up a root-owned file and a 1777 export root.  As
root, the guest can neither append to the root-owned 0644 file nor chmod
it; the file it makes belongs to nobody, and its data goes to the OSDs
over pNFS."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_cluster.ganesha_conf import ANON_ID
from pando_testing.e2e import KernelClient
from pando_testing.nfs3 import FILE_SYNC, Sattr3
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.squash import nfs3, root_owned
from pando_testing.vm import Scenario

TRUSTED = "127.0.0.2"
MIB = 1 << 20


@pytest.mark.parametrize("kernel", ["6.12"])
def test_a_kernel_clients_root_is_squashed_on_every_path(
        kernel: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2, trusted_clients=(TRUSTED,))
    with nfs3(c.mds, TRUSTED) as admin:
        assert admin.setattr(c.mds.root_handle(), Sattr3(mode=0o1777)).status == 0
        fh = root_owned(admin, c.mds.root_handle(), "root-file")
        assert admin.write(fh, 0, b"trusted\n", FILE_SYNC).status == 0
    script = """
R=/mnt/$VERS/root-file
must_fail "Permission denied" sh -c "echo squashed >> $R"
must_fail "Operation not permitted" chmod 666 $R
dd if=/dev/zero of=mine bs=1M count=2 conv=fsync 2>/dev/null || fail "writing its own file"
echo "owner $(stat -c '%u:%g' mine)"
echo "content $(cat $R)"
"""
    before = c.osd_stats()
    res = guest(kernel, c).run(Scenario().step("sh", "v4.1", script), timeout=300)
    print(res.report())
    res.assert_ok()
    out = res.steps[0].output
    assert f"owner {ANON_ID}:{ANON_ID}" in out, out
    assert "content trusted" in out, out
    written = c.total(c.stats_delta(before, c.osd_stats()), "nfs_write_bytes")
    assert written >= 2 * 2 * MIB, f"the OSDs took {written} bytes over pNFS, want 2 x 2 MiB"
