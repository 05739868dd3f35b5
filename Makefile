# Two commands take a fresh clone to a running cowbird: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := demo-data

.PHONY: demo test lint typecheck pytest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: build the sample corpus in two partitions and describe it
demo: $(STAMP)
	$(BIN)/cowbird encode -f tests/data/sample.vrt -d $(DEMO)/data/sample -R $(DEMO)/registry/sample \
	    -c utf8 -xsB -P pos -P lemma -S text:0+id+genre+year+url -S s:0+id --partition-tokens 60
	$(BIN)/cowbird info -r $(DEMO)/registry sample_p01
	$(BIN)/cowbird info -r $(DEMO)/registry sample_p02
	@echo "The demo corpus is in $(DEMO)/ (registry: $(DEMO)/registry). Serving it arrives with the front end."

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
