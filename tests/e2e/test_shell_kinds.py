"""Other shells: zsh carries cwd and env like bash; fish carries the cwd only (DESIGN §3).

`make test-deps` installs both (`apt-get install zsh fish`); elsewhere these skip, and under
CI (`HABITAT_TEST_REQUIRE=all`) fail. fish's exit code was lost (its `umask` reset `$status`)
until these first ran.
"""

from __future__ import annotations

import shutil

import pytest

from agent_habitat.shell import Shell
from agent_habitat.shell.models import RunArgs, WhichArgs

pytestmark = pytest.mark.anyio


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
async def test_zsh_tab_carries_cwd_and_env_and_exit_codes(habitat: Shell) -> None:
    await habitat.run(RunArgs(command='cd /usr && export Q="it\'s"', tab="z", shell="zsh"))
    result = await habitat.run(RunArgs(command='pwd; echo "$Q"; exit 3', tab="z"))
    assert (result.exit_code, result.output) == (3, "/usr\nit's\n")
    assert (await habitat.which(WhichArgs(tab="z"))).shell == "zsh"


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed here")
async def test_fish_tab_carries_the_cwd_and_exit_codes(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="cd /usr", tab="f", shell="fish"))
    result = await habitat.run(RunArgs(command="pwd; exit 4", tab="f"))
    assert (result.exit_code, result.output) == (4, "/usr\n")
    assert (await habitat.which(WhichArgs(tab="f"))).shell == "fish"
