# Two commands for a newcomer: `make lab` opens the workbook, `make test` runs every check.
# Both create the virtual environment in .venv first if it is missing or out of date.
# `make lab LAB_ARGS="--port 8890 --no-browser"` passes options on to JupyterLab.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.installed-browser
HUB_STAMP := $(VENV)/.installed-hub
LAB_ARGS ?=
# `make lab LANG=en` (and `make update LANG=en`) opens the English edition: lessons-en/ in workspace-en/.
# Only a LANG given on make's command line picks the edition (a locale such as en_US.UTF-8 in the
# environment does not); the commands then run with the C.UTF-8 locale.
EDITION := zh_CN
ifeq ($(origin LANG),command line)
EDITION := $(LANG)
override LANG := C.UTF-8
endif
# nbgrader shells out to alembic, so the environment's bin/ must be on PATH.
ACTIVATE := . $(BIN)/activate &&

.PHONY: lab update progress test quick preflight test-browser test-hub lint lessons grade formgrader bench bench-grading clean-grading \
	mutation api-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[course,postgres,test,tokenizers]"
	touch $(STAMP)

$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[course,postgres,test,browser]"
	touch $(BROWSER_STAMP)

$(HUB_STAMP): $(BROWSER_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[course,test,browser,hub]"
	touch $(HUB_STAMP)

# The learner works in workspace/ (git-ignored): copies of the lessons that are never overwritten.
# JupyterLab runs there without nbgrader's instructor tools (see ctx_course/learner/lab.py).
lab: $(STAMP)
	$(ACTIVATE) python -m ctx_course lab --lang $(EDITION) $(LAB_ARGS)

# Bring corrections of the release into workspace/: answers and edited cells kept, old files backed up.
update: $(STAMP)
	$(ACTIVATE) python -m ctx_course update --lang $(EDITION)

# The learner's progress, read from the saved notebooks of workspace/ (workspace-en/ with LANG=en) without running them.
progress: $(STAMP)
	$(ACTIVATE) python -m ctx_course progress --lang $(EDITION)

# preflight first: the system packages the suite needs, installed (as root on Debian) or named in
# one line before anything runs (scripts/preflight.sh).
test: preflight $(STAMP)
	$(ACTIVATE) python -m pytest

preflight:
	@scripts/preflight.sh $(PYTHON)

# The inner loop: every test that neither grades a class nor re-executes a notebook (CONTRIBUTING.md).
quick: $(STAMP)
	$(ACTIVATE) python -m pytest -m "not heavy and not notebook"

# The style the code keeps: ruff's rules (pyproject.toml [tool.ruff]) and mypy on ctx_reference.
lint: $(STAMP)
	$(ACTIVATE) ruff check .
	$(ACTIVATE) mypy

# Every notebook run in JupyterLab in a headless Chromium (needs /usr/bin/chromium; see CONTRIBUTING.md).
test-browser: $(BROWSER_STAMP)
	$(ACTIVATE) python -m pytest tests/browser --browser -n 0

# The course on a real JupyterHub for a class of OS users (needs root, Node, configurable-http-proxy
# in .hub/node_modules or on PATH, and /usr/bin/chromium; see docs/jupyterhub.md).
test-hub: $(HUB_STAMP)
	$(ACTIVATE) python -m pytest tests/hub --hub -n 0

# Regenerate the student release of both editions (lessons/, lessons-en/) from solutions/ and i18n/.
lessons: $(STAMP)
	$(ACTIVATE) python -m ctx_course release

# Autograde every submission under grading/submitted, write feedback and grades.csv.
grade: $(STAMP)
	$(ACTIVATE) python -m ctx_course grade

# JupyterLab at the course root, where nbgrader's formgrader finds the course (manual grading).
formgrader: $(STAMP)
	$(ACTIVATE) jupyter lab

bench: $(STAMP)
	$(ACTIVATE) python benchmarks/bench_sim.py
	$(ACTIVATE) python benchmarks/bench_policy.py
	$(ACTIVATE) python benchmarks/bench_rulers.py

# The checks' strength: cosmic-ray mutates every exercise's reference and the exercise's visible
# check judges each mutant; writes ctx_course/mutation/last_run.json and docs/mutation.md, and fails on
# a survivor not reviewed in ctx_course/mutation/equivalent_mutants.toml (docs/mutation.md).
mutation: $(STAMP)
	$(ACTIVATE) python -m ctx_course.mutation run

bench-grading: $(STAMP)
	$(ACTIVATE) python benchmarks/bench_grading.py

clean-grading:
	rm -rf grading

# Do the notebooks' request bodies still pass the NEWEST official SDKs, and which SDK values does the course not know
# (ctx_course/api_check.py)? The suite pins the SDKs (pyproject.toml, the test extra); this installs the newest ones
# in a temporary virtual environment that sees the course's own environment behind them, and runs the check there.
api-check: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(BIN)/python -m venv "$$tmp/venv" && \
	"$$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade anthropic openai && \
	site=$$("$$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') && \
	course=$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') && \
	echo "import site; site.addsitedir('$$course')" > "$$site/zz-course.pth" && \
	$(ACTIVATE) "$$tmp/venv/bin/python" -m ctx_course api-check
