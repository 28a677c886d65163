"""Every notebook is a short main line that teaches one idea, then its Evidence part (docs/notebook_standard.md).

- The main line is every cell before the first markdown heading (level 1-3) containing the word "Evidence".
  It holds at most MAX_WORDS words of markdown (every whitespace-separated token) and MAX_CODE code cells, and ends with "## Summary", which points
  at the next notebook; all ten main lines together hold at most MAX_TOTAL words. Exercises sit in the main line.
- Each notebook's first cell lists the terms it introduces (**New terms:** a, b, c); docs/glossary.md maps each
  term to that notebook; a main line may not use a term a later notebook teaches unless the same paragraph
  says where it is taught ("notebook 05" or "(05)").
- A claim ID (B1, F4, ...) is explained where a notebook first names it: B for the blog, F for the forum.
- Links to headings (#anchors, in this notebook or another) resolve; every section of the Evidence part is
  linked from the main line.
- Lesson prose and lesson code comments carry no tooling words (test runners, CPU kernels, float bits).
- The main line speaks to a learner, not to a judge: no claim IDs (B1, F4, ...) and no verdict vocabulary in its
  markdown, code or text outputs, and at most MAX_ASSERTS asserts (checks of what the learner just computed);
  the verdicts and the asserts behind the lesson's numbers live in the Evidence part.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = ROOT / "docs" / "glossary.md"
MAX_WORDS, MAX_CODE, MAX_TOTAL = 2500, 30, 24000
EVIDENCE = re.compile(r"^#{1,3} .*\bEvidence\b", re.M)
SOLUTIONS = re.compile(r"## Solutions\b")  # the worked solutions, after the Evidence part
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CLAIM_ID = re.compile(r"\b[BF]\d{1,2}\b")
VERDICT_WORDS = re.compile(
    r"\bverdicts?\b|\bborderline\b|seed[- ]dependent|by construction|\bmargins?\b|\bcut-?offs?\b|\b\d/5\b"
    r"|\bstrictly\b|\bpractically\b",
    re.I,
)
MAX_ASSERTS = 5
TOOLING = re.compile(r"nbval|pytest|\btests/|float bits|kernel path|\bAVX|NBVAL|ATEN_|MKL_", re.I)


def read(path):
    return nbformat.read(path, as_version=4)


def split(nb):
    """(main line cells, evidence cells): the evidence starts at the first markdown cell with an Evidence heading."""
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown" and EVIDENCE.search(c.source):
            return nb.cells[:i], nb.cells[i:]
    return nb.cells, []


def prose(text: str) -> str:
    """Markdown as read: fenced code blocks removed (inline code and math count as words)."""
    return FENCE.sub("", text)


def words(text: str) -> int:
    """Every whitespace-separated token of the markdown, code blocks in it included: what a reader scrolls through
    (worked solutions therefore live in the Solutions section after the Evidence part, not in the main line)."""
    return len(text.split())


def anchor(heading: str) -> str:
    """JupyterLab's and nbconvert's anchor for a plain-text heading: the text with spaces as hyphens."""
    return re.sub(r"[*`]", "", heading).strip().replace(" ", "-")


def anchors(nb) -> set[str]:
    return {anchor(m.group(2)) for c in nb.cells if c.cell_type == "markdown" for m in HEADING.finditer(c.source)}


def number(path) -> int:
    return int(path.name[:2])


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", prose(text)) if p.strip()]


def glossary() -> dict[int, list[tuple[list[str], str]]]:
    """{notebook: [(alternatives, meaning)]} from the glossary's tables."""
    out: dict[int, list[tuple[list[str], str]]] = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"\d\d", cells[1]):
            alts = [a.strip().strip("*`") for a in cells[0].split(" / ") if a.strip()]
            out.setdefault(int(cells[1]), []).append((alts, cells[2]))
    return out


