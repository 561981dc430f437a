"""cluster/systemd's units pass `systemd-analyze verify` and are sandboxed
(systemd 252 works offline, without systemd as init).  verify also wants each ExecStart
binary to exist: the test's pod mounts a tmpfs on /usr/local/bin holding
stand-ins, so the machine's own /usr/local/bin is never touched."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pando_testing.pod import Pod, repo_root

UNITS = repo_root() / "cluster" / "systemd"
VERIFY = shutil.which("systemd-analyze")
# `systemd-analyze security` (offline too) scores a unit's exposure, 0
# (locked down) to 10 (UNSAFE, where a unit with no sandboxing lands).  The
# OSD and the mgr need no privilege at all; Ganesha stays root
# (pando-mds.service says why), so it scores higher.
MAX_EXPOSURE = {"pando-osd@.service": 2.0, "pando-mgr.service": 2.0,
                "pando-mds.service": 4.5}


def _units_dir(tmp_path: Path) -> Path:
    d = tmp_path / "units"
    shutil.copytree(UNITS, d)
    shutil.copy("/lib/systemd/system/etcd.service", d / "etcd.service")
    return d


def _verify(pod: Pod, d: Path, *units: str) -> str:
    cp = pod.run(["sh", "-c", ('cd "$1" && shift && SYSTEMD_UNIT_PATH="$PWD:" '
                  'systemd-analyze verify "$@"'), "sh", str(d), *units], check=False)
    return (cp.stdout + cp.stderr).strip() + ("" if cp.returncode == 0 else
                                              f"\n(exit {cp.returncode})")


@pytest.mark.skipif(VERIFY is None or not Path("/lib/systemd/system/etcd.service").exists(),
                    reason="needs systemd-analyze and Debian's etcd-server")
def test_units_pass_systemd_analyze_verify(pod: Pod, tmp_path: Path) -> None:
    pod.run(["mount", "-t", "tmpfs", "stand-ins", "/usr/local/bin"])
    for exe in ("pando-osd", "pando-mgr", "pando", "pando-cluster"):
        pod.run(["sh", "-c", (f"printf '#!/bin/sh\\n' > /usr/local/bin/{exe} && "
                 f"chmod 755 /usr/local/bin/{exe}")])
    d = _units_dir(tmp_path)
    assert _verify(pod, d, "pando-osd@3.service", "pando-mgr.service", "pando-mds.service",
                   "pando.target", "etcd.service") == ""
    # the etcd drop-in is read: a broken copy of it is reported
    (d / "etcd.service.d" / "zz-broken.conf").write_text("[Service]\nExecStartPre=relative/x\n")
    assert "zz-broken.conf:2" in _verify(pod, d, "etcd.service")


def exposure(unit: Path) -> float:
    cp = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager",
                         str(unit)], capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", cp.stdout + cp.stderr)
    assert m, cp.stdout + cp.stderr
    return float(m.group(1))


@pytest.mark.skipif(VERIFY is None, reason="needs systemd-analyze")
@pytest.mark.parametrize("unit", sorted(MAX_EXPOSURE))
def test_every_daemon_unit_is_sandboxed(unit: str) -> None:
    assert exposure(UNITS / unit) <= MAX_EXPOSURE[unit]


@pytest.mark.parametrize("unit", ["pando-osd@.service", "pando-mgr.service"])
def test_the_osd_and_the_mgr_run_as_pando_without_capabilities(unit: str) -> None:
    lines = (UNITS / unit).read_text().splitlines()
    assert "User=pando" in lines and "CapabilityBoundingSet=" in lines
    assert "NoNewPrivileges=yes" in lines
    users = (UNITS / "pando.sysusers").read_text()
    assert re.search(r"^u pando ", users, re.M)


def test_reloading_an_osd_sends_it_sighup_which_rereads_its_key() -> None:
    """tests/osd/test_key_reload.py holds what SIGHUP does."""
    lines = (UNITS / "pando-osd@.service").read_text().splitlines()
    assert "ExecReload=/bin/kill -HUP $MAINPID" in lines


def test_reloading_the_manager_rereads_its_key_over_dbus() -> None:
    """tests/mds/test_manager_key_reload.py holds what reload_key does."""
    lines = (UNITS / "pando-mds.service").read_text().splitlines()
    assert "ExecReload=/usr/local/bin/pando mds reload-key" in lines
