"""The cluster directory's state file: what `up` started, for `status`/`down`."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_FILE = "cluster.json"


@dataclass
class OsdRecord:
    osd_id: int
    nfs_addr: str
    ctl_addr: str
    data_dir: str
    conf: str
    log: str
    pid: int | None = None


@dataclass
class ClusterState:
    dir: Path
    key_file: str = ""
    osds: dict[int, OsdRecord] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.dir / STATE_FILE

    @classmethod
    def load(cls, cluster_dir: Path) -> "ClusterState":
        st = cls(cluster_dir)
        if st.path.exists():
            raw = json.loads(st.path.read_text())
            st.key_file = raw.get("key_file", "")
            st.osds = {int(o["osd_id"]): OsdRecord(**o) for o in raw.get("osds", [])}
        return st

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        raw = {"key_file": self.key_file,
               "osds": [asdict(o) for _, o in sorted(self.osds.items())]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(raw, indent=2) + "\n")
        os.replace(tmp, self.path)
