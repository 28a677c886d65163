"""The widget test driver: every choice of a course widget (course_utils.views.widgets.interactive_plot) shown, each
message sorted into the course's own (a CourseInputError: deliberate) and anything else (an accident).

    with recording():                       # interactive_plot records every ui it builds inside the block
        ...build widgets...
    results = drive_all()                   # AssertionError naming each accidental message and its choices

`drive(ui)` shows every combination of a ui's control values (`control_values`), or a pairwise-covering set of them
(`pairwise`) when there are more than MAX_VIEWS, setting all controls before one draw (`ui.hold()`), and puts the
controls back afterwards. `replay_widgets(notebook)` builds a notebook's kernel widgets in this process: its widget
cell runs on the statements of earlier cells that bind the names it reads (found by `needed_statements`), so the
widget's controls and plot function are the notebook's own, without executing the whole notebook in a kernel.

Used by tests/test_widget_choices.py (the widgets of notebooks 08, 09 §5 and 10 §4) and
tests/test_widget_driver.py (the driver's own tests). The library keeps no list of the widgets it builds: only a
`recording()` block here does, and `clear_built()` empties it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
import symtable
import sys
from contextlib import contextmanager
from pathlib import Path

import ipywidgets as widgets
import nbformat
from IPython.core.inputtransformer2 import TransformerManager

import course_utils.views.widgets as views_widgets

MAX_VIEWS = 48  # drive(): every combination up to this many, else a pairwise-covering set
UNKNOWN_WORD = "qqq"  # drive(): a word no vocabulary holds, typed into each text box
_BUILT: list = []  # every ui interactive_plot built inside recording() since the last clear_built()


# ---- recording the widgets a piece of code builds ----
@contextmanager
def recording():
    """Inside the block, course_utils' interactive_plot also appends each ui it builds to `built()` (and keeps its
    plot function as `ui.plot_fn`). The name is replaced wherever course_utils holds it (course_utils.views.widgets
    and the re-export in course_utils.views), so code that looks it up inside the block gets the recording one: a
    notebook cell's `from course_utils import views` ... `views.interactive_plot(...)`, or its
    `from course_utils.views.widgets import interactive_plot`."""
    original = views_widgets.interactive_plot
    if getattr(original, "records", False):  # already inside a recording() block
        yield
        return

    @functools.wraps(original)
    def interactive_plot(plot_fn, controls, **kwargs):
        ui = original(plot_fn, controls, **kwargs)
        ui.plot_fn = plot_fn
        _BUILT.append(ui)
        return ui

    interactive_plot.records = True
    holders = [
        m
        for name, m in list(sys.modules.items())
        if (name == "course_utils" or name.startswith("course_utils."))
        and getattr(m, "interactive_plot", None) is original
    ]
    for m in holders:
        m.interactive_plot = interactive_plot
    try:
        yield
    finally:
        for m in holders:
            m.interactive_plot = original


def built() -> list:
    """The uis interactive_plot built inside recording() since the last clear_built(), oldest first."""
    return list(_BUILT)


def clear_built() -> None:
    """Forget the uis built so far (built() and drive_all() then see only the ones built after this call)."""
    _BUILT.clear()


# ---- the choices a ui is driven over ----
def control_values(w) -> list:
    """The values drive() sets a control to: its options, a slider's every step (a float slider: min, middle,
    max), a multiple selection's non-empty subsets (singletons and pairs when more than 4 options), a text box's
    value, "" and an unknown word. The control's current value comes first."""
    if isinstance(w, widgets.SelectMultiple):
        opts = list(w._options_values)
        sizes = range(1, len(opts) + 1) if len(opts) <= 4 else (1, 2)
        values = [tuple(c) for k in sizes for c in itertools.combinations(opts, k)]
    elif isinstance(w, widgets.Text):  # also Combobox
        values = [w.value, "", UNKNOWN_WORD]
    elif hasattr(w, "_options_values"):  # Dropdown, ToggleButtons, Select, SelectionSlider, RadioButtons
        values = list(w._options_values)
    elif isinstance(w, widgets.IntSlider):
        values = list(range(w.min, w.max + 1, w.step or 1))
    elif isinstance(w, widgets.FloatSlider):
        values = [w.min, (w.min + w.max) / 2, w.max]
    elif isinstance(w, (widgets.Checkbox, widgets.ToggleButton)):
        values = [False, True]
    else:
        values = []
    return [w.value] + [v for v in dict.fromkeys(values) if v != w.value]


def pairwise(values: list[list]) -> list[tuple]:
    """Rows (one value per list) in which every pair of values of every two lists appears at least once.
    Greedy and deterministic; the first row is every list's first value."""
    n = len(values)
    if n == 0 or any(not v for v in values):
        return []
    if n == 1:
        return [(v,) for v in values[0]]
    pairs = {
        (i, a, j, b)
        for i, j in itertools.combinations(range(n), 2)
        for a in range(len(values[i]))
        for b in range(len(values[j]))
    }
    rows = []
    row = [0] * n
    while True:
        covered = {(i, row[i], j, row[j]) for i, j in itertools.combinations(range(n), 2)}
        pairs -= covered
        rows.append(tuple(values[k][row[k]] for k in range(n)))
        if not pairs:
            return rows
        i, a, j, b = min(pairs)  # an uncovered pair starts the next row; each other value covers the most
        row = [None] * n
        row[i], row[j] = a, b
        for k in range(n):
            if row[k] is None:
                row[k] = max(range(len(values[k])), key=lambda c, k=k: (_gain(pairs, row, k, c), -c))


