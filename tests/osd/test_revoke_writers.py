"""REVOKE_WRITERS (osd-target/README.md, "File handle (capability) format"):
raising an object's capability version without its read floor takes the
write handles minted before and leaves the read handles good; the fence,
SET_CAP_VERSION, takes both.  Like the fence, a revocation answers only
once the requests it overtook are done (test_fence_drain.py)."""
from __future__ import annotations


from pando_testing.capability import RIGHTS_READ, RIGHTS_RW, handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_STALE
from pando_testing.osdctl import Info, Status, open_ctl
from pando_testing.pod import Pod

PART, OBJ = 1, 10
DATA = b"written before the revocation"


def target_with_object(osd: OsdProcess) -> None:
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), str(OBJ))
    with osd.nfs3() as nfs:
        assert nfs.write(handle_for(osd, PART, OBJ), 0, DATA, FILE_SYNC).status == NFS3_OK


def test_revoking_writers_keeps_readers_and_a_fence_then_takes_them(
        pod: Pod, osd: OsdProcess) -> None:
    target_with_object(osd)
    old_reader = handle_for(osd, PART, OBJ, RIGHTS_READ, cap_version=0)
    old_writer = handle_for(osd, PART, OBJ, RIGHTS_RW, cap_version=0)
    new_writer = handle_for(osd, PART, OBJ, RIGHTS_RW, cap_version=1)
    with open_ctl(pod, osd) as ctl:
        assert ctl.revoke_writers(PART, OBJ, 1) == (Status.OK, 0)
        info = ctl.info(PART, OBJ)
        assert (info[Info.CAP_VERSION], info[Info.READ_FLOOR]) == (1, 0)
        with osd.nfs3() as nfs:
            read = nfs.read(old_reader, 0, 4096)
            assert (read.status, read.data) == (NFS3_OK, DATA)
            assert nfs.write(old_writer, 0, b"late", FILE_SYNC).status == NFS3ERR_STALE
            assert nfs.read(old_writer, 0, 4096).status == NFS3ERR_STALE
            assert nfs.write(new_writer, 0, b"new", FILE_SYNC).status == NFS3_OK
            assert nfs.read(old_reader, 0, 3).data == b"new"

        assert ctl.set_cap_version(PART, OBJ, 1) == (Status.OK, 1)
        with osd.nfs3() as nfs:
            assert nfs.read(old_reader, 0, 4096).status == NFS3ERR_STALE
            assert nfs.read(handle_for(osd, PART, OBJ, RIGHTS_READ, cap_version=1),
                            0, 3).data == b"new"


def test_a_revocation_to_a_version_not_above_the_current_changes_nothing(
        pod: Pod, osd: OsdProcess) -> None:
    target_with_object(osd)
    with open_ctl(pod, osd) as ctl:
        assert ctl.revoke_writers(PART, OBJ, 5) == (Status.OK, 0)
        assert ctl.revoke_writers(PART, OBJ, 3) == (Status.OK, 5)
        assert ctl.revoke_writers(PART, OBJ, 5) == (Status.OK, 5)
        info = ctl.info(PART, OBJ)
        assert (info[Info.CAP_VERSION], info[Info.READ_FLOOR]) == (5, 0)
        assert ctl.revoke_writers(PART, OBJ + 1, 9)[0] == Status.NOENT
    with osd.nfs3() as nfs:
        assert nfs.write(handle_for(osd, PART, OBJ, cap_version=5), 0, b"x",
                         FILE_SYNC).status == NFS3_OK
        assert nfs.read(handle_for(osd, PART, OBJ, RIGHTS_READ, cap_version=3),
                        0, 1).status == NFS3_OK
