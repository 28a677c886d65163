# Two commands for learners and instructors:
#   make lab   - create .venv, install what taking the course needs (requirements.txt, pinned by requirements.lock)
#                and course_utils, open JupyterLab on notebooks/
#   make test  - the same install plus the tools that check the course (requirements-dev.txt), then lint, the fast
#                tests and strict nbval over every notebook
#                (make test-all adds the slow tier: every retrain, the browser tests, the second kernel path)
PYTHON ?= python3
# Byte-code caches are kept between runs (pytest's rewritten test modules, course_utils' own modules): where the
# machine sets PYTHONDONTWRITEBYTECODE (this one does), every test process would rewrite and compile every test
# module again (about 5 s a process here).
unexport PYTHONDONTWRITEBYTECODE
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
COURSE_STAMP := $(VENV)/.installed-course
NB     ?= notebooks/*.ipynb

.PHONY: install install-course lab test test-all test-slow-portable test-slow test-portable lint test-fast nbval execute html site bench models clean test-compat launch-links student slides

# install-course: what taking the course needs (requirements.txt: the notebooks, their widgets and checkers, JupyterLab)
# and course_utils (editable). install: that plus the tools that check and publish it (requirements-dev.txt), for
# every target below except lab. Both pinned by requirements.lock (a constraints file).
install-course: $(COURSE_STAMP)

# pip byte-compiles each installed file one at a time (37 s of a 59 s install here); instead it installs without
# compiling and compileall compiles site-packages on every core. Not compiling at all costs more, even with byte code
# written on first import (unexport above): the test workers and kernels start together and each compiles the same
# modules (measured: make test's tests 30 s longer, make test-slow-portable's 50 s). As pip does, a file this Python
# cannot compile is left alone (torch ships one for Python 3.12): -qq and `|| true`. Left out: the packages' own test
# suites (tests/, test/: nothing imports them) and transformers' 549 model folders (tests/test_pretrained.py imports
# a few, compiled when first imported): 20 s instead of 28 s on 2 cores.
PIP_INSTALL := $(PY) -m pip install --quiet --no-compile
COMPILE     := $(PY) -m compileall -qq -j 0 -x '/tests?/|/transformers/models/' $(VENV)/lib || true

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(COURSE_STAMP): $(PY) requirements.txt requirements.lock pyproject.toml
	$(PIP_INSTALL) -r requirements.txt -c requirements.lock
	$(PIP_INSTALL) --no-deps -e .
	$(COMPILE)
	touch $(COURSE_STAMP)

install: $(STAMP)

# one pip run for both files (not the learner set first and the tools after it: one resolve instead of two); the
# course package is built with the setuptools requirements-dev.txt installs (no build venv for it: 2 s less)
$(STAMP): $(PY) requirements.txt requirements-dev.txt requirements.lock pyproject.toml
	$(PIP_INSTALL) -r requirements.txt -r requirements-dev.txt -c requirements.lock
	$(PIP_INSTALL) --no-deps --no-build-isolation -e .
	$(COMPILE)
	touch $(STAMP) $(COURSE_STAMP)

lab: install-course
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root,)

# The tiers (pytest markers, registered in pyproject.toml; CONTRIBUTING.md says which tier proves what):
#   make test          lint, then every test that is neither `slow` nor `browser` (unit, property, exercise checkers,
#                      one retrain per model kind) and strict nbval over every notebook (outputs must match the
#                      committed ones): what an instructor runs, about 3 minutes on 2 cores
#   make test-all      make test, then test-slow-portable (.ci/run runs the same two)
#   make test-slow-portable  the slow tier and the portable tier in one run on the second CPU kernel path: every
#                      `slow`, `browser` or `portable` test and strict nbval again
#   make test-slow     the `slow` and `browser` tests that are not `portable`: the widget drives, the HTML export, the
#                      site and JupyterLab in headless Chromium, the wheel (default kernel path)
#   make test-portable every `portable` test (the slow ones too: every shipped seed retrained) and strict nbval again,
#                      on the second CPU kernel path (below)
#   make test-fast     make test without nbval and without lint (the quick loop while editing course_utils)
# A slow float-sensitive test (a retrain of seeds 1-4) runs once in the slow tier, on the second kernel path; make test
# retrains each kind's seed 0 on the default path. `make test-slow SLOW="slow or browser"` also runs the slow
# float-sensitive tests on the default path (about 2 minutes more).
# One pytest run on $(WORKERS) processes (pytest-xdist, --dist loadfile): each file on one worker, so a notebook's
# nbval cells run in its one kernel and a file's module fixtures are built once; tests/conftest.py hands the files
# out longest first and spreads the retrains and widget drives one per unit. Not --dist loadgroup: with pytest
# 9.2 and pytest-xdist 3.8.0 it ignores every xdist_group mark (xdist writes the group into item._nodeid, which
# pytest 9.2 no longer reads: pytest-xdist issue #1386), so it would spread a notebook's cells over two kernels.
WORKERS ?= 2
XDIST   := -n $(WORKERS) --dist loadfile
FAST    := not slow and not browser
SLOW    := (slow or browser) and not portable
# Strict nbval with no --nbval-sanitize-with file: no output needs sanitizing. The only ignored outputs are cells
# tagged "nbval-ignore-output" (widgets), each with its reason in metadata (tests/test_notebook_hygiene.py).
NBVAL   := --nbval --nbval-current-env --nbval-cell-timeout=120 -p no:randomly
test: install lint
	$(PY) -m pytest $(XDIST) $(NBVAL) -m "$(FAST)" tests notebooks

test-all: test test-slow-portable

# The pinned npm files (vega, MathJax's neighbours, the widget manager) the browser tests load: fetched once into
# build/npm/ with `npm pack`, checked against their sha512, then reused (nothing is fetched when notebooks run).
test-slow: install
	$(PY) tools/export_html.py --fetch-only
	$(PY) -m pytest $(XDIST) -p no:randomly -m "$(SLOW)" tests

# The float-sensitive part of the suite again, on a second CPU kernel path (PyTorch's portable "default" kernels
# instead of AVX2/AVX-512, MKL in its compatible mode, one thread): strict nbval over every notebook and every test
# marked `portable` (every retrain and snapshot test, the MiniLM parity tests, ...). Committed
# outputs must not depend on the kernels, and this is how one machine checks it (part of the slow tier).
PORTABLE := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 COURSE_KERNEL_PATH=default
test-portable: install
	$(PORTABLE) $(PY) -m pytest $(XDIST) $(NBVAL) -m portable tests notebooks

# The slow tier (test-slow) and the portable tier (test-portable) in one pytest run on the second kernel path: one
# start instead of two and no worker idle at the end of either (measured on 2 cores, in a checkout that had run
# before: 6 min 00 s against 2 min 42 s + 4 min 06 s; on the last fresh clones its pytest run took 5 min 42 s and
# 5 min 49 s). The slow tier's tests compare no float output, so they prove the same on either path. Three workers
# on two cores: the browser, server and subprocess tests spend part of their time waiting (-n 3: 6 min 00 s, -n 2:
# 6 min 27 s; with -n 3 the CPU was idle 1.4 % of the run).
WORKERS_SLOW ?= 3
test-slow-portable: install
	$(PY) tools/export_html.py --fetch-only
	$(PORTABLE) $(PY) -m pytest -n $(WORKERS_SLOW) --dist loadfile $(NBVAL) -m "slow or browser or portable" tests notebooks

lint: install
	$(VENV)/bin/ruff check
	$(VENV)/bin/ruff format --check

test-fast: install
	$(PY) -m pytest $(XDIST) -p no:randomly -m "$(FAST)" -x -q tests

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

$(COMPAT_STAMP): requirements.txt requirements-dev.txt requirements.lock
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install --quiet --upgrade pip
	grep -v '^torch==' requirements.txt > $(COMPAT_VENV)/requirements.txt
	grep -E '^(pytest|nbval)==' requirements-dev.txt >> $(COMPAT_VENV)/requirements.txt  # the learner set + the nbval run
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

# The student edition: every notebook copied to build/student/notebooks/ without its Solutions section (the links to
# it become plain words) and without outputs (learners run the notebooks); notebooks/ is only read. The tool checks its
# own work and fails when a solution or a dead link would be left (tools/student_edition.py says why every output goes).
student: install
	$(PY) tools/student_edition.py --out build/student

# One slide deck per teaching week (week 1: notebooks 01-05, week 2: 06-10) from the outlines in slides/, with the
# notebooks' committed figures embedded (nothing executed), into build/slides/week1.html and week2.html. They open
# from disk with no network: reveal.js (a pinned npm tarball, fetched once into build/npm/) lies in build/slides/reveal/.
# A figure is named by the heading it sits under; the build fails with one line when a named heading or figure is gone.
slides: install
	$(PY) tools/slides.py --out build/slides
