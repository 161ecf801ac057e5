"""The project verbs: which project is open (`project_open`) and where it stands
(`project_scene`: branch, HEAD, upstream, dirty files, the verify epoch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..project import ProjectOpenArgs, ProjectOpenResult
from ..project_scene import (
    PROJECT_SCENE_DESCRIPTION,
    ProjectSceneArgs,
    ProjectSceneResult,
    project_scene,
)
from .row import Verb

if TYPE_CHECKING:
    from ..habitat import Habitat

__all__ = ["PROJECT_VERBS"]


async def _scene(habitat: Habitat) -> ProjectSceneResult:
    return await project_scene(habitat.project.root, verify=habitat.verify_glance)


PROJECT_VERBS: tuple[Verb, ...] = (
    Verb(
        name="open",
        group="project",
        args=ProjectOpenArgs,
        result=ProjectOpenResult,
        call=lambda h, a, p: h.project.open(a.path),
        idempotent=True,
        cli=False,  # a CLI process lives for one command: it has no open project to switch
        summary="open a project folder",
        description=(
            "Open another project folder (the user pointed you at another repository): tabs at "
            "the old root move to it; the tool list is refreshed. {project}"
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
)
