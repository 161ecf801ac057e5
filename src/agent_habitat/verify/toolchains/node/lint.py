"""`diagnose.files` for Node: the linter the project configures (eslint or biome) on the
touched sources, its JSON report parsed into findings; only findings that are not at HEAD
too make it red. In a habitat server (the host, an MCP server) a warm eslint answers
(eslint_warm.py: the project's own eslint, configuration and plugins kept loaded); a
one-shot verify, or a lint the warm one could not answer, runs the CLI cold. HEAD's content
is linted where the dependencies are: eslint through its own API (`lintText` with the
file's path, as `--stdin --stdin-filename` does: the warm process, else one cold process for
every file), biome in HEAD's export with `node_modules` linked in."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import anyio.to_thread

from ...baseline import BaseResult, fingerprint
from ...command import Outcome, answered, take_report
from ...head import HeadTree
from ...models import RungName, RungResult, RungState
from ...rungs.compare import cache_of, settle
from ...rungs.context import RungContext, from_outcome, nothing_to_do
from .common import Tool, each, head_with_modules, merge, mine, node_rung
from .detect import SOURCE_SUFFIXES, Linter, NodeProject
from .eslint_warm import SCRIPT, lint_warm, slot
from .parsers import parse_biome, parse_eslint
from .race import warm_or_cold

__all__ = ["ESLINT_HEAD_SCRIPT", "diagnose_files"]

RUNG: RungName = "diagnose.files"

# Lints HEAD's content of each file under the file's own path, with the project's eslint
# (resolved from the folder its configuration is in), and prints eslint's JSON report.
ESLINT_HEAD_SCRIPT = """
const { createRequire } = require("node:module");
const fs = require("node:fs");
const [cwd, input, output] = process.argv.slice(1);
const { ESLint } = createRequire(cwd + "/package.json")("eslint");
(async () => {
  const eslint = new ESLint({ cwd });
  const out = [];
  for (const item of JSON.parse(fs.readFileSync(input, "utf8"))) {
    out.push(...(await eslint.lintText(item.text, { filePath: item.path, warnIgnored: false })));
  }
  fs.writeFileSync(output, JSON.stringify(out));
})().catch((e) => { console.error(e && e.stack ? e.stack : String(e)); process.exit(2); });
"""


def _sources(ctx: RungContext) -> list[str]:
    return [p for p in ctx.existing(mine(ctx)) if p.endswith(SOURCE_SUFFIXES)]


def _no_files(ctx: RungContext) -> str | None:
    return None if _sources(ctx) else "no touched JavaScript/TypeScript source"


def _groups(project: NodeProject, files: list[str]) -> dict[tuple[Linter, Path], list[str]]:
    groups: dict[tuple[Linter, Path], list[str]] = {}
    for rel in files:
        found = project.linter(project.owner(rel))
        if found is not None:
            groups.setdefault(found, []).append(rel)
    return groups


def _config_files(folder: Path) -> list[Path]:
    names = ("package.json", "biome.json", "biome.jsonc", "package-lock.json", "pnpm-lock.yaml")
    extra = sorted(p for p in folder.glob("*") if p.name.startswith((".eslintrc", "eslint.config")))
    return [*(folder / n for n in names), *extra]


async def _eslint_head(
    ctx: RungContext,
    head: HeadTree,
    project: NodeProject,
    folder: Path,
    argv: list[str],
    files: list[str],
    warm: bool,
) -> tuple[BaseResult, bool] | str:
    def prepare() -> tuple[str, list[dict[str, str]], BaseResult | None]:
        blobs = head.blobs(files)
        key = fingerprint(
            "eslint",
            head.head,
            *argv,
            *_config_files(folder),
            *(f"{k}={v}" for k, v in sorted(blobs.items())),
        )
        items = []
        for rel in sorted(blobs):
            data = head.read(rel) or b""
            items.append({"path": str(ctx.root / rel), "text": data.decode("utf-8", "replace")})
        return key, items, cache_of(ctx).get(key)

    key, items, hit = await anyio.to_thread.run_sync(prepare)
    if hit is not None:
        return hit, True
    if not items:
        return BaseResult(findings=[]), False

    async def warm_head(notes: list[str], may_start: bool) -> BaseResult | None:
        answer = await lint_warm(
            ctx, project, folder, Path(argv[0]), {"texts": items}, notes, may_start=may_start
        )
        if answer is None:
            return None
        return BaseResult(findings=parse_eslint(str(answer["report"]), ctx.root))

    async def cold_head() -> BaseResult | str:
        request, report = ctx.spool(RUNG, ".head-in.json"), ctx.spool(RUNG, ".head-out.json")
        await anyio.Path(request).write_text(json.dumps(items), encoding="utf-8")
        argv_head = ["node", "-e", ESLINT_HEAD_SCRIPT, str(folder), str(request), str(report)]
        suffix = each(str(folder.relative_to(ctx.root)), ".base.out")
        outcome = await ctx.run(RUNG, argv_head, suffix=suffix, cwd=folder, reap_leftovers=False)
        await anyio.Path(request).unlink(missing_ok=True)
        text = await take_report(report)
        if outcome.exit_code != 0:
            tail = outcome.tail[-200:]
            return f"eslint failed on HEAD's content (exit {outcome.exit_code}): {tail}"
        return BaseResult(findings=parse_eslint(text, ctx.root))

    # The warm linter when the touched files' lint was warm, or when the warm-up's start of
    # it is under way (then the cold lint of HEAD's content runs beside it).
    result, _ = await warm_or_cold(
        ctx, slot(folder), "eslint (HEAD)", warm_head, cold_head, [], may_start=warm
    )
    if isinstance(result, str):
        return result
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    return result, False


async def _biome_head(
    ctx: RungContext,
    head: HeadTree,
    project: NodeProject,
    folder: Path,
    argv: list[str],
    files: list[str],
) -> tuple[BaseResult, bool] | str:
    def prepare() -> tuple[str, list[str], BaseResult | None, Path]:
        blobs = head.blobs(files)
        key = fingerprint(
            "biome",
            head.head,
            *argv,
            *_config_files(folder),
            *(f"{k}={v}" for k, v in sorted(blobs.items())),
        )
        hit = cache_of(ctx).get(key)
        export = head.export_dir if hit or not blobs else head_with_modules(head, project)
        return key, sorted(blobs), hit, export

    key, at_head, hit, export = await anyio.to_thread.run_sync(prepare)
    if hit is not None:
        return hit, True
    if not at_head:
        return BaseResult(findings=[]), False
    where = export / folder.relative_to(ctx.root)
    outcome = await ctx.run(
        RUNG,
        [*argv, *(str(export / f) for f in at_head)],
        suffix=each(str(folder.relative_to(ctx.root)), ".base.out"),
        cwd=where,
        reap_leftovers=False,
    )
    if outcome.exit_code not in (0, 1):
        return f"biome failed on HEAD (exit {outcome.exit_code}): {outcome.tail[-200:]}"
    result = BaseResult(findings=parse_biome(outcome.text, where, export))
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    return result, False


async def _eslint_warm(
    ctx: RungContext,
    project: NodeProject,
    folder: Path,
    eslint: Path,
    paths: list[str],
    notes: list[str],
    may_start: bool,
) -> Outcome | None:
    """The warm eslint's report on `paths` as the CLI's outcome (exit 1 with an error
    finding, as the CLI's), or None when the CLI must run cold."""
    started = time.monotonic()
    params = {"files": paths}
    answer = await lint_warm(ctx, project, folder, eslint, params, notes, may_start=may_start)
    if answer is None:
        return None
    return await answered(
        ["node", str(SCRIPT), *paths],
        1 if int(answer.get("errors", 0)) else 0,
        str(answer["report"]),
        ctx.spool(RUNG, ".warm.json"),
        started,
        ctx.config.output_cap_bytes,
    )


async def _lint(
    ctx: RungContext, project: NodeProject, linter: Linter, folder: Path, files: list[str]
) -> RungResult:
    tool = Tool(
        project,
        project.owner(files[0]),
        linter,
        "eslint" if linter == "eslint" else "@biomejs/biome",
    )
    if tool.path is None:
        where = folder.relative_to(ctx.root).as_posix() or "the project root"
        return tool.missing(ctx, RUNG, f"{where} configures {linter}")
    report = ctx.spool(RUNG, ".json")
    notes = [tool.note()]
    if linter == "eslint":
        argv = [str(tool.path), "--format", "json"]
        out = ["--output-file", str(report)]
    else:
        argv, out = [str(tool.path), "lint", "--reporter=json", "--colors=off"], []
    paths = [str(ctx.root / f) for f in files]
    path = tool.path

    async def cold() -> Outcome:
        suffix = each(str(folder.relative_to(ctx.root)))
        return await ctx.run(
            RUNG, [*argv, *out, *paths], suffix=suffix, cwd=folder, reap_leftovers=False
        )

    async def warm_lint(said: list[str], may_start: bool) -> Outcome | None:
        return await _eslint_warm(ctx, project, folder, path, paths, said, may_start)

    if linter == "eslint":
        outcome, warm = await warm_or_cold(ctx, slot(folder), "eslint", warm_lint, cold, notes)
    else:
        outcome, warm = await cold(), False
    if warm:
        diagnostics = parse_eslint(outcome.text, ctx.root)
    elif linter == "eslint":
        diagnostics = parse_eslint(await take_report(report), ctx.root)
    else:
        diagnostics = parse_biome(outcome.text, folder, ctx.root)
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    if outcome.exit_code == 1 and not any(d.severity == "error" for d in diagnostics):
        state = "error"  # a failure the report does not explain (a bad configuration)
    result = from_outcome(
        ctx, RUNG, outcome, tool=linter, state=state, diagnostics=diagnostics, notes=notes
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"{linter} failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    with_findings = sorted({d.file for d in diagnostics if d.file and d.severity == "error"})

    def base(head: HeadTree) -> object:
        if linter == "eslint":
            return _eslint_head(ctx, head, project, folder, argv, with_findings, warm)
        return _biome_head(ctx, head, project, folder, argv, with_findings)

    return await settle(ctx, result, base)  # type: ignore[arg-type]


@node_rung(RUNG, no_work=_no_files)
async def diagnose_files(ctx: RungContext, project: NodeProject) -> RungResult:
    started = time.monotonic()
    files = _sources(ctx)
    groups = await anyio.to_thread.run_sync(_groups, project, files)
    if not groups:
        return nothing_to_do(
            ctx, RUNG, "node: the project configures no linter (no eslint or biome configuration)"
        )
    results = [
        await _lint(ctx, project, linter, folder, group)
        for (linter, folder), group in groups.items()
    ]
    result = results[0] if len(results) == 1 else merge(results)
    result.duration_s = round(time.monotonic() - started, 3)
    return result
