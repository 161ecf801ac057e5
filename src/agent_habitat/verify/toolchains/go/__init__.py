# go/: the Go toolchain (go.mod, go.work). detect.py whether a project and a path are Go's
#   (cheap: the snapshot path imports it); project.py the package graph from go list and
#   what a change affects; listkey.py when an earlier climb's graph still holds; parse.py
#   go build / go vet / gofmt / go test -json output as findings; head.py the same tools on
#   HEAD's export (the baseline, failed tests too); head_builds.py a go test's failed
#   builds against HEAD's same builds; linters.py the golangci-lint or staticcheck the
#   project configures; rungs.py the five rungs; verdicts.py what a test rung says once
#   compared with HEAD; comments.py whether a file is HEAD's code but for its comments;
#   warm.py the warm-up's go vet.
from __future__ import annotations

from ..base import LazyRunners, Toolchain
from .detect import detect, owns

__all__ = ["GO"]

GO = Toolchain(
    name="go",
    detect=detect,
    owns=owns,
    runners=LazyRunners("agent_habitat.verify.toolchains.go.rungs", "RUNNERS"),
)
"""`vendor/` is part of the build (never ignored); go writes no build output into the
project by default (`go build -o /dev/null` here), so `ignores` is empty."""
