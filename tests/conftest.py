"""Shared fixtures for the course_utils tests.

* every test runs with torch on one thread (bit-exact comparisons) and float64 as the default dtype, as the
  notebooks do (course_utils/core/precision.py), both restored at the end;
* the standard course model is trained ONCE per session (`course`) and shared;
* figures worth reading (e.g. held-out exact match) are collected in `report` and printed
  in pytest's terminal summary;
* the tiers (pytest_collection_modifyitems below): a test that uses the `browser` fixture is marked `browser` (the
  slow tier), a strict-nbval cell `portable` (run again on the second kernel path by `make test-portable` and
  `make test-slow-portable`);
* the order in which the pytest-xdist workers get the tests: longest first, the retrains and the widget drives one
  per unit (pytest_xdist_make_scheduler below).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch

from course_utils.core.data import load_pairs
from course_utils.core.model import build_model
from course_utils.core.precision import course_precision
from course_utils.measures.attention_stats import trace_pairs
from course_utils.training.zoo import course_model, load_standard_model


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)  # needs Chromium: the slow tier
        if item.path.suffix == ".ipynb":  # an nbval cell: strict nbval runs again on the second kernel path
            item.add_marker(pytest.mark.portable)


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")  # after -m has deselected
def pytest_collection_modifyitems_longest_first(items):
    items[:] = longest_first(items)  # the order in which the xdist workers get them (below)


# ---- handing tests to the pytest-xdist workers (the Makefile's -n 2 --dist loadfile) ----
# As --dist loadfile: each test file, and each notebook's nbval cells (one kernel), is one unit on one worker; except
# the cases of the tests in SPREAD, each a unit of its own (independent, seconds each). Units are handed out in
# collection order, and pytest_collection_modifyitems above puts the long ones first (unit_rank), so that the two
# workers finish together instead of one running a minute-long unit alone at the end. (--dist loadgroup is no use
# here: CONTRIBUTING.md says why.)
SPREAD = {  # test -> the rank of each of its cases: a retrain 4-10 s, a notebook's widget drive 2-45 s
    "tests/test_shipped_models.py::test_code_reproduces_shipped_model[": 1,
    "tests/test_widget_choices.py::test_every_widget_choice_draws_or_gives_a_worded_message[": 3,
}


def unit_of(nodeid: str) -> str:
    """The unit a test is handed out in: its own node id for a SPREAD case, else its file."""
    return nodeid if nodeid.startswith(tuple(SPREAD)) else nodeid.split("::", 1)[0]


def unit_rank(unit: str, items) -> int:
    """How long a unit runs, roughly: 3 a file with a slow or browser test (20-60 s: a server, a browser, a build),
    2 a notebook (10-35 s), a SPREAD case its own rank, 0 any other file."""
    for prefix, rank in SPREAD.items():
        if unit.startswith(prefix):
            return rank
    if any(item.get_closest_marker("slow") or item.get_closest_marker("browser") for item in items):
        return 3
    return 2 if unit.endswith(".ipynb") else 0


def longest_first(items) -> list:
    """The items grouped by unit, units by rank and then by number of tests, longest first (stable)."""
    units: dict[str, list] = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    order = sorted(units.items(), key=lambda u: (-unit_rank(u[0], u[1]), -len(u[1])))
    return [item for _, group in order for item in group]


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CourseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # keep longest_first's order (xdist would sort by number of tests)
    return CourseScheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def one_thread():
    """torch on one thread for the whole session (bit-exact results), restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session", autouse=True)
def course_dtype():
    """float64 as the default dtype for the whole session, as every notebook sets it in its first cell."""
    with course_precision():
        yield


@pytest.fixture(scope="session")
def course():
    """The standard course model (TrainResult), trained once per session (~4 s)."""
    return course_model(log=None)


@pytest.fixture
def course_copy(course):
    """A private deep copy of the trained translator, for tests that change modes or register hooks."""
    return copy.deepcopy(course.model)


@pytest.fixture(scope="session")
def untrained():
    """A built, untrained standard translator (seed 0). Tests must not modify it."""
    return build_model(seed=0).eval()


