"""NFSv4.2 SEEK, ALLOCATE and DEALLOCATE with stock kernels (fsal/sparse.c).

Over an NFSv4.2 mount with layouts, on an object-backed file (3 MiB) and
an inline one (10 KiB): SEEK_DATA finds data where it looks, SEEK_HOLE
the end of the file, both ENXIO past the end; a punched hole reads back
as zeros with the size unchanged, on the manager too; fallocate(0) is
EOPNOTSUPP (the OSDs cannot reserve space), so posix_fallocate falls back
to writing zeros."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.vm import Scenario

MIB = 1 << 20
SCRIPT = """
for f in big:3072 small:10; do
    name=${f%%:*}; kib=${f#*:}
    dd if=/dev/urandom of=$name bs=1k count=$kib 2>/dev/null || fail "dd $name"
    size=$((kib * 1024))
    ptool io $name D:100 H:100 || fail "seek $name"
    ptool io $name D:$size || true
    ptool io $name H:$size || true
    ptool io $name p:4096:8192 s f || fail "punch $name"
    ptool io $name a:0:4096 || true
done
echo 3 > /proc/sys/vm/drop_caches
ptool io big r:4096:16 r:12288:4 r:12284:4
"""


@pytest.mark.parametrize("version", ["6.12", pytest.param("7.x", marks=pytest.mark.slow),
                                     pytest.param("6.1", marks=pytest.mark.slow)])
def test_seek_deallocate_allocate_over_nfs42(version: str,
                                            pnfs_cluster: Callable[..., PnfsCluster],
                                            guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    kc = guest(version, c)
    res = kc.run(Scenario().step("sh", "v4.2", SCRIPT), timeout=400)
    out = res.steps[0].output
    print(out)
    res.assert_ok()
    for name, size in (("big", 3 * MIB), ("small", 10 * 1024)):
        assert f"D 100 100\nH 100 {size}\n" in out, out
        assert f"D:{size}: No such device or address" in out, out
        assert f"H:{size}: No such device or address" in out, out
        assert f"p 4096 8192\ns {size}\nf\n" in out, out
        data = c.nfs3_read(f"{kc.name}/s1-sh/{name}")
        assert len(data) == size
        nz = [i for i in range(4096, min(12288, size)) if data[i]]
        assert data[4096:12288] == bytes(len(data[4096:12288])), f"{name}: non-zero at {nz[:3]}..{nz[-3:]}"
        assert data[:4096] != bytes(4096) and data[12288:16384] != bytes(4096)
    assert out.count("a:0:4096: Operation not supported") == 2, out
    # The guest sees the hole too, after dropping its cache.
    assert "r 4096 " + "00" * 16 + "\n" in out, out
    assert "r 12288 " in out and "r 12288 00000000\n" not in out, out
    assert "r 12284 00000000" in out, out
