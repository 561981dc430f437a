"""Linux's quota tools for kernel-client guests: this machine's Debian
`quota` and `setquota` (quota-tools), which ask the NFS server's RQUOTA
for a mount's quotas, with the shared libraries `ldd` lists, the dynamic
loader and the /etc files they read.  In the guest when the VM is made
with `Vm(quota_tools=True)`; the archive is made and cached by
guest_userland.py."""
from __future__ import annotations

import functools
from pathlib import Path

from .guest_userland import NAME_SERVICE_ETC, userland_archive

BINARIES = {"bin/quota": Path("/usr/bin/quota"),
            "sbin/setquota": Path("/usr/sbin/setquota")}

ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:100::/tmp:/bin/sh\n",
    "etc/group": "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n",
    **NAME_SERVICE_ETC,
}
# quota-tools reads the mounts from /etc/mtab.
SYMLINKS = {"etc/mtab": "../proc/self/mounts"}


@functools.lru_cache(maxsize=None)
def quota_archive() -> Path:
    """The cached cpio archive of quota and setquota."""
    return userland_archive("quota", BINARIES, ETC, (), SYMLINKS, "quota")