def documented_trace_shapes(cfg, Ts: int, Tt: int) -> dict[str, tuple[int, ...]]:
    """Every trace key of one sentence pair with its shape, as the `course_utils.trace.tracing` docstring
    documents it (Ts English positions, Tt decoder positions incl. <bos>)."""
    H, d = cfg.n_heads, cfg.d_model
    dh = d // H
    shapes = {"encoder.embed": (Ts, d), "decoder.embed": (Tt, d)}
    for side, T, places in (("encoder", Ts, ("self",)), ("decoder", Tt, ("self", "cross"))):
        for layer in range(cfg.n_layers):
            for place in places:
                Tk = Ts if (side == "encoder" or place == "cross") else Tt
                p = f"{side}.{layer}.{place}"
                shapes.update(
                    {
                        f"{p}.q_input": (T, d),
                        f"{p}.k_input": (Tk, d),
                        f"{p}.v_input": (Tk, d),
                        f"{p}.mask": (T, Tk),
                        f"{p}.q": (H, T, dh),
                        f"{p}.k": (H, Tk, dh),
                        f"{p}.v": (H, Tk, dh),
                        f"{p}.scores": (H, T, Tk),
                        f"{p}.weights": (H, T, Tk),
                        f"{p}.x1": (H, T, dh),
                        f"{p}.concat": (T, d),
                        f"{p}.out": (T, d),
                    }
                )
            shapes[f"{side}.{layer}.layer_out"] = (T, d)
    return shapes


@pytest.fixture(scope="session")
def trace_shapes():
    """documented_trace_shapes(cfg, Ts, Tt) -> {trace key: shape} (the tracing docstring's table)."""
    return documented_trace_shapes


class _Figures(dict):
    """{label: text}; each entry is also kept on the test's report, so it reaches the main process under xdist."""

    def __init__(self, node):
        super().__init__()
        self.node = node

    def __setitem__(self, label, text):
        super().__setitem__(label, text)
        self.node.user_properties.append(("course figure", f"{label}: {text}"))


@pytest.fixture
def report(request):
    """Figures to print at the end of the run: report[label] = text."""
    return _Figures(request.node)


def pytest_runtest_logreport(report):
    if report.when == "call":
        for name, line in report.user_properties:
            if name == "course figure":
                _FIGURES.append(line)


_FIGURES: list[str] = []  # filled in the main pytest process (also from xdist workers' reports)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _FIGURES:
        terminalreporter.write_sep("-", "course_utils figures")
        for line in dict.fromkeys(_FIGURES):
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def shipped_model():
    """The shipped standard model (course_utils/models/course_model_learned.pt), as the notebooks load it."""
    return load_standard_model().model


@pytest.fixture(scope="session")
def learned_seeds():
    """{seed: TrainResult} of the five shipped seeds of the standard model (seed 0 = shipped_model's file)."""
    from course_utils.training.zoo import load_seeds

    return load_seeds("learned")


@pytest.fixture(scope="session")
def all_pairs():
    """Every corpus pair, train and held-out."""
    return load_pairs()


@pytest.fixture(scope="session")
def shipped_batch(shipped_model, all_pairs):
    """trace_pairs (measures/attention_stats.py) of the shipped model over every pair (attention weights of one
    batched pass)."""
    return trace_pairs(shipped_model, all_pairs)


# --- headless Chromium for the publishing tests (test_html_export.py, test_jupyterlab_browser.py) -------------
# Debian's chromium driven by Playwright for Python: Playwright never downloads a browser of its own here.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing_tool(what: str):
    """Skip on a learner's machine without a browser; fail in CI, where .ci/run installs it."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI installs it: see .ci/run)")
    pytest.skip(what)


def offline_page(browser, **options):
    """A new page on `browser` (Page options such as viewport) that aborts every request other than file: and
    data:, and the list those aborted requests' URLs are appended to: an offline page must leave it empty."""
    page, aborted = browser.new_page(**options), []

    def route(r):
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            aborted.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return page, aborted


@pytest.fixture(scope="session")
def browser():
    """A Playwright Browser on Debian's /usr/bin/chromium, headless, no network services."""
    if not Path(CHROMIUM).exists():
        missing_tool(f"{CHROMIUM} not found: `apt-get install -y chromium`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_tool("playwright is not installed: `make install` installs requirements-dev.txt")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
