"""Each measure that notebooks 03, 04, 05 and 09 define in a visible cell gives the same numbers as the library's one
copy, on the shipped models (seed 0, every corpus pair); and a deliberately wrong variant differs, so the comparison
can fail.

A notebook's definition cell is found by its marker comment (e.g. `# measure: total-variation distance`) on one of
its first lines; only its function definitions are run (its small example is checked when the notebook runs under
nbval).
"""

import pytest
import torch
from notebook_cells import definitions  # tests/ is on sys.path under pytest

from course_utils.core.data import load_pairs
from course_utils.core.model import translate_batch
from course_utils.core.places import PLACES, trace_key
from course_utils.measures.attention_stats import (
    allowed_keys,
    entropy,
    head_differences,
    head_statistics,
    mean_row_entropy,
    mean_row_max,
    random_scores,
    score_stats,
    trace_pairs,
)
from course_utils.measures.weight_maps import vocab_scores, word_parts
from course_utils.training.train import exact_match
from course_utils.training.zoo import load_standard_model


@pytest.fixture(scope="module")
def model():
    return load_standard_model().model  # seed 0


@pytest.fixture(scope="module")
def pairs():
    return load_pairs()  # all 264 pairs


@pytest.fixture(scope="module")
def batch(model, pairs):
    return trace_pairs(model, pairs)


def real_rows(batch, place):
    """(B, Tq) bool: the queries head_statistics averages over (decoder self: <bos> left out)."""
    rows = allowed_keys(batch, place) >= 1
    if place == "decoder self":
        rows[:, 0] = False
    return rows


# ---- 03: entropy and row maximum ----


def test_entropy_notebook_matches_library(batch):
    row_entropy = definitions("03_scaled_dot_product_attention.ipynb", "entropy")["row_entropy"]
    for place in PLACES:
        for layer in (0, 1):
            w = batch.weights[f"{trace_key(place, layer, 'weights')}"].double()  # (B, H, Tq, Tk)
            rows = allowed_keys(batch, place) >= 1
            mine = float(row_entropy(w).transpose(1, 2)[rows].mean())
            assert abs(mine - mean_row_entropy(batch, place, layer)) < 1e-9
            assert torch.allclose(row_entropy(w), entropy(w))
    wrong = -(w * torch.log2(w.clamp_min(1e-30))).sum(-1)  # bits, not nats
    assert not torch.allclose(wrong.transpose(1, 2)[rows], row_entropy(w).transpose(1, 2)[rows])


def test_row_max_notebook_matches_library(batch):
    row_max = definitions("03_scaled_dot_product_attention.ipynb", "row maximum")["row_max"]
    for place in PLACES:
        for layer in (0, 1):
            w = batch.weights[trace_key(place, layer, "weights")]
            rows = allowed_keys(batch, place) >= 2
            mine = float(row_max(w).transpose(1, 2)[rows].double().mean())
            assert abs(mine - mean_row_max(batch, place, layer, min_keys=2)) < 1e-9
    w = torch.softmax(random_scores(64) / 8.0, dim=-1)
    assert abs(row_max(w).mean().item() - score_stats(64, 8.0)["mean_max_weight"]) < 1e-6
    wrong = w.mean(-1)  # the mean weight of a row (1/n always), not its largest
    assert abs(wrong.mean().item() - row_max(w).mean().item()) > 0.1


# ---- 04: total-variation distance between the heads ----


def test_tv_distance_notebook_matches_library(batch):
    tv_distance = definitions("04_multi_head_attention.ipynb", "total-variation distance")["tv_distance"]
    table = head_differences(batch)["head 0 vs head 1"]
    for place in PLACES:
        for layer in (0, 1):
            w = batch.weights[trace_key(place, layer, "weights")].double()
            rows = real_rows(batch, place)
            mine = float(tv_distance(w[:, 0], w[:, 1])[rows].mean())
            assert abs(mine - table.loc[(place, layer)]) < 1e-9
    wrong = (w[:, 0] - w[:, 1]).abs().sum(-1)[rows].mean()  # without the ½: between 0 and 2
    assert abs(float(wrong) - table.loc[(place, layer)]) > 0.1


