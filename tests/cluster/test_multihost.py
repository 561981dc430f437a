"""A three-host deployment, the way cluster/README.md tells an admin to do
it, on this machine: each "host" is a pod (network + mount namespace) with
its own address on a bridge the test makes in a fourth pod (10.77.0.1-3,
a client at .10).  One pando.conf lists the hosts; `pando-cluster render`
writes each host's files; each host's daemons start from those files with
the command lines the installed systemd units hold (ExecStart=,
Environment= and EnvironmentFile= read from the units, since systemd
itself cannot run here).  Every Pando file the hosts run is installed:
the build's install rules run into a staging root first (`DESTDIR=ROOT
cmake --install`, what the packages hold), and the units' paths are
mapped there, /etc/pando/ to each host's directory:

  host1: etcd, osd.1-2, Ganesha with the FSAL, pando-mgr
  host2: etcd, osd.3-4, pando-mgr
  host3: etcd, osd.5-6

It checks a quorum of three, every OSD's presence in etcd, the map with
all six up, NFSv3 through Ganesha from the client, and that with host3's
etcd member killed the cluster goes on; then stops everything by pid."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pando_cluster import tool
from pando_cluster.conf_file import parse
from pando_cluster.etcd import stopped_cleanly
from pando_cluster.statd import SYSTEM_STATE_DIR, statd_argv
from pando_testing.etcd import EtcdClient
from pando_testing.logs import keep_logs
from pando_testing.mgr import MgrApi
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, Nfs3Client
from pando_testing.nfs3_setup import Nfs3Setup, mount_root
from pando_testing.pod import Pod, build_dir

DEBIAN_ETCD_UNIT = Path("/lib/systemd/system/etcd.service")
NET = "10.77.0"
HOSTS = {"host1": f"{NET}.1", "host2": f"{NET}.2", "host3": f"{NET}.3"}
CLIENT = f"{NET}.10"
SERVICE_ADDRESS = f"{NET}.50/24"

PANDO_CONF = """\
[cluster]
name = multihost
key_file = {root}/cluster.key

[etcd]
data_dir = {root}/{{host}}/etcd

[osd]
data_dir = {root}/{{host}}/osd.{{id}}

[mds]
db_path = {root}/{{host}}/mds/ns
recovery_root = {root}/{{host}}/mds/recovery
plugins_dir = {plugins}

[mgr]
url = http://{net}.1:7480

# The client machine's root writes as root (everyone else's is nobody).
[clients client]
hosts = {net}.10
squash = no_root_squash

[host host1]
address = {net}.1
osds = 1, 2
mds = yes
mgr = yes
etcd = yes

[host host2]
address = {net}.2
osds = 3, 4
mgr = yes
etcd = yes

[host host3]
address = {net}.3
osds = 5, 6
etcd = yes
"""


# ---- the units' command lines ------------------------------------------------

def _unit_lines(path: Path) -> list[tuple[str, str]]:
    """(key, value) of a unit file's [Service] section, in order."""
    out, section = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out.append((key.strip(), value.strip()))
    return out


def _env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if "=" in line and not line.lstrip().startswith("#"))


@dataclass(frozen=True)
class Installed:
    """What the build's install rules put under root (DESTDIR), where a
    host gets it from the packages under /."""
    root: Path
    python_dir: Path  # where pando_mgr and pando_cluster went

    def path(self, installed: str) -> Path:
        return self.root / installed.lstrip("/")

    def one(self, pattern: str) -> Path:
        found = sorted(self.root.glob(pattern))
        assert len(found) == 1, f"{pattern} installed {len(found)} times: {found}"
        return found[0]

    def unit(self, name: str) -> Path:
        return self.one(f"**/systemd/**/{name}")

    def bin(self, name: str) -> str:
        """The path a host runs the installed command at."""
        return "/" + str(self.one(f"**/bin/{name}").relative_to(self.root))

    def command(self, installed: str) -> tuple[list[str], dict[str, str]]:
        """argv and environment that run an installed command.  Its Python
        scripts run under this interpreter, importing the installed
        packages: DESTDIR moved them off python3's path."""
        exe = self.path(installed)
        assert exe.is_file(), f"{installed} is not installed"
        with open(exe, "rb") as f:
            if b"python" not in f.readline():
                return [str(exe)], {}
        return [sys.executable, str(exe)], {"PYTHONPATH": str(self.python_dir)}


