"""The tests run the Ganesha configuration users run: every ganesha.conf the
harness writes (tests/pando_testing/ganesha.py) differs from the one
`pando-cluster up` writes only in the keys ganesha_conf.TEST_OVERRIDES
documents.  No daemons: the configs are written, not started."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, cast

import pytest

from pando_cluster.ganesha_conf import TEST_OVERRIDES
from pando_cluster.mds_config import MdsPaths, render_ganesha_conf
from pando_cluster.nsm import STATE_DIR
from pando_cluster.statd import notify_dir
from pando_testing.ganesha import STATE_DEBUG, GaneshaServer, GaneshaVfs
from pando_testing.keys import write_cluster_key
from pando_testing.mds import PandoMds
from pando_testing.pod import Pod

NO_POD = cast(Pod, None)  # writing a config needs no pod


def conf_keys(text: str) -> dict[str, str]:
    """BLOCK.Sub.Key -> value, for a ganesha.conf as ganesha_conf.render() writes it."""
    keys: dict[str, str] = {}
    path: list[str] = []
    for line in (x.strip() for x in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.endswith("{"):
            path.append(line[:-1].strip())
        elif line == "}":
            path.pop()
        else:
            key, _, value = line.rstrip(";").partition("=")
            keys[".".join([*path, key.strip()])] = value.strip()
    return keys


def overridable(key: str) -> bool:
    return any(key == o or (o.endswith(".*") and key.startswith(o[:-1]))
               for o in TEST_OVERRIDES)


def differing(a: dict[str, str], b: dict[str, str]) -> set[str]:
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def production(plugins_dir: str) -> dict[str, str]:
    """What `up` writes when it runs its own rpc.statd (pando_cluster.nsm)."""
    paths = MdsPaths(Path("/c"))
    return conf_keys(render_ganesha_conf(paths, "127.0.0.1", 2049, 20048, Path(plugins_dir),
                                         mirrors=2,
                                         nsm_notify_dir=notify_dir(paths.file(STATE_DIR))))


def written(server: GaneshaServer) -> dict[str, str]:
    server.write_config()
    return conf_keys(server.conf_path.read_text())


def _mds(tmp_path: Path, **kw: object) -> PandoMds:
    key = write_cluster_key(tmp_path / "cluster.key")
    return PandoMds(NO_POD, tmp_path / "mds", key=key, **kw)  # type: ignore[arg-type]


# The servers the suites make, as their fixtures make them.
SERVERS: dict[str, Callable[[Path], GaneshaServer]] = {
    "mds-gateway": lambda t: _mds(t, object_pool=0),
    "mds-e2e": lambda t: _mds(t, protocols=(3, 4), minor_versions=(1,), pseudo="/pando",
                              advertise_host="10.0.2.2", pnfs=True, log_components=STATE_DEBUG),
    "mds-pnfs": lambda t: _mds(t, pnfs=True, mirrors=1, log_level="DEBUG",
                               extra_fsal="Stripe_Width = 3;\nRecall_Timeout = 10;"),
    "vfs-baseline": lambda t: GaneshaVfs(NO_POD, t / "vfs"),
    "vfs-read-only": lambda t: GaneshaVfs(NO_POD, t / "ro", protocols=(3, 4), pseudo="/ro",
                                          access_type="RO"),
}


@pytest.mark.parametrize("name", SERVERS)
def test_test_config_differs_from_production_only_in_documented_overrides(
        name: str, tmp_path: Path) -> None:
    server = SERVERS[name](tmp_path)
    test = written(server)
    prod = production(server.plugins_dir)
    assert not {k for k in differing(test, prod) if not overridable(k)}, (test, prod)


def test_a_restart_test_runs_production_settings_but_where_things_are(tmp_path: Path) -> None:
    """graceless=False and pnfs=True: the configuration of the restart
    tests, which must see the grace period and layouts users get."""
    m = _mds(tmp_path, pnfs=True, graceless=False)
    assert differing(written(m), production(m.plugins_dir)) == {
        "NFS_CORE_PARAM.Bind_Addr", "NFS_CORE_PARAM.NSM_Notify_Dir", "NFSV4.RecoveryRoot",
        "EXPORT.FSAL.Db_Path", "EXPORT.FSAL.Cluster", "EXPORT.CLIENT.Clients"}


def test_the_defaults_of_the_harness_are_production_where_not_overridden(
        tmp_path: Path) -> None:
    m = _mds(tmp_path)
    test, prod = written(m), production(m.plugins_dir)
    for key in ("NFSV4.Minor_Versions", "NFS_CORE_PARAM.NFS_Protocols",
                "LOG.Default_Log_Level", "EXPORT.SecType", "NFSV4.Grace_Period",
                "NFSV4.Lease_Lifetime"):
        assert test[key] == prod[key], key
    assert (test["NFSV4.Graceless"], prod["NFSV4.Graceless"]) == ("true", "false")


def test_group_members_are_one_server_that_keeps_its_reclaim_records_in_etcd(
        tmp_path: Path) -> None:
    """Whichever member is active next reads them (RecoveryBackend = fsal),
    under the same server owner and scope; a manager alone keeps Ganesha's
    own records, in RecoveryRoot, and Ganesha's owner and scope."""
    (tmp_path / "member").mkdir()
    (tmp_path / "alone").mkdir()
    member = written(_mds(tmp_path / "member", mds_group="g1"))
    alone = written(_mds(tmp_path / "alone"))
    assert (member["EXPORT.FSAL.Mds_Group"], member["NFSV4.RecoveryBackend"]) == ('"g1"', "fsal")
    assert member["NFSV4.Server_Owner"] == member["NFSV4.Server_Scope"] == '"pando-group-g1"'
    assert not {"NFSV4.RecoveryBackend", "NFSV4.Server_Owner", "NFSV4.Server_Scope",
                "EXPORT.FSAL.Mds_Group"} & alone.keys()
