"""The benchmark's baseline works: stock NFS-Ganesha 4.3 with FSAL VFS starts
in a private namespace, and nfs3load writes, commits and reads back (with
data checks) a few MiB over NFSv3 against it; nfs3load reports server errors."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from pando_testing.ganesha import GaneshaVfs
from pando_testing.nfs3load import LoadError, run_nfs3load
from pando_testing.pod import Pod

MIB = 1 << 20


@pytest.fixture
def ganesha(pod: Pod, tmp_path: Path) -> Iterator[GaneshaVfs]:
    g = GaneshaVfs(pod, tmp_path / "ganesha")
    g.start()
    yield g
    code = g.stop()
    assert code == 0, f"ganesha.nfsd exit status {code}:\n{g.log_text()[-3000:]}"


def test_nfs3load_writes_and_reads_back(pod: Pod, ganesha: GaneshaVfs) -> None:
    fhs = ganesha.create_files(["s0", "s1"])
    streams, per_stream = 4, 2 * MIB  # two streams per file, disjoint ranges
    for req in (MIB, 4096):
        w = run_nfs3load(pod, ganesha.nfs_addr, fhs, "write", req, per_stream, streams,
                         depth=4, commit=True, verify=True, timeout=120)
        assert w.bytes == streams * per_stream
        assert w.ops == streams * per_stream // req + streams  # + one COMMIT per stream
        r = run_nfs3load(pod, ganesha.nfs_addr, fhs, "read", req, per_stream, streams,
                         depth=4, verify=True, timeout=120)
        assert r.bytes == streams * per_stream and r.mb_s > 0
    assert ganesha.export_dir is not None
    for name in ("s0", "s1"):
        data = (ganesha.export_dir / name).read_bytes()
        assert len(data) == 2 * per_stream
        # nfs3load's pattern: 64-bit word at offset o is (o/8 + 1) * golden ratio.
        for off in (0, per_stream, 2 * per_stream - 8):
            word = int.from_bytes(data[off:off + 8], "little")
            assert word == ((off // 8 + 1) * 0x9E3779B97F4A7C15) & (2**64 - 1)


def test_nfs3load_reports_server_errors(pod: Pod, ganesha: GaneshaVfs) -> None:
    (fh,) = ganesha.create_files(["small"])
    run_nfs3load(pod, ganesha.nfs_addr, [fh], "write", 4096, 8192, 1, timeout=60)
    with pytest.raises(LoadError, match="short read"):
        run_nfs3load(pod, ganesha.nfs_addr, [fh], "read", 4096, 3 * 4096, 1, timeout=60)
    bogus = bytes(len(fh))
    with pytest.raises(LoadError, match="NFS3ERR_(BADHANDLE|STALE)"):
        run_nfs3load(pod, ganesha.nfs_addr, [bogus], "write", 4096, 4096, 1, timeout=60)


@pytest.mark.parametrize("kw", [{"protocols": (4,)}, {"protocols": (3, 4), "nsm": False}],
                         ids=["nfsv4-only", "nfsv3-without-nsm"])
def test_a_second_server_starts_beside_another_in_the_same_pod(
        pod: Pod, tmp_path: Path, ganesha: GaneshaVfs, kw: dict[str, object]) -> None:
    """As pnfs_throughput's probe manager (NFSv4 only) and FSAL VFS
    baseline (no NSM) beside the manager under test: each shares the pod's
    rpcbind and runs no rpc.statd of its own (a pod holds one statd, whose
    pid file is in its /run)."""
    second = GaneshaVfs(pod, tmp_path / "second", nfs_port=2051, mnt_port=20051,
                        pseudo="/second", **kw)  # type: ignore[arg-type]
    second.rpcbind = ganesha.rpcbind
    second.start()
    try:
        assert second.alive() and second.statd is None
        assert ganesha.statd is not None and ganesha.statd.poll() is None
    finally:
        second.rpcbind = None       # the first server's, stopped with it
        assert second.stop() == 0
