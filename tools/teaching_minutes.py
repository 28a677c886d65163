"""Estimate a learner's minutes per notebook, at stated rates, for the teaching guide (docs/teaching.md).

    python tools/teaching_minutes.py            print the tables the guide carries (minutes, exercises, plans)
    python tools/teaching_minutes.py --write    write them into docs/teaching.md, between its markers
    python tools/teaching_minutes.py --run      also run each notebook once, in a fresh kernel, and print the seconds

The estimate reads each notebook's main line (every cell before its first Evidence heading: what a learner works
through) with the functions tests/test_notebook_standard.py uses to find it and count its words, and counts:
- reading: the main line's markdown words at WORDS_PER_MINUTE (technical prose with formulas, read with care);
- running: MINUTES_PER_CODE_CELL per code cell (run it, read its output or figure), the Colab setup cell not counted;
- exercises: each exercise (from a markdown cell whose heading or bold start is "Exercise N" to the link to its
  worked solution) costs
  MINUTES_PER_CODE_EXERCISE when one of its code cells asks the learner to write code (a "# your code" stub), else
  MINUTES_PER_ANSWER_EXERCISE (a prediction, a number or a choice to give).
The Evidence part and the worked solutions are not counted: they are for later reading.

--run executes a copy of each notebook with nbclient (fresh kernel, in order, as tools/execute.py does) and writes
the executed copies into a temporary folder, never back into notebooks/. It prints `uptime` before and after, as
other work on the machine slows the run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_notebook_standard import read, split, words  # noqa: E402  (one way to find a main line and count its words)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
GUIDE = ROOT / "docs" / "teaching.md"
WORDS_PER_MINUTE = 100
MINUTES_PER_CODE_CELL = 1
MINUTES_PER_CODE_EXERCISE = 15
MINUTES_PER_ANSWER_EXERCISE = 5
SETUP_ID = "course-setup"  # the Colab setup cell (tools/launch_links.py): not a step of the lesson

EXERCISE = re.compile(r"^(?:#{2,4} +|\*\*)Exercise (\d+)\b *(?:—|-)? *(.*?)(?:\*\*.*)?$", re.M)
SOLUTION_LINK = "(#Solution-to-exercise-"  # the link under every exercise to its worked solution
YOUR_CODE = re.compile(r"#\s*your code\b", re.I)
CHECKER = re.compile(r"\bex\.(check_\w+)\(")
# The guide's plans: labs (the lessons, in class) and homework sets (each the exercises of its notebooks).
PLANS = {
    "one-week": {  # the core path
        "labs": [["01", "02"], ["03", "04"], ["05", "07"]],
        "sets": [(1, ["01", "02"]), (2, ["03", "04"]), (3, ["05", "07"])],  # (due after lab, notebooks)
    },
    "two-weeks": {  # the full path
        "labs": [["01", "02"], ["03", "04"], ["05"], ["06", "07"], ["08", "09"], ["10"]],
        "sets": [(1, ["01", "02"]), (2, ["03", "04"]), (3, ["05"]), (4, ["06", "07"]), (5, ["08"]), (6, ["09", "10"])],
    },
}
PARTS = ("minutes", "exercises", *PLANS)
MARKERS = {part: (f"<!-- teaching-{part}:start -->", f"<!-- teaching-{part}:end -->") for part in PARTS}


@dataclass(frozen=True)
class Exercise:
    number: int
    title: str
    writes_code: bool
    checkers: tuple[str, ...]  # the checkers its cells call

    @property
    def minutes(self) -> int:
        return MINUTES_PER_CODE_EXERCISE if self.writes_code else MINUTES_PER_ANSWER_EXERCISE


@dataclass(frozen=True)
class Estimate:
    notebook: str  # the file name
    words: int
    code_cells: int
    exercises: tuple[Exercise, ...]
    checkers: tuple[str, ...]  # the course_utils.exercises checkers the main line calls, in order

    @property
    def reading(self) -> int:
        return round(self.words / WORDS_PER_MINUTE)

    @property
    def running(self) -> int:
        return self.code_cells * MINUTES_PER_CODE_CELL

    @property
    def exercise_minutes(self) -> int:
        return sum(e.minutes for e in self.exercises)

    @property
    def total(self) -> int:
        return self.reading + self.running + self.exercise_minutes


def exercises(main) -> list[Exercise]:
    """Each exercise of a main line: its number, title, whether it asks for code, and its checkers. An exercise's
    cells run from its markdown cell to the markdown cell that links its worked solution ("#Solution-to-exercise-"),
    or to the next exercise."""
    found: list[tuple[int, str, list]] = []
    current = None
    for cell in main:
        if cell.cell_type == "markdown":
            m = EXERCISE.search(cell.source)
            if m:
                current = []
                found.append((int(m.group(1)), m.group(2).strip().strip("*").strip().rstrip("."), current))
            elif SOLUTION_LINK in cell.source:
                current = None
        elif current is not None:
            current.append(cell.source)
    return [
        Exercise(
            n,
            title,
            any(YOUR_CODE.search(src) for src in cells),
            tuple(dict.fromkeys(name for src in cells for name in CHECKER.findall(src))),
        )
        for n, title, cells in found
    ]


def estimate(path: Path) -> Estimate:
    main, _ = split(read(path))
    md = "\n\n".join(c.source for c in main if c.cell_type == "markdown")
    code = [c for c in main if c.cell_type == "code" and c.get("id") != SETUP_ID]
    checkers = tuple(dict.fromkeys(name for c in code for name in CHECKER.findall(c.source)))
    return Estimate(path.name, words(md), len(code), tuple(exercises(main)), checkers)


def estimates(paths=None) -> list[Estimate]:
    return [estimate(p) for p in (paths or NOTEBOOKS)]


def table(rows: list[Estimate]) -> str:
    """The guide's minutes table (markdown), one row per notebook and the total."""
    lines = [
        "| Notebook | Main-line words | Code cells | Exercises (code + answer) | Reading | Running cells | Exercises "
        "| **Minutes** |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        code = sum(e.writes_code for e in r.exercises)
        lines.append(
            f"| {r.notebook[:2]} | {r.words} | {r.code_cells} | {code} + {len(r.exercises) - code} | {r.reading} "
            f"| {r.running} | {r.exercise_minutes} | **{r.total}** |"
        )
    total = sum(r.total for r in rows)
    lines.append(f"| all ten | | | | | | | **{total}** (about {total / 60:.1f} h) |")
    return "\n".join(lines)


def exercise_table(rows: list[Estimate]) -> str:
    """The guide's exercise table (markdown): one row per exercise, 'NN.k', its title, kind, minutes and checkers."""
    lines = ["| Exercise | Task | Kind | Minutes | Checker (`course_utils.exercises`) |", "|---|---|---|---:|---|"]
    for r in rows:
        nn = r.notebook[:2]
        for e in r.exercises:
            checkers = ", ".join(f"`nb{nn}.{c}`" for c in e.checkers)
            kind = "write code" if e.writes_code else "answer"
            lines.append(f"| {nn}.{e.number} | {e.title} | {kind} | {e.minutes} | {checkers} |")
    return "\n".join(lines)


def plan(rows: list[Estimate], name: str) -> str:
    """A plan's two tables (markdown): its labs with their lesson minutes (reading + cells), then its homework sets
    with their exercises and minutes."""
    by = {r.notebook[:2]: r for r in rows}
    lines = ["| Lab | Notebooks | Lesson minutes (reading + cells) |", "|---|---|---:|"]
    for i, nbs in enumerate(PLANS[name]["labs"], 1):
        lines.append(f"| {i} | {', '.join(nbs)} | {sum(by[n].reading + by[n].running for n in nbs)} |")
    lines += ["", "| Set | Due after lab | Exercises | Minutes |", "|---|---:|---|---:|"]
    for i, (lab, nbs) in enumerate(PLANS[name]["sets"], 1):
        labels = [f"{n}.{e.number}" for n in nbs for e in by[n].exercises]
        lines.append(f"| Set {i} | {lab} | {', '.join(labels)} | {sum(by[n].exercise_minutes for n in nbs)} |")
    notebooks = [n for nbs in PLANS[name]["labs"] for n in nbs]
    lessons = sum(by[n].reading + by[n].running for n in notebooks)
    homework = sum(by[n].exercise_minutes for _, nbs in PLANS[name]["sets"] for n in nbs)
    lines += [
        "",
        f"Per student: {lessons} minutes of lessons and {homework} of homework, {lessons + homework} minutes "
        f"(about {(lessons + homework) / 60:.1f} hours).",
    ]
    return "\n".join(lines)


def parts(rows: list[Estimate]) -> dict[str, str]:
    """Every part of the guide this tool writes: {marker name: markdown}."""
    return {"minutes": table(rows), "exercises": exercise_table(rows), **{name: plan(rows, name) for name in PLANS}}


def guide_part(text: str, part: str) -> str:
    """What the guide holds between its `<!-- teaching-PART:start -->` and `<!-- teaching-PART:end -->` markers."""
    start, end = MARKERS[part]
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"the guide has no {part} markers")
    return text[i + len(start) : j].strip()


