"""ganesha.conf for a Pando metadata manager, rendered in one place.

`GaneshaSettings`' defaults are what `pando-cluster up` gives users
(cluster/README.md, "Ganesha settings"); the test harness
(tests/pando_testing/ganesha.py) renders its servers with the same
`render()`, changing only the keys TEST_OVERRIDES lists, so the tests run
the configuration users run (tests/cluster/test_ganesha_conf.py holds them
to it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

EXPORT_PATH = "/pando"

# Shorter than Ganesha's 60 s and 90 s for a faster failover: no client gets
# new state until the grace period ends, and one that never comes back holds
# everyone for all of it (cluster/README.md, "Grace period").  The grace
# period must not be shorter than the lease (RFC 8881 8.4.2.1).
LEASE_LIFETIME_S = 30
GRACE_PERIOD_S = 45
# How long an NFSv3 host told of a restart has to reclaim its locks before
# the grace period may end: Linux reclaims within milliseconds of the news.
NSM_RECLAIM_WINDOW_S = 5

# The ganesha.conf keys (BLOCK.Key; "*" any key below) in which a test's
# configuration may differ from production's, and why.
TEST_OVERRIDES: Mapping[str, str] = {
    "NFS_CORE_PARAM.NFS_Port": "each test's own ports",
    "NFS_CORE_PARAM.MNT_Port": "each test's own ports",
    "NFS_CORE_PARAM.Rquota_Port": "each test's own ports",
    "NFS_CORE_PARAM.Bind_Addr": "none in a test pod (its network holds only loopback), or one "
                                "of two servers sharing a port in a pod",
    "NFS_CORE_PARAM.Plugins_Dir": "the build tree under test (the VFS baseline: Debian's)",
    "NFSV4.RecoveryRoot": "each test's own directory",
    "NFS_CORE_PARAM.NSM_Notify_Dir": "each test's own rpc.statd directory",
    "EXPORT.Path": "each test's own directory (the VFS baseline)",
    "EXPORT.Pseudo": "each test's own pseudo path",
    "NFSV4.Graceless": "tests that never restart Ganesha skip the grace period",
    "LOG.Default_Log_Level": "a reproduction's log level",
    "LOG.COMPONENTS.*": "per-component log levels (STATE at DEBUG in the kernel tests)",
    "NFS_CORE_PARAM.NFS_Protocols": "NFSv3 alone for the VFS baseline's benchmarks",
    "EXPORT.Protocols": "NFSv3 alone for the VFS baseline's benchmarks",
    "NFSV4.Minor_Versions": "tests of one NFSv4 minor version",
    "NFSV4.PNFS_MDS": "gateway-only tests and the VFS baseline hand out no layouts",
    "EXPORT.Access_Type": "a read-only VFS export",
    "EXPORT.FSAL.*": "FSAL options a test chooses, and the VFS baseline's FSAL block",
    "NFSV4.IdmapConf": "a test realm's own idmapd.conf, whose Local-Realms name it",
    "MDCACHE.Entries_HWMark": "a handle cache small enough to evict a file between two calls",
    "EXPORT.CLIENT.*": "the test pods' own clients keep root, as a site's job hosts do: the "
                       "rack's 10.77.0.0/16 and tap guests' 10.0.3.0/24 besides loopback; "
                       "tests/security/test_root_squash.py squashes another address",
}

# Who a squashed root becomes: Debian's nobody and nogroup, as knfsd's
# anonuid and anongid (Ganesha's own default, -2, is uid 4294967294).
ANON_ID = 65534
SQUASHES = ("Root_Squash", "No_Root_Squash", "All_Squash")
ACCESS_TYPES = ("RW", "RO", "None")
# RPC security flavours, Ganesha's SecType words: AUTH_SYS, and Kerberos
# v5 authentication alone, with integrity, with privacy (RFC 2623).
SEC_FLAVORS = ("sys", "krb5", "krb5i", "krb5p")
KRB5_FLAVORS = SEC_FLAVORS[1:]


@dataclass(frozen=True)
class ExportClient:
    """One CLIENT block of the export: the hosts it names (addresses,
    networks as ADDR/BITS, host names, *) and what they get instead of
    the export's own Squash, and Access_Type when one is given ("": the
    export's).  Ganesha takes the first block that names a client."""
    hosts: tuple[str, ...]
    squash: str = "No_Root_Squash"
    access_type: str = ""
    sec: tuple[str, ...] = ()       # (): the export's flavours

    def lines(self) -> list[str]:
        access = [f"Access_Type = {self.access_type};"] if self.access_type else []
        sec = [f"SecType = {', '.join(self.sec)};"] if self.sec else []
        return [f"Clients = {', '.join(self.hosts)};", *access, f"Squash = {self.squash};",
                *sec]


