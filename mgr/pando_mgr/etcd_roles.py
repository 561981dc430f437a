"""Who may touch which keys in etcd (mgr/README.md, "etcd users and
roles"), and setting that up in a cluster's etcd.

Each kind of daemon signs in as its own user with a role of its own:

  mgr          reads and writes every key under the prefix (it writes the
               map, leadership, jobs and requests)
  mds.<name>   reads every key under the prefix, writes only its own:
               mds/<name> and its rebuild, scrub and transcode keys, and
               those of manager groups (groups/, journal/): any manager
               may come to lead a group
  osd.<id>     writes its presence key osd/<id>, reads nothing
  root         etcd's administrator; only `pando-cluster` signs in as it

Passwords are derived from the cluster's etcd secret (HMAC-SHA256 of the
user's name), so any host holding the secret renders the password files of
its own daemons without a copy of anyone's."""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from .etcd import CODE_FAILED_PRECONDITION, Etcd, EtcdError, b64, prefix_end

ROOT = "root"
MGR = "mgr"


@dataclass(frozen=True)
class Grant:
    """permission ("READ", "WRITE", "READWRITE") on key, or on every key
    that starts with key when prefix."""
    permission: str
    key: str
    prefix: bool = False

    def json(self) -> dict[str, str]:
        perm = {"permType": self.permission, "key": b64(self.key)}
        if self.prefix:
            perm["range_end"] = prefix_end(self.key)
        return perm


def osd_user(osd_id: int) -> str:
    return f"osd.{osd_id}"


def mds_user(name: str) -> str:
    return f"mds.{name}"


def password(secret: str, user: str) -> str:
    return hmac.new(secret.encode(), f"pando etcd user {user}".encode(),
                    hashlib.sha256).hexdigest()


def grants(prefix: str, osd_ids: list[int], mds_names: list[str]) -> dict[str, list[Grant]]:
    """Every user but root, and what its role allows."""
    out = {MGR: [Grant("READWRITE", prefix, prefix=True)]}
    for i in osd_ids:
        out[osd_user(i)] = [Grant("READWRITE", f"{prefix}osd/{i}")]
    for n in mds_names:
        own = [f"{prefix}{kind}/{n}" for kind in
               ("mds", "rebuild/progress", "scrub/progress", "transcode/progress")]
        mine = [f"{prefix}rebuild/{kind}/{n}/" for kind in ("tasks", "claims")] + [
            f"{prefix}groups/", f"{prefix}journal/"]
        out[mds_user(n)] = ([Grant("READ", prefix, prefix=True)]
                            + [Grant("READWRITE", k) for k in own]
                            + [Grant("READWRITE", k, prefix=True) for k in mine])
    return out


async def _add(etcd: Etcd, path: str, body: dict[str, str]) -> bool:
    """True when made, False when it was there already."""
    try:
        await etcd.call(path, body)
    except EtcdError as e:
        if e.code == CODE_FAILED_PRECONDITION and "already exists" in str(e):
            return False
        raise
    return True


async def set_user(etcd: Etcd, user: str, pw: str, role_grants: list[Grant]) -> None:
    """Makes user exist with password pw and a role of its name holding
    exactly role_grants (grants added since are taken away)."""
    if not await _add(etcd, "/v3/auth/user/add", {"name": user, "password": pw}):
        await etcd.call("/v3/auth/user/changepw", {"name": user, "password": pw})
    if not await _add(etcd, "/v3/auth/role/add", {"name": user}):
        role = await etcd.call("/v3/auth/role/get", {"role": user})
        for p in role.get("perm", []):
            await etcd.call("/v3/auth/role/revoke", {"role": user, "key": p.get("key", ""),
                                                     "range_end": p.get("range_end", "")})
    for g in role_grants:
        await etcd.call("/v3/auth/role/grant", {"name": user, "perm": g.json()})
    await etcd.call("/v3/auth/user/grant", {"user": user, "role": user})


async def provision(etcd: Etcd, secret: str, users: dict[str, list[Grant]]) -> None:
    """Sets up root and every user of users in etcd, then turns
    authentication on; again on a cluster set up before, it brings users,
    passwords and roles to what users says.  etcd signs in as root (while
    authentication is off etcd lets anyone do this)."""
    if not await _add(etcd, "/v3/auth/user/add",
                      {"name": ROOT, "password": password(secret, ROOT)}):
        await etcd.call("/v3/auth/user/changepw", {"name": ROOT, "password": password(secret, ROOT)})
    await etcd.call("/v3/auth/user/grant", {"user": ROOT, "role": ROOT})
    for user, role_grants in users.items():
        await set_user(etcd, user, password(secret, user), role_grants)
    await etcd.call("/v3/auth/enable", {})
