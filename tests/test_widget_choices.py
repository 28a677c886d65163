"""Every notebook with a kernel widget has its widget-choice test file (tests/widget_choices.py drives them)."""

from __future__ import annotations

import nbformat
from widget_choices import ROOT, WIDGET_NOTEBOOKS  # tests/ is on sys.path under pytest


def test_the_notebooks_with_widgets_are_found():
    """Kernel widgets remain only where a view needs the model or a choice no client-side view precomputes
    (06/08: one head, t-SNE, 3-D; 09/10: a sentence the learner types); the others became client-side views."""

    calls = {
        p.name
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if any(c.cell_type == "code" and "interactive_plot(" in c.source for c in nbformat.read(p, as_version=4).cells)
    }
    assert calls and calls == {p.name for p in WIDGET_NOTEBOOKS}, calls


def test_every_widget_notebook_has_its_test_file():
    files = {p.stem.removeprefix("test_widget_choices_") for p in (ROOT / "tests").glob("test_widget_choices_*.py")}
    assert files == {p.name[:2] for p in WIDGET_NOTEBOOKS}, files
