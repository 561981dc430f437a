"""Unit tests of the kernel-client harness itself (no VM is booted): the
mountstats parser on text captured from real guests, the cpio writer, module
ordering, the guest library's JSON output, scenario scripts."""
from __future__ import annotations

import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from pando_testing.initramfs import (CpioWriter, load_order, module_name, modinfo,
                                     read_cpio, scenario_archive)
from pando_testing.kernels import KERNELS, mirror_uri
from pando_testing.mountstats import KEY_OPS, ops_by_server, parse_mountstats
from pando_testing.vm import MountTarget, Scenario, guest_scripts

DATA = Path(__file__).parent / "data"
GUEST = Path(__file__).parent / "guest"


# ---- mountstats -------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["6.1", "7.x"])
def test_mountstats_parses_captured_guest_text(kernel: str) -> None:
    """Captured in a guest after reading a 1 MiB+1 file over v3 and over v4.1
    (each read after a remount, so WRITE counts are zero)."""
    text = (DATA / f"mountstats-{kernel}-v3-v41.txt").read_text()
    mounts = parse_mountstats(text)
    assert [(m.mountpoint, m.fstype) for m in mounts] == [("/mnt/v3", "nfs"), ("/mnt/v4.1", "nfs4")]
    v3, v41 = mounts
    assert v3.server == v41.server == "10.0.2.2"
    assert v41.export.startswith("/pando")
    assert v3.opts["vers"] == "3" and v41.opts["vers"] == "4.1"
    assert v41.nfsv4["pnfs"] == "not configured"
    assert v3.rpc_program == "100003/3 (nfs)"
    for m in mounts:
        assert m.bytes["serverreadbytes"] == 1048577
        assert m.count("READ") >= 2 and m.count("WRITE") == 0
        assert m.ops["READ"].bytes_recv > 1048577
        assert m.events["pnfsread"] == 0
        assert len(m.xprts) == 1 and m.xprts[0][0] == "tcp"
    for op in ("LAYOUTGET", "GETDEVICEINFO", "LAYOUTCOMMIT", "LAYOUTRETURN"):
        assert op in v41.ops and v41.count(op) == 0
        assert op not in v3.ops
    per = ops_by_server(text)
    assert list(per) == ["10.0.2.2"]
    assert set(per["10.0.2.2"]) == set(KEY_OPS)
    assert per["10.0.2.2"]["READ"] == v3.count("READ") + v41.count("READ")


def test_mountstats_pnfs_counts_per_server() -> None:
    """A hand-made pNFS block: LAYOUTGET etc. are counted per server; other
    file systems are skipped."""
    text = (
        "device proc mounted on /proc with fstype proc\n"
        "device 10.0.2.2:/pando mounted on /mnt/v4.1 with fstype nfs4 statvers=1.1\n"
        "\topts:\trw,vers=4.1\n"
        "\tnfsv4:\tbm0=0x1,sessions,pnfs=LAYOUT_FLEX_FILES,lease_time=60\n"
        "\tevents:\t" + " ".join(["0"] * 25) + " 3 9 \n"
        "\tper-op statistics\n"
        "\t        READ: 0 0 0 0 0 0 0 0 0\n"
        "\t       WRITE: 0 0 0 0 0 0 0 0 0\n"
        "\t   LAYOUTGET: 4 4 0 800 900 0 4 5 0\n"
        "\tGETDEVICEINFO: 2 2 0 300 400 0 2 2 0\n"
        "\tLAYOUTCOMMIT: 1 1 0 300 200 0 1 1 0\n"
        "\tLAYOUTRETURN: 1 1 0 300 200 0 1 1 1\n"
        "\n"
        "device 127.0.0.9:/other mounted on /mnt/o with fstype nfs statvers=1.1\n"
        "\tper-op statistics\n"
        "\t        READ: 7 7 0 1 2 0 0 0\n")
    mounts = parse_mountstats(text)
    assert len(mounts) == 2
    assert mounts[0].nfsv4["pnfs"] == "LAYOUT_FLEX_FILES"
    assert mounts[0].events["pnfsread"] == 3 and mounts[0].events["pnfswrite"] == 9
    assert mounts[0].ops["LAYOUTRETURN"].errors == 1
    assert mounts[1].ops["READ"].errors == 0   # statvers 1.0 lines have 8 numbers
    per = ops_by_server(mounts)
    assert per["10.0.2.2"] == {"LAYOUTGET": 4, "GETDEVICEINFO": 2, "LAYOUTCOMMIT": 1,
                               "LAYOUTRETURN": 1, "READ": 0, "WRITE": 0}
    assert per["127.0.0.9"]["READ"] == 7
    assert len(parse_mountstats(text, nfs_only=False)) == 3


