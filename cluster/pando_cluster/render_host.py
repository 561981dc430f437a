"""`pando-cluster render`: every file one host's daemons need, from
pando.conf, for the units in cluster/systemd/ to read (/etc/pando/ by
default):

  osd.N.conf     each OSD this host runs (pando-osd@N.service)
  cluster.conf   the key and the OSDs: the FSAL's, and the mgr's seed
  ganesha.conf   on the metadata-manager host (pando-mds.service), through
                 ganesha_conf.py as `up` and the tests render it
  mds.env        on that host too: PANDO_NSM_SOURCE, the address
                 pando-mds.service's sm-notify names the manager by, and
                 for a manager group ([mds] service_address, several mds
                 hosts) PANDO_MDS_GROUP and PANDO_SERVICE_ADDRESS_ARGS
  etcd.env       on an etcd host: ETCD_* for etcd.service (drop-in)
  mgr.env        on a mgr host: PANDO_MGR_ARGS for pando-mgr.service
  pando.conf     the file itself, for the `pando` CLI ([mgr] url)
  mgr.token      the mgr API's token (mode 0600), for pando-mgr and the
                 `pando` CLI, made only when none is there: every host of
                 a cluster must hold the same one
"""
from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from .conf_file import ConfError, Host, OsdPlace, PandoConf
from .config import OsdConfig
from . import etcd_auth
from .etcd import EtcdMember, render_env
from .etcd_auth import EtcdAccess
from .ganesha_conf import GaneshaSettings, render
from .mds_config import pando_fsal, render_cluster_conf
from .mgrproc import TOKEN_FILE, make_token, mgr_args
from .statd import SYSTEM_STATE_DIR, notify_dir
from .state import OsdRecord

HEADER = "# written by `pando-cluster render` from {src}; edit that file instead"


def service_address_tool() -> str:
    """pando-service-address beside the pando-cluster that renders (both
    are installed together), else where the units name it."""
    beside = Path(sys.argv[0]).resolve().parent / "pando-service-address"
    return str(beside) if beside.is_file() else "/usr/local/bin/pando-service-address"


@dataclass(frozen=True)
class Rendered:
    host: Host
    files: list[Path]
    todo: list[str]     # what the admin does next on this host


def etcd_member(conf: PandoConf, host: Host, conf_dir: Path) -> EtcdMember:
    peers = ",".join(f"{h.name}=https://{h.address}:{conf.etcd_port + 1}"
                     for h in conf.etcd_hosts)
    return EtcdMember(host.name, conf.host_path("etcd", "data_dir", host), host.address,
                      conf.etcd_port, peers, token=conf.name,
                      tls_dir=conf_dir / etcd_auth.DIR_NAME)


def etcd_access(conf: PandoConf, host: Host, conf_dir: Path) -> EtcdAccess:
    return EtcdAccess(conf.etcd_endpoints_for(host),
                      str(conf_dir / etcd_auth.DIR_NAME / "ca.crt"))


def osd_config(conf: PandoConf, o: OsdPlace, conf_dir: Path) -> OsdConfig:
    base = conf.num("osd", "base_port")
    mine = etcd_access(conf, o.host, conf_dir).osd(o.osd_id)
    return OsdConfig(o.osd_id, o.data_dir, conf.key_file, o.host.address, base,
                     threads=conf.num("osd", "threads"),
                     log_level=conf.get("osd", "log_level"),
                     etcd=mine.endpoints, etcd_prefix=conf.prefix,
                     domain=o.host.name, pool=o.host.pool,
                     etcd_ttl=conf.num("osd", "etcd_ttl"),
                     etcd_interval=conf.num("osd", "etcd_interval"),
                     etcd_ca=mine.ca_file, etcd_user=mine.user,
                     etcd_password_file=mine.password_file)


def service_address_args(conf: PandoConf) -> str:
    """pando-service-address's options for the group's address ("": no group)."""
    a = conf.service_address
    return f"--address {a} --dev {conf.get('mds', 'service_dev')}" if a else ""


