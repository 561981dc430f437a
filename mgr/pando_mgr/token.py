"""The mgr API's token (mgr/README.md, "Who may change the cluster"): 32
random bytes as 64 hex digits in a file only its owner may read.  The mgr
takes it with --token-file, the `pando` CLI from /etc/pando or the cluster
directory, `pando-cluster up` and `render` make it.

The file is a secret_file: 0600, made safely, checked on load."""
from __future__ import annotations

import hmac
import re
from pathlib import Path

from . import secret_file

DEFAULT_FILE = Path("/etc/pando/mgr.token")
FILE_NAME = DEFAULT_FILE.name
ENV = "PANDO_MGR_TOKEN_FILE"
TOKEN_RE = re.compile(r"[0-9a-f]{64}")


TokenError = secret_file.SecretFileError


def create(path: Path) -> bool:
    """Writes a new token to path unless a file is there; True when made."""
    return secret_file.create(path)


def load(path: Path) -> str:
    """The token in path; TokenError for a file that is missing, not a
    regular file, readable or writable by group or others, or not a token."""
    return secret_file.load(path, "the mgr token", TOKEN_RE)


def matches(token: str, given: str) -> bool:
    """given is token, compared in constant time (no timing oracle)."""
    return hmac.compare_digest(token.encode(), given.encode(errors="surrogateescape"))
