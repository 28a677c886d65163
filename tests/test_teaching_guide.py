"""The teaching guide (docs/teaching.md) agrees with the notebooks.

- Its minutes table and its exercise table are the ones tools/teaching_minutes.py computes from the notebooks' main
  lines now: a notebook whose words, code cells or exercises change enough to move a number fails here, and
  `python tools/teaching_minutes.py` prints the tables to paste between the guide's markers.
- It states the rates the tool uses.
- Its homework sets name real exercises, the full path's sets hold every exercise once, and each set's minutes are
  the sum of its exercises' minutes.
Each check is also run on a broken copy (a number changed, words added to a notebook, an exercise dropped) and must
fail there.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import teaching_minutes as tm  # noqa: E402

GUIDE = ROOT / "docs" / "teaching.md"
LABEL = re.compile(r"\b(\d\d)\.(\d)\b")
CORE = ("01", "02", "03", "04", "05", "07")  # the one-week path, as the guide's text names it


@pytest.fixture(scope="module")
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rows() -> list[tm.Estimate]:
    return tm.estimates()


def table_problems(text: str, rows) -> list[str]:
    """Each part of the guide that differs from what the tool writes, with the lines that differ."""
    problems = []
    for part, want in tm.parts(rows).items():
        got = tm.guide_part(text, part)
        if got != want:
            diff = [f"guide: {g}\n tool: {w}" for g, w in zip(got.splitlines(), want.splitlines()) if g != w]
            problems.append(f"{part} differs (python tools/teaching_minutes.py --write):\n" + "\n".join(diff))
    return problems


def homework(text: str) -> dict[str, list[tuple[list[str], int]]]:
    """{plan: [(exercise labels, minutes)]} from the homework tables of the guide's plans."""
    out: dict[str, list[tuple[list[str], int]]] = {}
    for name in tm.PLANS:
        for line in tm.guide_part(text, name).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| Set") and len(cells) == 4 and cells[3].isdigit():
                labels = [f"{a}.{b}" for a, b in LABEL.findall(cells[2])]
                out.setdefault(name, []).append((labels, int(cells[3])))
    return out


def homework_problems(text: str, rows) -> list[str]:
    """Homework sets that name no exercise, name one twice, or whose minutes are not the sum of their exercises';
    a two-week plan that leaves an exercise out; a one-week plan that is not the core path's exercises."""
    minutes = {f"{r.notebook[:2]}.{e.number}": e.minutes for r in rows for e in r.exercises}
    core = {x for x in minutes if x[:2] in CORE}
    sets = homework(text)
    problems = [] if set(sets) == set(tm.PLANS) else [f"homework tables for {sorted(sets)}, not {sorted(tm.PLANS)}"]
    for name, table in sets.items():
        labels = [label for got, _ in table for label in got]
        problems += [f"{name}: {x} is no exercise" for x in labels if x not in minutes]
        problems += [f"{name}: {x} twice" for x in set(labels) if labels.count(x) > 1]
        for got, total in table:
            want = sum(minutes.get(x, 0) for x in got)
            if total != want:
                problems.append(f"{name}: set {', '.join(got)} says {total} min, its exercises add up to {want}")
        want = set(minutes) if name == "two-weeks" else core
        if set(labels) != want:
            problems.append(f"{name}: missing {sorted(want - set(labels))}, extra {sorted(set(labels) - want)}")
    return problems


def test_tables_match_the_notebooks(guide, rows):
    assert table_problems(guide, rows) == []


def test_a_changed_number_in_the_guide_fails(guide, rows):
    row = next(line for line in tm.guide_part(guide, "minutes").splitlines() if line.startswith("| 03 "))
    total = int(re.search(r"\*\*(\d+)\*\*", row).group(1))
    broken = guide.replace(row, row.replace(f"**{total}**", f"**{total + 1}**"))
    assert broken != guide
    assert table_problems(broken, rows), "a guide with one total changed passed"


