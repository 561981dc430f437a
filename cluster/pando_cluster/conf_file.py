"""The cluster configuration file, /etc/pando/pando.conf: one INI file,
the same on every host, naming the cluster's settings and, per host, its
address and the daemons it runs (format: cluster/README.md, "Several
hosts").  `parse` checks it whole and says which line and key is wrong."""
from __future__ import annotations

import configparser
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

from .config import CTL_PORT_OFFSET, MAX_OSDS, NFS_PORT_OFFSET
from .ganesha_conf import ACCESS_TYPES, KRB5_FLAVORS, SEC_FLAVORS, SQUASHES, ExportClient, Kerberos
from .net import host_port

DEFAULT_PATH = Path("/etc/pando/pando.conf")
HOST_PREFIX = "host "
CLIENTS_PREFIX = "clients "

# Every section and key the file may hold, with its default ("" : none;
# None: required).  Anything else is a typo and an error.
SCHEMA: dict[str, dict[str, str | None]] = {
    "cluster": {"name": "pando", "key_file": None, "etcd": "", "prefix": "/pando/",
                "partition": "1"},
    "etcd": {"client_port": "2379", "data_dir": "/var/lib/etcd/pando"},
    "osd": {"base_port": "20490", "data_dir": "/var/lib/pando/osd.{id}", "threads": "8",
            "log_level": "info", "etcd_ttl": "5", "etcd_interval": "2"},
    "mds": {"nfs_port": "2049", "mnt_port": "20048", "db_path": "/var/lib/pando/mds/ns",
            "recovery_root": "/var/lib/pando/mds/recovery",
            "plugins_dir": "/usr/lib/x86_64-linux-gnu/ganesha", "mirrors": "2",
            "stripe_unit": "1048576", "inline_max": "65536", "log_level": "EVENT",
            # A manager group (several mds hosts, one active): the address
            # clients mount, ADDR/BITS, which moves to each new active.
            "service_address": "", "service_dev": "eth0"},
    "mgr": {"url": "", "port": "7480"},
    # For every NFS client no [clients NAME] section names.
    "export": {"access": "rw", "squash": "root_squash", "sec": "sys"},
    # The manager's Kerberos service (keytab "": none, no krb5 flavour).
    "kerberos": {"keytab": "", "principal": "nfs"},
}
HOST_KEYS: dict[str, str | None] = {"address": None, "osds": "", "mds": "no", "mgr": "no",
                                    "etcd": "no", "pool": ""}
# access and sec "": the export's.
CLIENTS_KEYS: dict[str, str | None] = {"hosts": None, "access": "", "squash": "root_squash",
                                       "sec": ""}
ACCESS_WORDS = {w.lower(): w for w in ACCESS_TYPES}
SQUASH_WORDS = {w.lower(): w for w in SQUASHES}
# A client as Ganesha's Clients takes it: a host name (wildcards * and ?),
# or @netgroup; addresses and ADDR/BITS networks are checked by ipaddress.
CLIENT_NAME_RE = re.compile(r"^@?[A-Za-z0-9*?]([A-Za-z0-9*?.-]*[A-Za-z0-9*?])?$")
BOOLEANS = {"yes": True, "true": True, "on": True, "1": True,
            "no": False, "false": False, "off": False, "0": False}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# A pool's name (common/cluster_map.h, cluster_map_pool_name_ok).
POOL_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,30}")
# A GSS host-based service name, as Ganesha's PrincipalName takes it.
SERVICE_RE = re.compile(r"^[A-Za-z0-9_.-]+(@[A-Za-z0-9_.-]+)?$")
# A path that goes into ganesha.conf between quotes as it is.
CONF_PATH_RE = re.compile(r"^/[A-Za-z0-9_.+/-]*$")


class ConfError(ValueError):
    """A bad pando.conf; the message names the file, line and key."""


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    osds: tuple[int, ...]
    mds: bool
    mgr: bool
    etcd: bool
    pool: str = ""          # the pool its OSDs serve; "": none


@dataclass(frozen=True)
class OsdPlace:
    """One OSD where the cluster runs it."""
    osd_id: int
    host: Host
    data_dir: Path
    nfs: str        # HOST:PORT on its host's address
    ctl: str