# ---- 05: exact match ----


def test_exact_match_notebook_matches_library(model, pairs):
    exact_match_of = definitions("05_training_the_translator.ipynb", "exact match")["exact_match_of"]
    hyps = translate_batch(model, [p.english for p in pairs])
    assert exact_match_of(hyps, [p.german for p in pairs]) == exact_match(model, pairs)
    refs = [p.german for p in pairs]
    cut = [h[:-1] for h in hyps]  # every translation missing its last word
    assert exact_match_of(cut, refs) == 0.0

    def wrong(translations, references):  # compares only as many words as the translation has
        return sum(all(a == b for a, b in zip(t, r.split())) for t, r in zip(translations, references)) / len(
            references
        )

    assert wrong(cut, refs) == 1.0  # the wrong variant counts the cut translations as right


# ---- 09: itself, previous and aligned mass ----


def test_head_masses_notebook_match_head_statistics(batch):
    ns = definitions("09_heads_and_the_query_analogy.ipynb", "itself, previous and aligned mass")
    itself_mass, previous_mass, aligned_mass_of = ns["itself_mass"], ns["previous_mass"], ns["aligned_mass_of"]
    stats = head_statistics(batch)
    for layer in (0, 1):
        for h in range(batch.n_heads):
            aligned = []
            for place in ("encoder self", "decoder self"):
                its, prev = [], []
                for b in range(len(batch.pairs)):
                    n = int(batch.src_len[b] if place == "encoder self" else batch.tgt_len[b])
                    w = batch.weights[trace_key(place, layer, "weights")][b, h, :n, :n].double()
                    q0 = 1 if place == "decoder self" else 0  # <bos> left out
                    its.append(itself_mass(w)[q0:])
                    prev.append(previous_mass(w))
                assert abs(float(torch.cat(its).mean()) - stats.loc[(place, layer, h), "itself"]) < 1e-9
                assert abs(float(torch.cat(prev).mean()) - stats.loc[(place, layer, h), "previous"]) < 1e-9
            for b in range(len(batch.pairs)):
                ns_, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
                made = [r for r in batch.out_roles[b][:nt] if r != "end"]
                cols = [[j for j, r in enumerate(batch.src_roles[b]) if r == m] for m in made]
                w = batch.weights[trace_key("cross", layer, "weights")][b, h, : len(made), :ns_].double()
                aligned.append(aligned_mass_of(w, cols))
            aligned = float(torch.cat(aligned).mean())
            assert abs(aligned - stats.loc[("cross", layer, h), "aligned"]) < 1e-9
    # a wrong variant: "previous" read one step to the right (the next word): in causal decoder self-attention
    # that weight is 0, far from the table's 0.44 for layer 0, head 1
    wrong_prev = torch.cat(
        [
            batch.weights[trace_key("decoder self", 0, "weights")][b, 1, :n, :n].double().diagonal(1)
            for b, n in enumerate(batch.tgt_len.tolist())
        ]
    ).mean()
    assert abs(float(wrong_prev) - stats.loc[("decoder self", 0, 1), "previous"]) > 0.3


# ---- 09: vocabulary scores of one head (Claim F6)


def test_word_scores_notebook_match_vocab_scores(model):
    word_scores = definitions("09_heads_and_the_query_analogy.ipynb", "vocabulary scores of one head")["word_scores"]
    attn, E = model.encoder[0].self_attn, word_parts(model)
    for h in range(2):
        sl = slice(32 * h, 32 * (h + 1))
        args = (attn.w_q.weight[sl].T, attn.w_q.bias[sl], attn.w_k.weight[sl].T, attn.w_k.bias[sl])
        S = word_scores(E, *args).detach().double().numpy()
        assert abs(S - vocab_scores(model, h).to_numpy()).max() < 1e-5
        # a wrong variant: W^K's rows taken from the other head
        other = slice(32 * (1 - h), 32 * (2 - h))
        wrong = word_scores(E, args[0], args[1], attn.w_k.weight[other].T, attn.w_k.bias[other]).detach().numpy()
        assert abs(wrong - vocab_scores(model, h).to_numpy()).max() > 1.0
