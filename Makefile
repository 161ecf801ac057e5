PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_RUN := $(VENV)/.installed

.PHONY: demo test check security bench bench-all bench-ladder bench-ladder-warm bench-ladder-scoped gauntlet clean browser-deps test-deps

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_RUN)

# Coverage starts in a child Python when our code is about to run there, never in mypy, pip or
# a project's own tests: .pth files read around coverage's own (tests/habitat_coverage_tools.py).
COVERAGE_TOOLS := $(VENV)/.coverage-tools
$(COVERAGE_TOOLS): tests/habitat_coverage_tools.py | $(STAMP)
	$(BIN)/python tests/habitat_coverage_tools.py
	touch $@

# The interpreter the tests' projects run in, as a user's project runs in its own .venv:
# pytest only: none of the dev venv's pytest plugins, no coverage (tests/project_venv.py).
PROJECT_VENV := $(VENV)/project
PROJECT_STAMP := $(PROJECT_VENV)/.installed
$(PROJECT_STAMP): tests/project_venv.py $(STAMP)
	$(BIN)/python tests/project_venv.py $(PROJECT_VENV)

demo: $(STAMP_RUN)
	$(BIN)/habitat demo

# What the suite needs beyond the venv: Debian chromium (Playwright's own download cannot
# work here) and axe-core from npm for the dashboard's browser tests; zsh and fish for the
# other shells' tabs. Under CI (`CI` set, as .ci/run's environment does) a failed install
# fails the target, and `HABITAT_TEST_REQUIRE=all` makes a test that would skip for want of
# a dependency fail (tests/required.py); elsewhere those tests skip and say why.
AXE := .bench-cache/axe-core/node_modules/axe-core/axe.min.js
APT_PACKAGES := chromium zsh fish
# The Go linters a project may configure (staticcheck.conf, .golangci.yml), for the tests that
# run them against HEAD: built by `go install` into GOBIN (else GOPATH/bin), where the ladder
# finds them; from source, so a fresh machine spends a few minutes on them once.
GO_LINTERS := honnef.co/go/tools/cmd/staticcheck@v0.8.2 \
	github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
ifdef CI
MISSING_DEP = { echo "make: $(1) could not be installed ($(2)); under CI that fails" >&2; exit 1; }
TEST_ENV := HABITAT_TEST_REQUIRE=all
else
MISSING_DEP = echo "make: no $(1) ($(2)): the tests that need it will skip"
TEST_ENV :=
endif

test-deps:
	@for tool in $(APT_PACKAGES); do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	[ -z "$$missing" ] || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; } \
	|| $(call MISSING_DEP,$$missing,apt-get install$$missing)
	@[ -f $(AXE) ] || npm install --silent --no-audit --no-fund --prefix .bench-cache/axe-core axe-core@4 \
	|| $(call MISSING_DEP,axe-core,npm install axe-core@4)
	@command -v go >/dev/null || exit 0; gobin=$$(go env GOBIN); gobin=$${gobin:-$$(go env GOPATH)/bin}; \
	for pkg in $(GO_LINTERS); do name=$${pkg%@*}; name=$${name##*/}; \
	[ -x "$$gobin/$$name" ] || command -v $$name >/dev/null || go install $$pkg >/dev/null 2>&1 \
	|| $(call MISSING_DEP,$$name,go install $$pkg); done

browser-deps: test-deps

# Four workers on two cores: the suite mostly waits (hosts, servers and fresh interpreters
# starting, real processes ending), so two workers left the cores idle between the waits.
# A worker takes a whole module (its fixtures set up once), the longest modules first
# (tests/schedule.py): in collection order the longest began last and ran alone.
test: $(STAMP) $(COVERAGE_TOOLS) $(PROJECT_STAMP) test-deps
	$(TEST_ENV) $(BIN)/python -m pytest -n 4 --dist loadfile --no-loadscope-reorder \
		--cov --cov-report=term:skip-covered

# Issue 23's findings, each with its checks (PASS/FAIL and what it checks), then `N/M passed`:
# the tests marked `finding` (tests/security/findings.py), in tests/security and the files named
# here. `make test` runs the same tests with the rest of the suite.
SECURITY_ELSEWHERE := tests/shell/test_output.py tests/hardening/test_secrets_at_rest.py \
	tests/host/test_dashboard_verify_e2e.py tests/shell/test_inline_reads.py \
	tests/host/test_server_protocols.py tests/host/test_dashboard_login.py \
	tests/hardening/test_fuzz_tools.py tests/host/test_api.py
security: $(STAMP)
	PYTHONPATH=tests $(BIN)/python -m pytest tests/security $(SECURITY_ELSEWHERE) -m finding -q \
		-p no:cacheprovider -p security.report --no-header -o console_output_style=classic

check: $(STAMP)
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/python bench/tables.py --check

# mcp_latency installs its peers into .bench-cache/ (PyPI and npm); ladder_timings downloads
# a real project's sdist (~4 min): `make bench-all` runs those too.
bench: $(STAMP_RUN)
	$(BIN)/python bench/latency/run_latency.py
	$(BIN)/python bench/latency/big_output.py
	$(BIN)/python bench/latency/substrate.py
	$(BIN)/python bench/latency/stale_latency.py
	$(BIN)/python bench/latency/tab_timings.py

bench-all: bench
	$(BIN)/python bench/latency/mcp_latency.py
	$(BIN)/python bench/ladder/ladder_timings.py

# Real projects from PyPI sdists (prepared once into ~/.cache/agent-habitat/bench/ladder/), 20 seeded
# mutations each: habitat verify vs the full suite vs pytest-testmon. See docs/benchmarks.md.
bench-ladder: $(STAMP_RUN)
	$(BIN)/python bench/ladder/ladder_harness.py $(ARGS)

# Issue 12's defects as seeded scenarios, long version (20 host kills, 20 server kills;
# minutes). The short one runs in `make test`. See docs/reliability.md.
gauntlet: $(STAMP)
	$(BIN)/python bench/gauntlet/gauntlet.py --seed $(or $(SEED),12)

# The ladder in a warm server: diagnose.files on ~100k lines vs ruff, compile.project vs dmypy.
bench-ladder-warm: $(STAMP_RUN)
	$(BIN)/python bench/ladder/ladder_harness_warm.py $(ARGS)

# test.scoped in a warm server, through the warm pytest and fresh, vs the full suite.
bench-ladder-scoped: $(STAMP_RUN)
	$(BIN)/python bench/ladder/ladder_harness_scoped.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
