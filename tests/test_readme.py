"""The README's notebook map and claims ledger stay true to the notebooks.

Ledger rows look like:
| B8 | claim in our words | [07](notebooks/07_word_order_and_position.ipynb) › "Claim B8 — …" | 5/5 | **false** … | real model |
where the last column is the verdict on the pretrained model of notebook 10 ("–" where 10 does not ask).
Each row must name an existing notebook and a markdown heading in it, and a code cell after that
heading must contain an `assert`.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CLAIM_IDS = [f"B{i}" for i in range(1, 11)] + [f"F{i}" for i in range(1, 8)]


def ledger_rows() -> dict[str, list[str]]:
    section = README.split("## Claims ledger", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"[BF]\d+", cells[0]):
            rows.setdefault(cells[0], []).append(line)
    return rows


def test_every_claim_id_has_a_ledger_row():
    rows = ledger_rows()
    assert sorted(rows, key=CLAIM_IDS.index) == CLAIM_IDS


@pytest.mark.parametrize("claim", CLAIM_IDS)
def test_ledger_row_points_at_an_asserted_cell(claim):
    for line in ledger_rows()[claim]:
        verdict = line.strip().strip("|").split("|")[-2].lower()
        assert re.search(r"\b(holds|false)\b", verdict), f"{claim}: verdict must be holds / holds only if … / false"
        refs = re.findall(r"\(notebooks/(\d\d_[a-z0-9_]+\.ipynb)\)[^\"“]*[\"“]([^\"”]+)[\"”]", line)
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


# Claims whose verdict rests on a trained model: their ledger rows say on how many of the shipped seeds it holds.
TRAINED_MODEL_CLAIMS = {"B5", "B6", "B8", "B9", "B10", "F1", "F3", "F4", "F5", "F7"}


def test_ledger_has_a_seeds_column_with_k_of_n_for_trained_model_claims():
    from course_utils.training.zoo import SEEDS

    header = next(line for line in README.split("## Claims ledger", 1)[1].splitlines() if line.startswith("| ID"))
    columns = [c.strip() for c in header.strip().strip("|").split("|")]
    assert columns[-3] == "seeds", columns
    for claim, lines in ledger_rows().items():
        for line in lines:
            seeds = [c.strip() for c in line.strip().strip("|").split("|")][-3]
            if claim in TRAINED_MODEL_CLAIMS:
                m = re.fullmatch(r"(\d)/(\d)(?: .*)?", seeds)
                assert m and int(m[2]) == len(SEEDS) and int(m[1]) <= len(SEEDS), f"{claim}: seeds cell {seeds!r}"
            else:
                assert seeds in ("–", "-") or re.fullmatch(r"\d/\d.*", seeds), f"{claim}: seeds cell {seeds!r}"


# Claims notebook 10 asks of the pretrained all-MiniLM-L6-v2: their "real model" cell gives a verdict there.
REAL_MODEL_CLAIMS = {"B1", "B5", "B8", "F4", "F5", "F6", "F7"}
REAL_NOTEBOOK = "10_a_real_pretrained_transformer.ipynb"


def test_ledger_has_a_real_model_column_with_verdicts_from_notebook_10():
    header = next(line for line in README.split("## Claims ledger", 1)[1].splitlines() if line.startswith("| ID"))
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
            assert f"(notebooks/{REAL_NOTEBOOK})" in real, f"{claim}: the real-model cell must cite notebook 10"
            assert re.search(r"\b(holds|false)\b", real.lower()), f"{claim}: real-model verdict must say holds / false"
            assert not re.search(r"\d/\d seeds", real), f"{claim}: one published model, no seed count"
    assert asked == REAL_MODEL_CLAIMS, asked ^ REAL_MODEL_CLAIMS
