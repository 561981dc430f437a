"""Where the mgr is: --mgr, else $PANDO_MGR, else the cluster
configuration file ($PANDO_CONF, else /etc/pando/pando.conf; its format is
cluster/README.md's): its `[mgr] url`, else the first `[host ...]` with
`mgr = yes` at its `address` and `[mgr] port`, as `pando-cluster render`
picks it; else http://127.0.0.1:7480."""
from __future__ import annotations

import configparser
import os
import urllib.parse
from pathlib import Path

DEFAULT_PORT = 7480
DEFAULT_MGR = f"http://127.0.0.1:{DEFAULT_PORT}"
YES = ("yes", "true", "on", "1")
DEFAULT_CONF = Path("/etc/pando/pando.conf")


class ConfigError(Exception):
    """The configuration file exists but cannot be read as INI."""


def conf_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    return Path(env["PANDO_CONF"]) if env.get("PANDO_CONF") else DEFAULT_CONF


def mgr_url_from_conf(path: Path) -> str | None:
    """The mgr's URL from the file; None when the file or both keys are absent."""
    if not path.is_file():
        return None
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#", ";"),
                                   default_section="\0none")
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {str(e).splitlines()[0]}") from None
    url = cp.get("mgr", "url", fallback="").strip()
    if url:
        return url
    for section in cp.sections():
        host = cp[section]
        if section.startswith("host ") and host.get("mgr", "").strip().lower() in YES:
            address = host.get("address", "").strip()
            port = cp.get("mgr", "port", fallback=str(DEFAULT_PORT)).strip()
            if address:
                return f"http://{f'[{address}]' if ':' in address else address}:{port}"
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
