"""Where the mgr is: --mgr, else $PANDO_MGR, else the `[mgr] url` of the
cluster configuration file ($PANDO_CONF, else /etc/pando/pando.conf),
else http://127.0.0.1:7480."""
from __future__ import annotations

import configparser
import os
from pathlib import Path

DEFAULT_MGR = "http://127.0.0.1:7480"
DEFAULT_CONF = Path("/etc/pando/pando.conf")


class ConfigError(Exception):
    """The configuration file exists but cannot be read as INI."""


def conf_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    return Path(env["PANDO_CONF"]) if env.get("PANDO_CONF") else DEFAULT_CONF


def mgr_url_from_conf(path: Path) -> str | None:
    """`url` in the file's `[mgr]` section; None when the file or key is absent."""
    if not path.is_file():
        return None
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {e}") from None
    url = cp.get("mgr", "url", fallback="").strip()
    return url or None


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
