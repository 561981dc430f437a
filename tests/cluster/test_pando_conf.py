"""The cluster configuration file (pando.conf) and what `pando-cluster
render` writes from it for one host; no daemons.  A bad file gets an error
naming the file, the line and the key."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pando_cluster.conf_file import ConfError, parse, parse_text
from pando_cluster.render_host import ganesha_conf, render_host
from pando_mgr import token as mgr_token

THREE_HOSTS = """\
[cluster]
name = demo
key_file = /etc/pando/cluster.key

[osd]
data_dir = /srv/{host}/osd.{id}

[mgr]
url = http://10.77.0.1:7480

[host h1]
address = 10.77.0.1
osds = 1, 2
mds = yes
mgr = yes
etcd = yes

[host h2]
address = 10.77.0.2
osds = 3,4
mgr = yes
etcd = yes

[host h3]
address = 10.77.0.3
osds = 5,6
etcd = yes
"""


def _error(text: str) -> str:
    with pytest.raises(ConfError) as e:
        parse_text(text, Path("/etc/pando/pando.conf"))
    return str(e.value)


def test_three_hosts_parse_with_defaults_and_derived_endpoints() -> None:
    conf = parse_text(THREE_HOSTS)
    assert list(conf.hosts) == ["h1", "h2", "h3"]
    assert conf.etcd_endpoints == ("https://10.77.0.1:2379,https://10.77.0.2:2379,"
                                   "https://10.77.0.3:2379")
    assert conf.prefix == "/pando/" and conf.mgr_url == "http://10.77.0.1:7480"
    osds = conf.osds()
    assert [(o.osd_id, o.host.name, o.nfs, o.ctl) for o in osds[4:]] == [
        (5, "h3", "10.77.0.3:20495", "10.77.0.3:20595"),
        (6, "h3", "10.77.0.3:20496", "10.77.0.3:20596")]
    assert osds[0].data_dir == Path("/srv/h1/osd.1")


@pytest.mark.parametrize("text, expected", [
    (THREE_HOSTS.replace("osds = 3,4", "osds = 3,x"),
     "pando.conf:20: [host h2] osds: 'x' is not an OSD id"),
    (THREE_HOSTS.replace("osds = 5,6", "osds = 5,2"),
     "pando.conf:26: [host h3] osds: OSD 2 is already on host h1"),
    (THREE_HOSTS.replace("mgr = yes\netcd = yes\n\n[host h2]", "mgr = maybe\netcd = yes\n\n"
                         "[host h2]"), "pando.conf:15: [host h1] mgr: 'maybe' is not yes or no"),
    (THREE_HOSTS.replace("name = demo", "name = demo\nkey_fle = /k"),
     "pando.conf:3: [cluster] key_fle: unknown key"),
    (THREE_HOSTS.replace("key_file = /etc/pando/cluster.key\n", ""),
     "pando.conf:1: [cluster] key_file: required, missing"),
    (THREE_HOSTS.replace("[mgr]", "[mrg]"), "pando.conf:8: [mrg]: unknown section"),
    (THREE_HOSTS.replace("address = 10.77.0.3\n", ""),
     "[host h3] address: required, missing"),
    (THREE_HOSTS.replace("osd.{id}", "osd.{num}"),
     "pando.conf:6: [osd] data_dir: bad placeholder 'num'"),
    (THREE_HOSTS.replace("[osd]", "[osd]\nbase_port = 20k"),
     "[osd] base_port: '20k' is not a positive number"),
    (THREE_HOSTS.replace("osds = 3,4\nmgr = yes", "osds = 3,4\nmds = yes\nmgr = yes"),
     "pando.conf:21: [host h2] mds: a second metadata manager (h1, h2)"),
    (THREE_HOSTS.replace("[mgr]", "[mds]\nservice_address = 10.77.0.50\n[mgr]"),
     "pando.conf:9: [mds] service_address: '10.77.0.50' is not an IPv4 ADDR/BITS"),
    (THREE_HOSTS.replace("[mgr]", "[mds]\nservice_address = h1/16\n[mgr]"),
     "[mds] service_address: 'h1/16' is not an IPv4 ADDR/BITS"),
    (THREE_HOSTS.replace("[mgr]", "[mds]\nservice_dev = eth0;rm\n[mgr]"),
     "[mds] service_dev: 'eth0;rm' is not a device name"),
    (THREE_HOSTS.replace("etcd = yes", "etcd = no"), "no etcd: set [cluster] etcd"),
    ("[cluster]\nkey_file = /k\n", "no [host NAME] section"),
    ("key_file = /k\n", "File contains no section headers"),
    (THREE_HOSTS + "[host h1]\naddress = 10.77.0.9\n", "section 'host h1' already exists"),
    (THREE_HOSTS.replace("osds = 5,6", "osds = 5,6\npool = SSD"),
     "pando.conf:27: [host h3] pool: 'SSD' is not a pool name"),
    (THREE_HOSTS.replace("osds = 5,6", "osds = 5,6\npool = default"),
     "pando.conf:27: [host h3] pool: 'default' is not a pool name"),
])
def test_a_bad_file_is_refused_naming_the_line_and_key(text: str, expected: str) -> None:
    assert expected in _error(text)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfError, match=r"nope\.conf: No such file"):
        parse(tmp_path / "nope.conf")


def test_render_writes_each_hosts_files(tmp_path: Path) -> None:
    src = tmp_path / "pando.conf"
    src.write_text(THREE_HOSTS.replace("osds = 5,6", "osds = 5,6\npool = fast"))
    conf = parse(src)
    h1 = render_host(conf, "h1", tmp_path / "h1", Path("/etc/pando"))
    auth = tmp_path / "h1" / "etcd-auth"
    assert sorted(str(p.relative_to(tmp_path / "h1")) for p in h1.files) == [
        "cluster.conf", "etcd-auth/ca.crt", "etcd-auth/ca.key", "etcd-auth/mds.h1.password",
        "etcd-auth/member.crt", "etcd-auth/member.key", "etcd-auth/mgr.password",
        "etcd-auth/osd.1.password", "etcd-auth/osd.2.password", "etcd-auth/root.password",
        "etcd-auth/secret", "etcd.env", "ganesha.conf", "mds.env", "mgr.env", "mgr.token",
        "osd.1.conf", "osd.2.conf", "pando.conf"]
    for secret in ("ca.key", "member.key", "secret", "osd.1.password", "root.password"):
        assert (auth / secret).stat().st_mode & 0o777 == 0o600, secret
    assert "pando-cluster etcd-users --config" in "\n".join(h1.todo)
    for f in ("ca.crt", "ca.key", "secret"):
        (tmp_path / "h3" / "etcd-auth").mkdir(parents=True, exist_ok=True)
        shutil.copy2(auth / f, tmp_path / "h3" / "etcd-auth" / f)
    h3 = render_host(conf, "h3", tmp_path / "h3", Path("/etc/pando"))
    assert sorted(str(p.relative_to(tmp_path / "h3")) for p in h3.files) == [
        "cluster.conf", "etcd-auth/ca.crt", "etcd-auth/ca.key", "etcd-auth/member.crt",
        "etcd-auth/member.key", "etcd-auth/osd.5.password", "etcd-auth/osd.6.password",
        "etcd-auth/root.password", "etcd-auth/secret", "etcd.env", "mgr.token", "osd.5.conf",
        "osd.6.conf", "pando.conf"]
    # the same secret: the same passwords on every host
    assert (tmp_path / "h3" / "etcd-auth" / "root.password").read_text() == \
        (auth / "root.password").read_text()
    assert h3.todo[-3:] == ["systemctl enable --now pando-osd@5.service",
                            "systemctl enable --now pando-osd@6.service",
                            "systemctl enable --now pando.target"]

    osd = (tmp_path / "h3" / "osd.5.conf").read_text()
    for line in ("nfs_listen = 10.77.0.3:20495", "ctl_listen = 10.77.0.3:20595",
                 "data_dir   = /srv/h3/osd.5", "key_file   = /etc/pando/cluster.key",
                 ("etcd        = https://10.77.0.3:2379,https://10.77.0.1:2379,"
                 "https://10.77.0.2:2379"), "etcd_prefix = /pando/", "domain      = h3",
                 "etcd_ca = /etc/pando/etcd-auth/ca.crt", "etcd_user = osd.5",
                 "etcd_password_file = /etc/pando/etcd-auth/osd.5.password",
                 "pool        = fast"):
        assert line in osd.splitlines(), osd
    assert "pool" not in (tmp_path / "h1" / "osd.1.conf").read_text()
    desc = (tmp_path / "h1" / "cluster.conf").read_text()
    assert "osd 6 ctl=10.77.0.3:20596 nfs=10.77.0.3:20496 pool=fast" in desc.splitlines()
    assert "osd 1 ctl=10.77.0.1:20591 nfs=10.77.0.1:20491" in desc.splitlines()
    assert desc == (tmp_path / "h3" / "cluster.conf").read_text()

    env = dict(line.split("=", 1) for line in
               (tmp_path / "h3" / "etcd.env").read_text().splitlines() if "=" in line
               and not line.startswith("#"))
    assert env["ETCD_NAME"] == "h3"
    assert env["ETCD_INITIAL_CLUSTER"] == ("h1=https://10.77.0.1:2380,"
                                           "h2=https://10.77.0.2:2380,h3=https://10.77.0.3:2380")
    assert env["ETCD_LISTEN_CLIENT_URLS"] == "https://10.77.0.3:2379"
    assert env["ETCD_CERT_FILE"] == "/etc/pando/etcd-auth/member.crt"
    assert env["ETCD_PEER_TRUSTED_CA_FILE"] == "/etc/pando/etcd-auth/ca.crt"
    assert env["ETCD_PEER_CLIENT_CERT_AUTH"] == "true"
    assert env["ETCD_INITIAL_CLUSTER_TOKEN"] == "demo"

    gconf = (tmp_path / "h1" / "ganesha.conf").read_text()
    assert "Bind_Addr = 10.77.0.1;" in gconf and 'Cluster = "/etc/pando/cluster.conf";' in gconf
    for line in ('Etcd_User = "mds.h1";', 'Etcd_CA = "/etc/pando/etcd-auth/ca.crt";',
                 'Etcd_Password_File = "/etc/pando/etcd-auth/mds.h1.password";'):
        assert line in gconf
    # nfs-common's statd: pando-mds.service's `pando-cluster nsm` steps fill
    # and empty its notify list, so NLM's grace ends when hosts reclaimed.
    assert 'NSM_Notify_Dir = "/var/lib/nfs/sm.bak";' in gconf
    assert (tmp_path / "h1" / "mds.env").read_text().splitlines()[-3:] == [
        "PANDO_NSM_SOURCE=10.77.0.1", "PANDO_MDS_GROUP=", "PANDO_SERVICE_ADDRESS_ARGS="]
    mgr = (tmp_path / "h1" / "mgr.env").read_text().splitlines()[-1]
    assert mgr == ("PANDO_MGR_ARGS=--etcd https://10.77.0.1:2379,https://10.77.0.2:2379,"
                   "https://10.77.0.3:2379 --etcd-ca=/etc/pando/etcd-auth/ca.crt "
                   "--etcd-user=mgr --etcd-password-file=/etc/pando/etcd-auth/mgr.password "
                   "--prefix /pando/ --name h1 --listen 10.77.0.1:7480 "
                   "--seed /etc/pando/cluster.conf --token-file /etc/pando/mgr.token")


def test_several_managers_with_a_service_address_render_one_group(tmp_path: Path) -> None:
    """Each a member named after its host, serving the group's address,
    which pando-service-address moves to the active; the unit skips
    sm-notify (the active runs it) and releases the address after a stop."""
    text = THREE_HOSTS.replace("[mgr]", "[mds]\nservice_address = 10.77.0.50/16\n\n[mgr]")
    src = tmp_path / "pando.conf"
    src.write_text(text.replace("osds = 3,4\nmgr = yes", "osds = 3,4\nmds = yes\nmgr = yes"))
    conf = parse(src)
    for name in ("h1", "h2"):
        render_host(conf, name, tmp_path / name, Path("/etc/pando"))
        gconf = (tmp_path / name / "ganesha.conf").read_text()
        assert "Bind_Addr = 10.77.0.50;" in gconf
        for line in ('Mds_Group = "demo";', f'Mds_Name = "{name}";'):
            assert line in gconf
        command = gconf.split('Service_Address_Command = "')[1].split('"')[0]
        assert command.endswith("/pando-service-address --address 10.77.0.50/16 --dev eth0")
        assert (tmp_path / name / "mds.env").read_text().splitlines()[-3:] == [
            "PANDO_NSM_SOURCE=10.77.0.50", "PANDO_MDS_GROUP=demo",
            "PANDO_SERVICE_ADDRESS_ARGS=--address 10.77.0.50/16 --dev eth0"]


def test_render_makes_the_mgr_token_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    src = tmp_path / "pando.conf"
    src.write_text(THREE_HOSTS)
    conf = parse(src)
    first = render_host(conf, "h1", tmp_path / "h1", Path("/etc/pando"))
    token = tmp_path / "h1" / "mgr.token"
    assert token.stat().st_mode & 0o777 == 0o600
    assert first.todo[1].startswith(f"# a new mgr token: copy {token} (mode 0600) to "
                                    "/etc/pando/mgr.token on every other host")
    again = render_host(conf, "h1", tmp_path / "h1", Path("/etc/pando"))
    assert token not in again.files and not again.todo[0].startswith("#")
    assert mgr_token.load(token) == token.read_text().strip()
    token.chmod(0o640)
    with pytest.raises(OSError, match=r"mgr.token: the mgr token is mode 0640: it must be "
                                      r"readable by its owner only"):
        render_host(conf, "h1", tmp_path / "h1", Path("/etc/pando"))


def test_render_command_refuses_an_unknown_host(tmp_path: Path) -> None:
    src = tmp_path / "pando.conf"
    src.write_text(THREE_HOSTS)
    cp = subprocess.run([sys.executable, "-m", "pando_cluster.cli", "render", "--config",
                         str(src), "--host", "h9", "--out", str(tmp_path / "out")],
                        capture_output=True, text=True, check=False)
    assert cp.returncode == 1
    assert "no [host h9] (hosts: h1, h2, h3)" in cp.stdout, cp.stdout + cp.stderr


def _export(conf_text: str) -> dict[str, list[str]]:
    """The EXPORT block's lines of h1's ganesha.conf, and each CLIENT block's."""
    conf = parse_text(conf_text)
    text = ganesha_conf(conf, conf.hosts["h1"], Path("/etc/pando"))
    body = text[text.index("EXPORT {"):]
    blocks: dict[str, list[str]] = {"EXPORT": []}
    where = "EXPORT"
    for line in (x.strip() for x in body.splitlines()[1:]):
        if line.endswith("{"):
            where = line[:-1].strip() + str(len(blocks))
            blocks[where] = []
        elif line == "}":
            where = "EXPORT"
        else:
            blocks[where].append(line)
    return blocks


