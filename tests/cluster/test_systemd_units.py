"""cluster/systemd's units pass `systemd-analyze verify` (systemd 252 works
offline, without systemd as init).  verify also wants each ExecStart
binary to exist: the test's pod mounts a tmpfs on /usr/local/bin holding
stand-ins, so the machine's own /usr/local/bin is never touched."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pando_testing.pod import Pod, repo_root

UNITS = repo_root() / "cluster" / "systemd"
VERIFY = shutil.which("systemd-analyze")


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
    for exe in ("pando-osd", "pando-mgr"):
        pod.run(["sh", "-c", (f"printf '#!/bin/sh\\n' > /usr/local/bin/{exe} && "
                 f"chmod 755 /usr/local/bin/{exe}")])
    d = _units_dir(tmp_path)
    assert _verify(pod, d, "pando-osd@3.service", "pando-mgr.service", "pando-mds.service",
                   "pando.target", "etcd.service") == ""
    # the etcd drop-in is read: a broken copy of it is reported
    (d / "etcd.service.d" / "zz-broken.conf").write_text("[Service]\nExecStartPre=relative/x\n")
    assert "zz-broken.conf:2" in _verify(pod, d, "etcd.service")
