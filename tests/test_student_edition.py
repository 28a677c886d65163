"""The student edition (`make student`, tools/student_edition.py), built into a temporary folder from notebooks/.

Every notebook is there; no Solutions section, no solution heading and no link that resolves to nothing is left; no
output, execution count or widget state is left (the tool's docstring says why every output goes); every code cell
before the Solutions section (every exercise and every checker call) and every heading is kept; notebooks/ is not
touched. One student notebook runs in a fresh kernel and its checkers answer the blank answers with one line each
(slow tier). Broken copies prove the tool refuses to build: a renamed Solutions heading, a solution heading left
outside the section, a link to a removed heading that its rewriting does not reach.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from student_edition import NOTE, StudentEditionError, build, main

from course_utils.exercises.framework import NOT_ANSWERED

SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
LINK = re.compile(r"\]\(([^)\s]*)\)|href=[\"']([^\"']*)[\"']")
CHECKER = re.compile(r"\bex\.check_\w+\(")
PREDICTION = re.compile(r"^my_\w+ = None\b", re.M)  # a learner's blank guess or answer
# the links into the Solutions sections of notebooks/: "Solution to exercise N", "Solutions", 03's prediction
SOLUTION_LINK = re.compile(r"\[([^\]]*)\]\(#(?:Solution-to-exercise-\d|Solutions|The-starting-weights-prediction)\)")
RUN = "01_sentence_vectors.ipynb"  # the quickest notebook with exercise checkers (about 17 s on 2 cores)


def read(path):
    return nbformat.read(path, as_version=4)


def heads(nb) -> list[tuple[int, str]]:
    """(level, text) of every markdown heading outside fenced code, in order."""
    return [
        (len(m.group(1)), m.group(2))
        for c in nb.cells
        if c.cell_type == "markdown"
        for m in HEADING.finditer(FENCE.sub("", c.source))
    ]


def anchor(text: str) -> str:
    return re.sub(r"[*`]", "", text).strip().replace(" ", "-")


def before_solutions(nb):
    """The cells before the `## Solutions` heading (in all ten notebooks it opens its own cell)."""
    i = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Solutions"))
    return nb.cells[:i]


def digest(paths) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """{name: (source notebook, student notebook, its path)}, built once from a snapshot of notebooks/ (the
    comparisons stay exact while notebooks/ is being edited); the snapshot byte for byte as before."""
    src = tmp_path_factory.mktemp("notebooks")
    for p in SOURCES:
        shutil.copy2(p, src / p.name)
    sources = sorted(src.glob("*.ipynb"))
    before = digest(sources)
    out = tmp_path_factory.mktemp("student")
    written = build(src, out)
    assert digest(sources) == before, "building the edition changed the notebooks it read"
    assert all(p.parent == out / "notebooks" for p in written)
    return {p.name: (read(src / p.name), read(p), p) for p in written}


def test_every_notebook_is_there(edition):
    assert len(SOURCES) == 10
    assert sorted(edition) == [p.name for p in SOURCES]


def test_no_solutions_are_left(edition):
    for name, (source, student, _) in edition.items():
        assert any(text == "Solutions" for _, text in heads(source)), f"{name}: the source has no Solutions section"
        assert not [t for _, t in heads(student) if re.search(r"solution", t, re.I)], f"{name}: a solution heading"
        for c in student.cells:
            assert "Solution to exercise" not in c.source, f"{name}: {c.source[:80]!r}"
            assert not re.search(r"<summary>[^<]*solution", c.source, re.I), f"{name}: {c.source[:80]!r}"
        removed = len(source.cells) - len(student.cells)
        assert removed == len(source.cells) - len(before_solutions(source)), f"{name}: removed {removed} cells"


def test_every_link_resolves_in_the_edition(edition):
    own = {name: {anchor(t) for _, t in heads(student)} for name, (_, student, _) in edition.items()}
    checked = 0
    for name, (_, student, _) in edition.items():
        for c in student.cells:
            if c.cell_type != "markdown":
                continue
            for m in LINK.finditer(c.source):
                target = m.group(1) or m.group(2)
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                file, _, frag = target.partition("#")
                assert not file or file in own, f"{name}: a link to {target!r}, no such notebook in the edition"
                if frag:
                    assert frag in own[file or name], f"{name}: a dead link {target!r}"
                checked += 1
    assert checked > 100  # the notebooks link their own headings and each other's


def test_links_to_solutions_become_words(edition):
    for name, (source, student, _) in edition.items():
        links = sum(len(SOLUTION_LINK.findall(c.source)) for c in source.cells if c.cell_type == "markdown")
        notes = sum(c.source.count(NOTE) for c in student.cells if c.cell_type == "markdown")
        assert links > 0 and notes == links, f"{name}: {links} links to the solutions, {notes} rewritten"
    _, student01, _ = edition["01_sentence_vectors.ipynb"]
    assert any("Worked solution (in the instructor edition)" in c.source for c in student01.cells)


def test_no_outputs_are_left(edition):
    for name, (source, student, _) in edition.items():
        code = [c for c in student.cells if c.cell_type == "code"]
        assert code and all(c.outputs == [] and c.execution_count is None for c in code), name
        assert "widgets" not in student.metadata, name
        assert student.metadata.kernelspec == source.metadata.kernelspec, name
    # the cell after each prediction (`my_... = None`): committed with outputs that may give the answer, shown empty
    after_prediction = 0
    for name, (source, student, _) in edition.items():
        code = [c for c in source.cells if c.cell_type == "code"]
        cleared = {c.get("id"): c.outputs for c in student.cells if c.cell_type == "code"}
        for guess, shown in zip(code, code[1:]):
            if PREDICTION.search(guess.source) and shown.outputs:
                assert cleared[shown.get("id")] == [], name
                after_prediction += 1
    assert after_prediction >= 10


def test_every_exercise_and_checker_call_is_kept(edition):
    for name, (source, student, _) in edition.items():
        kept = before_solutions(source)
        want = [(c.get("id"), c.source) for c in kept if c.cell_type == "code"]
        got = [(c.get("id"), c.source) for c in student.cells if c.cell_type == "code"]
        assert got == want, f"{name}: the code cells before the Solutions section are not kept as they are"
        assert len(CHECKER.findall("".join(s for _, s in got))) >= 2, f"{name}: fewer than two checker calls"
        lesson = heads(nbformat.v4.new_notebook(cells=kept))
        assert heads(student) == lesson, f"{name}: a heading outside the Solutions section went"
        exercises = [c.source for c in kept if c.cell_type == "markdown" and "Exercise" in c.source]
        in_student = [c.source for c in student.cells if c.cell_type == "markdown" and "Exercise" in c.source]
        assert len(in_student) == len(exercises) > 0, name
        for a, b in zip(exercises, in_student):  # the same text, links to the solutions aside
            assert SOLUTION_LINK.sub(r"\1", a).replace(" " + NOTE, "") == b.replace(" " + NOTE, ""), name


@pytest.mark.slow
def test_a_student_notebook_runs_and_its_checkers_answer(edition):
    """01 in a fresh kernel, as tools/execute.py runs it: no error, each checker says its answer is not written yet."""
    _, _, path = edition[RUN]
    nb = read(path)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    replies = [
        "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for c in nb.cells
        if c.cell_type == "code" and CHECKER.search(c.source)
    ]
    assert len(replies) >= 2
    for reply in replies:
        assert reply.startswith(NOT_ANSWERED) and reply.count("\n") == 1, reply


def broken_copy(tmp_path, name: str, edit) -> Path:
    """notebooks/ copied to tmp_path/src, with `edit(nb)` applied to notebook `name`."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "notebooks", src, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    nb = read(src / name)
    edit(nb)
    nbformat.write(nb, src / name)
    return src


