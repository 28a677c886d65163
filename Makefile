# Two commands for learners and instructors:
#   make lab   - create .venv, install the pinned dependencies, open JupyterLab on notebooks/
#   make test  - the same install if needed, then the whole test suite incl. pytest --nbval
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*.ipynb

.PHONY: install lab test test-portable lint test-fast nbval execute html site bench models clean test-compat launch-links

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

lab: install
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root,)

# Lint, then unit/property/browser tests and strict nbval over every notebook (outputs must match the committed
# ones) in one pytest run on $(WORKERS) processes (pytest-xdist; --dist loadfile: each file on one worker, so each
# notebook in one kernel; the minute-long widget drives and model retrains are split over several files for it).
WORKERS ?= 2
# Strict nbval with no --nbval-sanitize-with file: no output needs sanitizing. The only ignored outputs are cells
# tagged "nbval-ignore-output" (widgets), each with its reason in metadata (tests/test_notebook_hygiene.py).
NBVAL   := --nbval --nbval-current-env --nbval-cell-timeout=120 -p no:randomly
# The pinned npm files (vega, MathJax's neighbours, the widget manager) the browser tests load: fetched once into
# build/npm/ with `npm pack`, checked against their sha512, then reused (nothing is fetched when notebooks run).
test: install lint
	$(PY) tools/export_html.py --fetch-only
	$(PY) -m pytest -n $(WORKERS) --dist loadfile $(NBVAL) tests notebooks

# The float-sensitive part of the suite again, on a second CPU kernel path (PyTorch's portable "default" kernels
# instead of AVX2/AVX-512, MKL in its compatible mode, one thread): strict nbval over every notebook, the retrain
# and snapshot tests, the MiniLM parity tests and the widget-choice runs. Committed outputs must not depend on the
# kernels, and this is how one machine checks it (.ci/run runs it after `make test`).
PORTABLE       := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 COURSE_KERNEL_PATH=default
FLOAT_SENSITIVE := tests/test_kernel_path.py $(wildcard tests/test_shipped_models*.py) tests/test_training_in_the_open.py \
                   tests/test_probing.py tests/test_pretrained.py $(wildcard tests/test_widget_choices*.py)
test-portable: install
	$(PORTABLE) $(PY) -m pytest -n $(WORKERS) --dist loadfile $(NBVAL) $(FLOAT_SENSITIVE) notebooks

lint: install
	$(VENV)/bin/ruff check
	$(VENV)/bin/ruff format --check

test-fast: install
	$(PY) -m pytest tests -x -q

nbval: install
	$(PY) -m pytest $(NBVAL) $(NB)

# Re-execute notebooks in place (fresh kernel, in order, widget state saved): make execute NB=notebooks/01_*.ipynb
execute: install
	$(PY) tools/execute.py $(NB)

# Export every notebook with nbconvert (what nbviewer uses) into build/html/, with an index page in notebook order.
# The pages work offline: MathJax (pip: jupyter-server-mathjax), require.js, the widget manager and Vega are copied
# into build/html/_static/; the npm files come from pinned tarballs fetched once (npm pack) into build/npm/.
html: install
	$(PY) tools/export_html.py --out build/html $(NB)

# The course website (Sphinx + MyST-NB + sphinx-book-theme) from the committed notebooks, nothing executed, into
# build/site/: sidebar in notebook order, previous/next, search, live client-side views, saved widgets, offline
# (MathJax and the pinned npm files in build/site/_static/). Open build/site/index.html or
# `python -m http.server -d build/site`.
site: install
	$(PY) tools/site.py --out build/site

# Figures, not tests: training speed vs torch.nn.Transformer; notebook run times, widget re-render p95, make test.
bench: install
	$(PY) benchmarks/bench_training.py
	$(PY) benchmarks/bench_notebooks.py
	$(PY) tools/export_html.py --fetch-only
	$(PY) benchmarks/bench_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Retrain and save every standard course model and seed shipped in course_utils/models/ (tests check the code reproduces them).
models: install
	$(PY) -m course_utils.training.zoo

# A second PyTorch, kept working (manual, not in .ci/run): strict nbval over every notebook in its own venv with
# torch $(COMPAT_TORCH) instead of the locked 2.13.0 and every other pin of requirements.lock unchanged. course_utils
# goes in as a built package (not editable), so the run also proves the installed package finds its data and models.
# 2.14.1 is a CUDA build (~6 GB; it runs on the CPU here). nbval prints the cells whose outputs differ, if any.
COMPAT_TORCH ?= 2.14.1
COMPAT_VENV  ?= .venv-compat
COMPAT_PY    := $(COMPAT_VENV)/bin/python
COMPAT_STAMP := $(COMPAT_VENV)/.installed-torch-$(COMPAT_TORCH)

$(COMPAT_STAMP): requirements.txt requirements.lock
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install --quiet --upgrade pip
	grep -v '^torch==' requirements.txt > $(COMPAT_VENV)/requirements.txt
	grep -v '^torch==' requirements.lock > $(COMPAT_VENV)/constraints.txt
	$(COMPAT_PY) -m pip install --quiet torch==$(COMPAT_TORCH) -r $(COMPAT_VENV)/requirements.txt -c $(COMPAT_VENV)/constraints.txt
	touch $@

test-compat: $(COMPAT_STAMP)
	rm -rf build/lib build/bdist.*   # setuptools' in-tree build leaves deleted modules there, and they would ship
	$(COMPAT_PY) -m pip install --quiet --no-deps --force-reinstall .
	$(COMPAT_PY) -P -c "import torch, course_utils; print('torch', torch.__version__, '- course_utils from', course_utils.__file__)"
	$(COMPAT_PY) -m pytest $(NBVAL) -rf notebooks

# Write the course's public address (REPO=owner/name, GitHub) into pyproject.toml [project.urls] and point the
# README's and every notebook's Binder and Colab links, and the notebooks' setup cell, at it. REPO= (empty) removes them.
launch-links:
	$(PYTHON) tools/launch_links.py $(if $(filter undefined,$(origin REPO)),,--repo "$(REPO)")