# ---- cpio and modules -------------------------------------------------------

def test_cpio_round_trip_and_busybox_reads_it(tmp_path: Path) -> None:
    w = CpioWriter()
    w.dir("etc")
    w.file("etc/hello", b"hello\n")
    w.file("bin/run", b"#!/bin/sh\necho hi\n", 0o755)
    w.symlink("bin/sh", "busybox")
    w.chardev("dev/console", 5, 1)
    base = w.finish()
    assert len(base) % 512 == 0
    later = scenario_archive({"etc/hello": (b"replaced\n", 0o644), "pando/x.sh": (b"x", 0o644)})
    entries = read_cpio(base + later)
    assert entries["etc/hello"][1] == b"replaced\n"          # later archive wins
    assert entries["bin/run"][0] == 0o100755
    assert entries["bin/sh"] == (0o120777, b"busybox")
    assert entries["dev/console"][0] == 0o020600
    assert entries["pando/x.sh"][1] == b"x"
    with pytest.raises(ValueError):
        w2 = CpioWriter()
        w2.file("a", b"")
        w2.file("a", b"")
    # An independent reader: busybox cpio lists and extracts the first archive.
    (tmp_path / "a.cpio").write_bytes(base)
    out = subprocess.run(["busybox", "cpio", "-t", "-F", str(tmp_path / "a.cpio")],
                         capture_output=True, text=True, check=True)
    assert set(out.stdout.split()) >= {"etc", "etc/hello", "bin/run", "bin/sh", "dev/console"}


