"""Every widget of every notebook, driven over its choices: only the course's own, worded messages may appear.

The tests are tests/test_widget_choices_NN.py, one file per notebook with a kernel widget, so that pytest-xdist
(`--dist loadfile`) runs these minute-long drives on both workers; tests/test_widget_choices.py checks that every
such notebook has its file. This module holds the drive they share.

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
import json, os, sys, tempfile, nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
path, drive = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(drive))
# IPC sockets in a fresh folder: no TCP port that another kernel started at the same moment could also pick
km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(tempfile.mkdtemp(), "kernel"))
client = NotebookClient(nb, km=km, timeout=600, resources={"metadata": {"path": sys.argv[3]}})
try:
    client.execute()
except CellExecutionError as exc:
    print("CELL ERROR " + json.dumps(str(exc)))
    sys.exit(0)
print("STDOUT " + json.dumps("".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")))
"""
ATTEMPT_SECONDS = 240  # one notebook with its drive takes 40-70 s here; a run past this is a stuck kernel channel


def drive_notebook(path: Path) -> dict:
    """Execute the notebook plus the DRIVE cell in a child process (its own process group, so that a kernel whose
    channel got stuck - seen in full runs, 09 twice in one: kernel idle, client waiting - is stopped with it; the
    kernels now talk over IPC sockets, not TCP ports two kernels could pick at once), once more
    if the first attempt is stuck. A failing cell raises CellExecutionError with its traceback text."""
    for attempt in (1, 2):
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN, str(path), DRIVE, str(path.parent)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # SIGABRT below: every thread's stack on stderr
        )
        try:
            out, err = proc.communicate(timeout=ATTEMPT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGABRT)  # client and kernel print where they wait, then stop
            try:
                _, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                _, err = proc.communicate()
            print(f"{path.name}: attempt {attempt} stuck after {ATTEMPT_SECONDS} s, stopped; stacks:\n{err[-4000:]}")
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


def check_widget_choices(number: str) -> None:
    """Drive every widget of notebook `number` ("06") over its choices; fail on any message not the course's."""
    (path,) = [p for p in WIDGET_NOTEBOOKS if p.name.startswith(number + "_")]
    try:
        summary = drive_notebook(path)
    except CellExecutionError as exc:
        text = str(exc)
        start = text.find("accidental message")
        pytest.fail(f"{path.name}: {text[start - 40 :] if start > 0 else text[-3000:]}")
    print(f"\n{path.name}: {summary}")
    assert summary["widgets"] >= 1 and all(summary["views"]), summary
