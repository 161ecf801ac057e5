"""Issue 23's findings, in the issue's order: what `make security` reports on.

A check says which finding it holds with `@pytest.mark.finding("key")` (or a module's
`pytestmark`); `report.py` prints each finding with its checks and fails one without any.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["FINDINGS", "Finding"]


class Finding(NamedTuple):
    key: str
    severity: str
    title: str


FINDINGS = (
    Finding("csrf", "High", "CSRF from any page on another loopback port"),
    Finding("cookie", "High", "the cookie is the workspace token, every loopback port gets it"),
    Finding("trust", "High", "opening a repository runs its code"),
    Finding("special-files", "Medium", "FIFOs and other special files; host stop, SIGTERM"),
    Finding("local-dos", "Medium", "local denial of service (unfinished TCP requests)"),
    Finding("login-code", "Medium", "the login code in /proc"),
    Finding("rotation", "Medium", "token rotation"),
    Finding("shared-home", "Medium", "shared HABITAT_HOME"),
    Finding("under-load", "Load", "shell_scene / shell_last under load; project_open answers"),
    Finding("inline-secrets", "Low", "secrets typed inline show in clear"),
    Finding("edit-race", "Low", "file_edit loses lines another process appends"),
    Finding("hostile-input", "Low", "hostile input gets internal errors"),
    Finding("nul-content", "Low", "file_write writes NUL bytes"),
    Finding("nested-git", "Low", "a nested repository's .git is writable"),
    Finding("not-a-project", "Low", "project_open accepts / or $HOME"),
    Finding("csp", "Low", "the dashboard's CSP drops its inline style widths"),
)
