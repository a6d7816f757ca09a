# Every target first creates/updates the local virtual environment (.venv),
# so on a fresh clone `make demo` and `make test` are the only commands needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench fmt clean venv golden reliability

venv: $(STAMP)

# The docker tier's sandbox image is not built here: `make test` builds it in the background
# while its first part runs (scripts/image-in-background.sh); `looplab sandbox build` builds it.
$(STAMP): pyproject.toml
	@scripts/ensure-apt-packages.sh
	@scripts/ensure-bwrap.sh
	@scripts/ensure-chromium.sh >/dev/null 2>&1 || true
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@scripts/install-deps.sh $(BIN)/python all,dev
	@touch $(STAMP)

CLAIM := experiments/configs/claim.yaml

# The main job on the embedded default: the claim check at slow-80 vs fast-750 (bundled
# coding tasks live, a real agent's calibrated workload with and without hidden reasoning;
# then the report, which adds the shipped corpus re-timed and ends with the claim panel).
# `looplab run experiments/configs/quickstart.yaml` runs the bundled tasks alone (web too).
# Bytecode is cached (as for `make test`, below): the run starts Python for every cell's tools.
demo: $(STAMP)
	@scripts/ensure-bwrap.sh
	export PYTHONDONTWRITEBYTECODE=; \
	$(BIN)/looplab run $(CLAIM) && $(BIN)/looplab report runs/claim

# The whole suite, as two groups at once (scripts/run-tests.sh says how): the timing-marked
# tests (wall-clock pacing asserts) in one process at normal priority, and beside them
# everything else across pytest-xdist workers at `nice 19`, back to normal priority once
# the timing group is done; the target fails if either group did. The suite is CPU-bound on
# 2 cores (process accounting: ~1,120 core-seconds for the first part, which kept both cores
# busy), while the timing group, run after it, added ~150 s using under half a core.
# Workers: three per core (many tests wait on servers, browsers, sandboxes, Ray).
# TEST_WORKERS=1 runs the first part serially. Tests are handed out one at a time
# (--maxschedchunk 1): xdist's default gives each worker a chunk of consecutive tests at the
# start (a quarter of its share, 58 here), so the first worker took 58 of the long tests,
# which start first, and ran 676 s while four workers were done at 378 s.
# Bytecode is cached for the run even where the environment sets PYTHONDONTWRITEBYTECODE
# (this machine's image does): the tests start Python ~700 times and every xdist worker
# collects every test module, each of which would otherwise compile again (collection
# 7.9 s -> 3.8 s per process).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 3 )))
test: $(STAMP)
	@scripts/run-tests.sh $(BIN) $(TEST_WORKERS)

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
