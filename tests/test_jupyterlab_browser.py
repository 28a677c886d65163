"""The course widgets work for a learner in JupyterLab, driven in a real (headless) browser.

What is checked
---------------
A private JupyterLab server is started for this module (temporary root, config, data, runtime, settings and
workspace folders; no news feed, update check or PyPI extension manager, so nothing asks for the network) on a
temporary COPY of 09_heads_and_the_query_analogy; the repository's notebooks are never touched. The notebook is
opened once in Chromium (Playwright, sync API): clear every output, Run → Run All Cells from the menu, wait until
every code cell has an execution count and the kernel is idle. Then, on its attention widget (sentence, place,
layer and head pickers):

* changing the "head" picker, then the "place" picker, replaces the figure in the widget's Output area (its
  ``img`` ``src`` changes). The time from the change to the new figure is printed, not asserted.
* typing a sentence with an unknown word ("mlik") into the "sentence" box and pressing Enter shows ONE line in
  the widget output that names the word and suggests "milk", and no figure; a valid sentence brings a figure back.

The two tests share the running notebook (one Run All: it is the slow part) and run in file order.

Neither page may contain "Traceback" or "Error displaying widget" anywhere. On failure a screenshot and the page
text are written to the test's pytest tmp dir (the path is printed).

Run it (about a minute; needs /usr/bin/chromium, else the shared `browser` fixture skips, or fails under CI=1):

    .venv/bin/python -m pytest tests/test_jupyterlab_browser.py -v -s
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # no playwright: the shared `browser` fixture skips (or fails under CI=1) before any wait
    PlaywrightTimeout = TimeoutError

# the slow tier (make test-all): JupyterLab in Chromium, about a minute
pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
NB09 = "09_heads_and_the_query_analogy.ipynb"

SERVER_START_S = 90  # JupyterLab answering /api/status
OPEN_S = 120  # notebook open, kernel started and idle
RUN_ALL_S = 420  # every cell of one notebook executed (~10-60 s on 2 cores)
WIDGET_S = 60  # one widget update
FORBIDDEN = ("Traceback", "Error displaying widget")

# Plugins that would fetch from the network or open a dialog on a fresh profile.
DISABLED_PLUGINS = ["@jupyterlab/apputils-extension:announcements", "@jupyterlab/extensionmanager-extension"]


@dataclass
class Lab:
    base: str  # http://127.0.0.1:PORT
    token: str
    root: Path  # the server's root_dir: copies of the notebooks
    log: Path

    def url(self, path: str) -> str:
        return f"{self.base}{path}{'&' if '?' in path else '?'}token={self.token}"

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(
            f"{self.base}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def wait_kernel_idle(self, name: str, timeout_s: float) -> None:
        """Wait until the server reports the kernel of notebook `name` idle."""
        deadline, sessions = time.monotonic() + timeout_s, []
        while time.monotonic() < deadline:
            sessions = self.api("/api/sessions")
            if any(s["path"] == name and s["kernel"]["execution_state"] == "idle" for s in sessions):
                return
            time.sleep(0.25)
        pytest.fail(f"the kernel of {name} is not idle after {timeout_s} s: {sessions}")

    def shutdown_kernels(self):
        """Stop every session's kernel (frees the CPU for the next notebook)."""
        for s in self.api("/api/sessions"):
            with contextlib.suppress(urllib.error.URLError):
                self.api(f"/api/sessions/{s['id']}", method="DELETE")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server (it shuts its kernels down), SIGKILL its process group if it hangs."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group of this server only: start_new_session=True
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A private JupyterLab server on a copy of NB09; stopped at teardown."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    assert REPO not in tmp.parents, f"temporary dir {tmp} must be outside the repository"
    root, home = tmp / "root", tmp / "home"
    root.mkdir()
    shutil.copy2(NOTEBOOKS / NB09, root / NB09)

    config = home / "config"
    # Server side: no news feed, no update check, an extension manager that never queries PyPI.
    _write_json(
        config / "jupyter_server_config.json",
        {
            "LabApp": {
                "news_url": None,
                "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                "extension_manager": "readonly",
            }
        },
    )
    _write_json(
        config / "labconfig" / "page_config.json", {"disabledExtensions": {name: True for name in DISABLED_PLUGINS}}
    )
    settings = home / "lab-settings"
    # Never ask about news; attach every cell to the DOM so all prompts and outputs can be inspected.
    _write_json(
        settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    _write_json(
        settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings", {"windowingMode": "none"}
    )

    # The server and its kernel on PyTorch's default CPU kernels, also when the run itself is on the second kernel
    # path (make test-slow-portable): this test proves the widgets work in JupyterLab; strict nbval compares the
    # outputs on both paths. (On the portable kernels notebook 09 takes ~1.6 times as long.)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "JPY_")) and k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "COURSE_KERNEL_PATH")
    }
    env.update(
        JUPYTER_CONFIG_DIR=str(config),  # user config; sys.prefix/etc/jupyter is still read
        JUPYTER_DATA_DIR=str(home / "data"),  # user data; the venv's kernelspec in sys.prefix/share/jupyter stays found
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        PYTHONUNBUFFERED="1",
    )
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.port_retries=0",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = tmp / "server.log"
    with open(log, "wb") as log_file:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = Lab(f"http://127.0.0.1:{port}", token, root, log)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with code {proc.returncode}:\n{log.read_text()[-5000:]}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {SERVER_START_S} s:\n{log.read_text()[-5000:]}")
                time.sleep(0.5)
        kernels = server.api("/api/kernelspecs")["kernelspecs"]
        assert "python3" in kernels, f"kernel spec python3 not found by the isolated server: {sorted(kernels)}"
        yield server
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def page(browser, lab, tmp_path_factory, request):
    """A fresh browser context and page for this module; screenshot + page text if a test failed."""
    tmp_path = tmp_path_factory.mktemp("jupyterlab-page")
    failures_before = request.session.testsfailed
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(WIDGET_S * 1000)
    console = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    yield pg
    if request.session.testsfailed > failures_before:  # the tests' call phases are reported before teardown
        with contextlib.suppress(Exception):
            pg.screenshot(path=tmp_path / "failure.png", full_page=True)
            (tmp_path / "page.txt").write_text(pg.locator("body").inner_text())
        print(f"\n[jupyterlab] failure artefacts in {tmp_path}; browser console errors: {console[-20:]}")
    context.close()
    lab.shutdown_kernels()


