"""Calls to the Pando FSAL's dbus interface on a metadata-manager host
(org.ganesha.nfsd.pando at /org/ganesha/nfsd/pando, ganesha-fsal/fsal/dbus.c),
made with `dbus-send --print-reply` as an admin would, and its output parsed."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from typing import Any

DEST = "org.ganesha.nfsd"
OBJECT = "/org/ganesha/nfsd/pando"
INTERFACE = "org.ganesha.nfsd.pando"


class GaneshaUnreachable(Exception):
    """No bus, or no Ganesha on it."""


class GaneshaError(Exception):
    """Ganesha answered, but the call failed or was refused."""


class GaneshaMissingMethod(GaneshaError):
    """This Ganesha's FSAL has no such method: it is older than `pando`."""


# ---- dbus-send --print-reply output ----------------------------------------
_SCALAR = re.compile(r'(boolean|u?int(?:16|32|64)|byte|double|object path|signature|string)'
                     r'[ \t]+')
_OPEN = {"array [": "]", "struct {": "}", "dict entry(": ")"}
_CLOSE = ("]", "}", ")")


def _string_end(text: str, start: int) -> int:
    """Index of the '"' closing the string that starts at `start`.
    dbus-send prints strings raw (no escapes, newlines kept), so the end is
    the first '"' followed by a line end and then a token or the end."""
    i = start
    while True:
        j = text.find('"', i)
        if j < 0:
            raise ValueError("dbus-send output: unterminated string")
        rest = text[j + 1:]
        nl = rest.find("\n")
        if nl < 0 and not rest.strip():
            return j
        if nl >= 0 and not rest[:nl].strip():
            after = rest[nl + 1:].lstrip()
            if (not after or _SCALAR.match(after) or after.startswith(_CLOSE)
                    or after.startswith(tuple(_OPEN)) or after.startswith("variant")):
                return j
        i = j + 1


def parse_print_reply(text: str) -> list[Any]:
    """The values of a `dbus-send --print-reply` answer: scalars as Python
    values, arrays and structs as lists, dict entries as (key, value) pairs,
    variants as their value."""
    stack: list[list[Any]] = [[]]
    closers: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        rest = text[i:i + 32]
        if rest.startswith("method return") or rest.startswith("method call"):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
            continue
        opener = next((o for o in _OPEN if text.startswith(o, i)), None)
        if opener is not None:
            stack.append([])
            closers.append(_OPEN[opener])
            i += len(opener)
            continue
        if text[i] in _CLOSE:
            if not closers or text[i] != closers[-1]:
                raise ValueError(f"dbus-send output: unexpected {text[i]!r}")
            closers.pop()
            done = stack.pop()
            stack[-1].append(tuple(done) if text[i] == ")" else done)
            i += 1
            continue
        if text.startswith("variant", i):
            i += len("variant")
            continue
        m = _SCALAR.match(text, i)
        if not m:
            nl = text.find("\n", i)
            raise ValueError(f"dbus-send output: cannot parse {text[i:nl if nl > 0 else n]!r}")
        i, value = _scalar(text, m)
        stack[-1].append(value)
    if closers:
        raise ValueError("dbus-send output: unclosed array or struct")
    return stack[0]


def _scalar(text: str, m: re.Match[str]) -> tuple[int, Any]:
    kind, i = m.group(1), m.end()
    if kind in ("string", "object path", "signature") and text.startswith('"', i):
        end = _string_end(text, i + 1)
        return end + 1, text[i + 1:end]
    tok = re.match(r"\S+", text[i:])
    word = tok.group(0) if tok else ""
    i += len(word)
    if kind == "boolean":
        return i, word == "true"
    if kind == "double":
        return i, float(word)
    if kind in ("object path", "signature", "string"):
        return i, word
    return i, int(word)


# ---- calling Ganesha -------------------------------------------------------
def bus_env(address: str | None) -> dict[str, str]:
    """The environment for dbus-send: --dbus wins over $DBUS_SYSTEM_BUS_ADDRESS,
    which wins over the system bus."""
    env = dict(os.environ)
    if address:
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
    return env