def install(root: Path) -> Installed:
    subprocess.run(["cmake", "--install", str(build_dir())], check=True, capture_output=True,
                   env={**os.environ, "DESTDIR": str(root)})
    found = sorted(root.glob("**/pando_mgr/__init__.py"))
    assert len(found) == 1, found
    inst = Installed(root, found[0].parent.parent)
    argv, env = inst.command(inst.bin("pando-cluster"))
    where = subprocess.run([argv[0], "-c", "import pando_cluster, pando_mgr; "
                            "print(pando_cluster.__file__, pando_mgr.__file__)"],
                           env={**os.environ, **env}, capture_output=True, text=True,
                           check=True).stdout.split()
    assert all(Path(w).is_relative_to(root) for w in where), where
    return inst


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return install(tmp_path_factory.mktemp("installed"))


@dataclass
class HostPaths:
    """Where a test host keeps what a real one has under /etc/pando and
    /var/log/ganesha, and where its installed files are."""
    name: str
    etc: Path
    logs: Path
    installed: Installed

    def local(self, s: str) -> str:
        return s.replace("/etc/pando/", f"{self.etc}/").replace(
            "/var/log/ganesha/", f"{self.logs}/")


def unit_command(units: list[Path], host: HostPaths, instance: str = "",
                 key: str = "ExecStart") -> tuple[list[str], dict[str, str]]:
    """ExecStart= (or `key`: ExecStartPre=, ...) of a unit and its drop-ins,
    with systemd's Environment= and EnvironmentFile= applied ($VAR split
    into words, ${VAR} one word), %i and %H expanded, a leading "-" (failure
    ignored) dropped, and the installed paths mapped to the test's.
    Optional environment files outside /etc/pando (Debian's
    /etc/default/etcd) are this machine's, not the host's: skipped."""
    env: dict[str, str] = {}
    exec_start = ""
    for unit in units:
        for k, value in _unit_lines(unit):
            value = value.replace("%i", instance).replace("%H", host.name)
            if k == "Environment":
                for word in shlex.split(value):
                    k, v = word.split("=", 1)
                    env[k] = v
            elif k == "EnvironmentFile":
                optional, path = value.startswith("-"), value.lstrip("-")
                if optional and not path.startswith("/etc/pando/"):
                    continue
                env.update(_env_file(Path(host.local(path))))
            elif k == key:
                exec_start = value.removeprefix("-")
    assert exec_start, f"no {key}= in {units}"
    argv: list[str] = []
    for word in shlex.split(exec_start):
        if m := re.fullmatch(r"\$(\w+)", word):
            argv += env.get(m.group(1), "").split()
        else:
            argv.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word))
    argv = [host.local(a) for a in argv]
    if host.installed.path(argv[0]).exists():
        exe, more = host.installed.command(argv[0])
        argv[:1] = exe
        env.update(more)
    return argv, env


# ---- hosts and their daemons -------------------------------------------------

@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Host:
    pod: Pod
    paths: HostPaths
    address: str
    daemons: dict[str, Daemon] = field(default_factory=dict)

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Daemon:
        log = self.paths.logs / f"{name}.log"
        with open(log, "ab") as out:
            proc = self.pod.popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                  env={**os.environ, **(env or {})})
        d = self.daemons[name] = Daemon(name, proc, log)
        return d

    def stop(self, name: str, timeout: float = 30.0) -> int:
        """SIGTERM by pid and wait: 0 when clean.  etcd re-raises SIGTERM
        after its clean shutdown (tests/pando_testing/etcd.py)."""
        d = self.daemons[name]
        if d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
            try:
                d.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait()
                return -9
        rc = d.proc.returncode
        if name == "etcd" and stopped_cleanly(rc, d.log.read_text(errors="replace")):
            return 0
        return rc


def _bridge(switch: Pod, pods: dict[str, tuple[Pod, str]]) -> None:
    """br0 in the switch pod, one veth pair per pod: `eth0` with its address
    inside, the other end on the bridge."""
    switch.run(["sh", "-c", "ip link add br0 type bridge && ip link set br0 up"])
    for i, (pod, addr) in enumerate(pods.values()):
        switch.run(["sh", "-c", (f"ip link add v{i} type veth peer name eth0 netns {pod.pid} && "
                    f"ip link set v{i} master br0 up")])
        pod.run(["sh", "-c", f"ip addr add {addr}/24 dev eth0 && ip link set eth0 up"])


