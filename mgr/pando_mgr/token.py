"""The mgr API's token (mgr/README.md, "Who may change the cluster"): 32
random bytes as 64 hex digits in a file only its owner may read.  The mgr
takes it with --token-file, the `pando` CLI from /etc/pando or the cluster
directory, `pando-cluster up` and `render` make it.

The file is created with O_EXCL and mode 0600 (the umask can only take
bits away), never written and then chmod'ed, so no other user can open
it in between; and it is refused on load if group or others may read or
write it, as ssh refuses a private key."""
from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
from pathlib import Path

DEFAULT_FILE = Path("/etc/pando/mgr.token")
FILE_NAME = DEFAULT_FILE.name
ENV = "PANDO_MGR_TOKEN_FILE"
TOKEN_RE = re.compile(r"[0-9a-f]{64}")


class TokenError(OSError):
    """The token file cannot be used; the message says why and what to do."""


def create(path: Path) -> bool:
    """Writes a new token to path unless a file is there; True when made."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    return True


def load(path: Path) -> str:
    """The token in path; TokenError for a file that is missing, not a
    regular file, readable or writable by group or others, or not a token."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise TokenError(f"{path}: cannot read the mgr token: {e.strerror}") from None
    with os.fdopen(fd) as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise TokenError(f"{path}: the mgr token is not a regular file")
        if mode & 0o077:
            raise TokenError(f"{path}: the mgr token is mode {mode & 0o777:04o}: it must be "
                             f"readable by its owner only (chmod 600 {path})")
        text = f.read(1024).strip()
    if not TOKEN_RE.fullmatch(text):
        raise TokenError(f"{path}: not a mgr token (64 hex digits)")
    return text


def matches(token: str, given: str) -> bool:
    """given is token, compared in constant time (no timing oracle)."""
    return hmac.compare_digest(token.encode(), given.encode(errors="surrogateescape"))
