"""A manager group in the rack model (pando_testing/rack_group.py): etcd,
four OSDs, the active and the standby each on a machine of its own, and a
client machine that mounts the group's service address, which the
active holds (Service_Address_Command: pando-service-address).

The active's machine cut off the network at the switch, its ganesha
still running: the standby takes over, takes the address and announces
it, and the client's creates go on at the same address without a new
mount, every acknowledged one there with its bytes.  The cut-off active
stops itself, having acknowledged nothing more, and gives the address
up, so that once its link is back the address still leads to the new
active.  An active cut off from etcd alone, still reaching the OSDs and
its clients, acknowledges nothing once the standby leads: whatever it
acknowledged is on the new active."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pando_testing.mds_group import wait_log
from pando_testing.nfs3 import (FILE_SYNC, NFS3_OK, NFS3ERR_JUKEBOX, UNCHECKED, Nfs3Client,
                                Nfs3StatusError, auth_sys_groups)
from pando_testing.oncrpc import ConnectionClosed
from pando_testing.pod import Pod
from pando_testing.rack_group import SERVICE, RackGroup, rack_group
from pando_testing.threads import RaisingThread

TAKEOVER_TIMEOUT_S = 60
CALL_TIMEOUT_S = 2.0


@pytest.fixture
def group(tmp_path: Path) -> Iterator[RackGroup]:
    with rack_group(tmp_path) as g:
        yield g


class Writer:
    """Creates files one after another at the service address, as a hard
    mount does: a call that fails or goes unanswered for CALL_TIMEOUT_S is
    sent again, on a new connection, until it is answered, and one
    answered NFS3ERR_JUKEBOX is sent again a moment later.  CREATE is
    UNCHECKED, so sending it again is harmless.  Any other error fails the
    test: an application would see it."""

    def __init__(self, pod: Pod, port: int, root: bytes, address: str = SERVICE,
                 prefix: str = "w") -> None:
        self.pod, self.port, self.root = pod, port, root
        self.address, self.prefix = address, prefix
        self.acked: dict[str, bytes] = {}
        self.times: list[float] = []      # monotonic time of each acknowledgement
        self.stop = threading.Event()
        self.jukebox = 0                  # answers to send a call again later
        self._c: Nfs3Client | None = None

    def _client(self) -> Nfs3Client:
        while self._c is None:
            try:
                sock = self.pod.connect(self.address, self.port, timeout=CALL_TIMEOUT_S)
                self._c = Nfs3Client.over(sock, auth_sys_groups(0, 0, ()))
            except OSError:
                if self.stop.is_set():
                    raise
                time.sleep(0.2)
        return self._c

    def _create(self, name: str, data: bytes) -> bool:
        """Whether it was acknowledged (False: JUKEBOX, send it again)."""
        c = self._client()
        res = c.create(self.root, name, UNCHECKED)
        if res.status == NFS3ERR_JUKEBOX:
            return False
        assert res.status == NFS3_OK and res.fh, f"CREATE {name}: {res.status}"
        try:
            c.write_all(res.fh, 0, data, FILE_SYNC)
        except Nfs3StatusError as e:
            if e.status != NFS3ERR_JUKEBOX:
                raise
            return False
        return True

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            name = f"{self.prefix}{i}"
            data = f"{name} through {self.address}\n".encode() * 40
            try:
                if not self._create(name, data):
                    self.jukebox += 1
                    time.sleep(0.5)
                    continue
            except (OSError, ConnectionClosed):
                if self._c is not None:
                    self._c.close()
                self._c = None
                continue
            self.acked[name] = data
            self.times.append(time.monotonic())
            i += 1

    def start(self) -> RaisingThread:
        t = RaisingThread(target=self.run, name=f"writer to {self.address}")
        t.start()
        return t

    def wait_acked(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acked) < count:
            assert time.monotonic() < deadline, f"{len(self.acked)} of {count} creates acked"
            time.sleep(0.1)


def test_the_actives_host_cut_off_the_standby_takes_the_address_and_every_create(
        group: RackGroup) -> None:
    client = group.nodes["client"].pod
    w = Writer(client, group.a.nfs_port, group.a.root_handle())
    t = w.start()
    try:
        w.wait_acked(20, 30)
        group.cut("mds-a")
        cut_at, before = time.monotonic(), len(w.acked)
        group.b.wait_serving(TAKEOVER_TIMEOUT_S)
        w.wait_acked(before + 20, TAKEOVER_TIMEOUT_S)
        stall = next(x for x in w.times[before:]) - cut_at
        print(f"creates went on {stall:.1f} s after the active's host was cut off")
        # Cut off, the old active can no longer be sure that it leads.
        assert group.a.proc is not None
        assert group.a.proc.wait(timeout=30) != 0
        log = group.a.log_text()
        assert "a is no longer the active" in log or "no longer sure that it leads" in log
        assert "release` done" in log, log[-3000:]
        assert SERVICE not in group.nodes["mds-a"].pod.run(["ip", "-o", "addr"]).stdout
        group.mend("mds-a")
        after = len(w.acked)
        w.wait_acked(after + 20, 30)
    finally:
        w.stop.set()
        t.join(timeout=30)
    check_on_new_active(group, w.acked)


def check_on_new_active(group: RackGroup, acked: dict[str, bytes]) -> None:
    client = group.nodes["client"].pod
    c = Nfs3Client.over(client.connect(SERVICE, group.b.nfs_port), auth_sys_groups(0, 0, ()))
    root = group.b.root_handle()
    for name, data in acked.items():
        assert c.read_all(c.lookup_fh(root, name), 0, len(data) + 1) == data, name
    c.close()
    wait_log(group.b, "b is the active, term", 1)


def test_an_active_cut_off_from_etcd_alone_acknowledges_nothing_once_the_standby_leads(
        group: RackGroup) -> None:
    """Its clients still reach it at its own address, and it reaches the
    OSDs: only its lease, which it can no longer renew, tells it to stop."""
    a_addr = group.nodes["mds-a"].addr
    root = group.a.root_handle()
    client = group.nodes["client"].pod
    ws = [Writer(client, group.a.nfs_port, root), Writer(client, group.a.nfs_port, root,
                                                        address=a_addr, prefix="direct")]
    ts = [w.start() for w in ws]
    try:
        for w in ws:
            w.wait_acked(10, 30)
        # etcd's answers to the active are dropped: a silent partition
        group.nodes["etcd"].pod.run(["ip", "route", "add", "blackhole", f"{a_addr}/32"])
        group.b.wait_serving(TAKEOVER_TIMEOUT_S)
        b_serving = time.monotonic()
        assert group.a.proc is not None
        assert group.a.proc.wait(timeout=30) != 0
        ws[0].wait_acked(len(ws[0].acked) + 10, TAKEOVER_TIMEOUT_S)
    finally:
        for w in ws:
            w.stop.set()
        for t in ts:
            t.join(timeout=30)
    assert ws[1].times and ws[1].times[-1] < b_serving, "the old active acknowledged late"
    print(f"the old active's last acknowledgement came {b_serving - ws[1].times[-1]:.1f} s"
          " before the new active served")
    check_on_new_active(group, ws[0].acked | ws[1].acked)
