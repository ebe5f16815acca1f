# Two commands for a newcomer: `make lab` opens the workbook, `make test` runs every check.
# Both create the virtual environment in .venv first if it is missing or out of date.
# `make lab LAB_ARGS="--port 8890 --no-browser"` passes options on to JupyterLab.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.installed-browser
LAB_ARGS ?=
# nbgrader shells out to alembic, so the environment's bin/ must be on PATH.
ACTIVATE := . $(BIN)/activate &&

.PHONY: lab update test test-browser lessons grade formgrader bench bench-grading clean-grading

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[course,postgres,test,tokenizers]"
	touch $(STAMP)

$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[course,postgres,test,browser]"
	touch $(BROWSER_STAMP)

# The learner works in workspace/ (git-ignored): copies of the lessons that are never overwritten.
# JupyterLab runs there without nbgrader's instructor tools (see ctx_course/lab.py).
lab: $(STAMP)
	$(ACTIVATE) python -m ctx_course lab $(LAB_ARGS)

# Bring corrections of the release into workspace/: answers and edited cells kept, old files backed up.
update: $(STAMP)
	$(ACTIVATE) python -m ctx_course update

test: $(STAMP)
	$(ACTIVATE) python -m pytest

# Every notebook run in JupyterLab in a headless Chromium (needs /usr/bin/chromium; see README).
test-browser: $(BROWSER_STAMP)
	$(ACTIVATE) python -m pytest tests/browser --browser -n 0

# Regenerate the student release (lessons/) from the source notebooks (solutions/).
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

bench-grading: $(STAMP)
	$(ACTIVATE) python benchmarks/bench_grading.py

clean-grading:
	rm -rf grading