# --- driving JupyterLab -------------------------------------------------------------------------------------------


def _menu(page, menu: str, command: str) -> None:
    """Click a main-menu entry, e.g. _menu(page, "Run", "runmenu:run-all")."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^{menu}$")).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


def _wait_idle(page, timeout_s: float) -> None:
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(timeout=timeout_s * 1000)


def open_and_run_all(page, lab: Lab, name: str) -> float:
    """Open `name` in a fresh workspace, clear outputs, Run All Cells; wait for every cell. Returns the run time."""
    response = page.goto(lab.url(f"/lab/workspaces/{name.split('_')[0]}/tree/{name}"), timeout=OPEN_S * 1000)
    assert response is not None and response.ok, (
        f"{name}: JupyterLab answered {response and response.status}; server log:\n{lab.log.read_text()[-5000:]}"
    )
    n_code = sum(c["cell_type"] == "code" for c in json.loads((lab.root / name).read_text())["cells"])
    try:  # every code cell in the DOM (windowingMode "none"), the kernel started, connected and idle
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell').length === n",
            arg=n_code,
            timeout=OPEN_S * 1000,
        )
        _wait_idle(page, OPEN_S)
    except PlaywrightTimeout:
        rendered = page.locator(".jp-NotebookPanel .jp-CodeCell").count()
        pytest.fail(
            f"{name}: {rendered} of {n_code} code cells rendered / kernel not idle after {OPEN_S} s; "
            f"sessions: {lab.api('/api/sessions')}\nserver log:\n{lab.log.read_text()[-3000:]}"
        )
    lab.wait_kernel_idle(name, OPEN_S)
    _menu(page, "Edit", "editmenu:clear-all")  # execution counts back to [ ]
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].every(p => !/\\d/.test(p.textContent))"
    )
    t0 = time.perf_counter()
    _menu(page, "Run", "runmenu:run-all")
    try:
        page.wait_for_function(
            "() => { const ps = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];"
            " return ps.length > 0 && ps.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim())); }",
            timeout=RUN_ALL_S * 1000,
            polling=500,
        )
    except PlaywrightTimeout as exc:  # report which cells did not finish and why
        prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt").all_inner_texts()
        text = page.locator("body").inner_text()
        tb = text[text.find("Traceback") :][:3000] if "Traceback" in text else "(no Traceback on the page)"
        pytest.fail(
            f"{name}: Run All Cells did not finish within {RUN_ALL_S} s ({exc.__class__.__name__}); "
            f"prompts: {prompts}\n{tb}"
        )
    _wait_idle(page, RUN_ALL_S)
    lab.wait_kernel_idle(name, RUN_ALL_S)
    elapsed = time.perf_counter() - t0
    print(f"\n[jupyterlab] {name}: Run All Cells ({n_code} code cells) took {elapsed:.1f} s")
    return elapsed


def assert_no_errors(page, name: str) -> None:
    text = page.locator("body").inner_text()
    for bad in FORBIDDEN:
        i = text.find(bad)
        assert i < 0, f"{name}: {bad!r} on the page:\n{text[max(0, i - 500) : i + 2500]}"


def widget_box(page, control: str):
    """The interactive_plot box (VBox) that holds the control described `control`."""
    label = page.locator(".widget-label", has_text=re.compile(rf"^\s*{control}\s*$"))
    boxes = page.locator(".widget-vbox").filter(has=page.locator(".widget-output")).filter(has=label)
    boxes.first.wait_for()
    assert boxes.count() >= 1
    return boxes.last  # the innermost matching VBox


def picker(box, description: str):
    """The <select> or <input> of the control described `description` inside `box`."""
    label = box.page.locator(".widget-label", has_text=re.compile(rf"^\s*{description}\s*$"))
    control = box.locator(".widget-inline-hbox").filter(has=label)
    return control.locator("select, input").first


def output_img_src(box) -> str | None:
    img = box.locator(".widget-output img")
    return img.first.get_attribute("src") if img.count() else None


def wait_new_figure(page, box, old_src: str | None, what: str, since: float | None = None) -> float:
    """Wait until the widget output shows a figure whose src differs from old_src.

    Returns the seconds from `since` (a time.perf_counter() taken just before the change; default: now)."""
    t0 = time.perf_counter() if since is None else since
    handle = box.element_handle()
    try:
        page.wait_for_function(
            "([box, old]) => { const img = box.querySelector('.widget-output img');"
            " return !!img && img.getAttribute('src') !== old && img.complete && img.naturalWidth > 0; }",
            arg=[handle, old_src],
            timeout=WIDGET_S * 1000,
            polling=50,
        )
    except PlaywrightTimeout:
        out = box.locator(".widget-output").inner_text()
        pytest.fail(f"{what}: no new figure in the widget output within {WIDGET_S} s; output text: {out!r}")
    return time.perf_counter() - t0


@pytest.fixture(scope="module")
def widget(page, lab):
    """NB09 opened and run once; its attention widget's box, showing its first figure."""
    open_and_run_all(page, lab, NB09)
    assert_no_errors(page, NB09)
    box = widget_box(page, "sentence")
    box.scroll_into_view_if_needed()
    wait_new_figure(page, box, None, f"{NB09} after Run All")
    return box


