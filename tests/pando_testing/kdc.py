"""A Kerberos realm of its own for a test: Debian's MIT KDC (krb5-kdc) on
the host's loopback, its database, keytabs and configuration in the
test's directory.  Processes that use the realm get `env()` (KRB5_CONFIG
names only this realm's KDC, by address: no DNS); the test process sets
it too, for the GSS client library it loads.

The manager's service principal is nfs/SERVICE_HOST: clients name the
service "nfs@SERVICE_HOST", and its keytab holds the key."""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .pod import Pod
from .podproc import terminate

REALM = "PANDO.TEST"
SERVICE_HOST = "pando-mds.test"
KDC = "/usr/sbin/krb5kdc"
KDB5_UTIL = "/usr/sbin/kdb5_util"
KADMIN_LOCAL = "/usr/sbin/kadmin.local"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Kdc:
    workdir: Path
    pod: Pod | None = None
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def krb5_conf(self) -> Path:
        return self.workdir / "krb5.conf"

    @property
    def idmap_conf(self) -> Path:
        """libnfsidmap's configuration for a server of this realm: its
        principals are local users (daemon@REALM is daemon)."""
        return self.workdir / "idmapd.conf"

    def env(self) -> dict[str, str]:
        return {"KRB5_CONFIG": str(self.krb5_conf),
                "KRB5_KDC_PROFILE": str(self.workdir / "kdc.conf")}

    def _write_config(self) -> None:
        d = self.workdir
        (d / "kdc.conf").write_text(
            f"[kdcdefaults]\n kdc_ports = {self.port}\n kdc_tcp_ports = {self.port}\n"
            f"[realms]\n {REALM} = {{\n  database_name = {d}/principal\n"
            f"  key_stash_file = {d}/stash\n  acl_file = {d}/kadm5.acl\n"
            f"  kdc_listen = 127.0.0.1:{self.port}\n  kdc_tcp_listen = 127.0.0.1:{self.port}\n"
            f"  max_life = 1h\n }}\n[logging]\n kdc = FILE:{d}/kdc.log\n"
            f" admin_server = FILE:{d}/kadmin.log\n")
        (d / "kadm5.acl").write_text("")
        self.krb5_conf.write_text(
            f"[libdefaults]\n default_realm = {REALM}\n dns_lookup_kdc = false\n"
            f" dns_lookup_realm = false\n dns_canonicalize_hostname = false\n rdns = false\n"
            f" udp_preference_limit = 1\n"
            f"[realms]\n {REALM} = {{\n  kdc = 127.0.0.1:{self.port}\n }}\n"
            f"[domain_realm]\n {SERVICE_HOST} = {REALM}\n")
        self.idmap_conf.write_text(f"[General]\nDomain = {REALM.lower()}\n"
                                   f"Local-Realms = {REALM}\n")

    def _admin(self, *argv: str) -> None:
        subprocess.run(list(argv), check=True, capture_output=True, timeout=60,
                       env={**os.environ, **self.env()})

    def start(self) -> "Kdc":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_config()
        self._admin(KDB5_UTIL, "create", "-s", "-r", REALM, "-P", secrets.token_hex(16))
        argv = [KDC, "-n", "-r", REALM]
        env = {**os.environ, **self.env()}
        with open(self.workdir / "krb5kdc.out", "ab") as out:
            self.proc = (self.pod.popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
                         if self.pod else
                         subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env))
        if self.pod:
            self.pod.wait_port("127.0.0.1", self.port, timeout=20, alive=self.alive)
            return self
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if not self.alive() or time.monotonic() > deadline:
                    raise RuntimeError(f"krb5kdc did not start (see {self.workdir})") from None
                time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def krb5_conf_for(self, kdc_address: str) -> str:
        """krb5.conf for a machine that reaches this KDC at `kdc_address`."""
        return self.krb5_conf.read_text().replace(f"127.0.0.1:{self.port}",
                                                  f"{kdc_address}:{self.port}")

    def principal(self, name: str) -> Path:
        """Adds `name` with a random key; the keytab that holds it."""
        keytab = self.workdir / f"{name.replace('/', '_')}.keytab"
        self._admin(KADMIN_LOCAL, "-r", REALM, "-q", f"addprinc -randkey {name}")
        self._admin(KADMIN_LOCAL, "-r", REALM, "-q", f"ktadd -k {keytab} {name}")
        return keytab

    def stop(self) -> int:
        assert self.proc is not None
        return terminate(self.proc, 10.0, strict=True)
