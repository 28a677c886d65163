"""Every kernel widget of every notebook, driven over its choices in this process: only the course's own, worded
messages may appear.

A notebook's widget is built here from the notebook itself (tests/widget_driver.py, replay_widgets): its widget cell
runs on the earlier statements it needs (the imports, `snaps`, `words`, `traces`, `model`, ... as the notebook
computes them from the shipped models), so the controls, their options and defaults, and the plot function are the
notebook's; the rest of the notebook is not executed (strict nbval runs it, default views included). Then every
combination of each widget's control values (a pairwise-covering set when there are more than 48) is shown, which
calls the library function behind the widget (`plot_word_projection`, `plot_five_words`, `plot_attention` on
`run_with_trace` / `trace_sentence`) on each, and any message that is not a `CourseInputError` (numpy's or torch's
words, a KeyError, ...) fails the test, named with the choices that gave it.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import nbformat
import pytest
from widget_driver import accidents, drive, replay_widgets  # tests/ is on sys.path under pytest

ROOT = Path(__file__).resolve().parents[1]
WIDGET_NOTEBOOKS = [
    p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if "interactive_plot(" in p.read_text(encoding="utf-8")
]
# The function behind each notebook's widget: a library view (08) or the notebook's own view function (09, 10),
# which calls run_with_trace / trace_sentence and plot_attention.
PLOT_FUNCTIONS = {
    "08": ["plot_five_words"],
    "09": ["head_view"],
    "10": ["real_head_view"],
}


def test_the_notebooks_with_widgets_are_found():
    """Kernel widgets remain only where a view needs the model or a choice no client-side view precomputes
    (08: one head, t-SNE, 3-D; 09/10: a sentence the learner types); the others became client-side views."""
    calls = {
        p.name
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if any(c.cell_type == "code" and "interactive_plot(" in c.source for c in nbformat.read(p, as_version=4).cells)
    }
    assert calls and calls == {p.name for p in WIDGET_NOTEBOOKS}, calls
    assert set(PLOT_FUNCTIONS) == {p.name[:2] for p in WIDGET_NOTEBOOKS}  # each is driven below


@pytest.mark.slow  # the slow tier, on the default kernel path (no output is compared: nothing float-sensitive)
@pytest.mark.parametrize("notebook", WIDGET_NOTEBOOKS, ids=[p.name[:2] for p in WIDGET_NOTEBOOKS])
def test_every_widget_choice_draws_or_gives_a_worded_message(notebook, report):
    start = time.perf_counter()
    uis = replay_widgets(notebook)
    names = [getattr(ui.plot_fn, "func", ui.plot_fn).__name__ for ui in uis]
    assert names == PLOT_FUNCTIONS[notebook.name[:2]], names
    if isinstance(uis[0].plot_fn, functools.partial):  # a library view on the notebook's data
        assert uis[0].plot_fn.func.__module__.startswith("course_utils.views."), uis[0].plot_fn.func.__module__
    assert all(ui.message is None for ui in uis), [ui.message for ui in uis]  # the default view draws
    found, views, messages = [], [], 0
    for k, ui in enumerate(uis):
        results = drive(ui)
        views.append(len(results))
        messages += sum(message is not None for _, message, _ in results)
        found += accidents(results, f"{notebook.name} widget {k}")
    if found:
        pytest.fail(f"{len(found)} accidental message(s), not worded by the course:\n" + "\n".join(found))
    assert uis and all(views), views
    report[f"widget choices {notebook.name[:2]}"] = (
        f"{len(uis)} widget(s), {sum(views)} views, {messages} worded messages, {time.perf_counter() - start:.1f} s"
    )
