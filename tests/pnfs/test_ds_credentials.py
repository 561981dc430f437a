"""The user and group in a layout's data-server entries (ffds_user,
ffds_group, RFC 8435) are the client's holder: one synthetic uid per
client, in [2^30, 2^31), the same in both, not the caller's own.  Linux
sends them as AUTH_SYS to the data servers, which take a handle only
from its holder.

A user with uid 4294967294 / gid 4000000001 (ids past the holders'
range) writes a 1 MiB file over pNFS; root reads it back.  A proxy in
front of the manager sees every LAYOUTGET result: each data-server entry
ends, right after its 56-byte capability handle, with the XDR strings of
one and the same holder (10 digits: length 10, two bytes of padding).
The OSDs' debug log shows the credential of each NFSv3 call: the WRITEs
and the READs carry the holder's ids, none the user's, none refused."""
from __future__ import annotations

import os
import re
import struct
from typing import Callable

from pando_testing.e2e import KernelClient
from pando_testing.nfsproxy import RecordProxy
from pando_testing.pnfs_guest import DROP, REPORT, reports
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.pod import Pod
from pando_testing.vm import Scenario

PROXY_PORT = 2051
UID, GID = 4294967294, 4000000001
SIZE = 1 << 20


# ff_data_server4's tail: one file handle of 56 bytes, then user and group.
DS_TAIL = re.compile(re.escape(struct.pack(">II", 1, 56)) + b".{56}"
                     + rb"\x00\x00\x00\x0a(\d{10})\x00\x00\x00\x00\x00\x0a(\d{10})\x00\x00",
                     re.DOTALL)


def test_layout_names_the_clients_holder(pod: Pod, pnfs_cluster: Callable[..., PnfsCluster],
                                         guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    data = os.urandom(SIZE)
    gate.data["blob"] = data
    frags: list[bytes] = []

    def keep(frag: bytes) -> bytes:
        frags.append(frag)
        return frag

    proxy = RecordProxy(pod, PROXY_PORT, c.mds.nfs_port, mangle=keep).start()
    try:
        kc = guest("6.1", c, port=PROXY_PORT)
        script = gate.guest_lib() + REPORT + DROP + f"""
chmod 1777 .
getdata blob /tmp/blob
ptool as {UID} {GID} sh -c 'cat /tmp/blob > f' || fail "uid {UID} cannot write f"
echo "owner $(stat -c '%u %g' f)"
drop
report f
"""
        res = kc.run(Scenario().step("sh", "v4.1", script), timeout=300)
    finally:
        proxy.stop()
    print(res.report())
    res.assert_ok()
    out = res.steps[0].output
    assert f"owner {UID} {GID}" in out, out
    f = reports(res.steps[0])["f"]
    assert (f.size, f.sha256) == (SIZE, sha256(data)), f

    # Every layout the guest got names its holder, and only it.
    entries = [m for frag in frags for m in DS_TAIL.findall(frag)]
    print(f"{len(entries)} data-server entries name {set(entries)}")
    assert len(entries) >= 2, f"{len(entries)} data-server entries with a holder " \
        "(want at least the write layout's, 2 mirrors)"
    assert len(set(entries)) == 1, f"one client, one holder: {set(entries)}"
    user, group = entries[0]
    assert user == group, entries[0]
    holder = int(user)
    assert 1 << 30 <= holder < 1 << 31, holder

    # Linux used it for AUTH_SYS to the data servers, and they took it.
    logs = "".join(o.log_path.read_text() for o in c.osds)
    for op in ("WRITE", "READ"):
        want = f"auth sys {holder}:{holder}"
        assert re.search(rf"nfs3 {op} xid \S+: status 0, {want}", logs), \
            f"no {op} by {want} in the OSD logs"
    assert f"auth sys {UID}:" not in logs, "the user's own uid reached an OSD"
    assert not re.search(r"nfs3 (WRITE|READ) xid \S+: status [1-9]", logs), "an OSD refused a call"
