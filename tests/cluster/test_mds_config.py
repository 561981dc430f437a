"""The metadata manager's generated files, Ganesha's Bind_Addr resolution,
the error lines `up` quotes from Ganesha's log, and rpc.statd's state
directory and arguments: no daemons needed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pando_cluster.mds import ganesha_errors
from pando_cluster.mds_config import (
    MdsPaths,
    mirrors_for,
    render_cluster_conf,
    render_dbus_conf,
    render_ganesha_conf,
)
from pando_cluster.state import OsdRecord
from pando_cluster.statd import notify_argv, prepare_state_dir, statd_argv
from pando_testing.pod import Pod


def _osd(i: int, host: str = "127.0.0.1") -> OsdRecord:
    return OsdRecord(osd_id=i, nfs_addr=f"{host}:{20490 + i}", ctl_addr=f"{host}:{20590 + i}",
                     data_dir=f"/c/osd.{i}", conf=f"/c/osd.{i}.conf", log=f"/c/osd.{i}.log")


def test_ganesha_conf_serves_pando_on_loopback() -> None:
    conf = render_ganesha_conf(MdsPaths(Path("/c")), "127.0.0.1", 2049, 20048,
                               Path("/repo/build/ganesha-fsal/fsal"), mirrors=2)
    lines = [x.strip() for x in conf.splitlines()]
    for want in ("NFS_Port = 2049;", "MNT_Port = 20048;", "NFS_Protocols = 3, 4;",
                 "Enable_NLM = true;", "Enable_RQUOTA = true;", "Rquota_Port = 875;",
                 "Enable_UDP = mount;",
                 "Bind_Addr = 127.0.0.1;", 'Plugins_Dir = "/repo/build/ganesha-fsal/fsal";',
                 "Minor_Versions = 1, 2;", "PNFS_MDS = true;", "Lease_Lifetime = 30;",
                 "Grace_Period = 45;", "Graceless = false;", 'RecoveryRoot = "/c/mds/recovery";',
                 "Only_Numeric_Owners = true;", "Active_krb5 = false;",
                 "Default_Log_Level = EVENT;", "Export_Id = 1;",
                 'Path = "/pando";', 'Pseudo = "/pando";', "Protocols = 3, 4;",
                 "Transports = TCP;", "Access_Type = RW;", "Squash = Root_Squash;",
                 "Anonymous_Uid = 65534;", "Anonymous_Gid = 65534;",
                 "Clients = 127.0.0.1, ::1;", "Squash = No_Root_Squash;",
                 "SecType = sys;", "Name = PANDO;", 'Db_Path = "/c/mds/ns";',
                 'Cluster = "/c/cluster.conf";', "Inline_Max = 65536;", "Mirrors = 2;",
                 "Stripe_Unit = 1048576;", "Pnfs = true;"):
        assert want in lines, want
    assert conf.count("{") == conf.count("}") == 7


def test_cluster_conf_lists_each_osd_and_dials_loopback_for_a_wildcard() -> None:
    desc = render_cluster_conf(Path("/c/cluster.key"), [_osd(2), _osd(1)])
    assert desc.splitlines()[1:] == [
        "key_file = /c/cluster.key", "partition = 1",
        "osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491",
        "osd 2 ctl=127.0.0.1:20592 nfs=127.0.0.1:20492"]
    assert "osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491" in \
        render_cluster_conf(Path("/k"), [_osd(1, "0.0.0.0")])
    assert "osd 1 ctl=[::1]:20591 nfs=[::1]:20491" in \
        render_cluster_conf(Path("/k"), [_osd(1, "[::]")])


def test_mirrors_and_dbus_policy() -> None:
    assert [mirrors_for(n) for n in (1, 2, 3, 8)] == [1, 2, 2, 2]
    conf = render_dbus_conf(Path("/c/mds/dbus.sock"))
    assert "<listen>unix:path=/c/mds/dbus.sock</listen>" in conf
    assert '<allow own="*"/>' in conf
    assert '<allow user="root"/>' in conf and 'user="*"' not in conf


def test_ganesha_bind_addr_resolution_in_a_fresh_network_namespace() -> None:
    """With only 127.0.0.1 on lo, Ganesha 4.3 cannot resolve Bind_Addr =
    127.0.0.1 (AI_ADDRCONFIG); with a second IPv4 address but no IPv6 one it
    binds to every address."""
    probe = (f"{sys.executable} -c 'from pando_cluster.net import ganesha_listen_addr as g; "
             f"print(g(\"127.0.0.1\"))'")
    cp = subprocess.run(["unshare", "--net", "sh", "-ec",
                         f"ip link set lo up; {probe}; ip addr add 127.0.0.2/8 dev lo; {probe}"],
                        capture_output=True, text=True, timeout=30, check=False)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.split() == ["None", "::"]


def test_ganesha_errors_skips_kerberos_callback_noise(tmp_path: Path) -> None:
    pre = "22/11/2026 05:24:10 : epoch 6b027c5c : vm : ganesha.nfsd-1[main]"
    log = tmp_path / "ganesha.log"
    log.write_text("\n".join([
        f"{pre} main :MAIN :EVENT :ganesha.nfsd Starting: Ganesha Version 4.3",
        f"{pre} open_cluster :FSAL :CRIT :pando: cannot set up the OSDs: Invalid argument",
        f"{pre} gssd_refresh_krb5_machine_credential :NFS CB :CRIT :ERROR: no keytab",
        f"{pre} load_fsal :NFS STARTUP :FATAL :Could not dlopen module",
    ]) + "\n")
    assert ganesha_errors(log) == [
        "open_cluster :FSAL :CRIT :pando: cannot set up the OSDs: Invalid argument",
        "load_fsal :NFS STARTUP :FATAL :Could not dlopen module"]
    assert ganesha_errors(tmp_path / "missing.log") == []


def test_statd_state_dir_turns_the_monitor_list_into_the_notify_list(tmp_path: Path) -> None:
    d = tmp_path / "statd"
    prepare_state_dir(d)
    assert sorted(p.name for p in d.iterdir()) == ["sm", "sm.bak"]
    (d / "sm" / "client-a").write_text("monitored by the last instance\n")
    (d / "sm.bak" / "client-b").write_text("not yet notified\n")
    prepare_state_dir(d)
    assert list((d / "sm").iterdir()) == []
    assert sorted(p.name for p in (d / "sm.bak").iterdir()) == ["client-a", "client-b"]
    assert statd_argv("/sbin/rpc.statd", d) == ["/sbin/rpc.statd", "-F", "-d", "-L", "-P",
                                                str(d)]
    assert notify_argv("/sbin/sm-notify", d, "127.0.0.1") == [
        "/sbin/sm-notify", "-d", "-f", "-P", str(d), "-v", "127.0.0.1"]
    assert notify_argv("/sbin/sm-notify", d, None)[-1] == str(d)


def test_nsm_steps_of_the_mds_unit_prepare_and_refuse_without_ganesha(
        pod: Pod, tmp_path: Path) -> None:
    """pando-mds.service's ExecStartPre and ExecStartPost (the whole path
    with Ganesha: test_multihost.py).  Without an NLM to reclaim from,
    notify tells nobody and says so."""
    d = tmp_path / "nfs"
    (d / "sm").mkdir(parents=True)
    (d / "sm" / "client-a").write_text("monitored by the last instance\n")
    cli = [sys.executable, "-m", "pando_cluster.cli", "nsm"]
    cp = pod.run([*cli, "prepare", str(d)])
    assert "1 NFSv3 host(s) to notify" in cp.stdout, cp.stdout
    assert [p.name for p in (d / "sm.bak").iterdir()] == ["client-a"]
    assert notify_argv("/sbin/sm-notify", d, None, foreground=False) == [
        "/sbin/sm-notify", "-f", "-P", str(d)]
    cp = pod.run([*cli, "notify", str(d), "--timeout", "1"], check=False)
    assert cp.returncode == 1 and "NLM did not answer" in cp.stdout, cp.stdout
    assert [p.name for p in (d / "sm.bak").iterdir()] == ["client-a"]
