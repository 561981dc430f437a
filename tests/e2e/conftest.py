"""Fixtures for end-to-end tests with stock Linux kernels as NFS clients.

* `nfs_server`: the server under test, as a NfsServerHandle (mount
  parameters, logs, how to read the server's copy of a file).  A Pando
  cluster: one metadata manager (ganesha.nfsd 4.3 with our patches +
  libfsalpando.so, configured as `pando-cluster up` does: NFSv3, NFSv4.1 and
  NFSv4.2) over four pando-osd targets, in the test's pod
  (`pando_cluster` is the PandoMds behind it).
* `ganesha_vfs`: the same handle for NFS-Ganesha 4.3 with FSAL VFS over a
  local directory, for the tests that are about Ganesha itself or about the
  harness and need a plain server.  A test uses one of the two servers,
  never both (they take the same ports in the pod).
* `kernel_client(version)`: a factory of KernelClient objects that boot that
  Debian kernel ("6.1", "6.12", "7.x") in qemu inside the same pod and run
  scenarios against `nfs_server` (started when the first client is made, so
  a test that passes `server=` starts no Pando cluster).

Environment:
* PANDO_E2E_MDS_LOG_LEVEL (DEBUG, FULL_DEBUG): the metadata manager's
  Ganesha log level, for a reproduction.
* PANDO_E2E_PNFS=0: the manager serves as a gateway only (its export's
  Pnfs = false: no layouts); by default it hands out flexfiles layouts,
  as `pando-cluster up` does.
* PANDO_E2E_SERVER=ganesha-vfs: every scenario against the Ganesha VFS
  baseline instead (a scenario that fails there is wrong, not the server).

When a test fails, the serial logs of its VMs and the servers' logs are
copied to build/test-logs/<test id>/ (see pando_testing.logs).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.e2e import KernelClient, Nfs3Peek
from pando_testing.ganesha import STATE_DEBUG, GaneshaVfs
from pando_testing.logs import keep_logs
from pando_testing.mds import PandoMds
from pando_testing.pod import Pod
from pando_testing.vm import GUEST_ADDR, NfsServerHandle

PANDO_PSEUDO = "/pando"


def pnfs_wanted() -> bool:
    value = os.environ.get("PANDO_E2E_PNFS", "1")
    if value not in ("0", "1"):
        raise ValueError(f"PANDO_E2E_PNFS={value!r}: want 1 (layouts, the default) or 0 (gateway)")
    return value == "1"


@pytest.fixture
def pando_cluster(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """One metadata manager over four OSDs, serving NFSv3, NFSv4.1 and 4.2
    on 2049 (MOUNT on 20048), data servers advertised as the guests see them,
    handing out flexfiles layouts as `pando-cluster up` does: NFSv4.x data
    of object-backed files (and of new files a client writes) flows between
    guest and OSDs; inline files and all NFSv3 I/O go through the manager.
    PANDO_E2E_PNFS=0: a gateway only.  mds_factory stops it and checks
    that it exits cleanly."""
    return mds_factory(4, pseudo=PANDO_PSEUDO, advertise_host=GUEST_ADDR, pnfs=pnfs_wanted(),
                       log_level=os.environ.get("PANDO_E2E_MDS_LOG_LEVEL"),
                       log_components=STATE_DEBUG)


@pytest.fixture
def nfs_server(request: pytest.FixtureRequest, pod: Pod) -> Iterator[NfsServerHandle]:
    if os.environ.get("PANDO_E2E_SERVER", "pando") == "ganesha-vfs":
        # The baseline, to tell a server bug from a scenario bug.
        yield request.getfixturevalue("ganesha_vfs")
        return
    m: PandoMds = request.getfixturevalue("pando_cluster")
    assert m.export_dir is not None
    handle = NfsServerHandle(
        name="pando", target=m.mount_target(), export_root=None,
        logs=[m.log_path, m.rpcbind_log_path, m.statd_log_path, m.workdir / "ganesha.stdout",
              m.conf_path, m.cluster_conf, *(o.log_path for o in m.osds)],
        # No directory on this machine: the server's copy is read over NFSv3.
        server_copy=Nfs3Peek(pod, m.host, m.nfs_port, m.mnt_port, str(m.export_dir)))
    yield handle
    keep_logs(request, [m.rpcbind_log_path, m.conf_path, m.cluster_conf])


@pytest.fixture
def ganesha_vfs(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path) -> Iterator[NfsServerHandle]:
    g = GaneshaVfs(pod, tmp_path / "ganesha", protocols=(3, 4), pseudo="/pando-e2e")
    g.start()
    handle = NfsServerHandle(
        name="ganesha-vfs", target=g.mount_target(), export_root=g.export_dir,
        logs=[g.log_path, g.rpcbind_log_path, g.statd_log_path, g.workdir / "ganesha.stdout",
              g.conf_path],
        reports_holes=True)
    yield handle
    code = g.stop()
    keep_logs(request, handle.logs)
    assert code == 0, f"ganesha.nfsd exit status {code}:\n{g.log_text()[-3000:]}"


@pytest.fixture
def kernel_client(request: pytest.FixtureRequest, pod: Pod,
                  tmp_path: Path) -> Iterator[Callable[..., KernelClient]]:
    made: list[KernelClient] = []

    def make(version: str, name: str | None = None, server: NfsServerHandle | None = None,
             in_pod: Pod | None = None) -> KernelClient:
        """`server` overrides nfs_server (e.g. a proxy in front of it, or
        ganesha_vfs), and `in_pod` the pod the VMs run in (where that server
        listens)."""
        if server is None:
            server = request.getfixturevalue("nfs_server")
        kc = KernelClient(in_pod or pod, version, tmp_path / "vms", server,
                          name or f"k{version.replace('.', '_')}-{len(made) + 1}")
        made.append(kc)
        return kc

    yield make
    vms = [vm for kc in made for vm in kc.vms]
    for vm in vms:
        vm.kill()
    keep_logs(request, [log for vm in vms for log in vm.logs()])
