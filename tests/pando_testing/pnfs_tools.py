"""What the pNFS tests (tests/pnfs) use to look at a Pando cluster from the
server side while stock Linux guests do I/O over flexfiles layouts:

* `Rendezvous`: a small HTTP server inside the test's pod that guests reach
  at 10.0.2.2:PORT with busybox wget.  A guest *arrives* at a named gate
  (and waits there until the test releases it, or goes on at once if the
  gate was opened beforehand), can pass values in the query string, and can
  fetch test data the host made (`/data/NAME`), so the host knows every
  byte the guest writes.  This is how a test freezes a VM, kills an OSD or
  runs an NFSv3 write at an exact point of a guest's script.
* `PnfsCluster`: the manager (PandoMds) and its OSDs, with the manager's
  dbus interface (`layout_status`, `cluster_status`, `recall_file`,
  `recall_client`, `damage`, through `dbus-send` as an admin runs it), a
  Ganesha log component's level at run time, the OSDs' I/O counters, the
  component objects of one file on the OSDs and the file's mirrors rebuilt
  from them, and NFSv3 access from the host.
* `CallbackBlocker`: a proxy in front of the manager that can swallow its
  back-channel calls (a client that never hears of a recall).
* `freeze` / `thaw`: SIGSTOP / SIGCONT of a VM's qemu.
"""
from __future__ import annotations

import hashlib
import os
import re
import socket
import struct
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .cluster_status import OsdStatus
from .daemons import OsdProcess
from .mds import PandoMds
from .mds_files import connect
from .nfs3 import NFS3_OK, Nfs3Client
from .nfs3_setup import Nfs3Setup, mount_root
from .nfsproxy import RecordProxy, recv_fragment
from .oncrpc import LAST_FRAGMENT
from .osdctl import Info, OsdCtl, OsdCtlError, Stats, Status, open_ctl
from .pod import Pod
from .threads import RaisingThread
from .vm import Scenario, Vm
from .vmnet import GUEST_NET_SH, TapNet

if TYPE_CHECKING:
    from .e2e import KernelClient

PARTITION = 1          # the OSD partition a Pando file system's objects live in
# Recall_Timeout of the pnfs suite's `fencing` fixture (tests/pnfs/conftest.py).
FENCING_RECALL_TIMEOUT = 2
GATE_PORT = 18080      # the Rendezvous port inside the pod (10.0.2.2:18080 in guests)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def guest_copies_query(files: int) -> str:
    """Guest shell that sets $q to what PnfsCluster.check_copies reads:
    h<i>=sha256&s<i>=size of f1..f<files> (arrive NAME "${q#&}")."""
    return f"""q=""
i=1
while [ $i -le {files} ]; do
    q="$q&h$i=$(sha256sum f$i | cut -d' ' -f1)&s$i=$(stat -c %s f$i)"
    i=$((i + 1))
done
"""


# ---- guest <-> host rendezvous ----------------------------------------------------

@dataclass
class Arrival:
    name: str
    query: dict[str, str]
    at: float


