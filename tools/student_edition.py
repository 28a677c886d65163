"""Build the student edition of the course: the notebooks without their worked solutions and without outputs.

    python tools/student_edition.py [--out build/student]      (what `make student` runs)

Every notebook of notebooks/ (NN_*.ipynb) is written to <out>/notebooks/ under the same name; notebooks/ is only read.
In each copy:

- the `## Solutions` section goes: its heading and every cell after it up to the next heading of the same or a higher
  level (`#` or `##`), or the end of the notebook. The Evidence part stays: it is the audit behind the lesson.
- every link to a heading that went (`[Worked solution](#Solution-to-exercise-1)`, in this notebook or from another
  one) becomes its words and "(in the instructor edition)", so no link is dead; a link that leaves the notebooks
  folder (`../README.md#...`) becomes its words and where that is ("(in the course's README.md)"): the copies sit in
  another folder, where the relative path would point at nothing.
- every output and execution count is cleared, and the saved widget state (notebook metadata `widgets`) with them;
  the rest of the notebook metadata (kernelspec, language_info) and every cell's tags and metadata stay.

Why every output, not only the checker cells' outputs: a prediction exercise ("predict before you look",
`my_rotation_guess = None` and `ex.check_rotation_guess(...)`) is answered by the cells right below it, whose
committed outputs print the very numbers the learner is asked to predict (notebook 09's scores after the rotation,
notebook 07's toy printing the same attention weights for both word orders). Clearing only the checker cells' outputs
would leave those; clearing a hand-picked list of cells below each prediction cannot be proven complete and would go
stale with every edit. A learner of this edition runs the notebook (offline, about 20 s or less each on 2 cores, as
CONTRIBUTING.md asks), so the figures come back on the first run; a reader who wants the figures without running
has the instructor edition (notebooks/, the site, the HTML export). The widget state goes for the same reason as in
tools/execute.py: without the outputs no view refers to it.

The build checks its own work and fails, writing nothing, when a notebook has no `## Solutions` heading, or when a
copy still holds a solution marker (a markdown heading with the word Solution(s), "Solution to exercise", a
`<summary>... solution</summary>` block), a link to a removed heading, a link that resolves to nothing in the
edition, or an output.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = "Solutions"  # the heading text of the section that goes: "## Solutions"
SOLUTIONS_LEVEL = 2
NOTE = "(in the instructor edition)"  # what a link to a removed heading becomes: its words, then this
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# [words](target) with a relative target; http(s), mailto and the like are left alone
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
HREF = re.compile(r"""href=["']([^"']*)["']""")
NOTEBOOK_LINK = re.compile(r"(\d\d_[A-Za-z0-9_]+\.ipynb)?(?:#(.*))?")
# what a worked solution looks like outside a heading (a heading with the word Solution(s) is one too, in markdown)
MARKERS = re.compile(r"solution to exercise|<summary>[^<]*\bsolutions?\b[^<]*</summary>", re.I)
SOLUTION_HEADING = re.compile(r"\bsolutions?\b", re.I)


class StudentEditionError(RuntimeError):
    """The edition could not be built, or a built copy still holds what it must not; the message says where."""


def anchor(heading: str) -> str:
    """JupyterLab's and nbconvert's anchor for a plain-text heading: the text with spaces as hyphens (as
    tests/test_notebook_standard.py computes it)."""
    return re.sub(r"[*`]", "", heading).strip().replace(" ", "-")


def _blank_fences(text: str) -> str:
    """text with its fenced code blocks blanked (same length, newlines kept): a `# comment` in one is no heading."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def headings(source: str) -> list[tuple[int, str, int]]:
    """(level, text, offset in source) of every markdown heading outside fenced code."""
    return [(len(m.group(1)), m.group(2), m.start()) for m in HEADING.finditer(_blank_fences(source))]


def anchors(nb) -> set[str]:
    return {anchor(text) for c in nb.cells if c.cell_type == "markdown" for _, text, _ in headings(c.source)}


def solutions_section(nb, name: str) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """Where the Solutions section starts, (cell, offset of its heading), and where it ends, (cell, offset of the next
    heading of its level or higher), or None when it runs to the end of the notebook."""
    start = None
    for i, c in enumerate(nb.cells):
        if c.cell_type != "markdown":
            continue
        for level, text, offset in headings(c.source):
            if start is None and level == SOLUTIONS_LEVEL and text.strip() == SOLUTIONS:
                start = (i, offset)
            elif start is not None and level <= SOLUTIONS_LEVEL:
                return start, (i, offset)
    if start is None:
        raise StudentEditionError(
            f"{name}: no '{'#' * SOLUTIONS_LEVEL} {SOLUTIONS}' heading: its worked solutions cannot be found, so "
            "nothing would be removed (give the section that heading, or change SOLUTIONS in tools/student_edition.py)"
        )
    return start, None


