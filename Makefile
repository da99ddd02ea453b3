VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test check demo install clean bench browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

browser:
	@[ -n "$$TREELENS_CHROMIUM" ] || tools/ensure-chromium

# The house style, checked before the tests: lint, formatting and types.
check: $(STAMP)
	$(BIN)/ruff check conftest.py src tests benchmarks examples
	$(BIN)/ruff format --check conftest.py src tests benchmarks examples
	$(BIN)/mypy

test: check browser
	$(BIN)/python -m pytest -q -p no:cacheprovider

demo: $(STAMP)
	$(BIN)/treelens demo

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