@dataclass(frozen=True)
class Kerberos:
    """The manager as a Kerberos service: the keytab that holds its key,
    and its service name, Ganesha's PrincipalName ("nfs" is
    nfs/<this host's name>; "nfs@NAME" names the host)."""
    keytab: Path
    principal: str = "nfs"

    def lines(self) -> list[str]:
        return [f'PrincipalName = "{self.principal}";', f'KeytabPath = "{self.keytab}";',
                "Active_krb5 = true;"]


@dataclass(frozen=True)
class PandoFsal:
    """The export's FSAL block for Pando (options: ganesha-fsal/README.md)."""
    db_path: Path
    cluster_conf: Path
    mirrors: int = 2
    inline_max: int = 65536
    stripe_unit: int = 1 << 20
    # The cluster map in etcd ("": cluster.conf only).
    etcd: str = ""
    etcd_prefix: str = ""
    mds_name: str = ""
    etcd_ca: str = ""
    etcd_user: str = ""
    etcd_password_file: str = ""
    # The manager group this manager is a member of ("": none); its
    # clients' reclaim records then live in etcd (RecoveryBackend = fsal).
    mds_group: str = ""
    # More "Key = value;" lines (tests: Object_Pool, Recall_Timeout, ...).
    options: tuple[str, ...] = ()

    def lines(self, pnfs: bool) -> list[str]:
        return ["Name = PANDO;", f'Db_Path = "{self.db_path}";',
                f'Cluster = "{self.cluster_conf}";', f"Inline_Max = {self.inline_max};",
                f"Mirrors = {self.mirrors};", f"Stripe_Unit = {self.stripe_unit};",
                f"Pnfs = {_bool(pnfs)};", *self._etcd_lines(), *self.options]

    def _etcd_lines(self) -> list[str]:
        pairs = (("Etcd", self.etcd), ("Etcd_Prefix", self.etcd_prefix),
                 ("Mds_Name", self.mds_name), ("Mds_Group", self.mds_group),
                 ("Etcd_CA", self.etcd_ca),
                 ("Etcd_User", self.etcd_user), ("Etcd_Password_File", self.etcd_password_file))
        return [f'{key} = "{value}";' for key, value in pairs if value]


@dataclass(frozen=True)
class GaneshaSettings:
    """Everything a Pando ganesha.conf is made of; the defaults are
    production's.  `fsal` is Pando's block, or another FSAL's lines (the
    tests' VFS baseline); `pnfs` sets both PNFS_MDS and the FSAL's Pnfs."""
    plugins_dir: Path
    recovery_root: Path
    fsal: PandoFsal | tuple[str, ...]
    nfs_port: int = 2049
    mnt_port: int = 20048
    rquota_port: int = 875
    bind: str | None = "127.0.0.1"
    export_path: str = EXPORT_PATH
    pseudo: str = EXPORT_PATH
    protocols: tuple[int, ...] = (3, 4)
    minor_versions: tuple[int, ...] = (1, 2)
    pnfs: bool = True
    graceless: bool = False
    access_type: str = "RW"
    # Root from any host no CLIENT block names is nobody (ANON_ID).
    squash: str = "Root_Squash"
    clients: tuple[ExportClient, ...] = ()
    # The RPC security flavours a client may use (SEC_FLAVORS); a Kerberos
    # one needs `kerberos`.
    sec: tuple[str, ...] = ("sys",)
    kerberos: Kerberos | None = None
    # libnfsidmap's configuration, which maps a Kerberos principal to a
    # user (Local-Realms); None: its default, /etc/idmapd.conf.
    idmap_conf: Path | None = None
    log_level: str = "EVENT"
    log_components: Mapping[str, str] = field(default_factory=dict)
    # Ganesha's handle cache size; None: its default (no MDCACHE block).
    mdcache_entries: int | None = None
    # statd's notify list (its sm.bak/), which sm-notify empties as the
    # NFSv3 hosts that held locks answer: with it the grace period ends
    # once they have all been told and had NSM_RECLAIM_WINDOW_S to reclaim;
    # None (a statd that is not ours) keeps the whole grace period.
    nsm_notify_dir: Path | None = None


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _numbers(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values))