@pytest.fixture
def hosts(request: pytest.FixtureRequest, tmp_path: Path,
          installed: Installed) -> Iterator[dict[str, Host]]:
    pods = {name: Pod(name).start() for name in [*HOSTS, "client", "switch"]}
    made: dict[str, Host] = {}
    try:
        _bridge(pods["switch"], {n: (pods[n], a) for n, a in
                                 [*HOSTS.items(), ("client", CLIENT)]})
        for name, addr in HOSTS.items():
            paths = HostPaths(name, tmp_path / name / "etc", tmp_path / name / "log", installed)
            paths.logs.mkdir(parents=True)
            made[name] = Host(pods[name], paths, addr)
        made["client"] = Host(pods["client"], HostPaths("client", tmp_path, tmp_path, installed),
                              CLIENT)
        yield made
    finally:
        for h in made.values():
            for d in h.daemons.values():
                if d.proc.poll() is None:
                    d.proc.kill()
                    d.proc.wait()
        keep_logs(request, sorted(tmp_path.glob("*/log/*.log")))
        for p in pods.values():
            p.stop()


# ---- the deployment ------------------------------------------------------------

def _render(tmp_path: Path, hosts: dict[str, Host], text: str = PANDO_CONF) -> Path:
    inst = hosts["host1"].paths.installed
    conf = tmp_path / "pando.conf"
    conf.write_text(text.format(root=tmp_path, net=NET,
                                plugins=inst.one("**/libfsalpando.so").parent))
    cluster_cli, cli_env = inst.command(inst.bin("pando-cluster"))
    tool.genkey(tmp_path / "cluster.key", key_id=1)
    for name in HOSTS:
        # the admin copies the first host's mgr token, etcd CA and etcd
        # secret to the others
        if name != "host1":
            auth = hosts[name].paths.etc / "etcd-auth"
            auth.mkdir(parents=True, exist_ok=True)
            shutil.copy2(hosts["host1"].paths.etc / "mgr.token", hosts[name].paths.etc)
            for f in ("ca.crt", "ca.key", "secret"):
                shutil.copy2(hosts["host1"].paths.etc / "etcd-auth" / f, auth)
        cp = subprocess.run([*cluster_cli, "render", "--config", str(conf), "--host", name,
                             "--out", str(hosts[name].paths.etc)],
                            capture_output=True, text=True, check=False,
                            env={**os.environ, **cli_env})
        assert cp.returncode == 0, cp.stdout + cp.stderr
        # the admin's one-time steps `render` printed: format the data dirs
        for line in cp.stdout.splitlines():
            if line.strip().startswith("pando-osd-tool format"):
                argv = shlex.split(line.split("#")[0])
                tool_argv, _ = inst.command(inst.bin(argv[0]))
                subprocess.run([*tool_argv, *argv[1:]], check=True, capture_output=True)
    return conf


def _start_etcd(hosts: dict[str, Host]) -> None:
    for name in HOSTS:
        h = hosts[name]
        argv, env = unit_command([DEBIAN_ETCD_UNIT, h.paths.installed.unit("etcd.service.d/pando.conf")],
                                 h.paths)
        assert argv == ["/usr/bin/etcd"], argv
        h.start("etcd", argv, {k: v for k, v in env.items() if k.startswith("ETCD_")})
    for name in HOSTS:
        daemon = hosts[name].daemons["etcd"]
        hosts[name].pod.wait_port(hosts[name].address, 2379, timeout=30, alive=daemon.alive)


def _etcd_users(hosts: dict[str, Host], conf: Path) -> None:
    """The step render printed on the first etcd host, run there."""
    etc = hosts["host1"].paths.etc
    inst = hosts["host1"].paths.installed
    argv, env = inst.command(inst.bin("pando-cluster"))
    hosts["host1"].pod.run([*argv, "etcd-users", "--config", str(conf), "--conf-dir", str(etc)],
                           env={**os.environ, **env})