def ganesha_conf(conf: PandoConf, host: Host, conf_dir: Path) -> str:
    """A manager of a group (service_address) serves the group's address,
    which it puts on its host when it leads; a standby binds nothing."""
    mirrors = min(conf.num("mds", "mirrors"), len(conf.osds()))
    group = service_address_args(conf)
    more = {"mds_group": conf.name, "options": (
        f'Service_Address_Command = "{service_address_tool()} {group}";',)} if group else {}
    fsal = pando_fsal(conf.host_path("mds", "db_path", host), conf_dir / "cluster.conf",
                      mirrors, etcd_access(conf, host, conf_dir).mds(host.name), conf.prefix,
                      host.name,
                      inline_max=conf.num("mds", "inline_max"),
                      stripe_unit=conf.num("mds", "stripe_unit"), **more)
    bind = str(conf.service_address.ip) if conf.service_address else host.address
    settings = GaneshaSettings(
        plugins_dir=Path(conf.get("mds", "plugins_dir")),
        recovery_root=conf.host_path("mds", "recovery_root", host), fsal=fsal,
        nfs_port=conf.num("mds", "nfs_port"), mnt_port=conf.num("mds", "mnt_port"),
        bind=bind, log_level=conf.get("mds", "log_level"),
        access_type=conf.export_access, squash=conf.export_squash, clients=tuple(conf.clients),
        sec=conf.export_sec, kerberos=conf.kerberos,
        nsm_notify_dir=notify_dir(SYSTEM_STATE_DIR))
    return render(settings)


def mds_env(conf: PandoConf, host: Host) -> str:
    """PANDO_NSM_SOURCE: the address the unit's sm-notify names the
    manager by.  With a group, PANDO_MDS_GROUP (its active runs sm-notify
    itself, so the unit does not) and PANDO_SERVICE_ADDRESS_ARGS (the unit
    releases the address after any stop, SIGKILL included)."""
    a = conf.service_address
    return "".join([f"PANDO_NSM_SOURCE={a.ip if a else host.address}\n",
                    f"PANDO_MDS_GROUP={conf.name if a else ''}\n",
                    f"PANDO_SERVICE_ADDRESS_ARGS={service_address_args(conf)}\n"])


def mgr_env(conf: PandoConf, host: Host, conf_dir: Path) -> str:
    args = mgr_args(etcd_access(conf, host, conf_dir).mgr(), conf.prefix, host.name,
                    f"{host.address}:{conf.num('mgr', 'port')}", conf_dir / "cluster.conf",
                    conf_dir / TOKEN_FILE)
    # systemd splits an unquoted $PANDO_MGR_ARGS on white space: no value
    # may hold any (paths and URLs here do not).
    if any(" " in a for a in args):
        raise ConfError(f"{conf.path}: pando-mgr arguments may not contain spaces: {args}")
    return f"PANDO_MGR_ARGS={' '.join(args)}\n"


def cluster_conf(conf: PandoConf, header: str) -> str:
    recs = [OsdRecord(o.osd_id, o.nfs, o.ctl, str(o.data_dir), "", "") for o in conf.osds()]
    pools = {o.osd_id: o.host.pool for o in conf.osds()}
    return render_cluster_conf(conf.key_file, recs, conf.num("cluster", "partition"), header,
                               pools)


