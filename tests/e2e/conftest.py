"""Fixtures for end-to-end tests with stock Linux kernels as NFS clients.

* `nfs_server`: the server under test, as a NfsServerHandle (mount
  parameters, logs, export location).  Today NFS-Ganesha 4.3 with FSAL VFS
  serving NFSv3 and NFSv4.1 inside the test's pod; when the Pando metadata
  manager lands, a Pando cluster fixture returning the same handle replaces
  it here and every scenario runs against Pando unchanged.
* `kernel_client(version)`: a factory of KernelClient objects that boot that
  Debian kernel ("6.1", "6.12", "7.x") in qemu inside the same pod and run
  scenarios against `nfs_server`.

When a test fails, the serial logs of its VMs and the server's logs are
copied to build/test-logs/<test id>/ (see pando_testing.logs).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.e2e import GANESHA43_CLIENT_MODOPTS, KernelClient
from pando_testing.ganesha import GaneshaVfs
from pando_testing.logs import keep_logs
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle


@pytest.fixture
def nfs_server(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path) -> Iterator[NfsServerHandle]:
    g = GaneshaVfs(pod, tmp_path / "ganesha", protocols=(3, 4), minor_versions=(1,),
                   pseudo="/pando-e2e")
    g.start()
    handle = NfsServerHandle(
        name="ganesha-vfs", target=g.mount_target(), export_root=g.export_dir,
        logs=[g.log_path, g.rpcbind_log_path, g.workdir / "ganesha.stdout", g.conf_path],
        read_plus_ok=False,
        # Linux 7.x sends GET_DIR_DELEGATION (in the GETATTR of a changed
        # directory); Ganesha 4.3 answers NFS4ERR_OP_ILLEGAL instead of
        # NFS4ERR_NOTSUPP and the client fails the stat with EREMOTEIO.
        # test_scenarios.py::test_ganesha43_directory_delegation_bug shows it.
        client_modopts=GANESHA43_CLIENT_MODOPTS)
    yield handle
    code = g.stop()
    keep_logs(request, handle.logs)
    assert code == 0, f"ganesha.nfsd exit status {code}:\n{g.log_text()[-3000:]}"


@pytest.fixture
def kernel_client(request: pytest.FixtureRequest, pod: Pod, nfs_server: NfsServerHandle,
                  tmp_path: Path) -> Iterator[Callable[..., KernelClient]]:
    made: list[KernelClient] = []

    def make(version: str, name: str | None = None, server: NfsServerHandle | None = None,
             in_pod: Pod | None = None) -> KernelClient:
        """`server` overrides nfs_server (e.g. a proxy in front of it), and
        `in_pod` the pod the VMs run in (where that server listens)."""
        kc = KernelClient(in_pod or pod, version, tmp_path / "vms", server or nfs_server,
                          name or f"k{version.replace('.', '_')}-{len(made) + 1}")
        made.append(kc)
        return kc

    yield make
    vms = [vm for kc in made for vm in kc.vms]
    for vm in vms:
        vm.kill()
    keep_logs(request, [log for vm in vms for log in vm.logs()])