def write_guide(path: Path, rows: list[Estimate]) -> bool:
    """Put every part between its markers in the guide at `path`; True if the file changed."""
    text = old = path.read_text(encoding="utf-8")
    for part, new in parts(rows).items():
        start, end = MARKERS[part]
        i, j = text.find(start), text.find(end)
        if i < 0 or j < i:
            raise SystemExit(f"{path}: no {part} markers")
        text = text[: i + len(start)] + "\n" + new + "\n" + text[j:]
    if text != old:
        path.write_text(text, encoding="utf-8")
    return text != old


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uptime: not available"


def run_once(path: Path, out: Path, timeout: int = 600) -> float:
    """Execute a copy of `path` in a fresh kernel (as tools/execute.py does) and write it into `out`; seconds."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, out / path.name)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="also time one run of each notebook (into a temp folder)")
    parser.add_argument("--write", action="store_true", help=f"write the tables into {GUIDE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    rows = estimates()
    if args.write:
        changed = write_guide(GUIDE, rows)
        print(f"{GUIDE.relative_to(ROOT)}: {'tables rewritten' if changed else 'already up to date'}")
        return 0
    print(
        f"Rates: reading {WORDS_PER_MINUTE} words per minute; {MINUTES_PER_CODE_CELL} minute per code cell; "
        f"{MINUTES_PER_CODE_EXERCISE} minutes per exercise that asks for code, {MINUTES_PER_ANSWER_EXERCISE} per "
        "exercise that asks for an answer.\n"
    )
    for part, text in parts(rows).items():
        print(MARKERS[part][0], text, MARKERS[part][1], "", sep="\n")
    if args.run:
        out = Path(tempfile.mkdtemp(prefix="teaching_run_"))
        print(f"\nOne run of each notebook (fresh kernel, in order), copies written to {out}")
        print("before:", uptime())
        total = 0.0
        for r, path in zip(rows, NOTEBOOKS):
            seconds = run_once(path, out)
            total += seconds
            print(f"{path.name}: {seconds:.1f} s of machine time against {r.total} estimated minutes", flush=True)
        print(f"all ten: {total:.0f} s")
        print("after:", uptime())
    return 0


if __name__ == "__main__":
    sys.exit(main())
