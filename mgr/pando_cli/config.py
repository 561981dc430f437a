"""Where the mgr is: --mgr, else $PANDO_MGR, else the cluster
configuration file ($PANDO_CONF, else /etc/pando/pando.conf; its format is
cluster/README.md's): its `[mgr] url`, else the first `[host ...]` with
`mgr = yes` at its `address` and `[mgr] port`, as `pando-cluster render`
picks it; else http://127.0.0.1:7480."""
from __future__ import annotations

import configparser
import os
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
    """'host:port' -> 'http://host:port'; no trailing slash."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    return url


def resolve_mgr(flag: str | None, env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    for candidate in (flag, env.get("PANDO_MGR")):
        if candidate:
            return normalise_url(candidate)
    from_conf = mgr_url_from_conf(conf_path(env))
    return normalise_url(from_conf) if from_conf else DEFAULT_MGR
