"""The userland a Linux NFS client needs for Kerberos, for kernel-client
VMs: rpc.gssd, which answers the kernel's RPCSEC_GSS upcalls (through
rpc_pipefs) with tickets from the realm's KDC, for root from the host's
keytab.  This machine's Debian rpc.gssd and its libraries go into an
archive (guest_userland.py); a test gives each guest its realm's
krb5.conf, its keytab and the names it resolves (`GuestKerberos`), and
tests/e2e/guest/lib.sh starts gssd (gss_up) before the first mount.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from .guest_userland import userland_archive

BINARIES = {"sbin/rpc.gssd": Path("/usr/sbin/rpc.gssd")}
ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}
DIRS = ("run/rpc_pipefs", "var/tmp")


@functools.lru_cache(maxsize=None)
def gss_archive() -> Path:
    """The cached cpio archive of rpc.gssd."""
    return userland_archive("gss", BINARIES, ETC, DIRS, {}, "nfs-common")


@dataclass(frozen=True)
class GuestKerberos:
    """A guest's realm: `krb5_conf` (its KDC at an address the guest
    reaches), the keytab of its own principal (nfs/NAME, which rpc.gssd
    uses for root), and /etc/hosts lines, so that gssd finds the
    server's name for its address (nfs/NAME@REALM is the service
    principal) and its own."""
    krb5_conf: str
    keytab: bytes
    hosts: str

    def files(self) -> dict[str, tuple[bytes, int]]:
        return {"etc/krb5.conf": (self.krb5_conf.encode(), 0o644),
                "etc/krb5.keytab": (self.keytab, 0o600),
                "etc/hosts": (self.hosts.encode(), 0o644)}
