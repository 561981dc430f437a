"""Storage policies through dbus (layout_set / layout_get), and MKDIR over
NFSv3, as the policy and EC tests use them."""
from __future__ import annotations

import json
import re
from typing import Any

from pando_testing.cluster_map import dbus_json
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import NFS3_OK, Nfs3Client


def layout_set(mds: PandoMds, path: str, policy: dict[str, Any] | str) -> tuple[bool, str]:
    text = policy if isinstance(policy, str) else json.dumps(policy)
    cp = mds.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                      "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.layout_set",
                      f"string:{path}", f"string:{text}"],
                     check=False, env=mds.dbus_env(), timeout=30)
    assert cp.returncode == 0, f"layout_set: {cp.stderr}"
    status = re.search(r"^\s*boolean (true|false)$", cp.stdout, re.MULTILINE)
    msg = re.search(r'^\s*string "(.*)"$', cp.stdout, re.MULTILINE)
    assert status and msg, cp.stdout
    return status.group(1) == "true", msg.group(1)


def layout_get(mds: PandoMds, path: str) -> dict[str, Any]:
    ok, msg, j = dbus_json(mds, "layout_get", f"string:{path}")
    assert ok, msg
    assert isinstance(j, dict)
    return j


def mkdir(c: Nfs3Client, parent: bytes, name: str) -> bytes:
    res = c.mkdir(parent, name)
    assert res.status == NFS3_OK and res.fh is not None, f"MKDIR {name}: {res.status}"
    return res.fh