def test_every_host_is_root_squashed_unless_a_clients_section_trusts_it() -> None:
    blocks = _export(THREE_HOSTS)
    assert {"Access_Type = RW;", "Squash = Root_Squash;", "Anonymous_Uid = 65534;",
            "Anonymous_Gid = 65534;", "SecType = sys;"} <= set(blocks["EXPORT"])
    assert not [b for b in blocks if b.startswith("CLIENT")]


def test_clients_sections_become_client_blocks_in_file_order() -> None:
    text = THREE_HOSTS + """
[clients admin]
hosts = 10.77.0.9, adm1.example.com
squash = no_root_squash

[clients compute]
hosts = 10.78.0.0/16, node*.example.com, @hpc
access = rw

[clients lab]
hosts = 10.79.0.1

[clients visitors]
hosts = *
access = ro
squash = all_squash

[export]
access = none
"""
    blocks = _export(text)
    assert "Access_Type = None;" in blocks["EXPORT"]    # a client no section names: nothing
    clients = [v for k, v in blocks.items() if k.startswith("CLIENT")]
    assert clients == [
        ["Clients = 10.77.0.9/32, adm1.example.com;", "Squash = No_Root_Squash;"],
        ["Clients = 10.78.0.0/16, node*.example.com, @hpc;", "Access_Type = RW;",
         "Squash = Root_Squash;"],
        ["Clients = 10.79.0.1/32;", "Squash = Root_Squash;"],
        ["Clients = *;", "Access_Type = RO;", "Squash = All_Squash;"]]


