"""pando-osd-tool's command line: offline commands (genkey, format,
mint-handle), data in and out, and how it fails: exit 1 and one clear line
on stderr."""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import struct
import subprocess
import time
from pathlib import Path

from pando_testing.daemons import OsdProcess, osd_binary
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.pod import Pod

MiB = 1 << 20


def tool(pod: Pod, *args: str, check: bool = False, **kw: object) -> subprocess.CompletedProcess[str]:
    return pod.run([osd_binary("pando-osd-tool"), *args], check=check, **kw)


def assert_fails(cp: subprocess.CompletedProcess[str], message: str) -> None:
    assert cp.returncode == 1, (cp.returncode, cp.stderr)
    assert cp.stderr.startswith("pando-osd-tool: "), cp.stderr
    assert message in cp.stderr, cp.stderr


# ---- offline commands -------------------------------------------------------------

def test_genkey_writes_a_loadable_key(pod: Pod, tmp_path: Path) -> None:
    out = tool(pod, "genkey", "--id", "7", check=True).stdout
    m = re.fullmatch(r"id = 7\nsecret = ([0-9a-f]{64})\n", out)
    assert m, out
    assert tool(pod, "genkey", check=True).stdout.startswith("id = 1\n")
    assert tool(pod, "genkey", check=True).stdout != tool(pod, "genkey", check=True).stdout
    # the key file it writes is one the tool itself loads
    key = tmp_path / "k"
    key.write_text(out)
    data = tmp_path / "d"
    uuid = tool(pod, "format", "--data-dir", str(data), "--osd-id", "3", "--key-file", str(key),
                check=True).stdout.strip()
    assert "key_id = 7" in (data / "superblock").read_text()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uuid)
    assert_fails(tool(pod, "genkey", "--id", "0"), "--id wants 1..65535")
    assert_fails(tool(pod, "genkey", "--id", "65536"), "--id wants 1..65535")


def test_genkey_previous_starts_a_rotation(pod: Pod, tmp_path: Path,
                                           cluster_key: ClusterKey) -> None:
    """The new key gets the next id, the old one is kept as previous."""
    out = tool(pod, "genkey", "--previous", str(cluster_key.path), check=True).stdout
    m = re.fullmatch(r"id = 2\nsecret = ([0-9a-f]{64})\nprevious_id = 1\n"
                     r"previous_secret = ([0-9a-f]{64})\n", out)
    assert m, out
    assert m[1] != m[2] and bytes.fromhex(m[2]) == cluster_key.secret
    assert tool(pod, "genkey", "--id", "9", "--previous", str(cluster_key.path),
                check=True).stdout.startswith("id = 9\n")
    assert_fails(tool(pod, "genkey", "--id", "1", "--previous", str(cluster_key.path)),
                 "--id 1 is the previous key's")
    assert_fails(tool(pod, "genkey", "--previous", str(tmp_path / "none")),
                 "cannot load key file")


def test_format_offline(pod: Pod, tmp_path: Path, cluster_key: ClusterKey) -> None:
    data = tmp_path / "d"
    cp = tool(pod, "--key-file", str(cluster_key.path), "format", "--data-dir", str(data),
              "--osd-id", "12", check=True)
    uuid = cp.stdout.strip()
    sb = (data / "superblock").read_text()
    assert f"uuid = {uuid.replace('-', '')}" in sb
    assert "osd_id = 12" in sb and f"key_id = {cluster_key.key_id}" in sb
    assert_fails(tool(pod, "format", "--data-dir", str(data), "--osd-id", "12",
                      "--key-file", str(cluster_key.path)), "already formatted")
    assert_fails(tool(pod, "format", "--data-dir", str(tmp_path / "e"),
                      "--key-file", str(cluster_key.path)), "needs --data-dir DIR and --osd-id N")
    assert_fails(tool(pod, "format", "--data-dir", str(tmp_path / "e"), "--osd-id", "1"),
                 "needs --key-file")


def expected_handle(secret: bytes, key_id: int, osd_id: int, partition: int, obj: int,
                    rights: int, cap_version: int, expiry: int, holder: int = 0) -> bytes:
    """The 56-byte handle, from the table in osd-target/README.md."""
    body = struct.pack(">BBHIQQIQI", 1, rights, key_id, osd_id, partition, obj,
                       cap_version, expiry, holder)
    assert len(body) == 40
    return body + hmac.new(secret, body, hashlib.sha256).digest()[:16]


