"""Files that hold one secret (the mgr token, etcd passwords, the etcd
secret): readable by their owner only, and refused on load otherwise, as
ssh refuses a private key.

A file is created with O_EXCL and mode 0600 (the umask can only take bits
away), never written and then chmod'ed, so no other user can open it in
between.  One rewritten in place goes through a new file renamed over it."""
from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path

HEX64 = re.compile(r"[0-9a-f]{64}")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class SecretFileError(OSError):
    """The file cannot be used; the message says why and what to do."""


def create(path: Path) -> bool:
    """Writes 32 random bytes (64 hex digits) to path unless a file is
    there; True when made."""
    try:
        fd = os.open(path, _CREATE, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    return True


def write(path: Path, secret: str) -> None:
    """Makes path hold secret, replacing what it held."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, _CREATE, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secret + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load(path: Path, what: str, pattern: re.Pattern[str] = HEX64,
         shape: str = "64 hex digits") -> str:
    """The secret in path; SecretFileError for a file that is missing, not
    a regular file, readable or writable by group or others, or whose
    text does not match pattern; what and shape name the secret and its
    form in messages."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise SecretFileError(f"{path}: cannot read {what}: {e.strerror}") from None
    with os.fdopen(fd) as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise SecretFileError(f"{path}: {what} is not a regular file")
        if mode & 0o077:
            raise SecretFileError(f"{path}: {what} is mode {mode & 0o777:04o}: it must be "
                                  f"readable by its owner only (chmod 600 {path})")
        text = f.read(1024).strip()
    if not pattern.fullmatch(text):
        raise SecretFileError(f"{path}: {what} is not {shape}")
    return text