class Rendezvous:
    """Gates between guest scripts and the test.  Guest side (GUEST_LIB):

        arrive NAME [k=v&k2=v2]   # wait at gate NAME until released; prints the release body
        getdata NAME FILE         # the bytes the host registered as NAME, into FILE
        put NAME k=v&k2=v2        # one record appended to puts[NAME]; never waits

    Host side: `wait(name)` -> Arrival, `release(name, body)`, `open(name)`
    (a gate released before anyone arrives), `data[name] = bytes`,
    `puts[name]`: what guests put, in order (more than a step's output
    can carry), `put_times[name]` when (time.monotonic()),
    `longest_pause(name, since, until)`."""

    def __init__(self, pod: Pod, port: int = GATE_PORT, address: str = "127.0.0.1",
                 guest_address: str = "10.0.2.2") -> None:
        """`address`: where it listens in the pod; `guest_address`: the
        guests' way there (slirp's 10.0.2.2 is the pod's loopback; a guest
        on a tap device reaches the pod at its tap address)."""
        self.pod, self.port = pod, port
        self.address, self.guest_address = address, guest_address
        self.data: dict[str, bytes] = {}
        self.arrivals: dict[str, Arrival] = {}
        self.puts: dict[str, list[dict[str, str]]] = {}
        self.put_times: dict[str, list[float]] = {}
        self._released: dict[str, str] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._server: ThreadingHTTPServer | None = None
        self._thread: RaisingThread | None = None

    # guest-side shell functions; `fail` comes from the guest library
    def guest_lib(self) -> str:
        # (busybox 1.35's static wget crashes with -T; its default read
        # timeout is 900 s)
        g = f"http://{self.guest_address}:{self.port}"
        return (
            f'arrive() {{ wget -q -O /tmp/gate.out "{g}/arrive/$1?${{2:-}}" '
            f'|| fail "gate $1: wget failed"; cat /tmp/gate.out; }}\n'
            f'getdata() {{ wget -q -O "$2" "{g}/data/$1" || fail "getdata $1 failed"; }}\n'
            f'put() {{ wget -q -O /dev/null "{g}/put/$1?$2" || fail "put $1: wget failed"; }}\n'
        )

    def start(self) -> "Rendezvous":
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                url = urllib.parse.urlsplit(self.path)
                parts = url.path.strip("/").split("/", 1)
                if len(parts) != 2:
                    return self._send(404, b"bad path\n")
                kind, name = parts
                if kind == "data":
                    body = outer.data.get(name)
                    return self._send(404, b"no such data\n") if body is None else self._send(200, body)
                q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
                if kind == "put":
                    with outer._cond:
                        outer.puts.setdefault(name, []).append(q)
                        outer.put_times.setdefault(name, []).append(time.monotonic())
                    return self._send(200, b"ok\n")
                if kind != "arrive":
                    return self._send(404, b"bad path\n")
                with outer._cond:
                    outer.arrivals[name] = Arrival(name, q, time.monotonic())
                    outer._cond.notify_all()
                    while name not in outer._released and not outer._stopping:
                        outer._cond.wait(0.5)
                    released = outer._released.get(name, "stopping")
                self._send(200, (released + "\n").encode())

            def _send(self, code: int, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

        def listen() -> socket.socket:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((self.address, self.port))
            s.listen(16)
            return s

        sock = self.pod.call_inside(listen)
        server = ThreadingHTTPServer((self.address, self.port), Handler,
                                     bind_and_activate=False)
        server.socket.close()
        server.socket = sock
        server.daemon_threads = True
        self._server = server
        self._thread = RaisingThread(target=server.serve_forever, daemon=True,
                                     name="pnfs-rendezvous")
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def open(self, name: str, body: str = "") -> None:
        self.release(name, body)

    def release(self, name: str, body: str = "") -> None:
        with self._cond:
            self._released[name] = body
            self._cond.notify_all()

    def longest_pause(self, name: str, since: float, until: float) -> float:
        """The longest time without a `put NAME` between since and until
        (time.monotonic()): how long a guest that puts after each step of
        its work stopped going on."""
        with self._cond:
            times = [t for t in self.put_times.get(name, []) if since < t < until]
        marks = [since, *times, until]
        return max(b - a for a, b in zip(marks, marks[1:]))

    def wait(self, name: str, timeout: float = 300.0,
             vms: Sequence[Vm] = ()) -> Arrival:
        """Until a guest arrives at `name`; fails early if one of `vms`
        ends (its report says why)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while name not in self.arrivals:
                for vm in vms:
                    if not vm.alive():
                        res = vm.poll() if vm.proc is not None else None
                        raise AssertionError(f"{vm.name} ended before gate {name!r}:\n"
                                             + (res.report() if res else "(no result)"))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no guest arrived at gate {name!r} in {timeout:.0f} s")
                self._cond.wait(min(left, 0.2))
            return self.arrivals[name]


# ---- dbus (org.ganesha.nfsd.pando) ------------------------------------------------

_DBUS_SCALAR = re.compile(r'^(boolean|string|u?int(?:16|32|64)|byte|double|object path)\s+(.*)$')


def parse_dbus_send(text: str) -> list[Any]:
    """The values of a `dbus-send --print-reply` answer, arrays and structs
    as nested lists."""
    stack: list[list[Any]] = [[]]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("method return"):
            continue
        if line in ("array [", "struct {"):
            stack.append([])
            continue
        if line in ("]", "}"):
            done = stack.pop()
            stack[-1].append(done)
            continue
        m = _DBUS_SCALAR.match(line)
        if not m:
            continue
        kind, value = m.groups()
        if kind == "boolean":
            stack[-1].append(value == "true")
        elif kind in ("string", "object path"):
            stack[-1].append(value[1:-1] if value.startswith('"') else value)
        elif kind == "double":
            stack[-1].append(float(value))
        else:
            stack[-1].append(int(value))
    return stack[0]


@dataclass
class LayoutStatus:
    files: int
    segments: int
    granted: int
    returned: int
    recalls: int
    fenced: int
    io_errors: int
    mds_read_bytes: int
    mds_write_bytes: int

    FIELDS = ("files", "segments", "granted", "returned", "recalls", "fenced", "io_errors",
              "mds_read_bytes", "mds_write_bytes")


@dataclass
class DamageRecord:
    ino: int
    osd_id: int
    status: int         # the error reported (nfsstat4, or -errno for the gateway's own)
    opnum: int          # nfs_opnum4 of the failing operation
    reports: int
    stale: bool         # a write missed it: nothing reads it until repair


# ---- the cluster --------------------------------------------------------------------

@dataclass
class Component:
    osd_id: int
    object_id: int
    index: int          # component number in the map: copy * data_columns + column
    length: int         # the object's logical length
    cap_version: int    # write handles work at this version only
    read_floor: int     # read handles from here up to cap_version


@dataclass
class PnfsCluster:
    pod: Pod
    mds: PandoMds
    osds: list[OsdProcess]
    gate: Rendezvous | None = None

    # -- dbus
    def dbus(self, method: str, *args: str, check: bool = True) -> list[Any]:
        argv = ["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                "/org/ganesha/nfsd/pando", f"org.ganesha.nfsd.pando.{method}", *args]
        cp = self.pod.run(argv, check=False, env={**os.environ, **self.mds.dbus_env()},
                          timeout=30)
        if check and cp.returncode != 0:
            raise AssertionError(f"dbus-send {method} {' '.join(args)}: exit {cp.returncode}: "
                                 f"{cp.stderr.strip()}")
        return parse_dbus_send(cp.stdout)

    def layout_status(self) -> LayoutStatus:
        v = self.dbus("layout_status")
        assert len(v) == 11 and v[0] is True, f"layout_status answered {v}"
        return LayoutStatus(*v[2:])

    def cluster_status(self) -> dict[int, OsdStatus]:
        v = self.dbus("cluster_status")
        assert v and v[0] is True, f"cluster_status answered {v}"
        return {s[0]: OsdStatus(*s) for s in v[2]}

    def recall_file(self, path: str) -> tuple[bool, str]:
        v = self.dbus("recall_file", f"string:{path}")
        return v[0], v[1]

    def recall_client(self, address: str) -> tuple[bool, str, int]:
        v = self.dbus("recall_client", f"string:{address}")
        return v[0], v[1], v[2]

    def set_log(self, component: str, level: str) -> None:
        """One Ganesha log component's level at run time (ganesha_mgr set
        log COMPONENT_PNFS DEBUG), instead of a verbose default level."""
        cp = self.pod.run(["ganesha_mgr", "set", "log", component, level], check=False,
                          env={**os.environ, **self.mds.dbus_env()}, timeout=30)
        assert cp.returncode == 0, f"ganesha_mgr set log {component} {level}: {cp.stderr}"

    def damage(self) -> list[DamageRecord]:
        """The manager's damage records (components reported failing)."""
        v = self.dbus("damage")
        assert v and v[0] is True, f"damage answered {v}"
        return [DamageRecord(*r) for r in v[2]]

    def wait_layouts(self, pred: Callable[[LayoutStatus], bool], timeout: float,
                     what: str) -> LayoutStatus:
        deadline = time.monotonic() + timeout
        while True:
            st = self.layout_status()
            if pred(st):
                return st
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout:.0f} s; layout_status {st}")
            time.sleep(0.2)

    # -- OSDs
    def osd(self, osd_id: int) -> OsdProcess:
        return next(o for o in self.osds if o.osd_id == osd_id)

    def ctl(self, osd: OsdProcess) -> OsdCtl:
        return open_ctl(self.pod, osd)

    def osd_stats(self) -> dict[int, Stats]:
        """Every live OSD's I/O counters (OsdCtl STATS, the same numbers
        `pando-osd-tool stat` prints)."""
        out = {}
        for o in self.osds:
            if not o.alive():
                continue
            with self.ctl(o) as c:
                out[o.osd_id] = c.stats()
        return out

    @staticmethod
    def stats_delta(before: dict[int, Stats], after: dict[int, Stats]) -> dict[int, dict[str, int]]:
        """Per OSD, counter increases (an OSD restarted in between starts from 0)."""
        out = {}
        for i, a in after.items():
            b = before.get(i)
            ac = a.counters()
            if b is None or b.started_ns != a.started_ns:
                out[i] = ac
            else:
                bc = b.counters()
                out[i] = {k: ac[k] - bc[k] for k in ac}
        return out

    @staticmethod
    def total(delta: dict[int, dict[str, int]], counter: str) -> int:
        return sum(d[counter] for d in delta.values())

    def components(self, ino: int) -> list[Component]:
        """The objects of file `ino` on every live OSD (their owner
        attribute), ordered by component number."""
        found = []
        for o in self.osds:
            if not o.alive():
                continue
            with self.ctl(o) as c:
                try:
                    objs = c.list_all(PARTITION)
                except OsdCtlError as e:
                    if e.status != Status.NOENT:
                        raise
                    continue        # this OSD never got an object of the file system
                for obj in objs:
                    info = c.info(PARTITION, obj)
                    if info.get(Info.OWNER) == ino:
                        found.append(Component(o.osd_id, obj, info[Info.COMPONENT],
                                               info[Info.LENGTH], info[Info.CAP_VERSION],
                                               info[Info.READ_FLOOR]))
        return sorted(found, key=lambda k: k.index)

    def wait_components(self, ino: int, want: int, timeout: float = 10.0) -> list[Component]:
        """components(ino) once `want` carry the file's id: objects made
        ahead (the FSAL's object pool) get their owner stamped in the
        background after a LAYOUTGET claims them (ganesha-fsal/mds/object_pool.c)."""
        deadline = time.monotonic() + timeout
        while True:
            comps = self.components(ino)
            if len(comps) >= want or time.monotonic() > deadline:
                return comps
            time.sleep(0.2)

    def read_component(self, k: Component) -> bytes:
        with self.ctl(self.osd(k.osd_id)) as c:
            return c.read_all(PARTITION, k.object_id)

    def mirrors(self, ino: int, size: int, copies: int, columns: int = 1,
                stripe_unit: int = 1 << 20) -> tuple[list[Component], list[bytes]]:
        """Each mirror of file `ino` rebuilt from its objects: objects keep
        file offsets, so column c of a mirror holds stripe units c,
        c + columns, ... at their own file offsets.  Waits for the owner
        stamps of objects taken from the pool (wait_components)."""
        comps = self.wait_components(ino, copies * columns)
        assert [k.index for k in comps] == list(range(copies * columns)), \
            f"inode {ino}: components {comps}, want {copies} x {columns}"
        images = []
        for m in range(copies):
            data = [self.read_component(comps[m * columns + c]) for c in range(columns)]
            img = bytearray(size)
            for off in range(0, size, stripe_unit):
                col = (off // stripe_unit) % columns
                end = min(off + stripe_unit, size)
                img[off:end] = data[col][off:end].ljust(end - off, b"\0")
            images.append(bytes(img))
        return comps, images

    # -- NFSv3 from the host (inside the pod)
    def nfs3_lookup(self, path: str) -> tuple[bytes, Any]:
        """(file handle, attributes) of a path under the export root."""
        sock = self.pod.connect(self.mds.host, self.mds.mnt_port)
        try:
            fh = mount_root(sock, str(self.mds.export_dir))
        finally:
            sock.close()
        setup = Nfs3Setup.over(self.pod.connect(self.mds.host, self.mds.nfs_port))
        try:
            for name in path.strip("/").split("/"):
                fh = setup.lookup(fh, name)
        finally:
            setup.close()
        with self.nfs3() as c:
            attrs = c.getattr(fh)
            assert attrs.status == NFS3_OK, f"GETATTR {path}: {attrs.status}"
            return fh, attrs.attrs

    def nfs3(self) -> Nfs3Client:
        return connect(self.mds)

    def nfs3_read(self, path: str) -> bytes:
        fh, attrs = self.nfs3_lookup(path)
        with self.nfs3() as c:
            return c.read_all(fh, 0, attrs.size)

    def log_text(self) -> str:
        return self.mds.log_text()

    def copy_to_midway(self, kc: "KernelClient", script: str, files: int, size: int,
                       *opened: str, tap: TapNet | None = None) -> tuple[Vm, list[bytes]]:
        """A guest of kc runs script over NFSv4.1 (on `tap` if given,
        else on qemu's user network), random bytes for f1..f<files> at the
        gate (getdata), the gates `opened` open from the start; returned,
        with the bytes, once it waits at gate "midway" (gate "ready"
        released on the way)."""
        gate = self.gate
        assert gate is not None
        data = [os.urandom(size) for _ in range(files)]
        for i, d in enumerate(data, 1):
            gate.data[f"f{i}"] = d
        for name in opened:
            gate.open(name)
        scenario = Scenario().raw(GUEST_NET_SH) if tap is not None else Scenario()
        vm = kc.vm(scenario.step("sh", "v4.1", gate.guest_lib() + script), timeout=900,
                   params=tap.guest_params() if tap is not None else {})
        if tap is not None:
            vm.netdev = tap.netdev()
        vm.start()
        gate.wait("ready", timeout=300, vms=[vm])
        gate.release("ready")
        gate.wait("midway", timeout=300, vms=[vm])
        return vm, data

    def check_copies(self, run: str, data: list[bytes], guest: Arrival) -> None:
        """f1..f<n> of the guest's run directory: the sha256 (h<i>) and
        size (s<i>) the guest gave at its gate, and the manager's copy
        over NFSv3, against data."""
        for i, d in enumerate(data, 1):
            want = sha256(d)
            assert guest.query[f"h{i}"] == want, f"f{i} read back wrong in the guest"
            assert int(guest.query[f"s{i}"]) == len(d), f"f{i}: size {guest.query[f's{i}']}"
            assert self.nfs3_lookup(f"{run}/f{i}")[1].size == len(d), f"f{i}: size on the manager"
            assert sha256(self.nfs3_read(f"{run}/f{i}")) == want, f"f{i} on the manager"


class CallbackBlocker(RecordProxy):
    """A proxy between guests and the manager that can drop the manager's
    back-channel calls (CB_COMPOUND: CB_LAYOUTRECALL and the rest).  NFSv4.1
    clients run the back channel on their fore-channel connection, so
    records from the server that are RPC *calls* (msg_type 0), not
    replies, are callbacks.  With `blocking` set they are swallowed: the
    client never hears of a recall and keeps using its layout."""

    def __init__(self, pod: Pod, listen_port: int, upstream_port: int,
                 host: str = "127.0.0.1") -> None:
        super().__init__(pod, listen_port, upstream_port, host)
        self.blocking = False
        self.dropped = 0
        self.callbacks = 0

    def _pump_records(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                frags = []
                while True:
                    got = recv_fragment(src)
                    if got is None:
                        return
                    word, frag = got
                    frags.append(struct.pack(">I", word) + frag)
                    if word & LAST_FRAGMENT:
                        break
                body = b"".join(f[4:] for f in frags)
                is_call = len(body) >= 8 and struct.unpack(">I", body[4:8])[0] == 0
                with self._lock:
                    self.replies += 1
                    if is_call:
                        self.callbacks += 1
                        if self.blocking:
                            self.dropped += 1
                            continue
                dst.sendall(b"".join(frags))
        except OSError:
            pass
        finally:
            self._shut(dst)


def freeze(vm: Vm) -> None:
    """SIGSTOP the VM's qemu (its pid: pod.popen execs qemu in place)."""
    assert vm.proc is not None and vm.proc.poll() is None, f"{vm.name} is not running"
    os.kill(vm.proc.pid, 19)  # SIGSTOP


def thaw(vm: Vm) -> None:
    assert vm.proc is not None
    if vm.proc.poll() is None:
        os.kill(vm.proc.pid, 18)  # SIGCONT