def _fake_module(path: Path, depends: str, xz: bool = False) -> None:
    """A minimal ELF64 file with a .modinfo section, as a kernel module has."""
    modinfo_data = f"license=GPL\0depends={depends}\0name={module_name(path)}\0".encode()
    shstr = b"\0.modinfo\0.shstrtab\0"
    data_off = 64
    shstr_off = data_off + len(modinfo_data)
    sh_off = (shstr_off + len(shstr) + 7) & ~7
    hdr = bytearray(64)
    hdr[:5] = b"\x7fELF\x02"
    struct.pack_into("<Q", hdr, 0x28, sh_off)
    struct.pack_into("<HHH", hdr, 0x3A, 64, 3, 2)
    body = bytes(hdr) + modinfo_data + shstr
    body += b"\0" * (sh_off - len(body))
    sects = bytes(64)
    sects += struct.pack("<IIQQQQIIQQ", 1, 1, 0, 0, data_off, len(modinfo_data), 0, 0, 1, 0)
    sects += struct.pack("<IIQQQQIIQQ", 10, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
    elf = body + sects
    path.parent.mkdir(parents=True, exist_ok=True)
    if xz:
        path.with_name(path.name + ".xz").write_bytes(lzma.compress(elf, format=lzma.FORMAT_XZ))
    else:
        path.write_bytes(elf)


def test_module_order_follows_depends(tmp_path: Path) -> None:
    k = tmp_path / "kernel"
    _fake_module(k / "net" / "sunrpc.ko", "")
    _fake_module(k / "fs" / "lockd.ko", "sunrpc,grace", xz=True)
    _fake_module(k / "fs" / "grace.ko", "")
    _fake_module(k / "fs" / "nfs.ko", "sunrpc,lockd", xz=True)
    _fake_module(k / "fs" / "nfsv4.ko", "nfs,sunrpc,dns-resolver")
    _fake_module(k / "net" / "dns_resolver.ko", "")
    assert modinfo((k / "fs" / "grace.ko").read_bytes())["depends"] == [""]
    order = [name for name, _ in load_order(tmp_path, ["virtio_pci", "nfsv4"])]
    assert order == ["sunrpc", "grace", "lockd", "nfs", "dns_resolver", "nfsv4"]
    # decompressed .ko.xz contents are what goes into the image
    elf = dict(load_order(tmp_path, ["lockd"]))["lockd"]
    assert elf[:4] == b"\x7fELF"
    _fake_module(k / "fs" / "broken.ko", "not_there")
    with pytest.raises(FileNotFoundError, match="not_there"):
        load_order(tmp_path, ["broken"])


# ---- guest library -----------------------------------------------------------

def _guest_sh(tmp_path: Path, script: str) -> str:
    busybox = shutil.which("busybox")
    assert busybox, "busybox-static is needed (ci/install-deps)"
    cp = subprocess.run([busybox, "sh", "-c", f". {GUEST / 'lib.sh'}; cd {tmp_path}; {script}"],
                        capture_output=True, text=True, check=True)
    return cp.stdout


def test_guest_json_strings_parse(tmp_path: Path) -> None:
    nasty = "quote \" backslash \\ tab \t bell \a utf8 \u00e9\nsecond line"
    (tmp_path / "in").write_text(nasty)
    out = _guest_sh(tmp_path, "json_str < in")
    assert json.loads(out) == nasty.replace("\a", "?").replace("\u00e9", "??")


def test_guest_metrics_become_json(tmp_path: Path) -> None:
    out = _guest_sh(tmp_path, ": > /tmp/metrics; metric a 1; metric b 2.50; metric c 007x; "
                              "metric sha256.1 9defb0a9; metric d -3; metrics_json; rm -f /tmp/metrics")
    assert json.loads(out) == {"a": 1, "b": 2.5, "c": "007x", "sha256.1": "9defb0a9", "d": -3}


def test_guest_timing_gives_seconds_and_rate(tmp_path: Path) -> None:
    out = _guest_sh(tmp_path, ": > /tmp/metrics; timing create 500 10.25 12.75; "
                              "timing unlink 3 5.0 5.0; metrics_json; rm -f /tmp/metrics")
    assert json.loads(out) == {"create_s": 2.5, "creates_per_s": 200.0,
                               "unlink_s": 0.0, "unlinks_per_s": 3000.0}


def test_guest_opcount_reads_mountstats(tmp_path: Path) -> None:
    """opcount (the lock and open-state scenarios count their calls with it)
    on text captured in a guest: one operation's count on the step's mount."""
    text = (DATA / "mountstats-7.x-v3-v41.txt").read_text()
    mounts = {m.mountpoint: m for m in parse_mountstats(text)}
    (tmp_path / "ms").write_text(text)
    for vers in ("v3", "v4.1"):
        out = _guest_sh(tmp_path, f"MOUNTSTATS=ms VERS={vers}; opcount READ; opcount LOCK; opcount NOSUCHOP")
        m = mounts[f"/mnt/{vers}"]
        assert out.split() == [str(m.count("READ")), str(m.count("LOCK") if "LOCK" in m.ops else 0), "0"]
        assert m.count("READ") > 0


def test_guest_must_fail_and_eq(tmp_path: Path) -> None:
    out = _guest_sh(tmp_path, "( must_fail 'No such file' cat nothing ) && echo ok1; "
                              "( must_fail 'Permission denied' cat nothing ) || echo refused2; "
                              "( must_fail 'x' true ) || echo refused3; "
                              "( eq what 1 1 ) && echo ok4; ( eq what 1 2 ) || echo refused5")
    assert "ok1" in out and "refused2" in out and "refused3" in out
    assert "FAIL: 'cat nothing' failed with 'cat: can't open 'nothing': No such file or directory', " \
           "want 'Permission denied'" in out
    assert "FAIL: 'true' succeeded, want it to fail with 'x'" in out
    assert "ok4" in out and "FAIL: what: got '1', want '2'" in out and "refused5" in out


def _unpack_guest_scripts(root: Path) -> str:
    """The guest's scripts laid out under ROOT as in the archive; returns
    /init's own lines that read the runtime and the catalogue, pointed at ROOT."""
    for path, (data, _) in guest_scripts().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    init = (root / "init").read_text()
    start = init.index(". /pando/lib.sh")
    return init[start:init.index("pando_main", start)].replace("/pando/", f"{root}/pando/")


def test_guest_archive_defines_every_scenario_once(tmp_path: Path) -> None:
    """The runtime (lib.sh) holds no scenario; the guest's files define each
    function once (no catalogue file redefines another's helper); what /init
    sources from the archive defines every scenario, and each one a test
    steps through."""
    sources = _unpack_guest_scripts(tmp_path)
    runtime = re.findall(r"^(\w+)\(\)", (tmp_path / "pando/lib.sh").read_text(), re.M)
    assert runtime and not [f for f in runtime if f.startswith("sc_")]
    catalogue = [name for sh in sorted((tmp_path / "pando/scenarios").glob("*.sh"))
                 for name in re.findall(r"^(\w+)\(\)", sh.read_text(), re.M)]
    functions = runtime + catalogue
    assert len(functions) == len(set(functions)), sorted(functions)
    defined = [f.removeprefix("sc_") for f in catalogue if f.startswith("sc_")]
    tests = Path(__file__).parents[1]
    used = {name for py in tests.rglob("*.py")
            for name in re.findall(r'\.step\("(\w+)"', py.read_text())}
    wanted = sorted(set(defined) | used)
    assert "verify" in used and "locks" in used
    out = _guest_sh(tmp_path, sources + "".join(
        f"type sc_{name} > /dev/null 2>&1 || echo 'no sc_{name}'; " for name in wanted))
    assert out == ""


# ---- ptool (the guest's C helper) -----------------------------------------------

@pytest.fixture(scope="module")
def ptool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pando_testing.vm import guest_tool
    data = guest_tool("ptool.c")
    assert data[:4] == b"\x7fELF", data[:300]
    path = tmp_path_factory.mktemp("ptool") / "ptool"
    path.write_bytes(data)
    path.chmod(0o755)
    return path


def _run(*argv: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)


def _lock_holder(ptool: Path, tmp_path: Path, *lock_args: str) -> subprocess.Popen[str]:
    """`ptool lock LOCK_ARGS f` holding its lock until tmp_path/release appears;
    returns once it holds it (tmp_path/held)."""
    holder = subprocess.Popen([ptool, "lock", *lock_args, "f", "sh", "-c",
                               "touch held; while [ ! -e release ]; do sleep 0.02; done"],
                              cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    for _ in range(500):
        if (tmp_path / "held").exists():
            break
        time.sleep(0.01)
    return holder


def test_ptool_locks_conflict_between_processes(ptool: Path, tmp_path: Path) -> None:
    holder = _lock_holder(ptool, tmp_path, "-x", "-r", "0:100")
    try:
        cp = _run(ptool, "lock", "-n", "-x", "f", cwd=tmp_path)
        assert cp.returncode == 1
        assert cp.stderr == "ptool lock: posix W 0:0 f: Resource temporarily unavailable\n"
        assert _run(ptool, "lock", "-n", "-x", "-r", "100:10", "f", cwd=tmp_path).returncode == 0
        got = _run(ptool, "lock", "-g", "-r", "50:1", "f", cwd=tmp_path).stdout
        assert got == f"conflict W 0:100 pid {holder.pid}\n"
        cp = _run(ptool, "lock", "-t", "1", "-s", "f", cwd=tmp_path)
        assert cp.returncode == 2 and "still waiting after 1 s" in cp.stderr
    finally:
        (tmp_path / "release").touch()
        holder.wait(10)
    assert holder.stdout is not None and holder.stdout.read().startswith("locked posix W 0:100 waited ")
    assert _run(ptool, "lock", "-g", "f", cwd=tmp_path).stdout == "free\n"


@pytest.mark.parametrize("kind", ["flock", "ofd"])
def test_ptool_flock_and_ofd_locks_conflict_between_processes(ptool: Path, tmp_path: Path,
                                                              kind: str) -> None:
    """A shared lock held by one process: another shares it, but cannot take
    it exclusively; F_OFD_GETLK names the open file's lock (pid -1)."""
    holder = _lock_holder(ptool, tmp_path, "-k", kind, "-s")
    try:
        cp = _run(ptool, "lock", "-k", kind, "-n", "-s", "f", cwd=tmp_path)
        assert cp.returncode == 0 and cp.stdout.startswith(f"locked {kind} R 0:0 waited "), cp
        cp = _run(ptool, "lock", "-k", kind, "-n", "-x", "f", cwd=tmp_path)
        assert (cp.returncode, cp.stderr) == (1, f"ptool lock: {kind} W 0:0 f: "
                                                 "Resource temporarily unavailable\n")
        if kind == "ofd":
            got = _run(ptool, "lock", "-k", "ofd", "-g", "-r", "7:1", "f", cwd=tmp_path).stdout
            assert got == "conflict R 0:0 pid -1\n"
    finally:
        (tmp_path / "release").touch()
        holder.wait(10)
    assert holder.stdout is not None and holder.stdout.read().startswith(f"locked {kind} R 0:0 waited ")
    assert _run(ptool, "lock", "-k", kind, "-n", "-x", "f", cwd=tmp_path).returncode == 0


def test_ptool_lock_refuses_bad_requests(ptool: Path, tmp_path: Path) -> None:
    """F_GETLK has no flock form; an unknown kind or range, no file: usage, exit 3."""
    for args in (["-g", "-k", "flock", "f"], ["-k", "fcntl", "f"], ["-r", "1-2", "f"], ["-x"]):
        cp = _run(ptool, "lock", *args, cwd=tmp_path)
        assert cp.returncode == 3 and cp.stderr.startswith("usage: ptool lock "), (args, cp.stderr)
    cp = _run(ptool, "lock", "-s", "missing/f", cwd=tmp_path)
    assert (cp.returncode, cp.stderr) == (3, "ptool lock: open missing/f: No such file or directory\n")


def test_ptool_rename_ls_as(ptool: Path, tmp_path: Path) -> None:
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    (tmp_path / "d2" / "x").write_text("x")
    (tmp_path / "z").write_text("z")
    cp = _run(ptool, "rename", "d1", "d2", cwd=tmp_path)
    assert cp.returncode == 1 and cp.stderr == "rename d1 d2: Directory not empty\n"
    assert _run(ptool, "rename", "z", "d1", cwd=tmp_path).stderr == "rename z d1: Is a directory\n"
    assert _run(ptool, "rename", "d1", "z", cwd=tmp_path).stderr == "rename d1 z: Not a directory\n"
    assert _run(ptool, "rename", "z", "y", cwd=tmp_path).returncode == 0
    assert sorted(_run(ptool, "ls", ".", cwd=tmp_path).stdout.split()) == [".", "..", "d1", "d2", "y"]
    if os.geteuid() == 0:
        assert _run(ptool, "as", "1234", "5678", "id", "-u", cwd=tmp_path).stdout == "1234\n"


def test_ptool_io_on_one_descriptor(ptool: Path, tmp_path: Path) -> None:
    cp = _run(ptool, "io", "f", "w:5:3", "s", "r:4:6", "t:6", "s", "r:4:6", "f", "r:100:1",
              cwd=tmp_path)
    assert (cp.returncode, cp.stdout) == (0, "w 5 3\ns 8\nr 4 00050607\nt 6\ns 6\nr 4 0005\nf\nr 100 -\n")
    cp = _run(ptool, "io", "f", "s", "t:-1", "s", cwd=tmp_path)
    assert (cp.returncode, cp.stdout) == (1, "s 6\nt:-1: Invalid argument\n")
    assert _run(ptool, "io", "f", "x", cwd=tmp_path).returncode == 3
    cp = _run(ptool, "io", "-r", "f", "r:0:8", "w:0", cwd=tmp_path)
    assert (cp.returncode, cp.stdout) == (1, "r 0 000000000005\nw:0: Bad file descriptor\n")
    assert _run(ptool, "io", "-r", "g", "s", cwd=tmp_path).stdout == "open g: No such file or directory\n"


def test_scenario_script_quotes_arguments() -> None:
    sc = Scenario().step("verify", "v3", 0, 1).step("sh", "v4.1", "echo 'a b'; ls")
    assert len(sc) == 2
    assert sc.script().splitlines()[1:] == [
        "step verify v3 0 1", "step sh v4.1 'echo '\"'\"'a b'\"'\"'; ls'"]


def test_mount_target_params() -> None:
    t = MountTarget(port=2050, export3="/srv/x", export4="/x")
    assert t.params() == {"PANDO_SERVER": "10.0.2.2", "PANDO_PORT": "2050",
                          "PANDO_MOUNTPORT": "20048", "PANDO_EXPORT3": "/srv/x",
                          "PANDO_EXPORT4": "/x"}


def test_kernel_specs_and_mirror_from_apt_sources() -> None:
    assert list(KERNELS) == ["6.1", "6.12", "7.x"]
    assert KERNELS["7.x"].suites == ("sid", "trixie-backports")
    assert mirror_uri().startswith(("http://", "https://"))


# ---- the runner, with a fake qemu --------------------------------------------

FAKE_QEMU = r'''#!/usr/bin/env python3
import os, sys, time
args = sys.argv[1:]
res = next(a.split("path=", 1)[1] for a in args if a.startswith("file,id=res,"))
con = next(a.split("path=", 1)[1] for a in args if a.startswith("file,id=con,"))
count_file = os.environ["FAKE_QEMU_COUNT"]
n = int(open(count_file).read() or 0) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(n))
mode = os.environ["FAKE_QEMU_MODE"]
open(con, "a").write(f"fake boot {n}\n")
if mode == "die-before-init" or (mode == "die-once" and n == 1):
    sys.exit(1)
if mode == "hang-before-init":
    time.sleep(60)
with open(res, "a") as f:
    f.write('PANDO {"event":"init","kernel":"fake"}\r\n')
    f.flush()
    if mode == "hang-after-init":
        time.sleep(60)
    f.write('PANDO {"event":"step","n":1,"scenario":"verify","vers":"v3","args":"1","status":"fail",'
            '"rc":1,"seconds":0.1,"metrics":{"x":1},"output":"sha256 mismatch for f.1 (v3)"}\r\n')
    f.write('PANDO {"event":"done","steps":1,"failed":1}\r\n')
'''


@pytest.fixture
def fake_vm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from pando_testing.kernels import Kernel
    from pando_testing.vm import Vm
    root = tmp_path / "kernel"
    (root / "lib" / "modules" / "0.0-fake" / "kernel").mkdir(parents=True)
    kernel = Kernel("fake", "0.0-1", "0.0-fake", root, ("linux-image-fake",))
    qemu = tmp_path / "qemu"
    qemu.write_text(FAKE_QEMU)
    qemu.chmod(0o755)
    monkeypatch.setenv("FAKE_QEMU_COUNT", str(tmp_path / "count"))

    def make(mode: str, timeout: float = 20) -> Vm:
        monkeypatch.setenv("FAKE_QEMU_MODE", mode)
        return Vm(None, kernel, tmp_path / "vm", f"fake-{mode}", MountTarget(), Scenario(),
                  timeout=timeout, accel="tcg", qemu=str(qemu))
    return make


def test_runner_retries_a_boot_that_dies_before_init(fake_vm) -> None:
    res = fake_vm("die-once").run()
    assert res.attempts == 2 and res.done and not res.timed_out
    assert res.step("verify", "v3").output == "sha256 mismatch for f.1 (v3)"
    assert res.step("verify").metrics == {"x": 1}
    assert not res.ok and "sha256 mismatch for f.1 (v3)" in res.report()
    first = res.console_log.with_name(res.console_log.name + ".attempt1")
    assert first.read_text() == "fake boot 1\n"


def test_runner_gives_up_after_one_retry(fake_vm) -> None:
    res = fake_vm("die-before-init").run()
    assert res.attempts == 2 and not res.reached_init and not res.ok
    assert "never reached /init" in res.report()


def test_runner_timeout_before_init_is_retried_after_is_not(fake_vm) -> None:
    res = fake_vm("hang-before-init", timeout=1.5).run()
    assert res.attempts == 2 and res.timed_out
    res = fake_vm("hang-after-init", timeout=1.5).run()
    assert res.attempts == 1 and res.timed_out and res.reached_init and not res.done
    assert "timed out" in res.report()


# ---- the kernel cache ---------------------------------------------------------

def test_cached_kernel_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    from pando_testing.kernels import KernelCache
    cache = KernelCache()
    cache.get("6.1")  # downloads once on a machine that has no cache yet

    def no_apt(*args: object, **kw: object) -> str:
        raise AssertionError(f"apt was run for a cached kernel: {args}")
    monkeypatch.setattr(KernelCache, "_apt", no_apt)
    k = cache.get("6.1")
    assert k.vmlinuz.exists() and (k.modules_dir / "kernel").is_dir()
    assert k.release in cache.manifest()["6.1"]["release"]


def test_unfetchable_kernel_is_reported_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pando_testing import kernels
    monkeypatch.setattr(kernels, "mirror_uri", lambda: "http://127.0.0.1:9/debian")
    opts = kernels.KernelCache._apt_opts
    monkeypatch.setattr(kernels.KernelCache, "_apt_opts",
                        lambda self: [*opts(self), "-o", "Acquire::Retries=0"])
    with pytest.raises(kernels.KernelUnavailable) as e:
        kernels.KernelCache(tmp_path / "cache").get("6.12")
    msg = str(e.value)
    assert "kernel 6.12 is not cached" in msg and "cannot be fetched" in msg
    assert "python3 -m pando_testing.kernels fetch 6.12" in msg