@dataclass
class PandoConf:
    path: Path
    values: dict[str, dict[str, str]]       # section -> key -> value (defaults filled)
    hosts: dict[str, Host] = field(default_factory=dict)
    # [clients NAME] sections in file order: Ganesha takes the first that
    # names a client.
    clients: list[ExportClient] = field(default_factory=list)

    def get(self, section: str, key: str) -> str:
        return self.values[section][key]

    def num(self, section: str, key: str) -> int:
        return int(self.values[section][key])

    @property
    def name(self) -> str:
        return self.get("cluster", "name")

    @property
    def export_access(self) -> str:
        """[export] access in Ganesha's word (checked by parse)."""
        return ACCESS_WORDS[self.get("export", "access").lower()]

    @property
    def export_squash(self) -> str:
        return SQUASH_WORDS[self.get("export", "squash").lower()]

    @property
    def export_sec(self) -> tuple[str, ...]:
        """[export] sec as Ganesha's SecType words (checked by parse)."""
        return _flavor_words(self.get("export", "sec"))

    @property
    def kerberos(self) -> Kerberos | None:
        keytab = self.get("kerberos", "keytab")
        return Kerberos(Path(keytab), self.get("kerberos", "principal")) if keytab else None

    @property
    def prefix(self) -> str:
        return self.get("cluster", "prefix")

    @property
    def key_file(self) -> Path:
        return Path(self.get("cluster", "key_file"))

    @property
    def etcd_hosts(self) -> list[Host]:
        return [h for h in self.hosts.values() if h.etcd]

    @property
    def etcd_port(self) -> int:
        return self.num("etcd", "client_port")

    @property
    def etcd_endpoints(self) -> str:
        """[cluster] etcd, else every etcd member's client URL."""
        given = self.get("cluster", "etcd")
        return given or ",".join(f"https://{host_port(h.address, self.etcd_port)}"
                                 for h in self.etcd_hosts)

    def etcd_endpoints_for(self, host: Host) -> str:
        """The endpoints with `host`'s own member first: its daemons talk to
        the etcd beside them, and try the others when it is down."""
        urls = self.etcd_endpoints.split(",")
        local = f"//{host_port(host.address, 0).rsplit(':', 1)[0]}:"
        return ",".join(sorted(urls, key=lambda u: local not in u))

    @property
    def mgr_url(self) -> str:
        """[mgr] url, else the first mgr host's API."""
        given = self.get("mgr", "url")
        mgrs = [h for h in self.hosts.values() if h.mgr]
        if given or not mgrs:
            return given
        return f"http://{host_port(mgrs[0].address, self.num('mgr', 'port'))}"

    def osds(self) -> list[OsdPlace]:
        base = self.num("osd", "base_port")
        out = [OsdPlace(i, h, Path(self.get("osd", "data_dir").format(id=i, host=h.name)),
                        host_port(h.address, base + NFS_PORT_OFFSET + i),
                        host_port(h.address, base + CTL_PORT_OFFSET + i))
               for h in self.hosts.values() for i in h.osds]
        return sorted(out, key=lambda o: o.osd_id)

    @property
    def service_address(self) -> ipaddress.IPv4Interface | None:
        """[mds] service_address (checked by parse): its managers are a
        group, named after the cluster."""
        given = self.get("mds", "service_address")
        return ipaddress.IPv4Interface(given) if given else None

    def host_path(self, section: str, key: str, host: Host) -> Path:
        return Path(self.get(section, key).format(host=host.name))