def _gain(pairs: set, row: list, k: int, c: int) -> int:
    """How many uncovered pairs value c of list k would cover together with the values already in the row."""
    return sum(
        ((k, c, m, row[m]) if k < m else (m, row[m], k, c)) in pairs
        for m in range(len(row))
        if m != k and row[m] is not None
    )


def view_choices(ui, max_views: int = MAX_VIEWS) -> list[dict]:
    """The choices drive() shows: every combination when there are at most max_views, else a pairwise-covering
    set. The first is the current (default) view."""
    names = list(ui.controls)
    values = [control_values(ui.controls[n]) for n in names]
    total = 1
    for v in values:
        total *= len(v)
    rows = itertools.product(*values) if total <= max_views else pairwise(values)
    return [dict(zip(names, row)) for row in rows]


# ---- driving ----
def drive(ui, max_views: int = MAX_VIEWS) -> list[tuple[dict, views_widgets.Message | None, bool | None]]:
    """Show every view of view_choices(ui) by setting the controls (all of them, then one draw) and return
    [(choices, message or None, deliberate or None)]. The controls are set back to their values afterwards."""
    defaults = {name: w.value for name, w in ui.controls.items()}
    results = []
    try:
        for choices in view_choices(ui, max_views):
            with ui.hold():
                for name, value in choices.items():
                    ui.controls[name].value = value
            message = ui.message
            results.append((choices, message, None if message is None else message.deliberate))
    finally:
        with ui.hold():
            for name, value in defaults.items():
                ui.controls[name].value = value
    return results


def accidents(results: list[tuple], label: str = "widget") -> list[str]:
    """'label {choices}: message' for each accidental message (not a CourseInputError) among drive()'s results."""
    return [f"{label} {choices}: {message}" for choices, message, deliberate in results if deliberate is False]


def drive_all(max_views: int = MAX_VIEWS) -> list[list[tuple]]:
    """drive() every ui built since clear_built(); raises AssertionError naming each accidental message and the
    choices that gave it. Returns each ui's results."""
    everything, found = [], []
    for k, ui in enumerate(built()):
        results = drive(ui, max_views)
        everything.append(results)
        found += accidents(results, f"widget {k}")
    if found:
        raise AssertionError(f"{len(found)} accidental message(s), not worded by the course:\n" + "\n".join(found))
    return everything


# ---- a notebook's widgets, built in this process ----
def code_cells(notebook: Path) -> list[str]:
    """The notebook's code cells as plain Python (IPython's %magics turned into calls, as the kernel does)."""
    transform = TransformerManager().transform_cell
    nb = nbformat.read(notebook, as_version=4)
    return [transform(c.source) for c in nb.cells if c.cell_type == "code"]


def bound_names(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement binds: assignment targets, a def or class, an import."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    targets = {
        ast.Assign: lambda s: s.targets,
        ast.AnnAssign: lambda s: [s.target],
        ast.AugAssign: lambda s: [s.target],
    }
    if type(stmt) in targets:
        return {n.id for t in targets[type(stmt)](stmt) for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def free_names(source: str) -> set[str]:
    """The global names some code reads (at top level, or inside its functions and comprehensions) that are not
    builtins."""
    names = set()

    def walk(table, top):
        for s in table.get_symbols():
            if s.is_referenced() and (top or s.is_global()):
                names.add(s.get_name())
        for child in table.get_children():
            walk(child, False)

    walk(symtable.symtable(source, "<cell>", "exec"), True)
    return names - set(dir(builtins))


def needed_statements(cells: list[str], upto: int, names: set[str]) -> list[str]:
    """The top-level statements of cells[:upto] that `names` need, in notebook order: for each name the last
    statement that binds it (an import, an assignment, a def), and again for the names those statements read.
    A statement with other effects runs only if it binds a needed name (the widget's data is not recomputed)."""
    stmts = [(c, s) for c in range(upto) for s in ast.parse(cells[c]).body]
    chosen: set[int] = set()
    todo = [(name, len(stmts)) for name in names]
    while todo:
        name, before = todo.pop()
        where = next((i for i in range(before - 1, -1, -1) if name in bound_names(stmts[i][1])), None)
        if where is None:
            raise LookupError(f"the widget reads {name!r}, which no earlier statement of the notebook binds")
        if where not in chosen:
            chosen.add(where)
            source = ast.unparse(stmts[where][1])
            stmt = stmts[where][1]
            recursive = (
                {stmt.name} if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else set()
            )
            todo += [(n, where) for n in free_names(source) - recursive]  # `x = x + 1` reads the x bound before
    return [ast.unparse(stmts[i][1]) for i in sorted(chosen)]


def replay_widgets(notebook: Path) -> list:
    """Build the notebook's kernel widgets in this process and return them (recorded, see recording()): every
    code cell that calls interactive_plot, and the function definitions of other cells that those cells call,
    run on the earlier statements they need (needed_statements). display() shows nothing here."""
    cells = code_cells(notebook)
    widget_cells = [i for i, c in enumerate(cells) if "interactive_plot(" in c]
    before = len(_BUILT)
    with recording():
        for i in widget_cells:
            namespace = {"display": lambda *objs, **kw: None}
            own = set().union(*(bound_names(s) for s in ast.parse(cells[i]).body))  # bound in the widget cell
            needed = free_names(cells[i]) - own - {"display"}
            for source in needed_statements(cells, i, needed):
                exec(compile(source, f"{notebook.name} (before its widget cell)", "exec"), namespace)  # noqa: S102
            namespace["display"] = lambda *objs, **kw: None  # an import of display above must not print the box
            exec(compile(cells[i], f"{notebook.name} (its widget cell)", "exec"), namespace)  # noqa: S102
    return _BUILT[before:]
