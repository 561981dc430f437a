"""An asyncio client for etcd 3.4 over its JSON gateway (POST /v3/...).

Keys and values travel base64-encoded; 64-bit integers come back as JSON
strings and fields equal to their default (0, false, empty) are left out
(proto3 JSON), so every reader here says what a missing field means.
Endpoints are tried in turn, starting from the last one that answered: a
dead member costs one refused connection, a hung one one timeout.

With EtcdAuth the client checks the members' certificates against a CA
(https endpoints) and signs in as a user: it gets a token from
/v3/auth/authenticate and sends it with every call.  etcd forgets tokens
after --auth-token-ttl (300 s) and on a restart, so a call refused for
its token signs in again and is sent once more."""
from __future__ import annotations

import asyncio
import base64
import json
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from . import secret_file

# What etcd accepts as a password and we can keep in a file of one line.
PASSWORD_RE = re.compile(r"[!-~]{8,128}")


def b64(s: str | bytes) -> str:
    raw = s.encode() if isinstance(s, str) else s
    return base64.b64encode(raw).decode()


def unb64(s: str) -> bytes:
    return base64.b64decode(s)


def prefix_end(prefix: str) -> str:
    """The range end (base64) that selects every key starting with prefix."""
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return b64(bytes(raw))


class EtcdError(RuntimeError):
    """etcd answered with an error (lease not found, bad request...)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class EtcdUnavailable(EtcdError):
    """No endpoint answered (refused, timed out, or no quorum)."""


# gRPC codes of etcd's answers.
CODE_INVALID_ARGUMENT = 3        # also "user name is empty": no token sent
CODE_NOT_FOUND = 5
CODE_FAILED_PRECONDITION = 9     # "user name already exists", ...
CODE_PERMISSION_DENIED = 7
CODE_UNAUTHENTICATED = 16        # "invalid auth token": etcd forgot it


def _token_refused(e: EtcdError) -> bool:
    """etcd wants a (new) token: it forgot ours, or had none from us."""
    return e.code == CODE_UNAUTHENTICATED or "user name is empty" in str(e)


@dataclass(frozen=True)
class EtcdAuth:
    """How a client reaches a secured etcd: the CA that signs the members'
    certificates, and the user it signs in as with the password in
    password_file (a secret_file).  Empty fields: no TLS check beyond the
    system's CAs, no user."""
    ca_file: str = ""
    user: str = ""
    password_file: str = ""

    def password(self) -> str:
        return secret_file.load(Path(self.password_file), f"the etcd password of {self.user}",
                                PASSWORD_RE, "8 to 128 printable characters")

    def ssl_context(self) -> ssl.SSLContext | None:
        return ssl.create_default_context(cafile=self.ca_file) if self.ca_file else None


@dataclass(frozen=True)
class KV:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    lease: int

    def json(self) -> Any:
        return json.loads(self.value)


def _kv(raw: dict[str, Any]) -> KV:
    return KV(key=unb64(raw["key"]).decode(errors="replace"),
              value=unb64(raw.get("value", "")),
              create_revision=int(raw.get("create_revision", 0)),
              mod_revision=int(raw.get("mod_revision", 0)),
              lease=int(raw.get("lease", 0)))


# Compare and request builders for txn().
def cmp_create(key: str, revision: int) -> dict[str, Any]:
    return {"key": b64(key), "result": "EQUAL", "target": "CREATE",
            "create_revision": str(revision)}


def cmp_mod(key: str, revision: int) -> dict[str, Any]:
    return {"key": b64(key), "result": "EQUAL", "target": "MOD",
            "mod_revision": str(revision)}


def cmp_value(key: str, value: bytes) -> dict[str, Any]:
    return {"key": b64(key), "result": "EQUAL", "target": "VALUE", "value": b64(value)}


