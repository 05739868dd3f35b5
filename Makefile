# Two commands take a fresh clone to a running cowbird: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := demo-data
PORT   ?= 8700
# the cwb engine's extra (cwb-ccc) builds against CWB: installed when cwb-config is on PATH
COMMA  := ,
EXTRAS := test$(if $(shell command -v cwb-config),$(COMMA)cwb)

.PHONY: demo test lint typecheck pytest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

## demo: the sample corpus in two partitions, two nodes and the front end on loopback (Ctrl-C stops)
demo: $(STAMP)
	$(BIN)/cowbird demo --dir $(DEMO) --port $(PORT)

## test: ruff, mypy (strict) and pytest
test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .mypy_cache .ruff_cache