def test_kerberos_flavours_render_sec_types_and_the_managers_service() -> None:
    text = THREE_HOSTS + """
[export]
sec = krb5p, krb5i

[kerberos]
keytab = /etc/krb5.keytab

[clients legacy]
hosts = 10.79.0.0/24
sec = sys, krb5
"""
    blocks = _export(text)
    assert "SecType = krb5p, krb5i;" in blocks["EXPORT"]
    assert [v for k, v in blocks.items() if k.startswith("CLIENT")] == [
        ["Clients = 10.79.0.0/24;", "Squash = Root_Squash;", "SecType = sys, krb5;"]]
    conf = parse_text(text)
    ganesha = ganesha_conf(conf, conf.hosts["h1"], Path("/etc/pando"))
    krb5 = ganesha[ganesha.index("NFS_KRB5 {"):].split("}")[0].split("\n")[1:]
    assert [x.strip() for x in krb5 if x.strip()] == [
        'PrincipalName = "nfs";', 'KeytabPath = "/etc/krb5.keytab";', "Active_krb5 = true;"]


@pytest.mark.parametrize("section, expected", [
    ("[export]\nsquash = no", "[export] squash: 'no' is not one of root_squash"),
    ("[export]\naccess = write", "[export] access: 'write' is not one of rw, ro, none"),
    ("[clients a]\nsquash = root_squash", "[clients a] hosts: required, missing"),
    ("[clients a]\nhosts = ,", "[clients a] hosts: names no host"),
    ("[clients a]\nhosts = 10.0.0.1; Squash = No_Root_Squash",
     "[clients a] hosts: '10.0.0.1; Squash = No_Root_Squash' is not an address"),
    ("[clients a]\nhosts = h1}\n", "[clients a] hosts: 'h1}' is not an address"),
    ('[clients a]\nhosts = "h1"', "[clients a] hosts: '\"h1\"' is not an address"),
    ("[clients a]\nhosts = 10.0.0.0/33", "[clients a] hosts: '10.0.0.0/33' is not an address"),
    ("[clients a]\nhosts = h1\nsquash = none", "[clients a] squash: 'none' is not one of"),
    ("[clients a b]\nhosts = h1", "[clients a b]: 'a b' is not a name"),
    ("[export]\nsec = krb4", "[export] sec: 'krb4' is not one of sys, krb5, krb5i, krb5p"),
    ("[export]\nsec = ,", "[export] sec: names no flavour"),
    ("[export]\nsec = krb5p", "[export] sec: 'krb5p' needs [kerberos] keytab"),
    ("[clients a]\nhosts = h1\nsec = krb5i", "[clients a] sec: 'krb5i' needs [kerberos] keytab"),
    ("[kerberos]\nkeytab = krb5.keytab",
     "[kerberos] keytab: 'krb5.keytab' is not an absolute path"),
    ('[kerberos]\nkeytab = /k"; Active_krb5 = false',
     "[kerberos] keytab: '/k\"; Active_krb5 = false' is not an absolute path"),
    ("[kerberos]\nkeytab = /k\nprincipal = nfs/h1; x",
     "[kerberos] principal: 'nfs/h1; x' is not a service name"),
])
def test_a_bad_export_or_clients_section_is_refused(section: str, expected: str) -> None:
    assert expected in _error(THREE_HOSTS + "\n" + section + "\n")