def test_mint_handle_known_bytes(pod: Pod, tmp_path: Path) -> None:
    key = write_cluster_key(tmp_path / "k", key_id=0x1234, secret=bytes(range(32)))
    k = ["--key-file", str(key.path)]
    out = tool(pod, *k, "mint-handle", "--osd-id", "9", "--cap-version", "5",
               "--expiry", "1700000000", "0x10", "0xabcdef", check=True).stdout.strip()
    assert out == expected_handle(key.secret, 0x1234, 9, 0x10, 0xABCDEF, 3, 5,
                                  1700000000).hex()
    assert len(out) == 112
    # one fixed vector, so a change of layout cannot go unnoticed
    assert out[:80] == ("01031234000000090000000000000010""0000000000abcdef"
                        "00000005""000000006553f100""00000000")
    out = tool(pod, *k, "mint-handle", "--osd-id", "1", "--rights", "r", "2", "3",
               check=True).stdout.strip()
    assert bytes.fromhex(out) == expected_handle(key.secret, 0x1234, 1, 2, 3, 1, 0, 0)
    out = tool(pod, *k, "mint-handle", "--osd-id", "1", "--holder", "4000", "2", "3",
               check=True).stdout.strip()
    assert bytes.fromhex(out) == expected_handle(key.secret, 0x1234, 1, 2, 3, 3, 0, 0, 4000)
    before = int(time.time())
    out = tool(pod, *k, "mint-handle", "--osd-id", "1", "--ttl", "600", "2", "3",
               check=True).stdout.strip()
    expiry = struct.unpack(">Q", bytes.fromhex(out)[28:36])[0]
    assert before + 600 <= expiry <= int(time.time()) + 600
    assert_fails(tool(pod, *k, "mint-handle", "2", "3"), "needs --osd-id")
    assert_fails(tool(pod, *k, "mint-handle", "--osd-id", "1", "--rights", "x", "2", "3"),
                 "bad value 'x'")
    assert_fails(tool(pod, *k, "mint-handle", "--osd-id", "1", "--ttl", "5", "--expiry", "9",
                      "2", "3"), "not both")
    assert_fails(tool(pod, *k, "mint-handle", "--osd-id", "1", "--holder", "-1", "2", "3"),
                 "bad value '-1'")


# ---- against a target -------------------------------------------------------------

def test_stat_ls_put_get(osd: OsdProcess) -> None:
    stat = osd.tool("stat").stdout
    fields = dict(line.split(None, 1) for line in stat.splitlines())
    assert {"uuid", "osd_id", "key_id", "total_bytes", "free_bytes", "partitions", "objects",
            "created_ns", "started_ns", "nfs_read_ops", "ctl_write_bytes"} <= set(fields)
    assert (fields["osd_id"], fields["key_id"]) == ("1", str(osd.key.key_id))
    assert fields["uuid"].replace("-", "") in (osd.data_path / "superblock").read_text()
    assert int(fields["total_bytes"]) >= int(fields["free_bytes"]) > 0
    assert osd.tool("ls").stdout == ""
    osd.tool("mkpart", "0x20")
    osd.tool("create", "32", "1", "2")
    assert osd.tool("ls").stdout == "32\n"
    assert osd.tool("ls", "32").stdout == "1\n2\n"

    data = os.urandom(3 * MiB + 777)
    osd.tool("put", "32", "1", "-", input=data, text=False)
    got = osd.tool("get", "32", "1", "-", text=False).stdout
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(data).hexdigest()
    assert osd.tool("get", "32", "2", text=False).stdout == b""   # empty object
    stat = osd.tool("stat").stdout
    assert re.search(r"^partitions\s+1$", stat, re.M) and re.search(r"^objects\s+2$", stat, re.M)


def test_ls_pages_through_long_listings(osd: OsdProcess) -> None:
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "--count", "5000")             # more than one LIST page
    ids = osd.tool("ls", "1").stdout.split()
    assert len(ids) == len(set(ids)) == 5000
    assert [int(i) for i in ids] == sorted(int(i) for i in ids)