def _etcd(hosts: dict[str, Host], only: list[str] | None = None) -> EtcdClient:
    """A client of the members, signed in as etcd's root."""
    urls = [f"https://{HOSTS[n]}:2379" for n in (only or list(HOSTS))]
    auth = hosts["host1"].paths.etc / "etcd-auth"
    return EtcdClient(hosts["client"].pod, urls, ca_file=str(auth / "ca.crt"), user="root",
                      password=(auth / "root.password").read_text().strip())


def _start_osds(hosts: dict[str, Host]) -> None:
    for name in HOSTS:
        h = hosts[name]
        for conf in sorted(h.paths.etc.glob("osd.*.conf")):
            i = conf.name.split(".")[1]
            argv, _ = unit_command([h.paths.installed.unit("pando-osd@.service")], h.paths, i)
            h.start(f"osd.{i}", argv)


def _start_mds(h: Host, group: str = "") -> None:
    """rpcbind and rpc.statd (Debian's rpcbind.service and rpc-statd.service
    on a real host, statd on /var/lib/nfs: the host's own directory is
    mounted there in its pod), then pando-mds.service: its ExecStartPre,
    Ganesha, and its ExecStartPost, which tells NFSv3 hosts (none yet), or
    leaves that to the active of the manager group `group`."""
    h.start("rpcbind", ["/usr/sbin/rpcbind", "-f"])
    h.pod.wait_port("127.0.0.1", 111, timeout=10)
    state = h.paths.logs.parent / "statd"
    state.mkdir()
    h.pod.run(["mount", "--bind", str(state), str(SYSTEM_STATE_DIR)])
    unit = [h.paths.installed.unit("pando-mds.service")]
    argv, env = unit_command(unit, h.paths, key="ExecStartPre")
    h.pod.run(argv, env={**os.environ, **env})
    h.start("rpc.statd", statd_argv("/usr/sbin/rpc.statd", SYSTEM_STATE_DIR))
    _start_ganesha(h)
    argv, env = unit_command(unit, h.paths, key="ExecStartPost")
    source = SERVICE_ADDRESS.split("/")[0] if group else h.address
    assert argv[-3:] == ["--source", source, f"--group={group}"], argv
    cp = h.pod.run(argv, env={**os.environ, **env}, check=False, timeout=90)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    said = "its active tells the NFSv3 hosts" if group else "sm-notify tells the NFSv3 hosts"
    assert said in cp.stdout, cp.stdout


def _start_ganesha(h: Host) -> None:
    """pando-mds.service's ExecStart; the installed Python packages on its
    path, for Service_Address_Command's pando-service-address."""
    argv, _ = unit_command([h.paths.installed.unit("pando-mds.service")], h.paths)
    assert argv[:2] == ["/usr/bin/ganesha.nfsd", "-F"], argv
    argv[argv.index("-p") + 1] = str(h.paths.logs / "ganesha.pid")
    (h.paths.logs.parent / "mds").mkdir(exist_ok=True)  # StateDirectory=pando pando/mds
    h.start("ganesha", argv, {"PYTHONPATH": str(h.paths.installed.python_dir)})


def _start_mgrs(hosts: dict[str, Host]) -> None:
    for name in ("host1", "host2"):
        paths = hosts[name].paths
        argv, env = unit_command([paths.installed.unit("pando-mgr.service")], paths)
        hosts[name].start("pando-mgr", [*argv, "--log-level", "debug"], env)


def _nfs3_roundtrip(client: Pod, name: str, data: bytes, server: str = HOSTS["host1"],
                    before: dict[str, bytes] | None = None) -> None:
    """Mounts server's /pando, writes `name` and reads it back, and reads
    the files in `before` too."""
    deadline = time.monotonic() + 30
    while True:
        try:
            sock = client.connect(server, 20048)
            try:
                root = mount_root(sock, "/pando")
                break
            finally:
                sock.close()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
    setup = Nfs3Setup.over(client.connect(server, 2049))
    nfs = Nfs3Client(setup.rpc)
    try:
        fh = setup.create(root, name)
        w = nfs.write(fh, 0, data, stable=FILE_SYNC)
        assert w.status == NFS3_OK and w.count == len(data), w
        assert nfs.read_all(fh, 0, len(data) + 1) == data
        for old, want in (before or {}).items():
            assert nfs.read_all(nfs.lookup_fh(root, old), 0, len(want) + 1) == want, old
    finally:
        setup.close()