def _unreachable_text(stderr: str, address: str | None) -> str | None:
    """A one-line reason when dbus-send failed because nothing answered."""
    where = address or os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or "the system bus"
    if "Failed to open connection" in stderr or "Failed to connect" in stderr:
        return f"cannot reach the dbus bus ({where}): {stderr.strip().splitlines()[-1]}"
    for name in ("ServiceUnknown", "NameHasNoOwner", "NoReply", "Disconnected"):
        if name in stderr:
            return f"cannot reach Ganesha on {where}: {stderr.strip().splitlines()[0]}"
    return None


def call(method: str, *args: str, address: str | None = None,
         timeout: float = 30.0) -> list[Any]:
    """One method of org.ganesha.nfsd.pando; args in dbus-send's form
    ("string:/a/b"). The parsed values of the reply."""
    exe = shutil.which("dbus-send")
    if exe is None:
        raise GaneshaUnreachable("cannot reach Ganesha: dbus-send is not installed "
                                 "(Debian package dbus)")
    argv = [exe, "--system", "--print-reply", f"--reply-timeout={int(timeout * 1000)}",
            f"--dest={DEST}", OBJECT, f"{INTERFACE}.{method}", *args]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, env=bus_env(address),
                            timeout=timeout + 5)
    except subprocess.TimeoutExpired:
        raise GaneshaUnreachable(f"cannot reach Ganesha: {method} got no answer in "
                                 f"{timeout:.0f}s") from None
    if cp.returncode != 0:
        why = _unreachable_text(cp.stderr, address)
        if why:
            raise GaneshaUnreachable(why)
        first = (cp.stderr.strip().splitlines() or [f"exit {cp.returncode}"])[0]
        if "UnknownMethod" in cp.stderr:
            raise GaneshaMissingMethod(f"{method}: this Ganesha has no {method} method "
                                       f"(an older FSAL?): {first}")
        raise GaneshaError(f"{method}: {first}")
    try:
        return parse_print_reply(cp.stdout)
    except ValueError as e:
        raise GaneshaError(f"{method}: {e}") from None


def _status(values: list[Any], method: str) -> tuple[bool, str]:
    if len(values) < 2 or not isinstance(values[0], bool) or not isinstance(values[1], str):
        raise GaneshaError(f"{method}: unexpected answer {values!r}")
    return values[0], values[1]


def _json_answer(values: list[Any], method: str) -> dict[str, Any]:
    """The JSON object of a (b, s, s json) answer; its message if it failed."""
    ok, msg = _status(values, method)
    if not ok:
        raise GaneshaError(msg)
    if len(values) < 3 or not isinstance(values[2], str):
        raise GaneshaError(f"{method}: no JSON in the answer {values!r}")
    try:
        out = json.loads(values[2])
    except ValueError as e:
        raise GaneshaError(f"{method}: the answer is not JSON ({e})") from None
    if not isinstance(out, dict):
        raise GaneshaError(f"{method}: the answer is not a JSON object")
    return out


def file_map(path: str, address: str | None = None) -> dict[str, Any]:
    """The storage map of one file (file_map(s path) -> (b, s, s json))."""
    return _json_answer(call("file_map", f"string:{path}", address=address), "file_map")


def layout_get(path: str, address: str | None = None) -> dict[str, Any]:
    """A directory's or file's storage policy, and a file's map
    (layout_get(s path) -> (b, s, s json))."""
    return _json_answer(call("layout_get", f"string:{path}", address=address), "layout_get")


def layout_set(path: str, policy: dict[str, Any] | None,
               address: str | None = None) -> dict[str, Any]:
    """Sets a directory's storage policy; None clears it
    (layout_set(s path, s policy) -> (b, s))."""
    text = "" if policy is None else json.dumps(policy, sort_keys=True)
    ok, msg = _status(call("layout_set", f"string:{path}", f"string:{text}", address=address),
                      "layout_set")
    if not ok:
        raise GaneshaError(msg)
    return {"path": path, "ok": ok, "message": msg, "policy": policy}


def quota_get(address: str | None = None) -> dict[str, Any]:
    """The export's quota and what it uses (quota_get() -> (b, s, s json)):
    {"bytes", "files", "used_bytes", "used_files"}, 0: no limit."""
    return _json_answer(call("quota_get", address=address), "quota_get")


