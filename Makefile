# Two commands for learners and instructors:
#   make lab   - create .venv, install the pinned dependencies, open JupyterLab on notebooks/
#   make test  - the same install if needed, then the whole test suite incl. pytest --nbval
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*.ipynb

.PHONY: install lab test test-fast nbval execute html bench models clean

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

lab: install
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root,)

# Unit/property tests, then strict nbval over every notebook (outputs must match the committed ones).
test: install
	$(PY) -m pytest tests
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
	  $(PY) -m pytest --nbval --nbval-current-env --nbval-cell-timeout=120 -p no:randomly notebooks; \
	else echo "no notebooks yet"; fi

test-fast: install
	$(PY) -m pytest tests -x -q

nbval: install
	$(PY) -m pytest --nbval --nbval-current-env --nbval-cell-timeout=120 $(NB)

# Re-execute notebooks in place (fresh kernel, in order, widget state saved): make execute NB=notebooks/01_*.ipynb
execute: install
	$(PY) -m course_utils.execute $(NB)

# Export every notebook with nbconvert (what nbviewer uses) into build/html/, with an index page in notebook order.
html: install
	$(PY) -m course_utils.export_html --out build/html $(NB)

bench: install
	$(PY) benchmarks/bench_training.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Retrain and save the three standard course models shipped in models/ (tests check the code reproduces them).
models: install
	$(PY) -m course_utils.training
