"""Every widget of every notebook, driven over its choices: only the course's own, worded messages may appear.

Each notebook that builds a widget with `interactive_plot` is executed in a fresh kernel (cwd notebooks/, the kernel
of the current environment, as tools/execute.py does), then one extra cell calls
`course_utils.widgets.drive_all()`: every combination of each widget's control values (a pairwise-covering set when
there are many) is shown, and any message that is not a `CourseInputError` (numpy's or torch's words, a KeyError, ...)
fails the test, named with the choices that gave it. The notebook file is not written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
WIDGET_NOTEBOOKS = [
    p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if "interactive_plot(" in p.read_text(encoding="utf-8")
]
DRIVE = """\
import json as _json
from course_utils import widgets as _widgets
_results = _widgets.drive_all()
print("DRIVEN " + _json.dumps({"widgets": len(_results), "views": [len(r) for r in _results],
    "messages": sum(m is not None for r in _results for _, m, _ in r)}))
"""


def drive_notebook(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(DRIVE))
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    summary = json.loads(text.split("DRIVEN ", 1)[1].splitlines()[0])
    summary["seconds"] = round(time.perf_counter() - start, 1)
    return summary


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
    import nbformat

    calls = {
        p.name
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if any(c.cell_type == "code" and "interactive_plot(" in c.source for c in nbformat.read(p, as_version=4).cells)
    }
    assert calls and calls == {p.name for p in WIDGET_NOTEBOOKS}, calls
