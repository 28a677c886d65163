"""Notebook 05's attention view (section 5): a client-side view (seed_attention_view,
views/clientside/seed_attention.py) whose saved output holds every choice of sentence × seed × place × layer ×
head, opens on the view the static cell below it draws (cross-attention, layer 1, 'he can read letter', seed 0),
and holds the shipped seeds' weights.

The committed output is read here (what JupyterLab, the exported page and nbviewer draw without a kernel).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from clientside_rows import tsv_rows  # tests/ is on sys.path under pytest

from course_utils.core.places import PLACE_NAMES, PLACES, trace_key
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import SEEDS
from course_utils.views.clientside.base import VEGALITE_MIME

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "05_training_the_translator.ipynb"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


@pytest.fixture(scope="module")
def spec(cells):
    (cell,) = [c for c in cells if c.cell_type == "code" and "seed_attention_view(" in c.source]
    (out,) = [o for o in cell.outputs if VEGALITE_MIME in o.get("data", {})]
    return out["data"][VEGALITE_MIME]


def params(spec) -> dict:
    return {p["name"]: p for p in spec["params"]}


def test_no_ipywidget_is_left(cells):
    assert not any("interactive_plot(" in c.source for c in cells if c.cell_type == "code")


def test_the_view_offers_sentence_seed_place_layer_and_head(spec):
    p = params(spec)
    sentences = p["sentence"]["bind"]["labels"]
    assert len(sentences) == 6 and "he can read letter" in sentences
    assert p["seed"]["bind"]["labels"] == [str(s) for s in SEEDS]
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES[x] for x in PLACES]
    assert p["layer"]["bind"]["options"] == [0, 1]
    assert p["head"]["bind"]["options"] == [-1, 0, 1] and p["head"]["bind"]["labels"][0] == "all"
    default = {n: p[n]["value"] for n in ("sentence", "seed", "place", "layer", "head")}
    assert default == {"sentence": sentences.index("he can read letter"), "seed": 0, "place": 2, "layer": 1, "head": -1}


def test_every_choice_is_in_the_saved_output(spec):
    rows = tsv_rows(spec["data"]["values"])
    seen = {(r["sentence"], r["seed"], r["place"], r["layer"], r["head"]) for r in rows}
    assert len(seen) == 6 * len(SEEDS) * 3 * 2 * 2  # 360 heatmaps, the 540 choices with head "all"


def test_the_saved_weights_are_the_shipped_seeds(spec, learned_seeds):
    p = params(spec)
    sentences = p["sentence"]["bind"]["labels"]
    rows = tsv_rows(spec["data"]["values"])
    for seed_index, sentence, place, layer, head in [
        (0, "he can read letter", 2, 1, 1),
        (3, "apple eat can we", 1, 0, 0),
    ]:
        s = sentences.index(sentence)
        got = [
            r["w"]
            for r in rows
            if (r["sentence"], r["seed"], r["place"], r["layer"], r["head"]) == (s, seed_index, place, layer, head)
        ]
        trace = run_with_trace(learned_seeds[SEEDS[seed_index]].model, sentence)
        want = trace[trace_key(PLACES[place], layer, "weights")][head].tolist()
        assert len(got) == len(want)
        assert max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g, w)) <= 0.005 + 1e-9
