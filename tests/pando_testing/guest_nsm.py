"""The userland an NFSv3 client needs to lock, for kernel-client VMs.

A Linux NFSv3 client's lock manager (lockd, in the kernel) registers with
the local rpcbind and asks the local rpc.statd to monitor a server
(SM_MON) before it sends that server a lock; without them every lock fails
with ENOLCK.  The guests have only busybox, so this machine's Debian
rpcbind and rpc.statd go into an archive of their own, with the shared
libraries `ldd` lists, the dynamic loader, and the few /etc files they
read.  tests/e2e/guest/lib.sh starts them (nsm_up) when the VM is made
with `Vm(nfs3_locks=True)`.  The archive is made and cached by
guest_userland.py.
"""
from __future__ import annotations

import functools
from pathlib import Path

from .guest_userland import NAME_SERVICE_ETC, userland_archive

BINARIES = {"sbin/rpcbind": Path("/usr/sbin/rpcbind"),
            "sbin/rpc.statd": Path("/usr/sbin/rpc.statd")}

# rpcbind drops root for Debian's `_rpc` (built with --with-rpcuser=_rpc) and
# exits when the user is unknown; statd stays root (it owns /var/lib/nfs).
ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    # Without etc/services rpcbind listens on its unix socket alone, and
    # the kernel's lockd finds no statd.
    **NAME_SERVICE_ETC,
}
DIRS = ("run/rpcbind", "var/lib/nfs/sm", "var/lib/nfs/sm.bak")
# libtirpc registers with rpcbind through /var/run/rpcbind.sock; rpcbind
# makes /run/rpcbind.sock (Debian's /var/run is a link to /run).
SYMLINKS = {"var/run": "../run"}

@functools.lru_cache(maxsize=None)
def nsm_archive() -> Path:
    """The cached cpio archive of rpcbind and rpc.statd."""
    return userland_archive("nsm", BINARIES, ETC, DIRS, SYMLINKS, "rpcbind and nfs-common")