def _presence(etcd: EtcdClient) -> dict[int, Any]:
    return {int(k.rsplit("/", 1)[1]): json.loads(v)
            for k, v in etcd.get_prefix("/pando/osd/").items()}


@pytest.mark.skipif(not DEBIAN_ETCD_UNIT.exists(), reason="needs Debian's etcd-server")
def test_three_hosts_from_one_pando_conf_survive_losing_an_etcd_member(
        tmp_path: Path, hosts: dict[str, Host]) -> None:
    conf = _render(tmp_path, hosts)
    parse(conf)  # the file the hosts share stays valid
    client = hosts["client"].pod
    _start_etcd(hosts)
    _etcd_users(hosts, conf)
    etcd = _etcd(hosts)
    etcd.wait_healthy()
    members = etcd.call("/v3/cluster/member/list", {})["members"]
    assert sorted(m["name"] for m in members) == sorted(HOSTS)

    _start_osds(hosts)
    pres = etcd.wait_for(lambda c: (p := _presence(c)) and len(p) == 6 and p, timeout=30,
                         what="six OSDs present")
    assert {i: (p["nfs"], p["domain"]) for i, p in pres.items()} == {
        i: (f"{HOSTS[f'host{(i + 1) // 2}']}:{20490 + i}", f"host{(i + 1) // 2}")
        for i in range(1, 7)}

    _start_mds(hosts["host1"])
    _nfs3_roundtrip(client, "before", os.urandom(300_000))

    _start_mgrs(hosts)
    api = MgrApi(client, f"http://{HOSTS['host1']}:7480")
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in range(1, 7)},
                 timeout=40, what="the map with six OSDs up and in")
    # the mgr lists members on its own clock, apart from the map
    api.wait_for(lambda a: len(a.status()["etcd"]["members"]) == 3, timeout=10,
                 what="the three etcd members listed")
    follower = MgrApi(client, f"http://{HOSTS['host2']}:7480")
    # a follower answers GETs from the map it last read (every 0.25 s), so
    # it may be one epoch behind the leader for a moment: wait for it to catch up
    leader_map = api.get("/api/map")
    follower.wait_for(lambda f: f.get("/api/map")["epoch"] >= leader_map["epoch"],
                      timeout=10, what="the follower at the leader's epoch")
    assert follower.get("/api/map")["osds"] == api.get("/api/map")["osds"]

    # host3's etcd member dies: two of three keep the quorum
    hosts["host3"].daemons["etcd"].proc.kill()
    hosts["host3"].daemons["etcd"].proc.wait()
    alive = _etcd(hosts, ["host1", "host2"])
    def probe(c: EtcdClient) -> bool:
        c.put("/multihost/probe", "still writable")
        return True
    alive.wait_for(probe, timeout=15, what="a write with host3's member down")
    assert alive.get("/multihost/probe") == b"still writable"
    # host3's OSDs talked to host3's member (their own, first in their list):
    # beyond their 5 s presence lease they must have renewed elsewhere
    assert "etcd        = https://10.77.0.3:2379," in (hosts["host3"].paths.etc /
                                                      "osd.5.conf").read_text()
    time.sleep(7)
    assert sorted(_presence(alive)) == [1, 2, 3, 4, 5, 6]
    _nfs3_roundtrip(client, "after", b"written with one etcd member down\n")
    assert api.osd_states() == {i: (True, True) for i in range(1, 7)}
    assert follower.get("/api/map")["epoch"] >= 1
    api.wait_for(lambda a: any(c["code"] == "ETCD_QUORUM" and c["severity"] == "HEALTH_WARN"
                               for c in a.status()["checks"]),
                 timeout=20, what="ETCD_QUORUM warning for the member down")

    codes: dict[str, int] = {}
    order = ["pando-mgr", "ganesha", *[f"osd.{i}" for i in range(1, 7)], "rpc.statd",
             "rpcbind", "etcd"]
    for name in order:
        for hname in HOSTS:
            h = hosts[hname]
            if name in h.daemons and not (hname == "host3" and name == "etcd"):
                codes[f"{hname}/{name}"] = h.stop(name)
    assert {k: v for k, v in codes.items() if v != 0} == {}, codes


