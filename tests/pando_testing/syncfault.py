"""Failed syncs and power cuts on a pando-osd, through the test-only
library osd-target/tests/syncfault.c preloaded into it: `SyncFault(dir)`,
its `env` given to `OsdProcess(env=...)`.  The library keeps a copy of
every object file (data and extent checksums) as its last successful
fsync or fdatasync left it, and of each shard directory's names as its
last fsync left them; `power_cut` puts those back after a kill -9, and
`fail_next_sync` has the next sync of an object file fail with EIO."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from pando_cluster.paths import built

from .daemons import OsdProcess


@dataclass
class SyncFault:
    dir: Path

    def __post_init__(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        return {"LD_PRELOAD": str(built("osd-target", "libpando_syncfault.so")),
                "PANDO_SYNCFAULT_DIR": str(self.dir)}

    def fail_next_sync(self) -> None:
        (self.dir / "fail").touch()

    def sync_failed(self) -> bool:
        """Whether the sync fail_next_sync armed has happened."""
        return not (self.dir / "fail").exists()

    def power_cut(self, osd: OsdProcess) -> None:
        """What the disk of a killed target holds: each object file as it
        was last synced; a file never synced, or whose name its directory
        was not synced with, is gone."""
        assert not osd.alive(), "kill -9 the target first"
        for path in (osd.data_path / "objects").glob("*/*"):
            durable = self.dir / path.name
            if durable.exists() and path.name in self._entries(path.parent.name):
                shutil.copyfile(durable, path)
            else:
                path.unlink()

    def _entries(self, shard: str) -> set[str]:
        listing = self.dir / f"dir.{shard}"
        return set(listing.read_text().split()) if listing.exists() else set()
