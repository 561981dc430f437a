"""A blocking client of pando-mgr's HTTP API (mgr/README.md): JSON in and
out, the mgr's token on every change, a follower's 307 followed to the
leader when the leader is a mgr this command knows, every failure turned
into one of the exceptions that main.py maps to exit codes."""
from __future__ import annotations

import errno
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from pando_mgr import token

from . import config

MAX_REDIRECTS = 3


class MgrUnreachable(Exception):
    """No answer from the mgr (or the mgr cannot reach etcd: 503)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach pando-mgr at {url}: {reason}")
        self.url = url
        self.reason = reason


class EtcdUnreachable(MgrUnreachable):
    """The mgr answered 503: it cannot reach etcd, or no mgr leads now."""

    def __init__(self, url: str, reason: str) -> None:
        what = "etcd" if "etcd" in reason else "a leading pando-mgr"
        Exception.__init__(self, f"cannot reach {what} (pando-mgr at {url} says: {reason})")
        self.url = url
        self.reason = reason


class MgrError(Exception):
    """The mgr answered with an error (400, 404, 409, 500) or with
    something that is not the JSON it should be."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are followed by MgrClient itself, for every method."""

    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


def _reason(e: BaseException) -> str:
    """'connection refused', 'timed out', ... from a socket-level error."""
    inner = e.reason if isinstance(e, urllib.error.URLError) else e
    if isinstance(inner, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(inner, socket.gaierror):
        return f"cannot resolve host ({inner.strerror})"
    if isinstance(inner, OSError) and inner.errno:
        return (inner.strerror or errno.errorcode.get(inner.errno, str(inner))).lower()
    return str(inner) or type(inner).__name__


def _error_text(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        text = raw.decode(errors="replace").strip()
        return text.splitlines()[0][:200] if text else "(empty answer)"
    if isinstance(body, dict) and "error" in body:
        return str(body["error"])
    return json.dumps(body)[:200]


class MgrClient:
    """token_file: the mgr's token, read at the first change (reads need
    none); conf: the cluster configuration file, whose mgr hosts a
    redirect may go to besides the host of url."""

    def __init__(self, url: str, timeout: float = 10.0, token_file: Path | None = None,
                 conf: Path | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.token_file = token_file
        self.conf = conf
        self._opener = urllib.request.build_opener(_NoRedirect)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        url = self.url + path
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if method != "GET":
            headers["Authorization"] = f"Bearer {self._token()}"
        for _ in range(MAX_REDIRECTS + 1):
            status, answer, raw = self._once(method, url, data, headers)
            if status in (301, 302, 307, 308) and answer.get("Location"):
                url = self._redirect(url, answer["Location"])
                continue
            return self._decode(url, status, raw)
        raise MgrError(508, f"pando-mgr at {self.url}: more than {MAX_REDIRECTS} redirects")

    def _token(self) -> str:
        if self.token_file is None:
            raise config.ConfigError(
                "a change needs the mgr's token, and none was found: --token-file, "
                f"${config.TOKEN_ENV}, /etc/pando/{config.TOKEN_NAME} or "
                f"{config.CLUSTER_DIR}/{config.TOKEN_NAME}")
        try:
            return token.load(self.token_file)
        except token.TokenError as e:
            raise config.ConfigError(str(e)) from None

    def _redirect(self, url: str, location: str) -> str:
        """Where a redirect goes, if that is a mgr: the host of self.url or
        a mgr host of the configuration file.  The leader's URL comes from
        etcd, which anyone who reaches it can write: the token goes to no
        other host."""
        new = urllib.parse.urljoin(url, location)
        parts = urllib.parse.urlsplit(new)
        known = {urllib.parse.urlsplit(self.url).hostname or ""}
        if self.conf is not None:
            known |= config.mgr_hosts(self.conf)
        if parts.scheme not in ("http", "https") or (parts.hostname or "") not in known:
            raise MgrError(307, f"pando-mgr at {self.url} sends this request on to {new[:200]}, "
                                "which is not a mgr host this command knows (the host of "
                                "--mgr, or a mgr host of pando.conf): give that mgr's URL "
                                "with --mgr to send it the token")
        return new

    def _once(self, method: str, url: str, data: bytes | None,
              headers: dict[str, str]) -> tuple[int, Any, bytes]:
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            if e.code in (301, 302, 307, 308):
                return e.code, e.headers, raw
            if e.code == 503:
                raise EtcdUnreachable(self.url, _error_text(raw)) from None
            raise MgrError(e.code, _error_text(raw)) from None
        except (urllib.error.URLError, OSError) as e:
            raise MgrUnreachable(self.url, _reason(e)) from None
        except http.client.HTTPException as e:      # something, but not HTTP, answers there
            raise MgrUnreachable(self.url, f"not an HTTP server ({type(e).__name__}: "
                                           f"{str(e)[:60]!r})") from None
        except ValueError as e:          # a malformed URL (a Location header)
            raise MgrUnreachable(url, str(e)) from None

    def _decode(self, url: str, status: int, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            raise MgrError(status, f"pando-mgr at {self.url} answered {url} with something "
                                   f"that is not JSON: {raw[:80]!r}") from None

    # -- the API ------------------------------------------------------------
    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def status(self) -> dict[str, Any]:
        return self._dict(self.get("/api/status"), "/api/status")

    def osds(self) -> list[dict[str, Any]]:
        return self._list(self.get("/api/osds"), "/api/osds")

    def osd_add(self, spec: dict[str, Any]) -> dict[str, Any]:
        return self._dict(self.call("POST", "/api/osds", spec), "/api/osds")

    def osd_mark(self, osd_id: int, state: str) -> Any:
        return self.call("POST", f"/api/osd/{osd_id}/{state}", {})

    def osd_rm(self, osd_id: int, force: bool = False) -> Any:
        return self.call("DELETE", f"/api/osd/{osd_id}" + ("?force=1" if force else ""))

    def df(self) -> dict[str, Any]:
        return self._dict(self.get("/api/df"), "/api/df")

    def mds(self) -> list[dict[str, Any]]:
        return self._list(self.get("/api/mds"), "/api/mds")

    def rebuild(self) -> dict[str, Any]:
        return self._dict(self.get("/api/rebuild"), "/api/rebuild")

    def rebuild_start(self, spec: dict[str, Any]) -> dict[str, Any]:
        return self._dict(self.call("POST", "/api/rebuild", spec), "/api/rebuild")

    def scrub(self) -> dict[str, Any]:
        return self._dict(self.get("/api/scrub"), "/api/scrub")

    def scrub_action(self, action: str) -> dict[str, Any]:
        return self._dict(self.call("POST", "/api/scrub", {"action": action}), "/api/scrub")

    def group_failover(self, group: str) -> dict[str, Any]:
        path = f"/api/groups/{urllib.parse.quote(group, safe='')}/failover"
        return self._dict(self.call("POST", path, {}), path)

    def transcode(self) -> dict[str, Any]:
        return self._dict(self.get("/api/transcode"), "/api/transcode")

    def _dict(self, v: Any, path: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise MgrError(200, f"pando-mgr at {self.url}: {path} is not a JSON object")
        return v

    def _list(self, v: Any, path: str) -> list[dict[str, Any]]:
        if isinstance(v, dict):         # tolerate {"osds": [...]} / {"mds": [...]}
            lists = [x for x in v.values() if isinstance(x, list)]
            v = lists[0] if len(lists) == 1 else v
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise MgrError(200, f"pando-mgr at {self.url}: {path} is not a JSON list of objects")
        return v