def term_pattern(term: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(s|es)?(?![\w-])", re.I)


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.name)
def notebook(request):
    return request.param, read(request.param)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_main_line_is_short_and_ends_with_its_summary(path):
    nb = read(path)
    main, evidence = split(nb)
    assert evidence, f"{path.name}: no heading with the word Evidence starts an evidence part"
    md = "\n\n".join(c.source for c in main if c.cell_type == "markdown")
    # the setup cell (course-setup, tools/launch_links.py) installs the package on Colab: not a step of the lesson
    n_words, n_code = words(md), sum(c.cell_type == "code" and c.get("id") != "course-setup" for c in main)
    assert n_words <= MAX_WORDS, f"{path.name}: main line has {n_words} words of prose (at most {MAX_WORDS})"
    assert n_code <= MAX_CODE, f"{path.name}: main line has {n_code} code cells (at most {MAX_CODE})"
    h2 = [
        m.group(2) for c in main if c.cell_type == "markdown" for m in HEADING.finditer(c.source) if m.group(1) == "##"
    ]
    assert h2 and h2[-1] == "Summary", f"{path.name}: the main line's last section is {h2[-1:]}, not Summary"
    summary = md.rsplit("## Summary", 1)[1]
    nxt = [p for p in NOTEBOOKS if number(p) == number(path) + 1]
    if nxt:
        assert nxt[0].name in summary, f"{path.name}: the summary does not link the next notebook {nxt[0].name}"
    else:
        assert re.search(r"end of the course|last notebook", summary, re.I), f"{path.name}: say the course ends"


def test_exercises_sit_in_the_main_line(notebook):
    path, nb = notebook
    _, evidence = split(nb)
    for c in evidence:
        if c.cell_type == "markdown":
            assert not re.search(r"^#{2,4} .*Exercise|^\*\*Exercise", c.source, re.M), (
                f"{path.name}: an exercise in the evidence part: {c.source[:80]!r}"
            )


def test_all_main_lines_together_stay_short():
    total = {
        p.name: words("\n\n".join(c.source for c in split(read(p))[0] if c.cell_type == "markdown")) for p in NOTEBOOKS
    }
    assert sum(total.values()) <= MAX_TOTAL, f"{sum(total.values())} words in all main lines: {total}"


def test_links_to_headings_resolve_and_every_evidence_section_is_linked(notebook):
    path, nb = notebook
    main, evidence = split(nb)
    own = anchors(nb)
    linked = set()
    for i, c in enumerate(nb.cells):
        if c.cell_type != "markdown":
            continue
        for target, frag in re.findall(r"\]\(((?:\d\d_[a-z0-9_]+\.ipynb)?)#([^)\s]+)\)", c.source):
            if target:
                assert (ROOT / "notebooks" / target).exists(), f"{path.name}: link to missing {target}"
                assert frag in anchors(read(ROOT / "notebooks" / target)), f"{path.name}: no #{frag} in {target}"
            else:
                assert frag in own, f"{path.name}: link #{frag} matches no heading (anchors: heading text, - for space)"
                if i < len(main):
                    linked.add(frag)
    solutions = next(
        (i for i, c in enumerate(evidence) if c.cell_type == "markdown" and SOLUTIONS.match(c.source)), None
    )
    for c in evidence[:solutions]:  # the Solutions section at the end is reached from each exercise instead
        if c.cell_type != "markdown":
            continue
        for m in HEADING.finditer(c.source):
            if len(m.group(1)) in (2, 3) and not EVIDENCE.search(m.group(0)):
                assert anchor(m.group(2)) in linked, (
                    f"{path.name}: evidence section {m.group(2)!r} is not linked from the main line "
                    f"(link it as ](#{anchor(m.group(2))}), or make it a #### sub-section)"
                )


def test_the_glossary_lists_each_notebooks_new_terms():
    terms = glossary()
    assert sorted(terms) == [number(p) for p in NOTEBOOKS], f"glossary sections: {sorted(terms)}"
    seen: dict[str, int] = {}
    for n, rows in terms.items():
        for alts, meaning in rows:
            assert len(meaning.split()) >= 4, f"{alts[0]}: say what it means"
            for a in alts:
                assert a.lower() not in seen, f"{a!r} taught in {seen.get(a.lower())} and {n}"
                seen[a.lower()] = n
    for p in NOTEBOOKS:
        first = read(p).cells[0].source
        m = re.search(r"^\*\*New terms:\*\* *(.+)$", first, re.M)
        assert m, f"{p.name}: the first cell needs a line '**New terms:** a, b, c'"
        listed = [t.strip().strip("*`").rstrip(".") for t in m.group(1).split(",")]
        expected = [alts[0] for alts, _ in terms[number(p)]]
        assert listed == expected, f"{p.name}: first cell lists {listed}, glossary has {expected}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_term_is_used_before_the_notebook_that_teaches_it(path):
    nb = read(path)
    later = [(alt, n) for n, rows in glossary().items() if n > number(path) for alts, _ in rows for alt in alts]
    main, _ = split(nb)
    for i, c in enumerate(main):
        if c.cell_type != "markdown":
            continue
        for para in paragraphs(c.source):
            for term, n in later:
                if term_pattern(term).search(para) and not re.search(rf"notebook {n:02d}|\({n:02d}\)|{n:02d}_", para):
                    pytest.fail(
                        f"{path.name} cell {i}: {term!r} (taught in notebook {n:02d}) used in {para[:120]!r}; "
                        f"say 'notebook {n:02d}' in the same paragraph or use a word taught already"
                    )


