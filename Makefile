# Each target makes .venv and installs what is missing, so any of them works on a fresh clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NBVAL  := --nbval-lax --nbval-current-env --nbval-cell-timeout=600

.PHONY: setup browser sandbox lab test test-unit test-notebooks notebooks exercises bench site clean release release-check pythons

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
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

# Everything CI runs: the build check, then ONE pytest on both cores: unit/property/mutant/browser/grading tests
# and every notebook under nbval (conftest.py keeps each notebook, the browser and the grader on one worker).
# JOBS=1 runs it on one core; PYTEST_ARGS adds options (e.g. PYTEST_ARGS="--lf" reruns what failed last time).
JOBS   ?= 2
XDIST  := $(if $(filter 1,$(JOBS)),,-n $(JOBS))
test: $(STAMP) $(BROWSER_STAMP) $(SANDBOX_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m course_lib.instructor.build build --check
	$(PY) -m pytest $(XDIST) $(NBVAL) tests notebooks solutions exercises $(PYTEST_ARGS)

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
# SITE_ARGS: --lessons 01 06 (a subset), --solutions (adds the solutions, for instructors), --no-cache.
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
