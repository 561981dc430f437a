"""The fault schedule of tests/bench/soak and the thread that runs it.

`schedule(seed, seconds, ...)` draws the whole schedule up front from the
seed alone: a fault every 15-30 s (the pause before each), its kind taken
from a shuffled bag of every kind (so any 9 faults in a row hold each
kind once), its victim and how long it lasts.  The same seed gives the
same list, which is what replays a failure; the times it runs at can
slide (below), the list cannot.

The kinds, what is done and how it is undone (`hold`: 5-20 s, drawn):
- osd_kill: kill -9 of a pando-osd, started again on its data after `hold`;
- osd_out: kill -9, then `POST /api/osd/<id>/out`: the mgr's rebuild job
  moves its components; once it is done and nothing is degraded, started
  again (the manager removes its leftovers) and `POST .../in`;
- osd_stop: SIGSTOP of a pando-osd for 15 s, then SIGCONT;
- osd_link: the OSD machine's switch port down for 10 s;
- osd_enospc: the OSD's disk (its tmpfs) written full for `hold`, then freed;
- client_link: a client machine's switch port down for 10 s;
- mds_kill: kill -9 of ganesha.nfsd, started again 1 s later;
- mgr_kill: kill -9 of the leading pando-mgr, started again after `hold`;
- etcd_kill: kill -9 of an etcd member, started again on its data after `hold`.

Pando promises to survive one failure at a time, given time to repair
(two mirrors, RS(4,2)), so a fault waits until the cluster can take it:
an OSD fault until every OSD is up and in, the manager has applied the
map, no file is degraded and no rebuild work is queued; any fault until
its kind's last one is undone.  A fault that cannot go in within
`patience` s is skipped, and said so.  Each fault runs on a thread of its
own, so a long one (a rebuild) does not hold the schedule up."""
from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .etcd import EtcdError
from .mgr import MgrApiError
from .soak_cluster import PREFIX, SoakCluster, wait_for
from .threads import RaisingThread

OSD_KINDS = ("osd_kill", "osd_out", "osd_stop", "osd_link", "osd_enospc")
KINDS = (*OSD_KINDS, "client_link", "mds_kill", "mgr_kill", "etcd_kill")
INTERVAL_S = (15.0, 30.0)
STOP_S = 15.0
LINK_S = 10.0
MDS_DOWN_S = 1.0
REBUILD_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Planned:
    n: int
    at: float               # seconds after the schedule starts, if none waited
    pause: float            # seconds after the fault before it went in
    kind: str
    victim: int             # an OSD id, or an index into the clients or etcd members
    hold: float             # seconds the fault lasts (osd_out: until rebuilt)


def _duration(kind: str, rng: random.Random) -> float:
    if kind == "osd_stop":
        return STOP_S
    if kind in ("osd_link", "client_link"):
        return LINK_S
    if kind == "mds_kill":
        return MDS_DOWN_S
    if kind == "osd_out":
        return 0.0
    return round(rng.uniform(5.0, 20.0), 1)


def schedule(seed: int, seconds: float, osds: int, clients: int, etcd: int) -> list[Planned]:
    rng = random.Random(seed)
    victims = {"client_link": clients, "mds_kill": 1, "mgr_kill": 1, "etcd_kill": etcd}
    out: list[Planned] = []
    bag: list[str] = []
    pause = rng.uniform(*INTERVAL_S)
    t = pause
    while t < seconds:
        if not bag:
            bag = list(KINDS)
            rng.shuffle(bag)
        kind = bag.pop()
        victim = rng.randrange(victims[kind]) if kind in victims else rng.randint(1, osds)
        out.append(Planned(len(out) + 1, round(t, 1), round(pause, 1), kind, victim,
                           _duration(kind, rng)))
        pause = rng.uniform(*INTERVAL_S)
        t += pause
    return out


@dataclass
class Fault:
    plan: Planned
    what: str               # "osd.3", "client load-rs", "etcd2", ...
    injected: float         # time.monotonic()
    undone: float = 0.0     # when what was done was undone (0: not yet)
    note: str = ""

    @property
    def kind(self) -> str:
        return self.plan.kind


