"""What the e2e tests share: KernelClient (what the `kernel_client` fixture
makes), the kernel ids, the data sizes, and checks on the server's side."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from .kernels import KERNELS, KernelUnavailable, get_kernel, sha256_file
from .nfs3 import Nfs3Client
from .nfs3_setup import Nfs3Error, Nfs3Setup, mount_root
from .pod import Pod
from .vm import NfsServerHandle, Scenario, StepResult, Vm, VmResult

KERNEL_IDS = list(KERNELS)

# The data-verification sizes of issue 3: empty, one byte, one page,
# just over 1 MiB (a partial last rsize/wsize chunk) and 64 MiB.
SIZES = (0, 1, 4096, 1048577, 64 << 20)


class Nfs3Peek:
    """The server's copy of a file, read by an NFSv3 client on this machine
    (inside the server's pod), not by the guest: for servers with no local
    directory behind the export (Pando).  Calling it with a path relative to
    the export root gives (size, sha256), or None when a name is missing."""

    NFS3ERR_NOENT = 2

    def __init__(self, pod: Pod, host: str, nfs_port: int, mnt_port: int, export: str) -> None:
        self.pod, self.host, self.nfs_port, self.mnt_port = pod, host, nfs_port, mnt_port
        self.export = export

    def __call__(self, rel: str) -> tuple[int, str] | None:
        sock = self.pod.connect(self.host, self.mnt_port)
        try:
            fh = mount_root(sock, self.export)
        finally:
            sock.close()
        setup = Nfs3Setup.over(self.pod.connect(self.host, self.nfs_port))
        try:
            for name in rel.strip("/").split("/"):
                try:
                    fh = setup.lookup(fh, name)
                except Nfs3Error as e:
                    if e.status == self.NFS3ERR_NOENT:
                        return None
                    raise
        finally:
            setup.close()
        client = Nfs3Client.over(self.pod.connect(self.host, self.nfs_port))
        try:
            attrs = client.getattr(fh)
            assert attrs.status == 0, f"GETATTR {rel}: status {attrs.status}"
            assert attrs.attrs is not None
            size = attrs.attrs.size
            h = hashlib.sha256()
            off = 0
            while off < size:
                n = min(16 << 20, size - off)
                data = client.read_all(fh, off, n)
                assert len(data) == n, f"READ {rel} at {off}: {len(data)} bytes, want {n}"
                h.update(data)
                off += n
            return size, h.hexdigest()
        finally:
            client.close()


def check_on_server(server: NfsServerHandle, res: VmResult, step: StepResult,
                    sizes: tuple[int, ...] = SIZES) -> None:
    """The server's own copy of each file a `verify` step wrote has the size
    and sha256 the guest reported: read from its local export, or through
    `server.server_copy` (an NFSv3 client on this machine) where it has none."""
    for size in sizes:
        rel = f"{res.name}/s{step.n}-verify/f.{size}"
        want = step.metrics[f"sha256.{size}"]
        path = server.local_path(res.name, f"s{step.n}-verify/f.{size}")
        if path is None:
            if server.server_copy is None:
                return
            got = server.server_copy(rel)
            assert got is not None, f"{rel} missing on {server.name} (read from this machine)"
            assert got[0] == size, f"{rel}: {got[0]} bytes on {server.name}, want {size}"
            assert got[1] == want, f"{rel}: the copy on {server.name} differs from what {res.name} wrote"
            continue
        assert path.exists(), f"{path} missing on the server"
        assert path.stat().st_size == size, f"{path}: {path.stat().st_size} bytes on the server, want {size}"
        assert sha256_file(path) == want, f"{path}: server copy differs from what {res.name} wrote"


def check_xproto_on_server(server: NfsServerHandle, res: VmResult) -> None:
    """Each file an `xproto` step left, as the server keeps it (read by
    `server.server_copy`): the content both guest mounts agreed on."""
    if server.server_copy is None:
        return
    for step in res.steps:
        if step.scenario != "xproto" or not step.passed:
            continue
        for key, want in step.metrics.items():
            if not key.startswith("sha256_back."):
                continue
            size = key.split(".", 1)[1]
            rel = f"{res.name}/s{step.n}-xproto/f.{size}"
            got = server.server_copy(rel)
            assert got is not None, f"{rel} missing on {server.name}"
            assert got[1] == want, \
                f"{rel}: the copy on {server.name} differs from what both guest mounts read"


def timing_line(res: VmResult) -> str:
    parts = [f"{s.scenario} {s.vers} {s.seconds:.1f}s" for s in res.steps]
    return f"{res.name}: total {res.seconds:.1f}s, boots {res.attempts}; " + ", ".join(parts)


class KernelClient:
    """One kernel version, ready to boot as many VMs as a test needs."""

    def __init__(self, pod: Pod, version: str, workdir: Path, server: NfsServerHandle,
                 name: str) -> None:
        try:
            self.kernel = get_kernel(version)
        except KernelUnavailable as e:
            pytest.fail(str(e), pytrace=False)
        self.pod, self.workdir, self.server, self.name = pod, workdir, server, name
        self.vms: list[Vm] = []

    def next_vm_name(self) -> str:
        """The name the next VM gets: its run directory on the server too."""
        return self.name if not self.vms else f"{self.name}-{len(self.vms) + 1}"

    def vm(self, scenario: Scenario, **kw: object) -> Vm:
        """A prepared (not started) VM; each gets its own name, run directory
        on the server and NFSv4 client id."""
        vm = Vm(self.pod, self.kernel, self.workdir, self.next_vm_name(), self.server.target,
                scenario, **kw)  # type: ignore[arg-type]
        self.vms.append(vm)
        return vm

    def start(self, scenario: Scenario, **kw: object) -> Vm:
        return self.vm(scenario, **kw).start()

    def run(self, scenario: Scenario, **kw: object) -> VmResult:
        vm = self.vm(scenario, **kw)
        try:
            res = vm.run()
        finally:
            vm.kill()
        print(res.report())
        return res
