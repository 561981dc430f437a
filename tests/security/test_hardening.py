"""The daemons and the FSAL are built with Debian's hardening flags
(CMakeLists.txt, PANDO_HARDEN): full RELRO, a stack protector and
fortified libc calls, as `readelf` sees them in the built files."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pando_testing.pod import build_dir

BUILT = ["osd-target/pando-osd", "osd-target/pando-osd-tool",
         "ganesha-fsal/fsal/libfsalpando.so", "ganesha-fsal/tools/pando-fsck"]


def readelf(path: Path, *flags: str) -> str:
    return subprocess.run(["readelf", "-W", *flags, str(path)], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def sanitized() -> bool:
    cache = (build_dir() / "CMakeCache.txt").read_text()
    return "PANDO_SANITIZE:BOOL=ON" in cache or "PANDO_HARDEN:BOOL=OFF" in cache


@pytest.mark.skipif(sanitized(), reason="sanitizer builds leave the hardening flags out")
@pytest.mark.parametrize("name", BUILT)
def test_built_files_have_full_relro_a_stack_protector_and_fortify(name: str) -> None:
    path = build_dir() / name
    assert "GNU_RELRO" in readelf(path, "-l")
    assert "BIND_NOW" in readelf(path, "-d")
    symbols = readelf(path, "--dyn-syms")
    assert "__stack_chk_fail" in symbols
    assert "_chk@" in symbols, "no fortified libc call (_FORTIFY_SOURCE)"