def test_errors_from_the_target(osd: OsdProcess) -> None:
    assert_fails(osd.tool("rmpart", "5", check=False),
                 "rmpart: partition 5: No such file or directory")
    assert_fails(osd.tool("ls", "5", check=False), "partition 5: No such file or directory")
    osd.tool("mkpart", "5")
    assert_fails(osd.tool("mkpart", "5", check=False), "partition 5: File exists")
    assert_fails(osd.tool("get", "5", "9", check=False),
                 "read at offset 0: No such file or directory")
    assert_fails(osd.tool("setattr", "5", "9", "1", "5", "1", check=False),
                 "No such file or directory")
    osd.tool("create", "5", "9")
    assert_fails(osd.tool("rmpart", "5", check=False), "Directory not empty")
    assert_fails(osd.tool("setattr", "5", "9", "1", "2", "1", check=False),
                 "Invalid argument")                       # mtime is not settable
    assert_fails(osd.tool("setattr", "5", "9", "1", "6", "0x100000000", check=False),
                 "32 bits wide")


def test_bad_arguments(pod: Pod, osd: OsdProcess) -> None:
    assert_fails(osd.tool("frobnicate", check=False), "unknown command 'frobnicate'")
    assert_fails(osd.tool("mkpart", check=False), "usage: pando-osd-tool mkpart PARTITION")
    assert_fails(osd.tool("mkpart", "1", "2", check=False), "usage:")
    assert_fails(osd.tool("mkpart", "one", check=False), "PARTITION must be a number, not 'one'")
    assert_fails(osd.tool("rm", "1", "3x", check=False), "OBJECT must be a number, not '3x'")
    assert_fails(osd.tool("rm", "1", "-3", check=False), "unknown option or missing value: -3")
    assert_fails(osd.tool("create", "1", "--bogus", check=False), "unknown option")
    assert_fails(osd.tool("setcap", "1", "1", "4294967296", check=False),
                 "VERSION must be a number below 2^32")
    assert_fails(osd.tool("wipe", check=False), "needs --uuid")
    assert_fails(osd.tool("wipe", "--uuid", "abc", check=False), "--uuid wants")
    assert_fails(osd.tool("flush", "1", check=False), "usage:")
    assert_fails(osd.tool("put", "1", "1", "/nonexistent/file", check=False),
                 "cannot open /nonexistent/file")
    assert_fails(tool(pod, "stat"), "needs --key-file")
    assert_fails(tool(pod, "--key-file", "/nonexistent.key", "stat"),
                 "cannot load key file /nonexistent.key")
    bare = tool(pod)                                         # no command: usage on stderr
    assert bare.returncode == 1 and bare.stderr.startswith("usage: pando-osd-tool")
    helped = tool(pod, "--help")
    assert helped.returncode == 0 and "mint-handle" in helped.stdout


def test_unreachable_or_wrong_target(pod: Pod, osd: OsdProcess, tmp_path: Path) -> None:
    k = ["--key-file", str(osd.key.path)]
    assert_fails(tool(pod, "--ctl", "127.0.0.1:1", *k, "stat"),
                 "cannot connect to 127.0.0.1:1: Connection refused")
    assert_fails(tool(pod, "--ctl", "nonsense", *k, "stat"), "--ctl wants HOST:PORT")
    assert_fails(tool(pod, "--ctl", "no-such-host.invalid:20591", *k, "stat"),
                 "cannot connect to no-such-host.invalid:20591")
    other = write_cluster_key(tmp_path / "other.key", key_id=osd.key.key_id)
    assert_fails(tool(pod, "--ctl", osd.ctl_addr, "--key-file", str(other.path), "stat"),
                 "refused our credential")
    # the right key, but signed for another target (the default --osd-id is 1)
    assert_fails(tool(pod, "--ctl", osd.ctl_addr, "--osd-id", "2", *k, "stat"),
                 "refused our credential: not osd 2 (see --osd-id)")
    # the NFS port speaks RPC, but cannot sign its replies with our key
    assert_fails(tool(pod, "--ctl", f"{osd.host}:{osd.nfs_port}", *k, "stat"),
                 "wrong verifier")