def render_host(conf: PandoConf, name: str, out: Path, conf_dir: Path | None = None
                ) -> Rendered:
    """Writes `name`'s files into `out`; they name each other under
    `conf_dir` (default `out`: render straight into /etc/pando)."""
    host = conf.hosts.get(name)
    if host is None:
        raise ConfError(f"{conf.path}: no [host {name}] (hosts: {', '.join(conf.hosts)})")
    where = conf_dir or out
    out.mkdir(parents=True, exist_ok=True)
    header = HEADER.format(src=conf.path)
    files: dict[str, str] = {"cluster.conf": cluster_conf(conf, header)}
    todo: list[str] = []
    for o in conf.osds():
        if o.host is host:
            files[f"osd.{o.osd_id}.conf"] = osd_config(conf, o, where).render(header)
            todo.append(f"pando-osd-tool format --data-dir {shlex.quote(str(o.data_dir))} "
                        f"--osd-id {o.osd_id} --key-file {conf.key_file}  # once")
    if host.mds:
        files["ganesha.conf"] = f"{header}\n{ganesha_conf(conf, host, where)}"
        files["mds.env"] = f"{header}\n{mds_env(conf, host)}"
    if host.etcd:
        files["etcd.env"] = render_env(etcd_member(conf, host, where), header)
    if host.mgr:
        files["mgr.env"] = f"{header}\n{mgr_env(conf, host, where)}"
    written = []
    for fname, text in files.items():
        path = out / fname
        path.write_text(text)
        written.append(path)
    copy = out / "pando.conf"
    if copy.resolve() != conf.path.resolve():
        copy.write_text(conf.path.read_text())
        written.append(copy)
    if make_token(out / TOKEN_FILE):
        written.append(out / TOKEN_FILE)
        todo.insert(0, f"# a new mgr token: copy {out / TOKEN_FILE} (mode 0600) to "
                       f"{where / TOKEN_FILE} on every other host before rendering there")
    written += etcd_auth_files(conf, host, out / etcd_auth.DIR_NAME,
                               where / etcd_auth.DIR_NAME, todo)
    return Rendered(host, written, todo + owners(conf, host, where) + start_units(conf, host))


def host_etcd_users(conf: PandoConf, host: Host) -> list[str]:
    """The etcd users whose daemons run on host (root where etcd does:
    `pando-cluster etcd-users` signs in as it)."""
    return etcd_auth.users([o.osd_id for o in conf.osds() if o.host is host],
                           [host.name] if host.mds else [],
                           mgr=host.mgr, root=host.etcd)


def etcd_auth_files(conf: PandoConf, host: Host, out: Path, where: Path,
                    todo: list[str]) -> list[Path]:
    """The CA and secret (made on the first host rendered), this host's
    member certificate, and its daemons' password files."""
    if etcd_auth.ensure_ca(out):
        todo.insert(0, f"# a new etcd CA and secret: copy {out}/ca.crt, ca.key and secret "
                       f"(mode 0600) to {where} on every other host before rendering there")
    etcd_auth.ensure_secret(out)
    if host.etcd:
        etcd_auth.ensure_member_cert(out, [host.address, host.name])
    users = host_etcd_users(conf, host)
    etcd_auth.write_passwords(out, users)
    return ([out / "ca.crt", out / "ca.key", out / "secret"]
            + ([out / "member.crt", out / "member.key"] if host.etcd else [])
            + [out / f"{u}.password" for u in users])


def start_units(conf: PandoConf, host: Host) -> list[str]:
    """systemctl lines; on the first etcd host, etcd's users are set up
    once its members run, before Pando's daemons sign in."""
    out = []
    for u in units(conf, host):
        out.append(f"systemctl enable --now {u}")
        if u == "etcd.service" and host is conf.etcd_hosts[0]:
            out.append(f"pando-cluster etcd-users --config {conf.path}  "
                       f"# once every etcd host runs etcd: users, roles, authentication on")
    return out


def owners(conf: PandoConf, host: Host, where: Path) -> list[str]:
    """pando-osd and pando-mgr run as the pando user (cluster/systemd):
    it must own the secrets they read."""
    auth = where / etcd_auth.DIR_NAME
    osds = [o.osd_id for o in conf.osds() if o.host is host]
    mine = [str(conf.key_file)] if osds else []
    mine += [str(where / TOKEN_FILE)] if host.mgr else []
    mine += [str(auth / f"{u}.password") for u in etcd_auth.users(osds, [], mgr=host.mgr)]
    etcd = ([f"chown etcd: {auth / 'member.key'}  # Debian's etcd.service runs as etcd"]
            if host.etcd else [])
    if not mine:
        return etcd
    return ["systemd-sysusers pando.sysusers  # once: cluster/systemd/pando.sysusers",
            f"chown pando: {' '.join(shlex.quote(m) for m in mine)}", *etcd]


def units(conf: PandoConf, host: Host) -> list[str]:
    """The systemd units this host runs, in starting order."""
    out = ["etcd.service"] if host.etcd else []
    out += [f"pando-osd@{o.osd_id}.service" for o in conf.osds() if o.host is host]
    out += ["pando-mds.service"] if host.mds else []
    out += ["pando-mgr.service"] if host.mgr else []
    return out + ["pando.target"]