def quota_set(bytes_: int, files: int, address: str | None = None) -> dict[str, Any]:
    """Sets the export's quota; 0 and 0 clear it (quota_set(t, t) -> (b, s))."""
    ok, msg = _status(call("quota_set", f"uint64:{bytes_}", f"uint64:{files}",
                           address=address), "quota_set")
    if not ok:
        raise GaneshaError(msg)
    return {"ok": ok, "message": msg, "bytes": bytes_, "files": files}


def owner_quota_get(kind: str, id_: int, address: str | None = None) -> dict[str, Any]:
    """A user's or group's quota and what it uses (owner_quota_get(s kind,
    u id) -> (b, s, s json)): {"kind", "id", "bytes", "files",
    "used_bytes", "used_files"}, 0: no limit."""
    return _json_answer(call("owner_quota_get", f"string:{kind}", f"uint32:{id_}",
                             address=address), "owner_quota_get")


def owner_quota_set(kind: str, id_: int, bytes_: int, files: int,
                    address: str | None = None) -> dict[str, Any]:
    """Sets a user's or group's quota; 0 and 0 clear it
    (owner_quota_set(s, u, t, t) -> (b, s))."""
    ok, msg = _status(call("owner_quota_set", f"string:{kind}", f"uint32:{id_}",
                           f"uint64:{bytes_}", f"uint64:{files}", address=address),
                      "owner_quota_set")
    if not ok:
        raise GaneshaError(msg)
    return {"ok": ok, "message": msg, "kind": kind, "id": id_, "bytes": bytes_, "files": files}


def owner_quota_list(address: str | None = None) -> list[dict[str, Any]]:
    """Every user's and group's quota, groups then users, by id
    (owner_quota_list() -> (b, s, s json {"owners": [...]}))."""
    owners = _json_answer(call("owner_quota_list", address=address),
                          "owner_quota_list").get("owners")
    if not isinstance(owners, list):
        raise GaneshaError("owner_quota_list: no list of owners in the answer")
    return owners


def junction_add(volume: str, path: str, servers: list[str],
                 address: str | None = None) -> dict[str, Any]:
    """Makes /VOLUME a junction referring NFSv4 clients to PATH on the
    servers (junction_add(s, s, as) -> (b, s))."""
    ok, msg = _status(call("junction_add", f"string:{volume}", f"string:{path}",
                           f"array:string:{','.join(servers)}", address=address),
                      "junction_add")
    if not ok:
        raise GaneshaError(msg)
    return {"ok": ok, "message": msg, "volume": volume, "path": path, "servers": servers}


def junction_remove(volume: str, address: str | None = None) -> dict[str, Any]:
    """Removes the junction /VOLUME (junction_remove(s) -> (b, s))."""
    ok, msg = _status(call("junction_remove", f"string:{volume}", address=address),
                      "junction_remove")
    if not ok:
        raise GaneshaError(msg)
    return {"ok": ok, "message": msg, "volume": volume}


def junction_list(address: str | None = None) -> list[dict[str, Any]]:
    """Every junction in the export's root, in the order they were made
    (junction_list() -> (b, s, s json {"junctions": [...]}))."""
    found = _json_answer(call("junction_list", address=address),
                         "junction_list").get("junctions")
    if not isinstance(found, list):
        raise GaneshaError("junction_list: no list of junctions in the answer")
    return found


def reload_key(address: str | None = None) -> dict[str, Any]:
    """The manager reads its cluster key file again: a key rotation's
    second step, without a restart (reload_key() -> (b, s))."""
    ok, msg = _status(call("reload_key", address=address), "reload_key")
    if not ok:
        raise GaneshaError(msg)
    return {"ok": ok, "message": msg}


def recall(target: str, address: str | None = None) -> dict[str, Any]:
    """recall_file for a path (starts with '/'), else recall_client for a
    client address ('' = every client)."""
    if target.startswith("/"):
        ok, msg = _status(call("recall_file", f"string:{target}", address=address),
                          "recall_file")
        out: dict[str, Any] = {"path": target, "ok": ok, "message": msg}
    else:
        values = call("recall_client", f"string:{target}", address=address)
        ok, msg = _status(values, "recall_client")
        files = values[2] if len(values) > 2 and isinstance(values[2], int) else None
        out = {"client": target, "ok": ok, "message": msg, "files": files}
    if not ok:
        raise GaneshaError(msg)
    return out
