"""What a Go test rung says once its failed builds and failed tests were compared with HEAD:
red only for what HEAD did not have (a package that did not build is a build failure of that
package, at its first new error, never a test failure), green with HEAD's failures listed,
and never green when no test ran (the build could not run, as at HEAD)."""

from __future__ import annotations

from ...baseline import summarize
from ...models import Diagnostic, RungResult
from .head_builds import BuildsOnHead, package_of
from .parse import TestRun

__all__ = ["first_of", "red_reason", "settled"]


def first_of(diagnostics: list[Diagnostic]) -> str:
    d = diagnostics[0]
    return f"{d.file}:{d.line} {d.message.splitlines()[0][:160]}" if d.file else d.message[:200]


def _build_name(build: str) -> str:
    name, tests = package_of(build)
    return f"package {name}" + ("'s tests" if tests else "")


def red_reason(run: TestRun) -> str:
    """A red go test's reason: a package that did not build is a build failure of that
    package, at its first new error's place, never a test failure; what was already so at
    HEAD is counted after it."""
    parts: list[str] = []
    told = {id(d) for errors in run.failed_builds.values() for d in errors}
    new_builds = [
        (build, [d for d in errors if not d.preexisting], len(errors))
        for build, errors in run.failed_builds.items()
    ]
    failing = [(build, errors, of) for build, errors, of in new_builds if errors]
    if failing:
        (failed, errors, of), *others = failing
        more = f" (+{len(others)} more package(s))" if others else ""
        some = "new " if len(errors) < of else ""
        count = f"{len(errors)} {some}error(s)" if len(errors) > 1 else f"1 {some}error"
        parts.append(
            f"build failure of {_build_name(failed)}{more}: {count}, first {first_of(errors)}"
        )
    tests = [d for d in run.failures if id(d) not in told and not d.preexisting]
    if tests:
        parts.append(f"{len(tests)} go test failure(s), first {first_of(tests)}")
    old = _already(run)
    return "; ".join(parts) + (f" (+{old} already at HEAD, listed, not red)" if old else "")


def _already(run: TestRun) -> str:
    """What of the run failed at HEAD too, in words ("" for nothing)."""
    told = {id(d) for errors in run.failed_builds.values() for d in errors}
    builds = sum(d.preexisting for errors in run.failed_builds.values() for d in errors)
    tests = sum(d.preexisting for d in run.failures if id(d) not in told)
    return " and ".join(
        [
            *([f"{builds} build error(s)"] if builds else []),
            *([f"{tests} test failure(s)"] if tests else []),
        ]
    )


def _green_reason(run: TestRun) -> str:
    """The reason of a go test whose every failure was already so at HEAD."""
    told = {id(d) for errors in run.failed_builds.values() for d in errors}
    parts = []
    for build, errors in run.failed_builds.items():
        verb = "already fail" if package_of(build)[1] else "already fails"
        count = f"{len(errors)} error(s)" if len(errors) > 1 else "1 error"
        parts.append(f"{_build_name(build)} {verb} to build at HEAD ({count})")
    tests = sum(d.preexisting for d in run.failures if id(d) not in told)
    if tests:
        parts.append(f"{tests} test(s) already failing at HEAD")
    return "no new failure; " + ", ".join(parts) + " (listed, not red)"


def settled(result: RungResult, run: TestRun, builds: BuildsOnHead) -> RungResult:
    """The verdict once both the failed builds and the failed tests were compared with
    HEAD: red only for what HEAD did not have; never green when no test ran."""
    result.notes.extend(builds.notes)
    if builds.baseline is not None and not (result.baseline or "").startswith("HEAD "):
        result.baseline = builds.baseline
    if result.state not in ("red", "green"):
        return result
    result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
    result.diagnostics.sort(key=lambda d: d.preexisting)
    if result.new_findings == 0 and run.failed_builds and run.passed + run.failed == 0:
        # Every failure was HEAD's too, but no test ran: nothing was checked, which is not
        # green (nor the change's red): the build could not run, as at HEAD.
        result.state = "error"
        result.reason = _green_reason(run).replace("no new failure; ", "no test ran: ", 1)
    elif result.new_findings == 0:
        result.state, result.reason = "green", _green_reason(run)
    else:
        result.state, result.reason = "red", red_reason(run)
    return result
