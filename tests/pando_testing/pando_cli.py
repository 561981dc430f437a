"""The `pando` CLI run as a user runs it, inside a test's pod: its own
process, and only the arguments (or `env`) choose the mgr, its token and
the dbus bus, never the PANDO_MGR, PANDO_CONF, PANDO_MGR_TOKEN_FILE or
PANDO_CLUSTER_DIR of whoever runs the tests."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

from .pod import Pod


def cli_argv(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pando_cli.main", *argv]


OWN = ("PANDO_MGR", "PANDO_CONF", "PANDO_MGR_TOKEN_FILE", "PANDO_CLUSTER_DIR")


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without the variables of OWN, with extra."""
    env = {k: v for k, v in os.environ.items() if k not in OWN}
    return {**env, **(extra or {})}


def run_cli(pod: Pod, *argv: str, env: Mapping[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """`pando ARGV` to its end (60 s at most); its exit status is the caller's to check."""
    cp: subprocess.CompletedProcess[str] = pod.run(cli_argv(*argv), check=False, env=cli_env(env),
                                                   timeout=60)
    return cp
