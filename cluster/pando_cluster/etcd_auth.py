"""etcd's TLS and users for a Pando cluster (cluster/README.md, "etcd's
TLS and users"): the files in one directory (DIR/etcd-auth for `up`,
/etc/pando/etcd-auth for `render`), and setting up users in etcd.

  ca.crt, ca.key    the CA that signs the members' certificates; every
                    daemon checks etcd's certificate against ca.crt
  member.crt/.key   this host's member: server and peer certificate, for
                    the addresses in member.san
  secret            64 hex digits the users' passwords derive from
                    (pando_mgr.etcd_roles.password)
  USER.password     the password of each user whose daemon runs here

ca.key and secret are made once, on the first host; an admin copies them
to every other host, as the mgr token.  Secrets are made with O_EXCL and
mode 0600 (pando_mgr.secret_file)."""
from __future__ import annotations

import asyncio
import ipaddress
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

DIR_NAME = "etcd-auth"
CA_DAYS = 3650
CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


class EtcdAuthError(RuntimeError):
    pass


@dataclass(frozen=True)
class EtcdAccess:
    """How one daemon reaches etcd: its client URLs, and, for a secured
    etcd, the CA, its user and that user's password file."""
    endpoints: str
    ca_file: str = ""
    user: str = ""
    password_file: str = ""

    def as_user(self, user: str) -> "EtcdAccess":
        """The same etcd as user, whose password file lies beside the CA
        (a plain etcd has no users)."""
        if not self.ca_file:
            return self
        return EtcdAccess(self.endpoints, self.ca_file, user,
                          str(Path(self.ca_file).with_name(f"{user}.password")))

    def osd(self, osd_id: int) -> "EtcdAccess":
        return self.as_user(f"osd.{osd_id}")       # pando_mgr.etcd_roles.osd_user

    def mds(self, name: str) -> "EtcdAccess":
        return self.as_user(f"mds.{name}")         # pando_mgr.etcd_roles.mds_user

    def mgr(self) -> "EtcdAccess":
        return self.as_user("mgr")                 # pando_mgr.etcd_roles.MGR


def _openssl(args: list[str]) -> None:
    r = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise EtcdAuthError(f"openssl {args[0]}: {r.stderr.strip()[-400:]}")


def ensure_ca(d: Path) -> bool:
    """Makes ca.crt and ca.key in d unless there; True when made."""
    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o755)
    if (d / "ca.key").exists():
        return False
    _openssl(["req", "-x509", *CURVE, "-keyout", str(d / "ca.key"), "-out", str(d / "ca.crt"),
              "-days", str(CA_DAYS), "-subj", "/CN=pando etcd CA"])
    (d / "ca.key").chmod(0o600)
    return True


def _san(addresses: list[str]) -> str:
    def one(a: str) -> str:
        try:
            ipaddress.ip_address(a)
            return f"IP:{a}"
        except ValueError:
            return f"DNS:{a}"
    return ",".join(one(a) for a in sorted(set(addresses)))


def ensure_member_cert(d: Path, addresses: list[str]) -> bool:
    """Makes member.crt and member.key in d, signed by the CA, for these
    addresses, unless there for the same ones; True when made."""
    san = _san(addresses)
    if (d / "member.san").exists() and (d / "member.san").read_text().strip() == san:
        return False
    ext = d / "member.ext"
    ext.write_text(f"subjectAltName={san}\nextendedKeyUsage=serverAuth,clientAuth\n"
                   f"basicConstraints=CA:FALSE\n")
    csr = d / "member.csr"
    _openssl(["req", *CURVE, "-keyout", str(d / "member.key"), "-out", str(csr),
              "-subj", "/CN=pando etcd member"])
    (d / "member.key").chmod(0o600)
    _openssl(["x509", "-req", "-in", str(csr), "-CA", str(d / "ca.crt"),
              "-CAkey", str(d / "ca.key"), "-CAcreateserial", "-out", str(d / "member.crt"),
              "-days", str(CA_DAYS), "-extfile", str(ext)])
    csr.unlink()
    ext.unlink()
    (d / "member.san").write_text(san + "\n")
    return True


def ensure_secret(d: Path) -> bool:
    from pando_mgr import secret_file
    made = secret_file.create(d / "secret")
    secret_file.load(d / "secret", "the etcd secret")
    return made


def users(osd_ids: list[int], mds_names: list[str], mgr: bool = True,
          root: bool = False) -> list[str]:
    """The etcd users of these OSDs and managers, and of the mgr and root."""
    from pando_mgr import etcd_roles
    return ([etcd_roles.ROOT] if root else []) + ([etcd_roles.MGR] if mgr else []) + [
        *map(etcd_roles.mds_user, mds_names), *map(etcd_roles.osd_user, osd_ids)]


def write_passwords(d: Path, users: list[str]) -> None:
    """USER.password for each user, derived from d's secret."""
    from pando_mgr import etcd_roles, secret_file
    secret = secret_file.load(d / "secret", "the etcd secret")
    for u in users:
        path = d / f"{u}.password"
        pw = etcd_roles.password(secret, u)
        if not path.exists() or path.read_text().strip() != pw:
            secret_file.write(path, pw)


def provision(endpoints: str, d: Path, prefix: str, osd_ids: list[int],
              mds_names: list[str], timeout: float = 30.0) -> None:
    """Sets up root, mgr, the managers' and the OSDs' users and roles in
    etcd (client URLs, comma-separated) and turns authentication on (again:
    brings them up to date).  Waits up to timeout for a quorum: members
    started a moment ago may still be electing a leader."""
    from pando_mgr import etcd_roles, secret_file
    from pando_mgr.etcd import Etcd, EtcdAuth, EtcdUnavailable

    write_passwords(d, [etcd_roles.ROOT])
    secret = secret_file.load(d / "secret", "the etcd secret")
    users = etcd_roles.grants(prefix, osd_ids, mds_names)

    async def run() -> None:
        etcd = Etcd(endpoints.split(","), timeout=5.0,
                    auth=EtcdAuth(str(d / "ca.crt"), etcd_roles.ROOT,
                                  str(d / f"{etcd_roles.ROOT}.password")))
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    await etcd_roles.provision(etcd, secret, users)
                    return
                except EtcdUnavailable:
                    if time.monotonic() > deadline:
                        raise
                await asyncio.sleep(0.5)
        finally:
            await etcd.close()
    asyncio.run(run())
