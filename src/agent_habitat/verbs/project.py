"""The project verbs: which project is open (`project_open`) and where it stands
(`project_scene`: branch, HEAD, upstream, dirty files, the verify epoch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..project import ProjectOpenArgs, ProjectOpenResult, a_project
from ..project_scene import (
    PROJECT_SCENE_DESCRIPTION,
    ProjectSceneArgs,
    ProjectSceneResult,
    project_scene,
)
from ..trust import TrustArgs, TrustResult
from .row import Verb

if TYPE_CHECKING:
    from ..habitat import Habitat

__all__ = ["PROJECT_VERBS"]


async def _scene(habitat: Habitat) -> ProjectSceneResult:
    return await project_scene(
        habitat.project.root, verify=habitat.verify_glance, trust=habitat.trust.state
    )


async def open_project(habitat: Habitat, args: ProjectOpenArgs) -> ProjectOpenResult:
    """Open `args.path` when it is a project (`a_project`), never `/` or a plain folder."""
    return await habitat.project.open(a_project(args.path))


async def trust_project(habitat: Habitat, args: TrustArgs) -> TrustResult:
    """Trust the open project: its code may run from now on."""
    root = habitat.project.root
    if root is None:
        raise UsageError("no project is open: open one (project_open, or --project) to trust it")
    return await habitat.trust.grant(root, "verb")


PROJECT_VERBS = (
    Verb(
        name="open",
        group="project",
        args=ProjectOpenArgs,
        result=ProjectOpenResult,
        call=lambda h, a, p: open_project(h, a),
        idempotent=True,
        cli=False,  # a CLI process lives for one command: it has no open project to switch
        summary="open a project folder",
        description=(
            "Open another project folder (a repository the user named); tabs at the old root "
            "move to it. {project}"
        ),
    ),
    Verb(
        name="scene",
        group="project",
        args=ProjectSceneArgs,
        result=ProjectSceneResult,
        call=lambda h, a, p: _scene(h),
        read_only=True,
        command="project",
        summary="where the project stands: branch, HEAD, upstream, dirty files, verify",
        example="habitat project --json",
        description=PROJECT_SCENE_DESCRIPTION,
    ),
    Verb(
        name="trust",
        group="project",
        args=TrustArgs,
        result=TrustResult,
        call=lambda h, a, p: trust_project(h, a),
        command="trust",
        summary="trust the project: its code may run (the warm-up starts)",
        example="habitat trust",
        confirm=(
            "Trust {path}? Its own code will run from now on: the interpreter and .venv it "
            "names, type-checker plugins, conftests, build backends and configured commands "
            "(the warm-up starts at once). Say yes only for a repository you trust."
        ),
        description=(
            "Trust the project: until then none of its code runs. A person confirms; call it "
            "only when the user asked."
        ),
    ),
)
