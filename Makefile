# Every target first creates/updates the local virtual environment (.venv),
# so on a fresh clone `make demo` and `make test` are the only commands needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench fmt clean venv golden reliability

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip >/dev/null
	@$(BIN)/python -m pip install -q -e '.[all,dev]'
	@touch $(STAMP)

QUICKSTART := experiments/configs/quickstart.yaml
CODING_ONLY := -s 'tasks=[coding/fix-pager, coding/fix-discount, coding/slow-suite, coding/nbugs-4]'

# The main job on the embedded default: the quickstart experiment at slow-80 vs fast-750.
# Its web task needs Chromium; without one (and no way to install it) the coding tasks run.
demo: $(STAMP)
	@if sh scripts/ensure-chromium.sh; then \
		$(BIN)/looplab run $(QUICKSTART); \
	else \
		echo "running the coding tasks only"; \
		$(BIN)/looplab run $(QUICKSTART) $(CODING_ONLY); \
	fi
	$(BIN)/looplab report runs/quickstart

test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

bench: $(STAMP)
	$(BIN)/looplab bench backend
	$(BIN)/looplab bench sandbox
	$(BIN)/looplab bench replay
	$(BIN)/looplab bench report

# The reliability campaign with more fuzz cases (random ones), ending with its table:
# kills, lost/duplicated runs, leftovers, fuzz cases, tracebacks, hangs, containment probes.
reliability: $(STAMP)
	LOOPLAB_FUZZ_EXAMPLES=200 LOOPLAB_FUZZ_RANDOM=1 $(BIN)/pytest -q tests/reliability

# Regenerate the golden trace projections after an intended behaviour change.
golden: $(STAMP)
	LOOPLAB_REGEN_GOLDEN=1 $(BIN)/pytest -q tests/golden

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