class _Lines:
    """Where each section and key is in the file, for error messages
    (configparser keeps values, not line numbers)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.where: dict[tuple[str, str], int] = {}
        section = ""
        for n, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if s.startswith("[") and s.endswith("]"):
                section = " ".join(s[1:-1].split())
                self.where[(section, "")] = n
            elif "=" in s and not s.startswith(("#", ";")):
                self.where.setdefault((section, s.split("=", 1)[0].strip().lower()), n)

    def error(self, section: str, key: str, msg: str) -> ConfError:
        n = self.where.get((section, key)) or self.where.get((section, ""))
        at = f"{self.path}:{n}" if n else str(self.path)
        what = f"[{section}] {key}" if key else f"[{section}]"
        return ConfError(f"{at}: {what}: {msg}")


def parse(path: Path) -> PandoConf:
    """Reads and checks pando.conf; ConfError names what is wrong and where."""
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfError(f"{path}: {e.strerror}") from None
    return parse_text(text, path)


def parse_text(text: str, path: Path = DEFAULT_PATH) -> PandoConf:
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#", ";"),
                                   default_section="\0none")
    try:
        cp.read_string(text, source=str(path))
    except configparser.Error as e:
        raise ConfError(str(e).replace("\n", " ")) from None
    lines = _Lines(path, text)
    values: dict[str, dict[str, str]] = {}
    for section, keys in SCHEMA.items():
        given = dict(cp[section]) if cp.has_section(section) else {}
        values[section] = _fill(lines, section, keys, given)
    conf = PandoConf(path, values)
    for section in cp.sections():
        norm = " ".join(section.split())
        if norm.startswith(HOST_PREFIX):
            host = _host(lines, norm, dict(cp[section]))
            if host.name in conf.hosts:
                raise lines.error(norm, "", "a second section for this host")
            conf.hosts[host.name] = host
        elif norm.startswith(CLIENTS_PREFIX):
            conf.clients.append(_clients(lines, norm, dict(cp[section]),
                                         bool(conf.get("kerberos", "keytab"))))
        elif norm not in SCHEMA:
            raise lines.error(norm, "", f"unknown section (known: "
                              f"{', '.join(SCHEMA)}, host NAME, clients NAME)")
    _check(conf, lines)
    return conf


def _fill(lines: _Lines, section: str, keys: dict[str, str | None],
          given: dict[str, str]) -> dict[str, str]:
    for key in given:
        if key not in keys:
            raise lines.error(section, key, f"unknown key (known: {', '.join(keys)})")
    out = {}
    for key, default in keys.items():
        value = given.get(key, default)
        if value is None or value == "" and default is None:
            raise lines.error(section, key, "required, missing")
        out[key] = value
    return out


def _bool(lines: _Lines, section: str, key: str, value: str) -> bool:
    try:
        return BOOLEANS[value.lower()]
    except KeyError:
        raise lines.error(section, key, f"'{value}' is not yes or no") from None


def _ids(lines: _Lines, section: str, value: str) -> tuple[int, ...]:
    ids: list[int] = []
    for word in filter(None, (w.strip() for w in value.split(","))):
        if not word.isdigit() or not 1 <= int(word) <= MAX_OSDS:
            raise lines.error(section, "osds", f"'{word}' is not an OSD id (1..{MAX_OSDS})")
        ids.append(int(word))
    return tuple(ids)


def _host(lines: _Lines, section: str, given: dict[str, str]) -> Host:
    name = section[len(HOST_PREFIX):].strip()
    if not NAME_RE.match(name):
        raise lines.error(section, "", f"'{name}' is not a host name")
    v = _fill(lines, section, HOST_KEYS, given)
    if any(c in v["address"] for c in " ,/[]") or not v["address"]:
        raise lines.error(section, "address", f"'{v['address']}' is not an address")
    if v["pool"] and (not POOL_RE.fullmatch(v["pool"]) or v["pool"] == "default"):
        raise lines.error(section, "pool", f"'{v['pool']}' is not a pool name (1 to 31 of "
                                           "a-z, 0-9, - and _, not starting with - or _, "
                                           "and not default)")
    return Host(name, v["address"], _ids(lines, section, v["osds"]),
                mds=_bool(lines, section, "mds", v["mds"]),
                mgr=_bool(lines, section, "mgr", v["mgr"]),
                etcd=_bool(lines, section, "etcd", v["etcd"]), pool=v["pool"])


def _word(lines: _Lines, section: str, key: str, value: str, words: dict[str, str]) -> str:
    try:
        return words[value.lower()]
    except KeyError:
        raise lines.error(section, key, f"'{value}' is not one of "
                          f"{', '.join(words)}") from None


def _client_host(lines: _Lines, section: str, word: str) -> str:
    try:
        return str(ipaddress.ip_network(word, strict=False))
    except ValueError:
        pass
    if word == "*" or CLIENT_NAME_RE.match(word) and "/" not in word:
        return word
    raise lines.error(section, "hosts", f"'{word}' is not an address, ADDR/BITS network, "
                      f"host name or @netgroup")


def _clients(lines: _Lines, section: str, given: dict[str, str],
             kerberos: bool) -> ExportClient:
    name = section[len(CLIENTS_PREFIX):].strip()
    if not NAME_RE.match(name):
        raise lines.error(section, "", f"'{name}' is not a name")
    v = _fill(lines, section, CLIENTS_KEYS, given)
    hosts = tuple(_client_host(lines, section, w)
                  for w in filter(None, (x.strip() for x in v["hosts"].split(","))))
    if not hosts:
        raise lines.error(section, "hosts", "names no host")
    access = v["access"] and _word(lines, section, "access", v["access"], ACCESS_WORDS)
    sec = _flavors(lines, section, v["sec"], kerberos) if v["sec"] else ()
    return ExportClient(hosts, _word(lines, section, "squash", v["squash"], SQUASH_WORDS),
                        access, sec)


def _flavor_words(value: str) -> tuple[str, ...]:
    return tuple(w.strip().lower() for w in value.split(",") if w.strip())


def _flavors(lines: _Lines, section: str, value: str, kerberos: bool) -> tuple[str, ...]:
    words = _flavor_words(value)
    for w in words:
        if w not in SEC_FLAVORS:
            raise lines.error(section, "sec", f"'{w}' is not one of {', '.join(SEC_FLAVORS)}")
        if w in KRB5_FLAVORS and not kerberos:
            raise lines.error(section, "sec", f"'{w}' needs [kerberos] keytab")
    if not words:
        raise lines.error(section, "sec", "names no flavour")
    return words


def _check_kerberos(conf: PandoConf, lines: _Lines) -> None:
    keytab, principal = conf.get("kerberos", "keytab"), conf.get("kerberos", "principal")
    if keytab and not CONF_PATH_RE.match(keytab):
        raise lines.error("kerberos", "keytab", f"'{keytab}' is not an absolute path "
                          f"of letters, digits and _.+/-")
    if not SERVICE_RE.match(principal):
        raise lines.error("kerberos", "principal", f"'{principal}' is not a service name "
                          f"(SERVICE or SERVICE@HOST)")
    _flavors(lines, "export", conf.get("export", "sec"), bool(keytab))


def _check(conf: PandoConf, lines: _Lines) -> None:
    for section, key in (("etcd", "client_port"), ("osd", "base_port"), ("mds", "nfs_port"),
                         ("mds", "mnt_port"), ("mgr", "port"), ("osd", "threads"),
                         ("osd", "etcd_ttl"), ("osd", "etcd_interval"), ("mds", "mirrors"),
                         ("mds", "stripe_unit"), ("mds", "inline_max"),
                         ("cluster", "partition")):
        if not conf.get(section, key).isdigit() or int(conf.get(section, key)) == 0:
            raise lines.error(section, key, f"'{conf.get(section, key)}' is not a "
                              f"positive number")
    if not conf.prefix.startswith("/") or not conf.prefix.endswith("/"):
        raise lines.error("cluster", "prefix", f"'{conf.prefix}' must start and end with /")
    for section, key, fields in (("osd", "data_dir", ("id", "host")),
                                 ("mds", "db_path", ("host",)),
                                 ("mds", "recovery_root", ("host",)),
                                 ("etcd", "data_dir", ("host",))):
        try:
            conf.get(section, key).format(**{f: "x" for f in fields})
        except (KeyError, IndexError, ValueError) as e:
            raise lines.error(section, key, f"bad placeholder {e} (allowed: "
                              f"{', '.join('{' + f + '}' for f in fields)})") from None
    _word(lines, "export", "access", conf.get("export", "access"), ACCESS_WORDS)
    _word(lines, "export", "squash", conf.get("export", "squash"), SQUASH_WORDS)
    _check_kerberos(conf, lines)
    if not conf.hosts:
        raise ConfError(f"{conf.path}: no [host NAME] section: name at least one host")
    seen: dict[int, str] = {}
    for h in conf.hosts.values():
        for i in h.osds:
            if i in seen:
                raise lines.error(f"{HOST_PREFIX}{h.name}", "osds",
                                  f"OSD {i} is already on host {seen[i]}")
            seen[i] = h.name
    if not conf.etcd_endpoints:
        raise ConfError(f"{conf.path}: no etcd: set [cluster] etcd, or etcd = yes on "
                        f"one host (three or five for a quorum that survives a failure)")
    _check_group(conf, lines)


def _check_group(conf: PandoConf, lines: _Lines) -> None:
    given, dev = conf.get("mds", "service_address"), conf.get("mds", "service_dev")
    if given:
        try:
            ok = "/" in given and ipaddress.IPv4Interface(given).ip.version == 4
        except ValueError:
            ok = False
        if not ok:
            raise lines.error("mds", "service_address",
                              f"'{given}' is not an IPv4 ADDR/BITS (10.0.0.50/24)")
    if not NAME_RE.match(dev):
        raise lines.error("mds", "service_dev", f"'{dev}' is not a device name")
    mds = [h.name for h in conf.hosts.values() if h.mds]
    if len(mds) > 1 and not given:
        raise lines.error(f"{HOST_PREFIX}{mds[1]}", "mds",
                          f"a second metadata manager ({', '.join(mds)}): several form one "
                          f"group, one active and its standbys, which needs [mds] "
                          f"service_address, the address clients mount")