def _block(name: str, lines: list[str], indent: str = "") -> list[str]:
    return [f"{indent}{name} {{", *(f"{indent}    {x}" for x in lines), f"{indent}}}"]


def _check_sec(s: GaneshaSettings) -> None:
    if not s.sec:
        raise ValueError("the export names no security flavour")
    for sec in (s.sec, *(c.sec for c in s.clients)):
        if set(sec) - set(SEC_FLAVORS):
            raise ValueError(f"security flavours {', '.join(sec)}: each must be one of "
                             f"{', '.join(SEC_FLAVORS)}")
        if s.kerberos is None and set(sec) & set(KRB5_FLAVORS):
            raise ValueError(f"security flavours {', '.join(sec)} need a Kerberos keytab")


def _group_member(s: GaneshaSettings) -> list[str]:
    """A group member's clients reclaim on whichever member is active
    next: their records are in etcd, not in RecoveryRoot, and every member
    is the same server to them (one owner and scope: Linux reclaims
    nothing from a server of another scope)."""
    if not isinstance(s.fsal, PandoFsal) or not s.fsal.mds_group:
        return []
    name = f"pando-group-{s.fsal.mds_group}"
    return ["RecoveryBackend = fsal;", f'Server_Owner = "{name}";', f'Server_Scope = "{name}";']


def render(s: GaneshaSettings) -> str:
    """The whole ganesha.conf; ValueError for flavours it cannot serve."""
    _check_sec(s)
    core = [f"NFS_Port = {s.nfs_port};", f"MNT_Port = {s.mnt_port};",
            f"NFS_Protocols = {_numbers(s.protocols)};",
            # NFSv3 locking: NLM, with the rpc.statd started beside Ganesha
            # (statd.py) monitoring the hosts that lock.
            "Enable_NLM = true;",
            # Users' and groups' quotas for Linux's quota tools (rquota);
            # they call it over UDP alone, so UDP listens for RQUOTA and
            # MOUNT (patches/0151); NFS itself stays TCP only.
            "Enable_RQUOTA = true;", f"Rquota_Port = {s.rquota_port};", "Enable_UDP = mount;",
            *([f'NSM_Notify_Dir = "{s.nsm_notify_dir}";',
               f"NSM_Reclaim_Window = {NSM_RECLAIM_WINDOW_S};"] if s.nsm_notify_dir else []),
            *([f"Bind_Addr = {s.bind};"] if s.bind else []),
            f'Plugins_Dir = "{s.plugins_dir}";']
    nfsv4 = [f"Minor_Versions = {_numbers(s.minor_versions)};",
             # pNFS: clients get flexfiles layouts and move data to the OSDs directly.
             f"PNFS_MDS = {_bool(s.pnfs)};",
             f"Lease_Lifetime = {LEASE_LIFETIME_S};", f"Grace_Period = {GRACE_PERIOD_S};",
             f"Graceless = {_bool(s.graceless)};",
             f'RecoveryRoot = "{s.recovery_root}";', *_group_member(s),
             "Only_Numeric_Owners = true;",
             *([f'IdmapConf = "{s.idmap_conf}";'] if s.idmap_conf else [])]
    log = [f"Default_Log_Level = {s.log_level};"]
    if s.log_components:
        log += _block("COMPONENTS", [f"{c} = {lvl};" for c, lvl in s.log_components.items()])
    fsal = s.fsal.lines(s.pnfs) if isinstance(s.fsal, PandoFsal) else list(s.fsal)
    export = ["Export_Id = 1;", f'Path = "{s.export_path}";', f'Pseudo = "{s.pseudo}";',
              f"Protocols = {_numbers(s.protocols)};", "Transports = TCP;",
              f"Access_Type = {s.access_type};", f"Squash = {s.squash};",
              f"Anonymous_Uid = {ANON_ID};", f"Anonymous_Gid = {ANON_ID};",
              f"SecType = {', '.join(s.sec)};",
              *(x for c in s.clients for x in _block("CLIENT", c.lines())),
              *_block("FSAL", fsal)]
    mdcache = ([] if s.mdcache_entries is None
               else _block("MDCACHE", [f"Entries_HWMark = {s.mdcache_entries};"]))
    lines = [*_block("NFS_CORE_PARAM", core), *_block("NFSV4", nfsv4),
             *_block("NFS_KRB5", s.kerberos.lines() if s.kerberos else ["Active_krb5 = false;"]),
             *_block("LOG", log), *mdcache,
             *_block("EXPORT", export)]
    return "\n".join(lines) + "\n"
