"""The helpers behind notebooks 03 and 04: measures/attention_stats.py (scale, entropy and score statistics),
the batched pass of trace/tracing.py, and views/scaling.py and views/heatmaps.py that draw them."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from course_utils.core.data import load_pairs
from course_utils.core.places import PLACES, trace_key
from course_utils.core.toys import toy_embeddings
from course_utils.measures.attention_stats import (
    DIVISORS,
    divisor_value,
    entropy,
    mean_row_entropy,
    random_scores,
    real_scores,
    score_stats,
    trace_pairs,
)
from course_utils.trace.tracing import (
    record_batch,
    run_with_trace,
)
from course_utils.views.heatmaps import plot_attention
from course_utils.views.scaling import plot_scaling
from course_utils.views.widgets import render


def test_toy_embeddings():
    X = toy_embeddings(["i", "can", "eat", "apple"])
    assert X.shape == (4, 2) and X.dtype == torch.float64
    with pytest.raises(KeyError, match="no toy vector"):
        toy_embeddings(["banana"])


@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_raw_score_std_is_sqrt_d_and_scaled_std_is_one(d):
    assert score_stats(d, 1.0)["score_std"] == pytest.approx(math.sqrt(d), rel=0.05)
    assert score_stats(d, math.sqrt(d))["score_std"] == pytest.approx(1.0, abs=0.05)


def test_scaling_changes_peakiness():
    raw, scaled, by_d = (score_stats(64, divisor_value(64, s)) for s in DIVISORS)
    assert raw["mean_max_weight"] > scaled["mean_max_weight"] > by_d["mean_max_weight"]
    assert raw["mean_entropy"] < scaled["mean_entropy"] < by_d["mean_entropy"] <= math.log(8) + 1e-9


def test_random_scores_are_reproducible_and_not_aliased():
    first = random_scores(16)
    random_scores(16).zero_()  # a caller changing its tensor must not change the next call's
    assert torch.equal(random_scores(16), first) and first.abs().sum() > 0
    with pytest.raises(ValueError):
        random_scores(0)


def test_entropy_bounds():
    assert entropy(torch.tensor([1.0, 0.0, 0.0])).item() == pytest.approx(0.0)
    assert entropy(torch.full((4,), 0.25)).item() == pytest.approx(math.log(4))


def test_plot_scaling_and_bad_divisor():
    fig = plot_scaling(64, "√d")
    assert len(fig.axes) == 3 and all(ax.get_title() for ax in fig.axes[:2])
    plt.close("all")
    with pytest.raises(ValueError, match="divide_by"):
        divisor_value(64, "2d")


def test_plot_attention_and_widget_messages(course):
    trace = run_with_trace(course.model, "we want to eat apple")
    fig = plot_attention(trace, "cross", 1, 1)
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["cross-attention, layer 1, head 1"]
    rows = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert rows[0] == f"<bos> → {trace.translation[0]}" and rows[-1] == f"{trace.translation[-1]} → <eos>"
    assert len(rows) == len(trace.translation) + 1
    fig = plot_attention(trace, "encoder self", 0)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == trace.src_tokens
    assert len([ax for ax in fig.axes if ax.get_title()]) == course.model.cfg.n_heads
    plt.close("all")
    import ipywidgets as w

    out = w.Output()
    for bad in (
        {"layer": 5, "place": "encoder self", "heads": "all"},
        {"layer": 0, "place": "encoder self", "heads": 7},
        {"layer": 0, "place": "middle", "heads": "all"},
    ):
        message = render(lambda **c: plot_attention(trace, **c), bad, out)
        assert message and message.startswith("⚠")


def test_record_batch_matches_single_traces(course):
    pairs = load_pairs("train")[:5]
    cache, src_real, tgt_real = record_batch(course.model, pairs, "encoder.0.self.weights")
    w = cache["encoder.0.self.weights"]  # (B, H, Ts, Ts)
    for b, p in enumerate(pairs):
        t = run_with_trace(course.model, p.english, target=p.german)
        n = len(t.src_tokens)
        assert src_real[b].sum() == n and tgt_real[b].sum() == len(t.tgt_tokens)
        assert torch.allclose(w[b, :, :n, :n], t["encoder.0.self.weights"], atol=1e-5)


def test_mean_row_entropy_is_the_mean_over_every_real_row(course):
    """Expected value computed here, row by row in plain Python, from the recorded weights and the lengths."""
    batch = trace_pairs(course.model, load_pairs("train")[::20])  # 12 pairs of different lengths: padding
    for place in PLACES:
        w = batch.weights[trace_key(place, 0, "weights")]  # (B, H, Tq, Tk)
        values = []
        for b in range(len(batch.pairs)):
            ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
            nq, nk = {"encoder self": (ns, ns), "decoder self": (nt, nt), "cross": (nt, ns)}[place]
            first = 1 if place == "decoder self" else 0  # <bos> sees one key only: no choice, left out
            for h in range(w.shape[1]):
                for i in range(first, nq):
                    values.append(-sum(p * math.log(p) for p in w[b, h, i, :nk].tolist() if p > 0))
        min_keys = 2 if place == "decoder self" else 1
        assert mean_row_entropy(batch, place, 0, min_keys) == pytest.approx(sum(values) / len(values), abs=1e-9)
        # a broken copy that also averages the padded query rows (all of Tq) misses the expected value
        padded = -(w * torch.log(w.clamp_min(1e-300))).sum(-1)[:, :, 1 if place == "decoder self" else 0 :]
        assert abs(float(padded.mean()) - sum(values) / len(values)) > 1e-3, place
    one_hot = trace_pairs(course.model, load_pairs("train")[:1])
    one_hot.weights = {
        k: torch.zeros_like(v).index_fill_(-1, torch.tensor([0]), 1.0) for k, v in one_hot.weights.items()
    }
    assert mean_row_entropy(one_hot, "encoder self", 1) == 0.0


def test_real_scores_are_the_traced_scores_of_real_allowed_pairs(course):
    pairs = load_pairs("train")[:6]
    traces = [run_with_trace(course.model, p.english, target=p.german) for p in pairs]
    got_all = real_scores(course.model, pairs)
    assert set(got_all) == {(p, layer) for p in ("encoder self", "decoder self", "cross") for layer in (0, 1)}
    for place, key in (
        ("encoder self", "encoder.1.self"),
        ("decoder self", "decoder.0.self"),
        ("cross", "decoder.1.cross"),
    ):
        layer = int(key.split(".")[1])
        want = []
        for t in traces:
            s = t[key + ".scores"]  # (H, Tq, Tk) of one sentence: no padding
            if place == "decoder self":
                s = s.masked_select(torch.ones(s.shape[-2:], dtype=torch.bool).tril()).view(s.shape[0], -1)
            want.append(s.reshape(s.shape[0], -1))
        got = got_all[place, layer]
        want = torch.cat(want, dim=1).flatten()
        assert got.shape == want.shape
        assert torch.allclose(got.sort().values, want.sort().values, atol=1e-4)
