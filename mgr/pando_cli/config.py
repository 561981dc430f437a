"""Where the mgr is: --mgr, else $PANDO_MGR, else the cluster
configuration file ($PANDO_CONF, else /etc/pando/pando.conf; its format is
cluster/README.md's): its `[mgr] url`, else the first `[host ...]` with
`mgr = yes` at its `address` and `[mgr] port`, as `pando-cluster render`
picks it; else http://127.0.0.1:7480.  Where the mgr's token is
(resolve_token_file), and which hosts are mgrs (mgr_hosts)."""
from __future__ import annotations

import configparser
import os
import urllib.parse
from pathlib import Path

DEFAULT_PORT = 7480
DEFAULT_MGR = f"http://127.0.0.1:{DEFAULT_PORT}"
YES = ("yes", "true", "on", "1")
DEFAULT_CONF = Path("/etc/pando/pando.conf")
TOKEN_ENV = "PANDO_MGR_TOKEN_FILE"       # pando_mgr.token.ENV
TOKEN_NAME = "mgr.token"                 # pando_mgr.token.FILE_NAME
CLUSTER_DIR = "~/.pando-cluster"         # pando-cluster up's, unless $PANDO_CLUSTER_DIR


class ConfigError(Exception):
    """The configuration file exists but cannot be read as INI."""


def conf_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    return Path(env["PANDO_CONF"]) if env.get("PANDO_CONF") else DEFAULT_CONF


def _read(path: Path) -> configparser.ConfigParser | None:
    if not path.is_file():
        return None
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#", ";"),
                                   default_section="\0none")
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {str(e).splitlines()[0]}") from None
    return cp


def _mgr_addresses(cp: configparser.ConfigParser) -> list[str]:
    """The address of each `[host ...]` with `mgr = yes`, in file order."""
    return [cp[s].get("address", "").strip() for s in cp.sections()
            if s.startswith("host ") and cp[s].get("mgr", "").strip().lower() in YES
            and cp[s].get("address", "").strip()]


def mgr_url_from_conf(path: Path) -> str | None:
    """The mgr's URL from the file; None when the file or both keys are absent."""
    cp = _read(path)
    if cp is None:
        return None
    url = cp.get("mgr", "url", fallback="").strip()
    if url:
        return url
    addresses = _mgr_addresses(cp)
    if not addresses:
        return None
    port = cp.get("mgr", "port", fallback=str(DEFAULT_PORT)).strip()
    first = addresses[0]
    return f"http://{f'[{first}]' if ':' in first else first}:{port}"


def mgr_hosts(path: Path) -> set[str]:
    """The hosts the file names as mgrs (`[mgr] url`, `[host ...]` with
    `mgr = yes`): those a redirect may send the token to."""
    cp = _read(path)
    if cp is None:
        return set()
    url_host = urllib.parse.urlsplit(cp.get("mgr", "url", fallback="").strip()).hostname
    return {h.strip("[]").lower() for h in _mgr_addresses(cp)} | ({url_host} if url_host else set())


def resolve_token_file(flag: Path | None, env: dict[str, str] | None = None) -> Path | None:
    """Where the mgr's token is: --token-file, else $PANDO_MGR_TOKEN_FILE,
    else mgr.token beside the configuration file ($PANDO_CONF's folder, else
    /etc/pando), else in pando-cluster up's directory ($PANDO_CLUSTER_DIR,
    else ~/.pando-cluster); None: no such file."""
    env = dict(os.environ) if env is None else env
    if flag is not None:
        return flag
    if env.get(TOKEN_ENV):
        return Path(env[TOKEN_ENV])
    for folder in (conf_path(env).parent,
                   Path(env.get("PANDO_CLUSTER_DIR") or CLUSTER_DIR).expanduser()):
        if (folder / TOKEN_NAME).exists():
            return folder / TOKEN_NAME
    return None


def normalise_url(url: str) -> str:
    """'host:port' -> 'http://host:port', no trailing slash; ValueError
    for anything but an http(s) URL with a host and a valid port."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port               # ValueError when out of range
    except ValueError as e:
        raise ValueError(f"not a URL: {url!r} ({e})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"not an http URL: {url!r}")
    if not parts.hostname or any(c.isspace() or ord(c) < 32 for c in text):
        raise ValueError(f"not a URL: {url!r} (no host, or spaces)")
    if port == 0:
        raise ValueError(f"not a URL: {url!r} (port 0)")
    return text.rstrip("/")


def resolve_mgr(flag: str | None, env: dict[str, str] | None = None) -> str:
    """The mgr's URL (flag, $PANDO_MGR, the file, the default); ConfigError
    names the source of a bad one."""
    env = dict(os.environ) if env is None else env
    for source, url in (("--mgr", flag), ("$PANDO_MGR", env.get("PANDO_MGR"))):
        if url:
            return _checked(source, url)
    path = conf_path(env)
    from_conf = mgr_url_from_conf(path)
    return _checked(f"{path}: the mgr's URL", from_conf) if from_conf else DEFAULT_MGR


def _checked(source: str, url: str) -> str:
    try:
        return normalise_url(url)
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
