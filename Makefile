# Two commands take a fresh clone to a running cowbird: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := demo-data
PORT   ?= 8700
# The versions CI tested, every package pinned: both installs below take them (`make constraints`
# refreshes the file)
CONSTRAINTS := constraints.txt
PIP    := $(BIN)/pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS)
# the cwb engine's extra (cwb-ccc) builds against CWB: installed when cwb-config is on PATH
COMMA  := ,
EXTRAS := all$(COMMA)test$(if $(shell command -v cwb-config),$(COMMA)cwb)
# Two stamps: what the demo runs (`make demo`: nodes, front end, Calf, `cowbird build` and `cowbird crawl`; accounts in SQLite, so no PostgreSQL driver),
# and every extra with the test tools (`make test`),
# which stands for the first too. The second is named after the extras, so that cwb-config coming
# onto PATH later installs the cwb extra.
RUNTIME_STAMP := $(VENV)/.installed-runtime
TEST_STAMP    := $(VENV)/.installed-$(subst $(COMMA),-,$(EXTRAS))

.PHONY: demo test quick lint typecheck pytest pytest-load clean constraints

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUNTIME_STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e '.[node,frontend,calf,build,crawl]'
	touch $(RUNTIME_STAMP)

# one install of the runtime and the extras together (not the runtime first, then the extras)
$(TEST_STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e '.[$(EXTRAS)]'
	touch $(TEST_STAMP) $(RUNTIME_STAMP)

## demo: the sample corpus in two partitions, two nodes and the front end on loopback (Ctrl-C stops)
demo: $(RUNTIME_STAMP)
	$(BIN)/cowbird demo --dir $(DEMO) --port $(PORT)

## test: ruff, deptry, import-linter, tsc (the page's JavaScript), mypy (strict), pytest, then the
## load and fault suites in a stage of their own
test: $(TEST_STAMP) lint typecheck pytest pytest-load

# tsc (TypeScript, Debian's node-typescript) type-checks the page's ES modules (web/tsconfig.json:
# checkJs, strict); without it on PATH `make lint` says so and goes on, except under CI=true, where it fails.
# Before it, the page's API types (web/cowbird/web/static/api-types.d.ts) are generated afresh from the
# front end's OpenAPI schema and compared with the checked-in file: a difference fails (`make api-types`)
lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/deptry .
	$(BIN)/lint-imports
	$(BIN)/python -m cowbird.frontend.api_types --check
	@if command -v tsc >/dev/null; then echo "tsc -p web/tsconfig.json"; tsc -p web/tsconfig.json; \
	else case "$${CI:-}" in \
	  [Tt][Rr][Uu][Ee]) echo "make lint: tsc is not on PATH (CI=true: the page's JavaScript must be type-checked): apt-get install node-typescript" >&2; exit 1;; \
	  *) echo "make lint: tsc is not on PATH, the page's JavaScript is not type-checked (apt-get install node-typescript)";; \
	esac; fi

## api-types: writes web/cowbird/web/static/api-types.d.ts, the page's types of the API's models, from the
## front end's OpenAPI schema (cowbird.frontend.api_types); `make lint` fails while it is out of date
.PHONY: api-types
api-types: $(RUNTIME_STAMP)
	$(BIN)/python -m cowbird.frontend.api_types

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# pytest-xdist: two worker processes (the machines this runs on have two cores), each test module
# whole on one of them and the browser tests all on one (--dist loadscope; tests/conftest.py)
XDIST := -n 2 --dist loadscope

# the whole suite on two processes (XDIST): about 17-18 minutes here instead of 30 on one; the 25
# slowest tests are listed at the end (what to look at when the suite grows slower)
pytest: $(TEST_STAMP)
	$(BIN)/pytest -q $(XDIST) -m "not load" --durations=25

# the load and fault suites (-m load: many hosts, floods, kills, hung and starved nodes): their limits
# are wall-clock, generous and stated in each test, so they run after the rest, one test at a time,
# with the machine to themselves (about six minutes here)
pytest-load: $(TEST_STAMP)
	$(BIN)/pytest -q -n 0 -m load --durations=10

## quick: the quick loop while working, on two processes: the tests that start no processes (not
## e2e, not loopback: those run in a child pytest) and take no more than a second or so (not slow)
quick: $(TEST_STAMP)
	$(BIN)/pytest -q $(XDIST) -m "not e2e and not slow and not loopback"

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .mypy_cache .ruff_cache

## constraints: re-resolve constraints.txt to the newest versions pyproject.toml allows, in a fresh
## venv with the runtime and the test and cwb extras (needs cwb-config on PATH, for cwb-ccc); then
## run `make test`. KEEP=1 keeps the current pins and only adds or drops what pyproject.toml changed.
constraints:
	@command -v cwb-config >/dev/null || { echo "make constraints: cwb-config is not on PATH (the cwb extra, cwb-ccc, builds against CWB: put CWB's bin/ on PATH)" >&2; exit 1; }
	@echo "resolving .[all,test,cwb] in a fresh venv$(if $(KEEP), with the current pins) ..."
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip; \
	"$$tmp/venv/bin/pip" install --quiet --disable-pip-version-check $(if $(KEEP),-c $(CONSTRAINTS)) -e '.[all,test,cwb]'; \
	{ echo "# Every package of cowbird's runtime and of its test and cwb extras, at the versions CI tested:"; \
	  echo "# make installs them (pip install -c $(CONSTRAINTS) ...). Pins of packages a platform does not"; \
	  echo "# need (uvloop on Windows) are harmless: a constraint installs nothing by itself."; \
	  echo "# Refresh with \`make constraints\` (cwb-config on PATH), then run \`make test\`."; \
	  echo "# Generated by make constraints on $$("$$tmp/venv/bin/python" -c 'import platform; print("Python", platform.python_version(), platform.system(), platform.machine())')."; \
	  "$$tmp/venv/bin/pip" freeze --disable-pip-version-check --exclude-editable; } > $(CONSTRAINTS).new; \
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	@echo "$(CONSTRAINTS): $$(grep -c '==' $(CONSTRAINTS)) pins"