# --- tests (in file order, on the same running notebook) ----------------------------------------------------------


def test_head_and_place_pickers_redraw_the_figure(page, widget):
    box = widget
    before = output_img_src(box)
    assert before and before.startswith("data:image/png"), f"widget figure is not an inline PNG: {before[:80]!r}"

    head = picker(box, "head")
    options = head.locator("option").all_inner_texts()
    assert options == ["0", "1"], f"unexpected head options {options}"
    assert head.evaluate("select => select.selectedIndex") == 1

    t0 = time.perf_counter()
    head.select_option(label="0")
    t_head = wait_new_figure(page, box, before, "head → 0", since=t0)
    after_head = output_img_src(box)
    print(f"[jupyterlab] {NB09}: head 1 → 0: new figure after {t_head * 1000:.0f} ms")

    place = picker(box, "place")
    places = [o.replace("\xa0", " ") for o in place.locator("option").all_inner_texts()]  # ipywidgets uses nbsp
    current = places[place.evaluate("select => select.selectedIndex")]
    assert current == "decoder self" and places[-1] == "cross", f"unexpected place picker: {places}, {current!r}"
    t0 = time.perf_counter()
    place.select_option(index=len(places) - 1)
    t_place = wait_new_figure(page, box, after_head, f"place → {places[-1]}", since=t0)
    print(f"[jupyterlab] {NB09}: place {current!r} → {places[-1]!r}: new figure after {t_place * 1000:.0f} ms")

    assert box.locator(".widget-output img").count() == 1, "the widget output should hold exactly one figure"
    assert_no_errors(page, NB09)


def test_unknown_word_gives_a_message_then_a_valid_sentence_a_figure(page, widget):
    box = widget
    out = box.locator(".widget-output")
    sentence = picker(box, "sentence")
    assert sentence.input_value() == "she would like to drink milk"
    t0 = time.perf_counter()
    sentence.fill("she would like to drink mlik")
    sentence.press("Enter")
    try:
        page.wait_for_function(
            "(box) => { const o = box.querySelector('.widget-output');"
            " return o.innerText.includes('mlik') && !o.querySelector('img'); }",
            arg=box.element_handle(),
            timeout=WIDGET_S * 1000,
            polling=50,
        )
    except PlaywrightTimeout:
        pytest.fail(f"no unknown-word message within {WIDGET_S} s; widget output: {out.inner_text()!r}")
    print(f"[jupyterlab] {NB09}: unknown word → message after {(time.perf_counter() - t0) * 1000:.0f} ms")
    message = out.inner_text().strip()
    print(f"[jupyterlab] {NB09}: widget says: {message[:120]}")
    assert "\n" not in message, f"the message should be one line: {message!r}"
    assert message.startswith("⚠"), f"the message should start with ⚠: {message!r}"
    assert "'mlik'" in message and "milk" in message, f"the message should name 'mlik' and suggest milk: {message!r}"
    assert_no_errors(page, NB09)

    t0 = time.perf_counter()
    sentence.fill("we want to eat apple")
    sentence.press("Enter")
    t_back = wait_new_figure(page, box, None, "valid sentence again", since=t0)
    print(f"[jupyterlab] {NB09}: valid sentence → new figure after {t_back * 1000:.0f} ms")
    assert "mlik" not in out.inner_text(), "the unknown-word message should be gone"
    assert_no_errors(page, NB09)