def strip_solutions(nb, name: str) -> set[str]:
    """Remove the Solutions section from nb in place; returns the anchors of the headings removed with it. Text before
    the heading in its cell stays, and so does the cell with the next `#`/`##` heading, from that heading on."""
    (i0, off0), end = solutions_section(nb, name)
    i1, off1 = end if end else (len(nb.cells) - 1, None)
    removed = []
    for i in range(i0, i1 + 1):
        c = nb.cells[i]
        if c.cell_type == "markdown":
            lo = off0 if i == i0 else 0
            hi = off1 if i == i1 and off1 is not None else len(c.source)
            removed.append(c.source[lo:hi])
    head, tail = nb.cells[i0], nb.cells[i1]
    before, after = head.source[:off0].rstrip(), tail.source[off1:] if off1 is not None else ""
    kept = []
    if before:  # the cell keeps its id and metadata
        head.source = before
        kept.append(head)
    if after and i1 == i0:  # the section and the next heading share one cell
        kept.append(nbformat.v4.new_markdown_cell(after))
    elif after:
        tail.source = after
        kept.append(tail)
    nb.cells[i0 : i1 + 1] = kept
    gone = {anchor(text) for part in removed for _, text, _ in headings(part)}
    return gone - anchors(nb)  # a heading whose twin stays keeps its anchor


def rewrite_links(nb, gone: dict[str, set[str]], own: str) -> int:
    """Links to removed headings (gone: {notebook file: anchors removed}) and links out of the notebooks folder become
    plain words; returns how many links were rewritten."""
    count = 0

    def replace(m: re.Match) -> str:
        nonlocal count
        words, target = m.group(1), m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
            return m.group(0)
        if target.startswith("../"):
            count += 1
            return f"{words} (in the course's {target.split('#')[0].removeprefix('../')})"
        parts = NOTEBOOK_LINK.fullmatch(target)
        if parts and parts.group(2) is not None and parts.group(2) in gone.get(parts.group(1) or own, set()):
            count += 1
            return f"{words} {NOTE}"
        return m.group(0)

    for c in nb.cells:
        if c.cell_type == "markdown":
            c.source = LINK.sub(replace, c.source)
    return count


def clear_outputs(nb) -> None:
    """No outputs, no execution counts, no saved widget state; the rest of the metadata stays."""
    nb.metadata.pop("widgets", None)
    for c in nb.cells:
        c.get("metadata", {}).pop("execution", None)
        if c.cell_type == "code":
            c.outputs = []
            c.execution_count = None


def problems(nb, name: str, gone: dict[str, set[str]], edition: dict[str, set[str]]) -> list[str]:
    """What a built copy still holds that it must not (edition: {notebook file: its anchors in the edition})."""
    found = []
    for i, c in enumerate(nb.cells):
        where = f"{name} cell {i}"
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None):
            found.append(f"{where}: an output or execution count is left")
        m = MARKERS.search(c.source)
        if m:
            line = c.source[c.source.rfind("\n", 0, m.start()) + 1 :].split("\n")[0]
            found.append(f"{where}: a solution marker is left: {line[:80]!r}")
        if c.cell_type != "markdown":
            continue
        for level, text, _ in headings(c.source):
            if SOLUTION_HEADING.search(text):
                found.append(f"{where}: a solution heading is left: {'#' * level + ' ' + text!r}")
        targets = [t for _, t in LINK.findall(c.source)] + HREF.findall(c.source)
        for target in targets:
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            parts = NOTEBOOK_LINK.fullmatch(target)
            if not parts:
                found.append(f"{where}: a link outside the edition is left: {target!r}")
                continue
            file, frag = parts.group(1) or name, parts.group(2)
            if file not in edition:
                found.append(f"{where}: a link to a notebook not in the edition: {target!r}")
            elif frag is not None and frag in gone.get(file, set()):
                found.append(f"{where}: a link to a removed solution is left: {target!r}")
            elif frag is not None and frag not in edition[file]:
                found.append(f"{where}: a link to no heading: {target!r}")
    if "widgets" in nb.metadata:
        found.append(f"{name}: saved widget state is left")
    return found


def build(src: Path = ROOT / "notebooks", out: Path = ROOT / "build" / "student") -> list[Path]:
    """Write the student edition of every NN_*.ipynb in src to out/notebooks/ and return the paths written.
    Everything is built and checked in memory first: on any StudentEditionError nothing is written."""
    src, target = Path(src).resolve(), (Path(out) / "notebooks").resolve()
    if target in (src, (ROOT / "notebooks").resolve()) or src in target.parents:
        raise StudentEditionError(f"the edition would be written into {target}, the course's own; choose another --out")
    paths = sorted(src.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise StudentEditionError(f"no notebooks (NN_*.ipynb) in {src}")
    books = {p.name: nbformat.read(p, as_version=4) for p in paths}
    gone = {name: strip_solutions(nb, name) for name, nb in books.items()}
    for name, nb in books.items():
        rewrite_links(nb, gone, name)
        clear_outputs(nb)
    edition = {name: anchors(nb) for name, nb in books.items()}
    found = [line for name, nb in books.items() for line in problems(nb, name, gone, edition)]
    if found:
        raise StudentEditionError("the student edition still holds what it must not:\n  " + "\n  ".join(found))
    for nb in books.values():
        nbformat.validate(nb)
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("[0-9][0-9]_*.ipynb"):  # a notebook renamed or removed since the last build
        if stale.name not in books:
            stale.unlink()
    for name, nb in books.items():
        nbformat.write(nb, target / name)
    return [target / name for name in books]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--src", type=Path, default=ROOT / "notebooks", help="the notebooks to copy (default notebooks/)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "student", help="default build/student")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        written = build(args.src, args.out)
    except StudentEditionError as e:
        print(f"student edition: {e}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in written) / 1e6
    print(
        f"student edition: {len(written)} notebooks in {args.out / 'notebooks'}, {size:.2f} MB, "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
