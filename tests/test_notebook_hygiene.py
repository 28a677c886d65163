"""Every committed notebook is fit for nbviewer and strict nbval (NOTEBOOK_STANDARD, "For nbviewer and nbval").

Checked on the files as committed: outputs from one clean run in order, no errors, nothing machine-specific
in an output, PNG figures, the widget state saved for every widget shown, size, names that match the README's
notebook map, and every ignored output marked the way nbval honours it, with its reason, and followed by a
compared static cell. The pre-commit nbstripout hook must leave every notebook byte for byte as it is.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import missing_tool  # tests/ is on sys.path under pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
VEGALITE = "application/vnd.vegalite.v5+json"  # a client-side view (course_utils/views/clientside/)
IGNORE_TAG = "nbval-ignore-output"  # nbval reads this cell tag; a tag keeps tooling words off the learner's screen


def ignored(cell):
    return IGNORE_TAG in cell.get("metadata", {}).get("tags", [])


MAX_BYTES = 1_500_000
# Absolute paths, user folders and memory addresses: they differ between machines and runs.
MACHINE_SPECIFIC = re.compile(r"(/(home|root|Users|tmp|work|var/folders)/|[A-Za-z]:\\\\Users|\bat 0x[0-9a-f]{6,})")
# What an ignored output may be: widgets only (the Output widget's content and model ids change every run).
# A training log is compared like any output: in float64 it prints the same digits on every CPU.
IGNORED_KINDS = re.compile(r"interactive_plot|widget")


# The notebook standard's countable parts (docs/notebook_standard.md, issue 12's bar): figures, exercises with a
# worded solution to reveal, a widget with a static fallback. An exercise starts at a heading that names it
# ("### Exercise 2 — ...", "### What a head writes — Exercise 2: ...") or at a bold lead ("**Exercise 2 — ...**").
MIN_FIGURES, MIN_EXERCISES = 2, 2
EXERCISE = re.compile(r"^(?:#{2,4} [^\n]*?\bExercise (\d+)\b|\*\*Exercise (\d+)\b)", re.M)
SOLUTION = re.compile(r"<details>\s*<summary>[^<]*solution[^<]*</summary>", re.I)
LABELLED = re.compile(r"<summary>\s*Exercise (\d+)\b")  # a solution that names its exercise, wherever it sits


def load(path: Path):
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def output_text(output) -> str:
    if output.output_type == "stream":
        return output.text
    data = output.get("data", {})
    return "\n".join(v for k, v in data.items() if k.startswith("text/") and isinstance(v, str))


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.name)
def notebook(request):
    return request.param, load(request.param)


def test_names_are_numbered_in_order_and_match_the_readme_map():
    names = [p.name for p in NOTEBOOKS]
    assert [n[:3] for n in names] == [f"{i:02d}_" for i in range(1, len(names) + 1)], names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Notebook map", 1)[1].split("\n## ", 1)[0]
    mapped = re.findall(r"\(notebooks/(\d\d_[\w-]+\.ipynb)\)", section)
    assert mapped == names, "the README's notebook map must list exactly the notebooks, in order"


def test_executed_once_in_order_without_errors(notebook):
    path, nb = notebook
    cells = code_cells(nb)
    assert all(c.source.strip() for c in cells), "an empty code cell"
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), "re-run with `make execute`"
    assert sum(bool(c.outputs) for c in cells) >= len(cells) // 2, "committed without outputs?"
    errors = [o.get("ename") for c in cells for o in c.outputs if o.output_type == "error"]
    assert not errors, f"error outputs: {errors}"
    stderr = [o.text for c in cells for o in c.outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, f"warnings or other stderr in outputs: {stderr[:1]}"


def test_outputs_are_machine_independent_pngs(notebook):
    path, nb = notebook
    for i, c in enumerate(code_cells(nb), 1):
        for o in c.outputs:
            text = output_text(o)
            m = MACHINE_SPECIFIC.search(text)
            assert not m, f"cell [{i}] shows {m.group(0)!r}: a path, user name or memory address"
            assert "image/svg+xml" not in o.get("data", {}), f"cell [{i}]: SVG figure (differs every run); use PNG"
    assert nb.metadata.kernelspec.name == "python3"
    assert path.stat().st_size <= MAX_BYTES, f"{path.stat().st_size / 1e6:.2f} MB"


# A mantissa with decimals and an exponent below -4 ("7.2e-07", "3.1E-12"): the digits of a value that is zero
# in exact arithmetic, i.e. rounding noise, which differs between CPUs. Such a value is printed as a bound
# ("below 1e-9", course_utils.core.precision.below); "1e-9" itself (no decimals) is a bound and allowed.
NOISE_DIGITS = re.compile(r"(?<![\w.])[-+]?\d+\.\d+[eE]-(?:0*[5-9]|0*[1-9]\d+)(?!\w|\.\d)")


def test_the_noise_pattern_finds_rounding_noise_and_spares_bounds():
    found = [bool(NOISE_DIGITS.search(t)) for t in ("diff 7.2e-07", "{0: '9.5E-12'}", "x=-1.0e-5.", "eps 2.50e-10")]
    assert found == [True, True, True, True]
    spared = ["below 1e-9", "< 1e-12", "0.00072", "1.5e-3", "7.2e-04", "lr 4e-3", "v1.2e-07abc"]
    assert [t for t in spared if NOISE_DIGITS.search(t)] == []


def test_no_output_prints_rounding_noise(notebook):
    """No committed output (text, HTML, stream, embedded Vega-Lite data) prints a noise-level value like 7.2e-07."""
    _, nb = notebook
    for i, c in enumerate(code_cells(nb), 1):
        for o in c.outputs:
            data = o.get("data", {})
            text = output_text(o) + "\n".join(json.dumps(v) for k, v in data.items() if k.endswith("json"))
            m = NOISE_DIGITS.search(text)
            assert not m, f"cell [{i}] prints {m.group(0)!r}: rounding noise; print a bound (precision.below)"


def test_every_widget_shown_has_its_state_saved(notebook):
    path, nb = notebook
    shown = {
        o.data[WIDGET_VIEW]["model_id"] for c in code_cells(nb) for o in c.outputs if WIDGET_VIEW in o.get("data", {})
    }
    if not shown:
        assert "widgets" not in nb.metadata, "widget state saved but no widget shown"
        return
    state = nb.metadata.widgets[WIDGET_STATE]["state"]
    assert shown <= set(state), f"widget views without saved state: {shown - set(state)}"


def test_ignored_outputs_are_marked_explained_and_followed_by_a_compared_cell(notebook):
    path, nb = notebook
    cells = code_cells(nb)
    for i, c in enumerate(cells):
        assert "NBVAL_IGNORE_OUTPUT" not in c.source, f"cell [{i + 1}]: mark it with the cell tag '{IGNORE_TAG}'"
        if not ignored(c):
            continue
        reason = c.metadata.get("ignore_output_reason", "")
        assert len(reason) > 10, f"cell [{i + 1}]: say why in metadata.ignore_output_reason"
        assert IGNORED_KINDS.search(c.source), f"cell [{i + 1}]: ignored output that is not a widget"
        assert i + 1 < len(cells), f"cell [{i + 1}] is last: nothing compared follows it"
        nxt = cells[i + 1]
        assert not ignored(nxt) and nxt.outputs, f"cell [{i + 2}] must be compared and show output"
        if any(WIDGET_VIEW in o.get("data", {}) for o in c.outputs):
            assert any("image/png" in o.get("data", {}) for o in nxt.outputs), (
                f"cell [{i + 2}] must draw the widget's default view (static fallback for nbviewer)"
            )
    widget_cells = [i for i, c in enumerate(cells) if any(WIDGET_VIEW in o.get("data", {}) for o in c.outputs)]
    for i in widget_cells:
        assert ignored(cells[i]), f"cell [{i + 1}] shows a widget but is compared by nbval"


def test_pre_commit_nbstripout_keeps_every_notebook_as_committed(tmp_path):
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert {"ruff-check", "ruff-format", "nbstripout"} <= set(hooks)
    entry = hooks["nbstripout"]["entry"].split()
    assert entry[0] == "nbstripout"
    nbstripout = shutil.which("nbstripout", path=str(Path(sys.executable).parent))
    if nbstripout is None:
        missing_tool("nbstripout is not installed: `make install` installs requirements-dev.txt")
    copies = []
    for p in NOTEBOOKS:
        copies.append(tmp_path / p.name)
        shutil.copy(p, copies[-1])
    subprocess.run([nbstripout, *entry[1:], *map(str, copies)], check=True)
    changed = [p.name for p, c in zip(NOTEBOOKS, copies) if p.read_bytes() != c.read_bytes()]
    assert not changed, (
        f"the pre-commit hook would rewrite {changed}: volatile metadata committed, or the hook strips too much"
    )


def exercises_and_solutions(nb) -> list[tuple[str, bool]]:
    """Each exercise of the notebook (its number, in order) and whether it has a <details> solution: one that
    follows it before the next exercise starts, or one whose summary names it ("Exercise 2: worked solution", as in
    the Solutions section at the end of a notebook)."""
    events, labelled = [], set()  # events: (cell, offset, exercise number or None for a solution)
    for i, c in enumerate(nb.cells):
        if c.cell_type != "markdown":
            continue
        events += [(i, m.start(), m.group(1) or m.group(2)) for m in EXERCISE.finditer(c.source)]
        for m in SOLUTION.finditer(c.source):
            named = LABELLED.search(m.group(0))
            if named:
                labelled.add(named.group(1))
            else:
                events.append((i, m.start(), None))
    events.sort()
    found = []
    for k, (_, _, number) in enumerate(events):
        if number is None:
            continue
        rest = [e[2] for e in events[k + 1 :]]
        until_next = rest[: next((j for j, e in enumerate(rest) if e is not None), len(rest))]
        found.append((number, len(until_next) > 0 or number in labelled))
    return found


def test_at_least_two_png_figures_in_the_committed_outputs(notebook):
    path, nb = notebook
    figures = sum("image/png" in o.get("data", {}) for c in code_cells(nb) for o in c.outputs)
    assert figures >= MIN_FIGURES, f"{path.name}: {figures} PNG figure(s) in the outputs, the standard asks >= 2"


def test_at_least_two_exercises_each_with_a_solution_to_reveal(notebook):
    path, nb = notebook
    found = exercises_and_solutions(nb)
    numbers = list(dict.fromkeys(n for n, _ in found))
    assert len(numbers) >= MIN_EXERCISES, f"{path.name}: exercises {numbers}; the standard asks >= 2"
    unsolved = [n for n, solved in found if not solved]
    assert not unsolved, f"{path.name}: exercise(s) {unsolved} without a <details><summary>…solution…</summary> below"


def test_a_widget_cell_followed_by_its_compared_static_view(notebook):
    """Every notebook has an interactive view: a kernel widget (interactive_plot, output ignored) or a client-side
    view (a Vega-Lite output, compared: it is deterministic). Either is followed by a compared cell with output,
    the static view that GitHub and nbval see."""
    path, nb = notebook
    cells = code_cells(nb)
    widget_cells = [i for i, c in enumerate(cells) if ignored(c) and "interactive_plot(" in c.source]
    view_cells = [i for i, c in enumerate(cells) if any(VEGALITE in o.get("data", {}) for o in c.outputs)]
    assert widget_cells or view_cells, (
        f"{path.name}: no widget cell (tag '{IGNORE_TAG}' and interactive_plot) and no client-side view"
    )
    for i in widget_cells + view_cells:
        nxt = cells[i + 1] if i + 1 < len(cells) else None
        assert nxt is not None and not ignored(nxt) and nxt.outputs, (
            f"{path.name} cell [{i + 1}]: the next code cell must be compared and show the view's default as a figure"
        )
    for i in view_cells:
        assert not ignored(cells[i]), f"{path.name} cell [{i + 1}]: a client-side view is compared"


def test_the_exercise_count_sees_headings_bold_leads_and_a_missing_solution():
    md = nbformat.v4.new_markdown_cell
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("## Exercises\n### Exercise 1 — write it\n<details><summary>Solution</summary>x</details>"),
        md("**Exercise 2 — predict.** Guess first.\n<details><summary>Hint</summary>y</details>"),
        md("### What a head writes — Exercise 3: one head\n(Exercise 4 is elsewhere.)"),
        md("<details>\n<summary>Worked solution</summary>z</details>"),
        md("**Exercise 5 — write it.** [Worked solution](#Solution-to-exercise-5)"),
        md("**Exercise 6 — and this.**"),
        md(
            "## Solutions\n### Solution to exercise 5\n<details><summary>Exercise 5: worked solution</summary>w</details>"
        ),
    ]
    assert exercises_and_solutions(nb) == [("1", True), ("2", False), ("3", True), ("5", True), ("6", False)]