def op_put(key: str, value: bytes, lease: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = {"key": b64(key), "value": b64(value)}
    if lease:
        body["lease"] = str(lease)
    return {"request_put": body}


def op_get(key: str) -> dict[str, Any]:
    return {"request_range": {"key": b64(key)}}


def op_range(key: str, end: str) -> dict[str, Any]:
    """Every key in [key, end); end is a plain key, not base64."""
    return {"request_range": {"key": b64(key), "range_end": b64(end)}}


def op_delete(key: str) -> dict[str, Any]:
    return {"request_delete_range": {"key": b64(key)}}


# gRPC codes etcd returns that mean "try another member".
_RETRY_CODES = {4, 14}   # DEADLINE_EXCEEDED, UNAVAILABLE


class Etcd:
    """One client for a list of endpoints ("https://h:p", ...)."""

    def __init__(self, endpoints: list[str], timeout: float = 1.5,
                 auth: EtcdAuth | None = None) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.endpoints = [e.rstrip("/") for e in endpoints]
        self.timeout = timeout
        self.auth = auth or EtcdAuth()
        # Read now: a password file that cannot be used stops the caller
        # at start, not at its first call.
        self._password = self.auth.password() if self.auth.user else ""
        self._token = ""
        self._auth_off = False
        self._good = 0
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            ctx = self.auth.ssl_context()
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(ssl=ctx) if ctx else None)
        return self._session

    async def post(self, url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One call to one endpoint; EtcdUnavailable when it cannot serve."""
        headers = {"Authorization": self._token} if self._token else {}
        try:
            async with self._http().post(url + path, json=body, headers=headers,
                                         allow_redirects=False) as r:
                text = await r.text()
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            raise EtcdUnavailable(f"{url}: {type(e).__name__}: {e}") from None
        try:
            out: dict[str, Any] = json.loads(text) if text else {}
        except ValueError:
            raise EtcdUnavailable(f"{url}: HTTP {r.status}: not JSON") from None
        if "error" in out or r.status != 200:
            code = int(out.get("code", 0))
            msg = f"{url}: {out.get('message') or out.get('error') or r.status}"
            if code in _RETRY_CODES or r.status >= 500:
                raise EtcdUnavailable(msg, code)
            raise EtcdError(msg, code)
        return out

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.auth.user and not self._token and not self._auth_off:
            await self._sign_in()
        try:
            return await self._call(path, body)
        except EtcdError as e:
            if not self.auth.user or isinstance(e, EtcdUnavailable) or not _token_refused(e):
                raise
        await self._sign_in()
        return await self._call(path, body)

    async def _sign_in(self) -> None:
        """Gets a token; none while etcd has authentication off (a cluster
        being set up): calls go without one until etcd asks for it."""
        self._token = ""
        try:
            r = await self._call("/v3/auth/authenticate",
                                 {"name": self.auth.user, "password": self._password})
        except EtcdError as e:
            self._auth_off = "authentication is not enabled" in str(e)
            if not self._auth_off:
                raise
            return
        self._auth_off = False
        self._token = str(r.get("token", ""))

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        errors: list[str] = []
        n = len(self.endpoints)
        for i in range(n):
            idx = (self._good + i) % n
            try:
                out = await self.post(self.endpoints[idx], path, body)
            except EtcdUnavailable as e:
                errors.append(str(e))
                continue
            self._good = idx
            return out
        raise EtcdUnavailable("no etcd endpoint answered: " + "; ".join(errors))

    async def get(self, key: str) -> KV | None:
        r = await self.call("/v3/kv/range", {"key": b64(key)})
        kvs = r.get("kvs", [])
        return _kv(kvs[0]) if kvs else None

    async def get_prefix(self, prefix: str) -> tuple[list[KV], int]:
        """Every key under prefix and the store's revision they were read at."""
        r = await self.call("/v3/kv/range",
                            {"key": b64(prefix), "range_end": prefix_end(prefix)})
        rev = int(r.get("header", {}).get("revision", 0))
        return [_kv(kv) for kv in r.get("kvs", [])], rev

    async def first_key(self, key: str, end: str) -> str | None:
        """The first key in [key, end) (end a plain key), without its value;
        None when there is none."""
        r = await self.call("/v3/kv/range", {"key": b64(key), "range_end": b64(end),
                                             "limit": "1", "keys_only": True})
        kvs = r.get("kvs", [])
        return _kv(kvs[0]).key if kvs else None

    async def get_ranges(self, ranges: list[tuple[str, str]]) -> tuple[list[KV], int]:
        """The keys of several [key, end) ranges, read at one revision (one
        txn without compares), and that revision."""
        r = await self.call("/v3/kv/txn", {"compare": [], "failure": [],
                                           "success": [op_range(k, e) for k, e in ranges]})
        rev = int(r.get("header", {}).get("revision", 0))
        kvs = [_kv(kv) for resp in r.get("responses", [])
               for kv in resp.get("response_range", {}).get("kvs", [])]
        return kvs, rev

    async def put(self, key: str, value: bytes, lease: int = 0) -> None:
        await self.call("/v3/kv/put", op_put(key, value, lease)["request_put"])

    async def delete(self, key: str) -> None:
        await self.call("/v3/kv/deleterange", {"key": b64(key)})

    async def txn(self, compare: list[dict[str, Any]], success: list[dict[str, Any]],
                  failure: list[dict[str, Any]] | None = None
                  ) -> tuple[bool, list[dict[str, Any]]]:
        r = await self.call("/v3/kv/txn", {"compare": compare, "success": success,
                                           "failure": failure or []})
        return bool(r.get("succeeded", False)), list(r.get("responses", []))

    async def lease_grant(self, ttl: int) -> int:
        r = await self.call("/v3/lease/grant", {"TTL": str(ttl)})
        return int(r["ID"])

    async def lease_keepalive(self, lease: int) -> int:
        """The lease's remaining TTL; 0 when it is gone (expired, revoked)."""
        r = await self.call("/v3/lease/keepalive", {"ID": str(lease)})
        return int(r.get("result", {}).get("TTL", 0))

    async def lease_revoke(self, lease: int) -> None:
        try:
            await self.call("/v3/lease/revoke", {"ID": str(lease)})
        except EtcdError as e:
            if isinstance(e, EtcdUnavailable) or e.code != CODE_NOT_FOUND:
                raise

    async def members(self) -> list[dict[str, Any]]:
        """[{"name", "url", "healthy"}]: each member asked for its own status,
        all at once (a hung member costs one timeout, not one each)."""
        r = await self.call("/v3/cluster/member/list", {})
        ms = r.get("members", [])
        urls = [(m.get("clientURLs") or [""])[0].rstrip("/") for m in ms]
        health = await asyncio.gather(*(self._healthy(u) for u in urls))
        return [{"name": m.get("name", ""), "url": u, "healthy": h}
                for m, u, h in zip(ms, urls, health)]

    async def _healthy(self, url: str) -> bool:
        if not url:
            return False
        try:
            st = await self.post(url, "/v3/maintenance/status", {})
        except EtcdError:
            return False
        return bool(st.get("leader")) and not st.get("errors")