def test_more_words_in_a_notebook_fail(guide, rows, tmp_path):
    """A copy of notebook 03 with 200 more words in its main line reads 2 minutes longer (200, not 100: Python rounds
    half to even, so 100 more words can leave a rounded minute as it is), and the guide no longer matches."""
    path = tm.NOTEBOOKS[2]
    nb = nbformat.read(path, as_version=4)
    first_markdown = next(c for c in nb.cells if c.cell_type == "markdown")
    first_markdown.source += "\n\n" + " ".join(["word"] * 200)
    copy = tmp_path / path.name
    nbformat.write(nb, copy)
    changed = [tm.estimate(copy) if p == path else r for p, r in zip(tm.NOTEBOOKS, rows)]
    assert changed[2].total == rows[2].total + 2
    assert table_problems(guide, changed), "the guide still matched a notebook with 200 more words"


def test_exercises_are_found_and_sorted_by_kind(rows):
    """Every notebook has 2-3 exercises numbered 1..n, each with a checker; the kinds follow the '# your code' stubs
    (notebook 01's first exercise asks for code, its second for an answer)."""
    for r in rows:
        assert 2 <= len(r.exercises) <= 3, r.notebook
        assert [e.number for e in r.exercises] == list(range(1, len(r.exercises) + 1)), r.notebook
        assert all(e.checkers for e in r.exercises), r.notebook
    first = rows[0].exercises
    assert (first[0].writes_code, first[1].writes_code) == (True, False)
    assert [e.minutes for e in first] == [tm.MINUTES_PER_CODE_EXERCISE, tm.MINUTES_PER_ANSWER_EXERCISE]


def test_the_rates_are_stated(guide):
    for phrase in (
        f"{tm.WORDS_PER_MINUTE} words per minute",
        f"{tm.MINUTES_PER_CODE_CELL} minute per code cell",
        f"{tm.MINUTES_PER_CODE_EXERCISE} minutes per exercise that asks for code",
        f"{tm.MINUTES_PER_ANSWER_EXERCISE} minutes per exercise that asks for an answer",
    ):
        assert phrase in guide, f"the guide does not state the rate {phrase!r}"


def test_homework_sets_hold_real_exercises(guide, rows):
    assert homework_problems(guide, rows) == []


def test_the_plans_cover_their_notebooks():
    """The two-week labs take all ten notebooks once, in order; the one-week labs take the core path."""
    numbers = [p.name[:2] for p in tm.NOTEBOOKS]
    assert [n for lab in tm.PLANS["two-weeks"]["labs"] for n in lab] == numbers
    assert [n for lab in tm.PLANS["one-week"]["labs"] for n in lab] == list(CORE)
    for plan in tm.PLANS.values():
        assert [n for _, nbs in plan["sets"] for n in nbs] == [n for lab in plan["labs"] for n in lab]
        assert all(1 <= lab <= len(plan["labs"]) for lab, _ in plan["sets"])


def test_a_broken_homework_table_fails(guide, rows):
    line = next(x for x in guide.splitlines() if x.startswith("| Set") and "01.1" in x)
    dropped = guide.replace(line, line.replace("01.1, ", ""), 1)
    assert dropped != guide
    assert homework_problems(dropped, rows), "a homework set that lost an exercise (and kept its minutes) passed"


def test_the_guide_is_the_first_page_after_home(tmp_path):
    """tools/site.py lays the guide out as a page whose notebook links name the site's pages, and the home page's
    first toctree entry is that page."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_site_build", ROOT / "tools" / "site.py")
    site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site)
    src = site.layout(tmp_path / "src")
    page = (src / "teaching.md").read_text(encoding="utf-8")
    assert page.startswith("# Teaching guide")
    assert "](02_qkv_linear_layers.ipynb)" in page and "../notebooks/" not in page
    toctrees = re.findall(r"```\{toctree\}\n(.*?)```", (src / "index.md").read_text(encoding="utf-8"), re.S)
    entries = [line for line in toctrees[0].splitlines() if line and not line.startswith(":")]
    assert entries[0] == "teaching", toctrees[0]
