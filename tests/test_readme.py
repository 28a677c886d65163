"""The README's notebook map and claims ledgers stay true to the notebooks.

The full ledger (docs/claims_ledger.md) has rows like:
| B8 | claim in our words | [07](../notebooks/07_word_order_and_position.ipynb) › "Claim B8 — …" | 5/5 | **false** … | real model |
where the last column is the verdict on the pretrained model of notebook 10 ("–" where 10 does not ask).
The README's ledger gives each of those rows one line: | B8 | the claim, in brief | verdict | evidence |.
Each row of either must name an existing notebook and a markdown heading in it, and a code cell after that
heading must contain an `assert`; each README verdict uses only verdict words and seed counts its full rows use.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FULL = (ROOT / "docs" / "claims_ledger.md").read_text(encoding="utf-8")  # the full ledger, every part of each verdict
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CLAIM_IDS = [f"B{i}" for i in range(1, 17)] + [f"F{i}" for i in range(1, 14)]


def readme_ledger() -> str:
    return README.split("## Claims ledger", 1)[1].split("\n## ", 1)[0]


def ledger_rows(section: str = FULL) -> dict[str, list[str]]:
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"[BF]\d+", cells[0]):
            rows.setdefault(cells[0], []).append(line)
    return rows


@pytest.mark.parametrize("section", [FULL, readme_ledger()], ids=["full", "README"])
def test_every_claim_id_has_a_ledger_row(section):
    rows = ledger_rows(section)
    assert sorted(rows, key=CLAIM_IDS.index) == CLAIM_IDS
    assert [len(v) for v in rows.values()] == [len(v) for v in ledger_rows().values()]  # the same rows, row by row


@pytest.mark.parametrize("section", [FULL, readme_ledger()], ids=["full", "README"])
@pytest.mark.parametrize("claim", CLAIM_IDS)
def test_ledger_row_points_at_an_asserted_cell(claim, section):
    for line in ledger_rows(section)[claim]:  # the verdict is the last but one column in both ledgers
        verdict = line.strip().strip("|").split("|")[-2].lower()
        assert re.search(r"\b(holds|false|borderline|seed-dependent)\b", verdict), (
            f"{claim}: verdict must be holds / holds only if … / false / borderline / seed-dependent"
        )
        refs = re.findall(r"\((?:\.\./)?notebooks/(\d\d_[a-z0-9_]+\.ipynb)\)[^\"“]*[\"“]([^\"”]+)[\"”]", line)
        assert refs, f'{claim}: no (notebooks/…ipynb) "heading" reference in {line!r}'
        for name, heading in refs:
            cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
            idx = [
                i
                for i, c in enumerate(cells)
                if c["cell_type"] == "markdown"
                and any(
                    line.lstrip("#").strip() == heading
                    for line in "".join(c["source"]).splitlines()
                    if line.startswith("#")
                )
            ]
            assert idx, f"{claim}: heading {heading!r} not found in {name}"
            following = []
            for c in cells[idx[0] + 1 :]:
                if c["cell_type"] == "markdown" and "".join(c["source"]).lstrip().startswith("#"):
                    break
                following.append(c)
            assert any(
                c["cell_type"] == "code" and re.search(r"^\s*assert\b", "".join(c["source"]), re.M) for c in following
            ), f"{claim}: no assert under {heading!r} in {name}"


# Claims whose verdict rests on a trained model: their ledger rows say on how many of the shipped seeds it holds (or
# that a part holds by construction), and on which model.
TRAINED_MODEL_CLAIMS = {
    "B2",
    "B5",
    "B6",
    "B8",
    "B9",
    "B10",
    "B12",
    "F1",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
}
# The blog's claims about its trained model: judged on the blog model first (the course model may follow).
BLOG_MODEL_CLAIMS = {"B2", "B5", "B6", "B8", "B9", "B10", "B12"}


def seeds_cell_problems(claim: str, seeds: str, n_seeds: int) -> list[str]:
    """What is wrong with one row's seeds cell: every k/n needs n = the number of shipped seeds and k <= n; a
    trained-model claim needs a k/n or "by construction"; any other claim "–" (or a count)."""
    counts = re.findall(r"\b(\d)/(\d)\b", seeds)
    problems = [f"{claim}: {k}/{n} in {seeds!r}" for k, n in counts if int(n) != n_seeds or int(k) > n_seeds]
    if claim in TRAINED_MODEL_CLAIMS and not counts and "by construction" not in seeds:
        problems.append(f"{claim}: no seed count or 'by construction' in {seeds!r}")
    if claim not in TRAINED_MODEL_CLAIMS and not counts and seeds not in ("–", "-"):
        problems.append(f"{claim}: seeds cell {seeds!r}")
    return problems


def test_ledger_has_a_seeds_column_with_k_of_n_for_trained_model_claims():
    from course_utils.training.zoo import SEEDS

    header = next(line for line in FULL.splitlines() if line.startswith("| ID"))
    columns = [c.strip() for c in header.strip().strip("|").split("|")]
    assert columns[-3] == "seeds", columns
    problems = []
    for claim, lines in ledger_rows().items():
        for line in lines:
            seeds = [c.strip() for c in line.strip().strip("|").split("|")][-3]
            problems += seeds_cell_problems(claim, seeds, len(SEEDS))
    assert problems == []
    # the check can fail: a seed count over another number of seeds, a trained-model claim without a count
    assert seeds_cell_problems("B5", "4/6", 5) and seeds_cell_problems("B5", "–", 5)
    assert seeds_cell_problems("B4", "all", 5) and not seeds_cell_problems("F2", "–", 5)


def test_every_trained_model_verdict_names_its_model_and_the_blog_model_comes_first():
    for claim, lines in ledger_rows().items():
        for line in lines:
            verdict = [c.strip() for c in line.strip().strip("|").split("|")][-2]
            if claim in TRAINED_MODEL_CLAIMS:
                assert "blog model" in verdict or "course model" in verdict, f"{claim}: which model? {verdict[:80]!r}"
            if claim in BLOG_MODEL_CLAIMS:
                assert "blog model" in verdict, f"{claim}: a blog claim is judged on the blog model first"
                course = verdict.find("course model")
                assert course == -1 or verdict.index("blog model") < course, f"{claim}: the blog model comes first"


# Claims notebook 10 asks of the pretrained all-MiniLM-L6-v2: their "real model" cell gives a verdict there.
REAL_MODEL_CLAIMS = {"B1", "B5", "B8", "F4", "F5", "F6", "F7"}
REAL_NOTEBOOK = "10_a_real_pretrained_transformer.ipynb"


def test_ledger_has_a_real_model_column_with_verdicts_from_notebook_10():
    header = next(line for line in FULL.splitlines() if line.startswith("| ID"))
    columns = [c.strip() for c in header.strip().strip("|").split("|")]
    assert columns[-1] == "real model (10)" and columns[-2] == "verdict", columns
    asked = set()
    for claim, lines in ledger_rows().items():
        for line in lines:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == len(columns), f"{claim}: {len(cells)} cells, header has {len(columns)}"
            real = cells[-1]
            if real in ("–", "-"):
                continue
            asked.add(claim)
            assert f"(../notebooks/{REAL_NOTEBOOK})" in real, f"{claim}: the real-model cell must cite notebook 10"
            assert re.search(r"\b(holds|false)\b", real.lower()), f"{claim}: real-model verdict must say holds / false"
            assert not re.search(r"\d/\d seeds", real), f"{claim}: one published model, no seed count"
    assert asked == REAL_MODEL_CLAIMS, asked ^ REAL_MODEL_CLAIMS


# ---- the prose under the ledger uses the rows' own verdict words ----

VERDICT_PHRASES = ("holds by construction", "holds only if", "seed-dependent", "borderline", "holds", "false")
LOOSE_WORDS = re.compile(r"\b(true|untrue|wrong|right|correct|incorrect|confirmed|refuted)\b", re.I)


def prose_verdict_problems(section: str) -> list[str]:
    """Each sentence of a ledger's prose (outside the table) that names a claim ID and gives a verdict
    must use a bold verdict phrase that the named claim's rows use too (the ID written nearest before it, else the
    first after it); a claim is never called "true" / "wrong" in prose instead."""
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"[BF]\d+", cells[0]):
            rows.setdefault(cells[0], []).append(" ".join(cells[-3:]).lower())
    prose = " ".join(line for line in section.splitlines() if not line.lstrip().startswith("|"))
    problems = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*(])", prose):
        ids = [(m.start(), m[0]) for m in re.finditer(r"\b[BF]\d{1,2}\b", sentence)]
        if not ids:
            continue
        if LOOSE_WORDS.search(sentence):
            problems.append(f"{LOOSE_WORDS.search(sentence)[0]!r} instead of a verdict word: {sentence[:90]!r}")
        for m in re.finditer(r"\*\*([^*]+)\*\*", sentence):
            phrase = next((p for p in VERDICT_PHRASES if m[1].lower().startswith(p)), None)
            if phrase is None:
                continue
            before = [i for pos, i in ids if pos < m.start()]
            claim = before[-1] if before else ids[0][1]
            if claim not in rows:
                problems.append(f"{claim} has no ledger row: {sentence[:90]!r}")
            elif not any(f"**{phrase}" in r for r in rows[claim]):
                problems.append(f"{claim}: prose says **{phrase}**, its rows do not: {sentence[:90]!r}")
    return problems


@pytest.mark.parametrize("section", [FULL, readme_ledger()], ids=["full", "README"])
def test_the_prose_under_the_ledger_uses_the_rows_verdict_words(section):
    assert prose_verdict_problems(section) == []


def test_the_prose_check_catches_a_contradiction():
    """A broken copy: a sentence that calls B9 true, and one that gives F7 a verdict its rows do not give."""
    table_end = FULL.index("\n\n", FULL.index("| ID |"))
    broken = (
        FULL[:table_end]
        + "\n\nSo B9 is true as a statement about vectors. F7 **holds by construction**."
        + FULL[table_end:]
    )
    problems = prose_verdict_problems(broken)
    assert any("'true' instead of a verdict word" in p for p in problems)
    assert any(p.startswith("F7: prose says **holds by construction**") for p in problems)


# ---- the README's ledger: one line per row, in the full rows' own words ----

VERDICT_WORDS = re.compile(r"holds by construction|holds only if|seed-dependent|borderline|holds|false|set aside")
MAX_VERDICT_WORDS = 25  # a teacher reads the whole table in two minutes


def short_row_problems(short: str, full_rows: list[str]) -> list[str]:
    """What is wrong with one README ledger line, beside the full rows of its claim: too long a verdict, no verdict
    word, a verdict word or a seed count (k/5) the full rows do not use."""
    cells = [c.strip() for c in short.strip().strip("|").split("|")]
    verdict, full = cells[2], " ".join(full_rows).lower()
    problems = []
    if len(verdict.split()) > MAX_VERDICT_WORDS:
        problems.append(f"{cells[0]}: {len(verdict.split())} words in its verdict (at most {MAX_VERDICT_WORDS})")
    said = VERDICT_WORDS.findall(verdict.lower())
    if not said:
        problems.append(f"{cells[0]}: no verdict word in {verdict!r}")
    problems += [f"{cells[0]}: says {w!r}, its full rows do not" for w in said if w not in full]
    problems += [
        f"{cells[0]}: says {k}, its full rows do not" for k in re.findall(r"\b\d/\d\b", verdict) if k not in full
    ]
    return problems


def test_the_readme_ledger_gives_each_row_one_short_line_in_the_full_rows_words():
    header = next(line for line in readme_ledger().splitlines() if line.startswith("| ID"))
    assert [c.strip() for c in header.strip().strip("|").split("|")] == [
        "ID",
        "the claim, in brief",
        "verdict",
        "evidence",
    ]
    assert "(docs/claims_ledger.md)" in readme_ledger()
    full = ledger_rows()
    problems = []
    for claim, lines in ledger_rows(readme_ledger()).items():
        for short, long in zip(lines, full[claim]):  # row by row, in the same order
            problems += short_row_problems(short, [long])
    assert problems == []
    # the check can fail: a verdict the full rows do not give, a seed count they do not give, a paragraph
    b16 = full["B16"]
    assert short_row_problems("| B16 | x | **holds** | y |", b16) == ["B16: says 'holds', its full rows do not"]
    assert short_row_problems("| B16 | x | **false** 3/5 | y |", b16) == ["B16: says 3/5, its full rows do not"]
    assert short_row_problems("| B16 | x | **false** " + "because " * 30 + "| y |", b16)[0].startswith("B16: 31 words")