class Chaos:
    """Runs a schedule against a cluster until stop()."""

    def __init__(self, cluster: SoakCluster, plan: list[Planned], clients: list[str],
                 patience: float, say: Callable[[str], None]) -> None:
        self.c, self.plan, self.patience, self.say = cluster, plan, patience, say
        self.clients = clients          # client_link victims, by index
        self.faults: list[Fault] = []
        self.skipped: list[str] = []
        self._busy: set[str] = set()     # kinds with a fault not yet undone
        self._victims: set[str] = set()  # what faults have hold of now
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[RaisingThread] = []
        self._main = RaisingThread(target=self._run, daemon=True, name="soak-chaos")
        self.t0 = 0.0

    def start(self) -> "Chaos":
        self.t0 = time.monotonic()
        self._main.start()
        return self

    def stop(self) -> None:
        """No more faults; waits for every one to be undone."""
        self._stop.set()
        self._main.join(timeout=REBUILD_TIMEOUT_S + 600)
        for t in self._threads:
            t.join(timeout=REBUILD_TIMEOUT_S + 600)

    def active(self) -> list[str]:
        with self._lock:
            return sorted(self._busy)

    # -- the schedule
    def _run(self) -> None:
        """Each fault its pause after the one before went in (or was
        skipped), until the schedule's time is up."""
        last = self.t0
        for p in self.plan:
            if self._stop.wait(max(0.0, last + p.pause - time.monotonic())):
                return
            why = self._wait_ready(p)
            if self._stop.is_set():
                return
            last = time.monotonic()
            if why:
                self.skipped.append(f"#{p.n} {p.kind}: {why}")
                self.say(f"fault #{p.n} {p.kind} skipped: {why}")
                continue
            with self._lock:
                self._busy.add(p.kind)
                if p.kind in OSD_KINDS:
                    self._busy.add("osd")
            t = RaisingThread(target=self._fault, args=(p,), daemon=True, name=f"fault-{p.n}")
            self._threads.append(t)
            t.start()

    def _blocker(self, p: Planned) -> str:
        with self._lock:
            if p.kind in self._busy:
                return f"the last {p.kind} is not undone"
            if p.kind in OSD_KINDS and "osd" in self._busy:
                return "another OSD fault is not undone"
        if p.kind in OSD_KINDS:
            return self.c.unhealthy()
        if p.kind == "etcd_kill" and not all(m.alive() for m in self.c.etcd):
            return "an etcd member is down"
        if p.kind == "mgr_kill" and (not all(m.alive() for m in self.c.mgrs) or not self.c.leader()):
            return "a mgr is down or none leads"
        return ""

    def _wait_ready(self, p: Planned) -> str:
        """"" once the fault can go in; else why not, after `patience` s."""
        deadline = time.monotonic() + self.patience
        why = ""
        while not self._stop.is_set():
            try:
                why = self._blocker(p)
            except (OSError, AssertionError, EtcdError) as e:
                why = f"cannot tell: {e}"
            if not why:
                return ""
            if time.monotonic() > deadline:
                return why
            self._stop.wait(1.0)
        return why

    def revive(self) -> list[str]:
        """Daemons that died with no fault on them (a crash): each started
        again, so the soak goes on; what was found."""
        out = []
        for name, d in self.c.daemons().items():
            with self._lock:
                if name in self._victims or d.alive():
                    continue
            code = d.proc.returncode if d.proc else None
            out.append(f"{name} exited {code} with no fault on it; started again")
            d.start()
        return out

    # -- one fault
    def _fault(self, p: Planned) -> None:
        f = getattr(self, f"_{p.kind}")(p)
        with self._lock:
            self._busy.discard(p.kind)
            self._victims.discard(f.what)
            if p.kind in OSD_KINDS:
                self._busy.discard("osd")
        self.say(f"fault #{p.n} {p.kind} {f.what}: undone after "
                 f"{f.undone - f.injected:.1f} s{f.note}")

    def _begin(self, p: Planned, what: str) -> Fault:
        with self._lock:
            self._victims.add(what)
        f = Fault(p, what, time.monotonic())
        self.faults.append(f)
        self.say(f"fault #{p.n} {p.kind} {what} (in at {f.injected - self.t0:.0f} s, "
                 f"{p.at:.0f} s had none waited)")
        return f

    def _osd_kill(self, p: Planned) -> Fault:
        osd = self.c.osd_machine(p.victim).osd
        f = self._begin(p, f"osd.{p.victim}")
        osd.kill9()
        time.sleep(p.hold)
        osd.start()
        f.undone = time.monotonic()
        return f

    def _osd_out(self, p: Planned) -> Fault:
        osd = self.c.osd_machine(p.victim).osd
        f = self._begin(p, f"osd.{p.victim}")
        osd.kill9()
        wait_for(f"osd.{p.victim} out", lambda: self._post(f"/api/osd/{p.victim}/out"), 120, 1)
        f.undone = time.monotonic()
        t = time.monotonic()
        jobs = self._jobs(p.victim)
        wait_for(f"osd.{p.victim}'s rebuild", lambda: self._rebuilt(p.victim, jobs),
                 REBUILD_TIMEOUT_S, 1)
        rebuilt = time.monotonic() - t
        osd.start()
        wait_for(f"osd.{p.victim} in", lambda: self._post(f"/api/osd/{p.victim}/in"), 120, 1)
        f.note = f"; rebuilt {rebuilt:.0f} s after it went out, back in"
        return f

    def _post(self, path: str) -> bool:
        """Whether a mgr took the command (none may lead for a while); a
        refusal (a wrong token, a bad request) is the soak's own bug."""
        try:
            self.c.mgr_api().post(path)
            return True
        except MgrApiError as e:
            if 400 <= e.status < 500:
                raise
            return False
        except (OSError, StopIteration):
            return False

    def _jobs(self, osd_id: int) -> set[str]:
        """The rebuild jobs of an OSD (the mgr put them with the map change
        that took it out)."""
        jobs = self.c.etcd_client().get_prefix(PREFIX + "rebuild/jobs/")
        return {k for k, v in jobs.items() if json.loads(v).get("osd") == osd_id}

    def _rebuilt(self, osd_id: int, jobs: set[str]) -> bool:
        """Its jobs done (the mgr deletes a job every manager has done),
        no task queued, nothing degraded."""
        c = self.c.etcd_client()
        p = self.c.mds_presence()
        return (p is not None and not p.get("degraded")
                and not jobs & set(c.get_prefix(PREFIX + "rebuild/jobs/"))
                and not c.get_prefix(PREFIX + "rebuild/tasks/"))

    def _osd_stop(self, p: Planned) -> Fault:
        osd = self.c.osd_machine(p.victim).osd
        f = self._begin(p, f"osd.{p.victim}")
        osd.pause()
        time.sleep(p.hold)
        osd.resume()
        f.undone = time.monotonic()
        return f

    def _osd_link(self, p: Planned) -> Fault:
        node = self.c.osd_machine(p.victim).node
        f = self._begin(p, f"osd.{p.victim}")
        self.c.cut(node)
        time.sleep(p.hold)
        self.c.mend(node)
        f.undone = time.monotonic()
        return f

    def _osd_enospc(self, p: Planned) -> Fault:
        m = self.c.osd_machine(p.victim)
        f = self._begin(p, f"osd.{p.victim}")
        took = m.fill()
        time.sleep(p.hold)
        m.unfill()
        f.undone = time.monotonic()
        f.note = f"; {took >> 20} MiB taken"
        return f

    def _client_link(self, p: Planned) -> Fault:
        name = self.clients[p.victim]
        node = self.c.clients[name]
        f = self._begin(p, name)
        self.c.cut(node)
        time.sleep(p.hold)
        self.c.mend(node)
        f.undone = time.monotonic()
        return f

    def _mds_kill(self, p: Planned) -> Fault:
        f = self._begin(p, "ganesha.nfsd")
        self.c.mds.kill9()
        time.sleep(p.hold)
        self.c.mds.start()
        f.undone = time.monotonic()
        return f

    def _mgr_kill(self, p: Planned) -> Fault:
        mgr = self.c.leader()
        assert mgr is not None, "no mgr leads"
        f = self._begin(p, mgr.name)
        mgr.kill9()
        time.sleep(p.hold)
        mgr.start()
        f.undone = time.monotonic()
        return f

    def _etcd_kill(self, p: Planned) -> Fault:
        member = self.c.etcd[p.victim]
        f = self._begin(p, member.name)
        member.kill9()
        time.sleep(p.hold)
        member.start()
        f.undone = time.monotonic()
        return f
