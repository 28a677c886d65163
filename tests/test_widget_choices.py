"""Every widget of every notebook, driven over its choices: only the course's own, worded messages may appear.

Each notebook that builds a widget with `interactive_plot` is executed in a fresh kernel (cwd notebooks/, the kernel
of the current environment, as tools/execute.py does), then one extra cell calls
`course_utils.views.widgets.drive_all()`: every combination of each widget's control values (a pairwise-covering
set when there are many) is shown, and any message that is not a `CourseInputError` (numpy's or torch's words, a
KeyError, ...) fails the test, named with the choices that gave it. The notebook file is not written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
WIDGET_NOTEBOOKS = [
    p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if "interactive_plot(" in p.read_text(encoding="utf-8")
]
DRIVE = """\
import json as _json
from course_utils.views import widgets as _widgets
_results = _widgets.drive_all()
print("DRIVEN " + _json.dumps({"widgets": len(_results), "views": [len(r) for r in _results],
    "messages": sum(m is not None for r in _results for _, m, _ in r)}))
"""


RUN = """\
import json, sys, nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
path, drive = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(drive))
client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[3]}})
try:
    client.execute()
except CellExecutionError as exc:
    print("CELL ERROR " + json.dumps(str(exc)))
    sys.exit(0)
print("STDOUT " + json.dumps("".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")))
"""
ATTEMPT_SECONDS = 420  # one notebook with its drive takes 10-90 s here; a run past this is a stuck kernel channel


def drive_notebook(path: Path) -> dict:
    """Execute the notebook plus the DRIVE cell in a child process (its own process group, so that a kernel whose
    channel got stuck - seen once in a CI run: kernel idle, client waiting forever - is killed with it), once more
    if the first attempt is stuck. A failing cell raises CellExecutionError with its traceback text."""
    for attempt in (1, 2):
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN, str(path), DRIVE, str(path.parent)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=ATTEMPT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            print(f"{path.name}: attempt {attempt} stuck after {ATTEMPT_SECONDS} s, killed")
            continue
        failed = next((line for line in out.splitlines() if line.startswith("CELL ERROR ")), None)
        if failed:
            raise CellExecutionError(json.loads(failed[len("CELL ERROR ") :]), "", "")
        stdout = next(
            (json.loads(line[len("STDOUT ") :]) for line in out.splitlines() if line.startswith("STDOUT ")), None
        )
        assert stdout is not None, f"{path.name}: the drive produced no output; stderr: {err[-2000:]}"
        summary = json.loads(stdout.split("DRIVEN ", 1)[1].splitlines()[0])
        summary["seconds"] = round(time.perf_counter() - start, 1)
        return summary
    pytest.fail(f"{path.name}: stuck twice ({ATTEMPT_SECONDS} s each)")


@pytest.mark.parametrize("path", WIDGET_NOTEBOOKS, ids=lambda p: p.name)
def test_every_widget_choice_draws_or_gives_a_worded_message(path):
    try:
        summary = drive_notebook(path)
    except CellExecutionError as exc:
        text = str(exc)
        start = text.find("accidental message")
        pytest.fail(f"{path.name}: {text[start - 40 :] if start > 0 else text[-3000:]}")
    print(f"\n{path.name}: {summary}")
    assert summary["widgets"] >= 1 and all(summary["views"]), summary


def test_the_notebooks_with_widgets_are_found():
    """Kernel widgets remain only where a view needs the model or a choice no client-side view precomputes
    (06/08: one head, t-SNE, 3-D; 09/10: a sentence the learner types); the others became client-side views."""

    calls = {
        p.name
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if any(c.cell_type == "code" and "interactive_plot(" in c.source for c in nbformat.read(p, as_version=4).cells)
    }
    assert calls and calls == {p.name for p in WIDGET_NOTEBOOKS}, calls
