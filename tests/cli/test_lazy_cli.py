"""A CLI call imports what its command needs, nothing more."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from agent_habitat.cli import _COMMAND_MODULES, _MODULE_OF, build_parser


def _registered_by(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    __import__(module, fromlist=["register"]).register(subparsers)
    return set(subparsers.choices)


def test_each_subcommand_is_found_in_the_module_that_registers_it() -> None:
    for module in _COMMAND_MODULES:
        for command in _registered_by(module):
            assert _MODULE_OF.get(command) == module, command
    assert set(_MODULE_OF.values()) <= set(_COMMAND_MODULES)


def _modules_after(code: str) -> set[str]:
    # What the product imports, not what a measuring suite adds: coverage, started in every
    # Python child under `patch = subprocess`, imports dataclasses, inspect and the like.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    return set(out.split())


def test_version_imports_nothing_but_the_cli_entry() -> None:
    loaded = _modules_after(
        "import contextlib, io\nfrom agent_habitat.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['--version'])"
    )
    assert not {"argparse", "pydantic", "anyio", "rich"} & loaded
    assert not any(
        name.startswith("agent_habitat.") and name != "agent_habitat.cli" for name in loaded
    )


def test_a_shell_verb_does_not_import_the_ladder_mcp_or_the_host() -> None:
    loaded = _modules_after("from agent_habitat.cli import build_parser; build_parser('scene')")
    # The verb table names the verify verbs, so the ladder's models load; the ladder does not.
    heavy = (
        "agent_habitat.verify.ladder",
        "agent_habitat.verify.runner.runner",
        "mcp",
        "grimp",
        "agent_habitat.reach.bridge",
        "agent_habitat.host.app",
        "httpx2",
        "watchfiles",
    )
    for name in heavy:
        assert name not in loaded, name


def test_the_top_level_help_still_lists_every_command() -> None:
    help_text = build_parser().format_help()
    for command in _MODULE_OF:
        assert command in help_text


def test_the_summary_shows_what_the_full_parser_shows() -> None:
    # `habitat --help`, a bare `habitat` and an unknown command take the summary: the same
    # help (commands, order, one-liners) and the same choices as with every module loaded.
    full, summary = build_parser(), build_parser(summary=True)
    assert summary.format_help() == full.format_help()
    assert summary.format_usage() == full.format_usage()
    [full_commands] = [a for a in full._actions if isinstance(a, argparse._SubParsersAction)]
    [commands] = [a for a in summary._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(commands.choices) == list(full_commands.choices)


def test_the_top_level_help_imports_no_command_module() -> None:
    loaded = _modules_after(
        "from agent_habitat.cli import build_parser; build_parser(summary=True).format_help()"
    )
    assert not set(_COMMAND_MODULES) & loaded
    for name in ("pydantic", "anyio", "agent_habitat.habitat", "agent_habitat.verbs"):
        assert name not in loaded, name


def test_the_fast_scene_reads_the_state_without_pydantic_anyio_or_rich() -> None:
    # What `cli.scene_fast` imports; the shell and store packages load their heavy names
    # (Shell, SqliteJournal) on first use, and shell kinds resolve without anyio.
    loaded = _modules_after(
        "import agent_habitat.cli.scene_fast, agent_habitat.cli.scene_view\n"
        "import agent_habitat.shell.quiet_scene, agent_habitat.reach.files\n"
        "import agent_habitat.cli.host_scene"
    )
    for name in ("pydantic", "anyio", "rich", "psutil", "argparse", "agent_habitat.habitat"):
        assert name not in loaded, name


def test_the_mcp_command_loads_no_habitat_before_it_knows_it_serves_one() -> None:
    # The bridge (`habitat mcp` without --embedded) relays to the host: no habitat here.
    loaded = _modules_after("from agent_habitat.cli import build_parser; build_parser('mcp')")
    for name in ("pydantic", "agent_habitat.habitat", "agent_habitat.cli.common", "mcp"):
        assert name not in loaded, name
    # argparse asks `shutil` (with zlib, bz2, lzma) for the width; the parser asks the OS.
    assert "shutil" not in loaded


def test_the_bridge_relays_without_asyncio_or_logging() -> None:
    # `habitat mcp` with a host up: its first `tools/list` waits on these imports (issue 25).
    loaded = _modules_after(
        "from agent_habitat.cli import build_parser; build_parser('mcp')\n"
        "import agent_habitat.cli.mcp_cmds, agent_habitat.reach.stdio"
    )
    for name in ("asyncio", "anyio", "h11", "logging", "dataclasses", "pydantic"):
        assert name not in loaded, name


def test_the_host_run_path_reads_argv_and_a_spool_without_the_heavy_stdlib() -> None:
    # `habitat run` through a host: the command line read, the run's spool copied. argparse
    # would import shutil for the terminal's width, the spool ctypes and dataclasses (with
    # inspect, ast and dis) for inotify and its model: none of that is on this path.
    loaded = _modules_after(
        "import os\n"
        "from pathlib import Path\n"
        "import agent_habitat.cli.host_verbs\n"
        "from agent_habitat.cli.verb_argv import read_argv\n"
        "from agent_habitat.proc.spool import Spool\n"
        "assert read_argv(['run', 'echo hi', '--tab', 'a']).body['command'] == 'echo hi'\n"
        "name = f'/tmp/habitat-lazy-spool-{os.getpid()}'  # tempfile would import shutil\n"
        "fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
        "os.write(fd, b'hi\\n'); os.close(fd)\n"
        "spool = Spool(Path(name))\n"
        "assert [c for _, c in spool.chunks(0, spool.size())] == [b'hi\\n']\n"
        "os.unlink(name)"
    )
    for name in ("ctypes", "dataclasses", "inspect", "shutil", "typing", "pydantic", "anyio"):
        assert name not in loaded, name


def test_a_run_through_a_host_finds_it_and_reads_its_answer_with_c_modules_alone() -> None:
    # What a `habitat run` through a host does before and after its request: the command
    # line read, the host found (its state folder named, the lock checked), a JSON answer
    # read, the spool copied. `re`, `pathlib`, `json`, `socket`, `argparse`, `hashlib` and
    # `threading` each cost several milliseconds of a ~60 ms call (issue 25).
    loaded = _modules_after(
        "import os\n"
        "import agent_habitat.cli.host_verbs\n"
        "from agent_habitat import state_place\n"
        "from agent_habitat.cli.verb_argv import read_argv\n"
        "from agent_habitat.proc.spool import Spool\n"
        "from agent_habitat.reach.plain_client import host_of\n"
        "from agent_habitat.reach.quick_json import dumps, loads\n"
        "call = read_argv(['run', 'echo hi', '--tab', 'a', '--project', '/tmp', '--json'])\n"
        "body = call.body\n"
        "assert (body['command'], body['tab'], call.project) == ('echo hi', 'a', '/tmp')\n"
        "assert host_of(state_place.project_root()) is None\n"
        "assert loads(dumps({'a': [1, 2.5, None, 'é']})) == {'a': [1, 2.5, None, 'é']}\n"
        "name = f'/tmp/habitat-lazy-spool-{os.getpid()}'\n"
        "fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
        "os.write(fd, b'hi\\n'); os.close(fd)\n"
        "spool = Spool(name)\n"
        "assert [c for _, c in spool.chunks(0, spool.size())] == [b'hi\\n']\n"
        "os.unlink(name)"
    )
    heavy = ("re", "enum", "pathlib", "json", "socket", "argparse", "hashlib", "threading")
    assert [name for name in heavy if name in loaded] == []


def test_the_scene_and_status_a_host_answers_need_only_c_modules() -> None:
    # `habitat scene` and `habitat status` with a host: its lock found, the answer shown.
    loaded = _modules_after(
        "import agent_habitat.cli.scene_fast, agent_habitat.cli.scene_view\n"
        "import agent_habitat.cli.host_scene, agent_habitat.cli.verify_light\n"
        "from agent_habitat.cli.scene_fast import _host_lock\n"
        "from agent_habitat.cli.host_scene import scene_of\n"
        "from agent_habitat.cli.scene_view import plain_scene, shown_cwd\n"
        "from agent_habitat.state_place import project_root\n"
        "assert _host_lock(project_root()) is None or True\n"
        "tab = {'name': 'main', 'shell': 'bash', 'state': 'idle', 'cwd': '/p/src', 'pid': None,\n"
        "       'last_run': None}\n"
        "caps = {'max_tabs': 8, 'history_rows': 50, 'output_cap_bytes': 1}\n"
        "assert 'src' in plain_scene(scene_of({'tabs': [tab], 'caps': caps}), 80, '/p')\n"
        "assert (shown_cwd('/p', '/p'), shown_cwd('/pq', '/p')) == ('.', '/pq')"
    )
    heavy = ("re", "enum", "pathlib", "json", "socket", "sqlite3", "dataclasses", "hashlib")
    assert [name for name in heavy if name in loaded] == []


def test_rules_init_dashboard_and_the_host_commands_load_no_habitat_pydantic_or_httpx() -> None:
    # `habitat rules [--write]`, `init`, `dashboard`, `host token|start|stop|status` with a
    # host up: their flags, the project folder, a file written, a call to the host, without
    # the second of imports that the habitat, the verb table, pydantic or httpx cost (issue
    # 25: each added 0.3-0.5 s of CPU).
    loaded = _modules_after(
        "import argparse\n"
        "from agent_habitat.cli import build_parser\n"
        "for command in ('rules', 'init', 'dashboard', 'host'):\n"
        "    build_parser(command)\n"
        "from agent_habitat.cli.common import project_root\n"
        "from agent_habitat.cli.host_cmd import _running\n"
        "from agent_habitat.rules import rules_text\n"
        "from agent_habitat.rules_file import write_rules\n"
        "from agent_habitat.client_config import install_servers\n"
        "from agent_habitat.files.atomic import write_project_file\n"
        "from agent_habitat.files.text import decode_text, in_style, line_endings\n"
        "from agent_habitat.host.tcp_address import parse_tcp\n"
        "args = argparse.Namespace(project=None)\n"
        "assert _running(project_root(args)) is None or True\n"
        "assert 'shell_run' in rules_text('claude')\n"
        "parse_tcp('127.0.0.1:0', allow_remote=False)"
    )
    heavy = ("pydantic", "anyio", "httpx2", "psutil", "rich", "webbrowser")
    habitat = ("agent_habitat.habitat", "agent_habitat.verbs", "agent_habitat.reach.launcher")
    assert [name for name in (*heavy, *habitat) if name in loaded] == []


def test_status_and_cancel_from_the_record_load_no_http_client_nor_verb_table() -> None:
    # With no host to ask, `habitat status|cancel` answer from the workspace's record: the
    # client and the verb table (every verb's models) load only once a host is found.
    loaded = _modules_after("import agent_habitat.cli.verify_records")
    for name in ("httpx2", "agent_habitat.reach.client", "agent_habitat.verbs.table"):
        assert name not in loaded, name


def test_the_shell_loads_the_regex_engine_only_for_a_pattern() -> None:
    # A one-shot `habitat run` loads the shell's output module; only `grep`/`until` need the
    # `regex` engine (about 10 ms of CPU to import).
    assert "regex" not in _modules_after("import agent_habitat.shell.output")
    assert "regex" in _modules_after(
        "from agent_habitat.shell.output import compile_pattern\ncompile_pattern('a+', 'grep')"
    )


def _habitat(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "PYDANTIC_"))}
    code = (
        "import sys\n"
        "from agent_habitat.cli import main\n"
        f"code = main({args!r})\n"
        "print('metadata' if 'importlib.metadata' in sys.modules else 'no metadata')\n"
        "sys.exit(code)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**clean, "HABITAT_HOME": str(home), **env},
    )


def test_a_command_without_a_host_loads_no_pydantic_plugin_nor_leaves_it_to_its_run(
    tmp_path: Path,
) -> None:
    # pydantic's plugin loader imports importlib.metadata and reads every package's entry
    # points (30-50 ms of CPU): the CLI's models need no plugin. The run's shell sees the
    # environment as it was: nothing was set to say so.
    command = "echo ${PYDANTIC_DISABLE_PLUGINS-unset}"
    run = _habitat(["run", command], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["unset", "no metadata"]
    history = _habitat(["history", "--json"], tmp_path)
    assert history.returncode == 0, history.stderr
    rows = json.loads(history.stdout.rsplit("\n", 2)[0])["rows"]
    assert [(r["command"], r["exit_code"]) for r in rows] == [(command, 0)]


def test_a_user_naming_the_plugins_to_leave_out_keeps_pydantic_s_loader(tmp_path: Path) -> None:
    run = _habitat(["run", "true"], tmp_path, PYDANTIC_DISABLE_PLUGINS="some_plugin")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["metadata"]


def test_the_stand_in_loader_hands_any_other_name_to_pydantic_s_own() -> None:
    # A newer pydantic may import more than `get_plugins` from its loader: the import must
    # not fail; it gets the real module's names, and still no plugin.
    code = (
        "import sys\n"
        "from agent_habitat.cli import _no_pydantic_plugins\n"
        "_no_pydantic_plugins()\n"
        "from pydantic.plugin._loader import get_plugins\n"
        "assert tuple(get_plugins()) == ()\n"
        "assert 'importlib.metadata' not in sys.modules\n"
        "from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP\n"
        "assert PYDANTIC_ENTRY_POINT_GROUP == 'pydantic'\n"
        "assert sys.modules['pydantic.plugin._loader'].__file__\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_a_shell_command_s_parser_builds_no_model_it_does_not_use() -> None:
    # The verb table brings every shell, project, trust and file model; each is built on its
    # first use (defer_build), so `run` pays for its own and not for the 40 others.
    loaded = _modules_after(
        "from agent_habitat.cli import build_parser\n"
        "build_parser('run')\n"
        "from agent_habitat.files.models import FileEditArgs\n"
        "from agent_habitat.project_scene import ProjectSceneResult\n"
        "from agent_habitat.shell.models import HistoryResult, WaitArgs\n"
        "from agent_habitat.trust import TrustResult\n"
        "for model in (FileEditArgs, ProjectSceneResult, HistoryResult, WaitArgs, TrustResult):\n"
        "    assert not model.__pydantic_complete__, model\n"
        "assert WaitArgs.model_validate({'tab': 'a'}).tab == 'a'\n"
        "assert WaitArgs.__pydantic_complete__"
    )
    assert "agent_habitat.shell.models" in loaded
