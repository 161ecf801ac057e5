from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_habitat.verify.runner.config import SubstrateConfig, load_runner_config
from agent_habitat.verify.runner.substrate import SubstrateFactory

pytestmark = pytest.mark.anyio

KEYS = (
    "HABITAT_SUBSTRATE_DIR",
    "HABITAT_SUBSTRATE_DB",
    "HABITAT_SUBSTRATE_PORT",
    "HABITAT_SUBSTRATE_PORTS",
    "TMPDIR",
)


async def test_each_lease_is_fresh_distinct_and_removed(tmp_path: Path) -> None:
    factory = SubstrateFactory(tmp_path / "subs", SubstrateConfig(ports=3))
    async with factory.lease("t1") as one, factory.lease("t2") as two:
        for sub in (one, two):
            assert all(sub.env[k] for k in KEYS)
            assert Path(sub.env["TMPDIR"]).is_dir()
            assert Path(sub.env["HABITAT_SUBSTRATE_DB"]).is_file()
            assert sub.env["HABITAT_SUBSTRATE_PORT"] == str(sub.ports[0])
            assert len(sub.ports) == 3
            assert "-p habitat_substrate_plugin" in sub.env["PYTEST_ADDOPTS"]
        assert one.dir != two.dir
        assert not set(one.ports) & set(two.ports)
    assert not one.dir.exists()
    assert not two.dir.exists()


async def test_an_empty_database_is_usable_and_a_template_is_copied(tmp_path: Path) -> None:
    template = tmp_path / "template.db"
    with sqlite3.connect(template) as conn:
        conn.execute("CREATE TABLE seed (x)")
        conn.execute("INSERT INTO seed VALUES (42)")
    conn.close()
    empty = SubstrateFactory(tmp_path / "a", SubstrateConfig())
    copied = SubstrateFactory(
        tmp_path / "b", SubstrateConfig(sqlite_template="template.db"), tmp_path
    )
    async with empty.lease("t") as sub:
        with sqlite3.connect(sub.db) as conn:
            conn.execute("CREATE TABLE t (x)")
        conn.close()
    async with copied.lease("t") as sub:
        with sqlite3.connect(sub.db) as conn:
            assert conn.execute("SELECT x FROM seed").fetchall() == [(42,)]
            conn.execute("INSERT INTO seed VALUES (1)")
        conn.close()
    with sqlite3.connect(template) as conn:
        assert conn.execute("SELECT count(*) FROM seed").fetchone() == (1,)
    conn.close()


async def test_a_failed_task_keeps_its_substrate_only_when_configured(tmp_path: Path) -> None:
    keep = SubstrateFactory(tmp_path / "k", SubstrateConfig(keep_failed=True))
    async with keep.lease("t") as kept:
        kept.mark_failed()
    assert kept.dir.is_dir()
    drop = SubstrateFactory(tmp_path / "d", SubstrateConfig())
    async with drop.lease("t") as dropped:
        dropped.mark_failed()
    assert not dropped.dir.exists()
    async with keep.lease("t") as passed:
        pass
    assert not passed.dir.exists()


def test_the_substrate_table_and_coalesce_window_are_read_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.habitat]\ncoalesce_seconds = 0.5\n\n"
        '[tool.habitat.substrate]\nports = 2\nkeep_failed = true\nsqlite_template = "t.db"\n',
        encoding="utf-8",
    )
    config = load_runner_config(tmp_path, environ={"HABITAT_SUBSTRATE_PORTS": "1234,5678"})
    assert config.coalesce_seconds == 0.5
    assert config.substrate == SubstrateConfig(ports=2, keep_failed=True, sqlite_template="t.db")
    assert (
        load_runner_config(tmp_path, environ={"HABITAT_COALESCE_SECONDS": "0"}).coalesce_seconds
        == 0
    )


def test_a_bad_substrate_key_fails_naming_it(tmp_path: Path) -> None:
    from agent_habitat.errors import ConfigError

    (tmp_path / "pyproject.toml").write_text(
        "[tool.habitat.substrate]\nport = 2\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"\[tool.habitat.substrate\].port"):
        load_runner_config(tmp_path)