def test_a_renamed_solutions_heading_fails(tmp_path, capsys):
    def rename(nb):
        for c in nb.cells:
            c.source = c.source.replace("## Solutions", "## Worked answers")

    src = broken_copy(tmp_path, "03_scaled_dot_product_attention.ipynb", rename)
    with pytest.raises(StudentEditionError, match=r"03_scaled_dot_product_attention\.ipynb: no '## Solutions' heading"):
        build(src, tmp_path / "out")
    assert not (tmp_path / "out").exists(), "a failed build wrote something"
    assert main(["--src", str(src), "--out", str(tmp_path / "out")]) == 1  # what `make student` runs: it stops
    assert "no '## Solutions' heading" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_edition_is_never_written_into_notebooks(tmp_path):
    with pytest.raises(StudentEditionError, match="the course's own"):
        build(ROOT / "notebooks", ROOT)
    with pytest.raises(StudentEditionError, match="the course's own"):
        build(tmp_path, ROOT)


def test_a_solution_left_outside_the_section_fails(tmp_path):
    def leave(nb):  # a worked solution pasted into the Summary, and a raw HTML link the rewriting does not read
        i = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Summary"))
        nb.cells[i].source += '\n\n### Solution to exercise 1\n\nSee <a href="#Solution-to-exercise-2">there</a>.'

    src = broken_copy(tmp_path, "02_qkv_linear_layers.ipynb", leave)
    with pytest.raises(StudentEditionError) as failed:
        build(src, tmp_path / "out")
    message = str(failed.value)
    assert "02_qkv_linear_layers.ipynb cell" in message
    assert "a solution heading is left: '### Solution to exercise 1'" in message
    assert "a link to a removed solution is left: '#Solution-to-exercise-2'" in message
    assert not (tmp_path / "out").exists()
