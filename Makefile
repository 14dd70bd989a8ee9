# Each target makes .venv and installs what is missing, so any of them works on a fresh clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NBVAL  := --nbval-lax --nbval-current-env --nbval-cell-timeout=600

.PHONY: setup browser sandbox lab test test-more test-unit test-notebooks notebooks exercises bench site clean release release-check pythons

# --no-compile: byte-compiling every installed file (torch has thousands) was most of an install here. Instead the
# bytecode of what the course's processes import is written once (scripts/warm_bytecode.py, about 5 s), and make's
# own processes may write the rest on first import: where PYTHONDONTWRITEBYTECODE is set in the environment (this
# machine's is) nothing would be written, and every fresh kernel would compile torch, IPython and matplotlib from
# source again (9.5 s instead of 3.9 s here; the grader's sandbox, whose packages are read-only, never can).
export PYTHONDONTWRITEBYTECODE :=
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e '.[dev]'
	$(PY) scripts/warm_bytecode.py
	touch $(STAMP)

setup: $(STAMP)

# The real-browser tests need Debian's chromium and playwright (never a downloaded browser).
BROWSER_STAMP := $(VENV)/.browser
$(BROWSER_STAMP): $(STAMP) scripts/install_browser.sh
	bash scripts/install_browser.sh
	touch $(BROWSER_STAMP)

browser: $(BROWSER_STAMP)

# bubblewrap, the sandbox `course-lib grade` runs each submission in (apt; without it `grade` refuses to run).
SANDBOX_STAMP := $(VENV)/.sandbox
$(SANDBOX_STAMP): $(STAMP) scripts/install_sandbox.sh
	bash scripts/install_sandbox.sh
	touch $(SANDBOX_STAMP)

sandbox: $(SANDBOX_STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

# Two tiers, both run by CI (.ci/run: `make test`, then `make test-more`).
# `make test` checks the course's correctness: the build check, then ONE pytest on both cores: the unit, property,
# mutant, grading and site tests, every lesson executed once by tests/test_headless.py (a plain nbclient: any
# error or failed assert fails it, as under nbval, and a stalled reply too), the fresh Colab-like and Binder
# environments a student opens a lesson in (tests/test_launch_envs.py: what they check, that the course installs
# and runs there, nothing else checks), and every solutions and exercises notebook under nbval (conftest.py keeps
# each notebook, the grader and the lessons' unit on one worker).
# `make test-more` re-checks the same course in other settings: every lesson again under nbval (the executor CI
# has always used), JupyterLab in a real browser (tests/browser/), and the same grades computed on a Dask cluster
# (tests/test_distributed.py) and by nbgrader's autograde (tests/test_nbgrader_agreement.py). JOBS=1 runs on one core; PYTEST_ARGS adds options
# (e.g. PYTEST_ARGS="--lf").
JOBS   ?= 2
XDIST  := $(if $(filter 1,$(JOBS)),,-n $(JOBS))
MORE   := tests/browser tests/test_distributed.py tests/test_nbgrader_agreement.py
test: $(STAMP) $(SANDBOX_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m course_lib.instructor.build build --check
	$(PY) -m pytest $(XDIST) $(NBVAL) tests solutions exercises $(addprefix --ignore=,$(MORE)) $(PYTEST_ARGS)

test-more: $(STAMP) $(BROWSER_STAMP) $(SANDBOX_STAMP)
	$(PY) -m pytest $(XDIST) $(NBVAL) notebooks $(MORE) $(PYTEST_ARGS)

test-unit: $(STAMP) $(SANDBOX_STAMP)
	$(PY) -m pytest $(XDIST) tests $(PYTEST_ARGS)

test-notebooks: $(STAMP)
	$(PY) -m pytest $(XDIST) $(NBVAL) notebooks solutions exercises $(PYTEST_ARGS)

# Rebuild the .ipynb files from their jupytext sources, and exercises/ from solutions/.
notebooks: $(STAMP)
	$(PY) -m course_lib.instructor.build build

exercises: notebooks

# Every benchmark, one after the other (each writes its own section of benchmarks/RESULTS.md).
bench: $(STAMP)
	for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# The course as a static website in build/site/ (open build/site/index.html). Executed notebooks are cached in
# build/site-cache/, so a rebuild after a change executes only what changed.
# The guides (docs/), ARCHITECTURE.md and an API reference read from course_lib's source are pages of it too.
# SITE_ARGS: --lessons 01 06 (a subset), --solutions (adds the solutions, for instructors), --no-cache, --no-docs.
site: $(STAMP)
	$(PY) -m course_lib.instructor.site $(SITE_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# A release: checks (clean tree, CHANGELOG section, CITATION version, notebooks and model cards in step), the
# wheel and sdist in dist/ built from HEAD, then the tag vX.Y.Z (pyproject's version). release-check: no tag.
release: $(STAMP)
	$(PY) scripts/release.py

release-check: $(STAMP)
	$(PY) scripts/release.py --dry-run

# The course on every Python 3.10-3.13 the machine has (scripts/try_pythons.sh says what it could not run).
pythons:
	bash scripts/try_pythons.sh