# host1 and host2 are a manager group: the service address moves with the lead.
GROUP_CONF = PANDO_CONF.replace("[mgr]\n", f"service_address = {SERVICE_ADDRESS}\n\n[mgr]\n").replace(
    "osds = 3, 4\nmgr = yes", "osds = 3, 4\nmds = yes\nmgr = yes")


def _wait_log(h: Host, words: str, count: int = 1, timeout: float = 30) -> None:
    """Until words are in the host's ganesha.log count times (a restart
    appends to it)."""
    log, deadline = h.paths.logs / "ganesha.log", time.monotonic() + timeout
    while log.read_text(errors="replace").count(words) < count:
        assert time.monotonic() < deadline, f"'{words}' not in {log}"
        time.sleep(0.2)


def _address_on(h: Host) -> bool:
    return SERVICE_ADDRESS in h.pod.run(["ip", "-o", "-4", "addr", "show", "dev", "eth0"]).stdout


@pytest.mark.skipif(not DEBIAN_ETCD_UNIT.exists(), reason="needs Debian's etcd-server")
def test_two_managers_from_one_pando_conf_fail_over_at_the_service_address(
        tmp_path: Path, hosts: dict[str, Host]) -> None:
    """host1 founds the group and leads; host2, with no store, starts from
    the snapshot host1 puts on the OSDs and follows.  After a kill -9 of
    host1's Ganesha and the unit's ExecStopPost, the client finds host2
    leading at the same address, with every file; host1 started again
    follows host2 from its own store."""
    conf = _render(tmp_path, hosts, GROUP_CONF)
    client = hosts["client"].pod
    _start_etcd(hosts)
    _etcd_users(hosts, conf)
    _etcd(hosts).wait_healthy()
    _start_osds(hosts)
    _etcd(hosts).wait_for(lambda c: len(_presence(c)) == 6, timeout=30, what="six OSDs present")
    service = SERVICE_ADDRESS.split("/")[0]
    h1, h2 = hosts["host1"], hosts["host2"]
    _start_mds(h1, group="multihost")
    _wait_log(h1, "host1 is the active")
    assert _address_on(h1) and not _address_on(h2)
    written = {"before": os.urandom(300_000)}
    _nfs3_roundtrip(client, "before", written["before"], server=service)

    assert not (tmp_path / "host2" / "mds" / "ns").exists()
    _start_mds(h2, group="multihost")
    _wait_log(h2, "host2 starts from snapshot at seq")
    _wait_log(h2, "host2 follows the journal until it leads")
    assert _address_on(h1) and not _address_on(h2)
    written["while host2 follows"] = os.urandom(200_000)
    _nfs3_roundtrip(client, "while host2 follows", written["while host2 follows"],
                    server=service)

    h1.daemons["ganesha"].proc.kill()
    h1.daemons["ganesha"].proc.wait()
    argv, env = unit_command([h1.paths.installed.unit("pando-mds.service")], h1.paths,
                             key="ExecStopPost")
    cp = h1.pod.run(argv, env={**os.environ, **env}, check=False)
    assert cp.returncode == 0 and not _address_on(h1), cp.stdout + cp.stderr
    _nfs3_roundtrip(client, "after", b"written on the new active\n", server=service,
                    before=written)
    assert _address_on(h2)
    _wait_log(h2, "host2 is the active", timeout=1)
    _start_ganesha(h1)
    _wait_log(h1, "host1 follows the journal until it leads", count=2)
    assert "asks the active for a snapshot" not in (h1.paths.logs / "ganesha.log").read_text()
    assert h1.stop("ganesha") == 0
    assert h2.stop("ganesha") == 0


def test_unit_command_expands_environment_and_instance(tmp_path: Path,
                                                      installed: Installed) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "mgr.env").write_text("# c\nPANDO_MGR_ARGS=--etcd http://a:2379 --name h1\n")
    paths = HostPaths("h1", etc, tmp_path, installed)
    argv, env = unit_command([installed.unit("pando-mgr.service")], paths)
    assert argv == [sys.executable, str(installed.path(installed.bin("pando-mgr"))), "--etcd",
                    "http://a:2379", "--name", "h1"]
    assert env["PYTHONPATH"] == str(installed.python_dir)
    argv, _ = unit_command([installed.unit("pando-osd@.service")], paths, "7")
    assert argv == [str(installed.path(installed.bin("pando-osd"))), "--config",
                    f"{etc}/osd.7.conf"]
