"""The durable VFS baseline's file system: NFS asks that a create be on
stable storage before its reply, and Ganesha VFS over a plain ext4 leaves
it in the page cache; over an ext4 mounted `dirsync` the directory change
is on disk first, as a Pando manager's store has it (its WAL synced
before the reply)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from .pod import Pod

IMAGE_MIB = 4096    # sparse: only what the baseline writes takes space


def dirsync_fs(pod: Pod, workdir: Path, name: str) -> Path:
    """A sparse ext4 image of its own in workdir, loop-mounted `dirsync` in
    the pod's mount namespace (seen there only); the mount point, with an
    `export` directory on the image.  Unmount it with `pod.run(["umount",
    mnt])` before the pod stops."""
    img, mnt = workdir / f"{name}.img", workdir / f"{name}.mnt"
    mnt.mkdir(parents=True, exist_ok=True)
    with open(img, "wb") as f:
        f.truncate(IMAGE_MIB << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True)
    pod.run(["mount", "-o", "loop,dirsync", img, mnt])
    pod.run(["mkdir", "-p", mnt / "export"])
    return mnt
