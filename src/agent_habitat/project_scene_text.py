"""`project_scene`'s answer as the few lines of text a person or a model reads, from its JSON
(`ProjectSceneResult.model_dump(mode="json")`), with the standard library alone: the MCP
text, the full CLI path and the CLI's light path (a host's JSON answer) print the same."""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["project_scene_text"]


def project_scene_text(scene: Mapping[str, Any]) -> str:
    """The scene as a few lines of text."""
    if not scene.get("git"):
        lines = [f"project={scene['root']}", scene.get("note") or ""]
    else:
        where = scene.get("branch") or "(detached HEAD)"
        if scene.get("upstream") is not None:
            ahead = scene.get("ahead")
            track = f" ahead {ahead} behind {scene.get('behind')}" if ahead is not None else ""
            where += f" → {scene['upstream']}{track}"
        head = scene.get("head")
        shown = f"{head['sha']} {head['subject']}" if head else "(no commits yet)"
        lines = [f"project={scene['root']} branch={where}", f"HEAD {shown}"]
        for title in ("dirty", "untracked"):
            files = scene.get(title) or []
            count = int(scene.get(f"{title}_count") or 0)
            lines.append(f"{title}: {count}" + (" (none)" if not count else ""))
            lines.extend(f"  {f['status']} {f['path']} ({_size(f)})" for f in files)
            if count > len(files):
                lines.append(f"  … {count - len(files)} more")
    verify = scene.get("verify")
    if verify is None:
        lines.append("verify: no epoch yet")
    else:
        stale = " — STALE: files changed since; run verify again" if verify.get("stale") else ""
        on = f" on {verify['snapshot']}" if verify.get("snapshot") else ""
        lines.append(f"verify: {verify['state']}{on}{stale}")
    if scene.get("trust") is not None:
        lines.append(str(scene["trust"]))
    return "\n".join(line for line in lines if line) + "\n"


def _size(file: Mapping[str, Any]) -> str:
    size = file.get("size")
    if str(file["path"]).endswith("/"):
        return "a virtualenv: never part of a change"
    return "deleted" if size is None else f"{size} B"