def test_a_claim_id_is_explained_where_it_is_first_named(notebook):
    path, nb = notebook
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    paras = paragraphs(text)
    for letter, word in (("B", "blog"), ("F", "forum")):
        hits = [i for i, p in enumerate(paras) if re.search(rf"\b{letter}\d+\b", p)]
        if hits:
            near = " ".join(paras[hits[0] : hits[0] + 2]).lower()
            assert word in near, f"{path.name}: first claim {letter}… ({paras[hits[0]][:80]!r}) does not say '{word}'"


def test_lessons_carry_no_tooling_words(notebook):
    path, nb = notebook
    main, _ = split(nb)
    for i, c in enumerate(main):
        if c.cell_type == "markdown":
            m = TOOLING.search(prose(c.source))
        else:
            m = TOOLING.search("\n".join(line for line in c.source.splitlines() if "#" in line))
        assert not m, f"{path.name} cell {i}: tooling word {m.group(0)!r} in the lesson"


def seen(cell) -> str:
    """What a reader of the cell sees: its source and, for code, its text outputs."""
    parts = [cell.source]
    for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
        parts.append(o.get("text", ""))
        parts += [o.get("data", {}).get(k, "") for k in ("text/plain", "text/html", "text/markdown")]
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def judge_talk(main) -> list[str]:
    """Where a main line talks like a judge: claim IDs, verdict words, more than MAX_ASSERTS asserts."""
    found = []
    for i, c in enumerate(main):
        text = seen(c)
        found += [f"cell {i}: claim ID {m.group(0)!r}" for m in CLAIM_ID.finditer(text)]
        found += [f"cell {i}: verdict word {m.group(0)!r}" for m in VERDICT_WORDS.finditer(text)]
    n = sum(
        line.lstrip().startswith("assert ") for c in main if c.cell_type == "code" for line in c.source.splitlines()
    )
    if n > MAX_ASSERTS:
        found.append(f"{n} asserts (at most {MAX_ASSERTS}: the checks behind the lesson belong in the Evidence part)")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_main_line_speaks_to_a_learner(path):
    found = judge_talk(split(read(path))[0])
    assert not found, f"{path.name}: the main line talks like a judge: " + "; ".join(found[:8])


def test_the_learner_rules_see_a_broken_copy():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    good = [md("# 99 — x"), code("x = 1\nassert x == 1"), md("## Summary\n\nThe query asks; the keys answer.")]
    assert judge_talk(good) == []
    out = code("print(v)")
    out.outputs = [nbformat.v4.new_output("stream", name="stdout", text="holds, 5/5 seeds\n")]
    for bad in (
        md("The blog's claim B3 is about keys."),
        md("The verdict is borderline."),
        md("Seed-dependent: it holds by construction."),
        out,
        code("\n".join(["assert True"] * (MAX_ASSERTS + 1))),
    ):
        assert judge_talk(good + [bad]), bad.source


def test_the_checks_see_a_bad_notebook():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(
        cells=[
            md("# 99 — x\n\n**New terms:** a"),
            md("## Part\n\nSee [the audit](#Evidence:-the-audit) and [nothing](#No-such-heading)."),
            code("x = 1  # float bits"),
            md("## Summary\n\nDone."),
            md("## Evidence: the audit\n\n### Claim B1 per seed"),
        ]
    )
    main, evidence = split(nb)
    assert len(main) == 4 and len(evidence) == 1
    assert "Evidence:-the-audit" in anchors(nb) and "No-such-heading" not in anchors(nb)
    assert TOOLING.search(main[2].source)
    assert words("one two\n```\nthree four\n```\n$x$ — five") == 9  # every token, code blocks too
    assert term_pattern("head").search("two heads") and not term_pattern("head").search("heading")
