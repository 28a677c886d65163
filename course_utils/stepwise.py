"""Helpers for notebooks 03 (scaled dot-product attention, step by step) and 04 (multi-head attention).

    toy_embeddings()                   03: hand-made 2-D word vectors for "i can eat apple" (+ "we")
    score_stats(d, divisor)            03: std of q·k/divisor, max weight and entropy of the softmax
    plot_scaling(d, divide_by)         03: the scale slider's picture
    plot_head(trace, layer, place, head)  04: the layer / place / head picker's picture
    record_batch(model, pairs, names)  04: record hooked tensors for many sentence pairs at once
    head_tv_distance(model, pairs)     04: how different the heads' attention weights are, per place

Shapes follow `attention.py`: (B, H, T, dh), weights (B, H, Tq, Tk).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd
import torch

from .plotting import plot_attention
from .tracing import record_pairs

# ---- 03: a tiny sentence with hand-made 2-D word vectors ----

#: feature 0 = "is an action (verb)", feature 1 = "is edible (food)"
TOY_VECTORS = {
    "i": (0.1, 0.0),
    "we": (0.1, 0.0),
    "can": (0.4, 0.0),
    "eat": (1.0, 0.2),
    "apple": (0.1, 1.0),
}
TOY_FEATURES = ("action", "edible")


def toy_embeddings(words=("i", "can", "eat", "apple")) -> torch.Tensor:
    """(T, 2) float tensor of the hand-made vectors of `words` (feature 0: action, feature 1: edible)."""
    unknown = [w for w in words if w not in TOY_VECTORS]
    if unknown:
        raise KeyError(f"no toy vector for {unknown}; toy words: {sorted(TOY_VECTORS)}")
    return torch.tensor([TOY_VECTORS[w] for w in words], dtype=torch.float32)


# ---- 03: why divide by √d ----

DIVISORS = ("1", "√d", "d")


def divisor_value(d: int, divide_by: str) -> float:
    """'1' -> 1, '√d' -> √d, 'd' -> d."""
    table = {"1": 1.0, "√d": math.sqrt(d), "d": float(d)}
    if divide_by not in table:
        raise ValueError(f"divide_by must be one of {DIVISORS}; got {divide_by!r}")
    return table[divide_by]


def random_scores(d: int, n_queries: int = 2000, n_keys: int = 8, seed: int = 0) -> torch.Tensor:
    """Raw scores q·k (n_queries, n_keys) for q, k with independent N(0, 1) entries (float64, fixed seed)."""
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive whole number of features; got {d}")
    g = torch.Generator().manual_seed(seed)  # a fresh generator: the same numbers on every call
    q = torch.randn(n_queries, 1, int(d), generator=g, dtype=torch.float64)
    k = torch.randn(n_queries, n_keys, int(d), generator=g, dtype=torch.float64)
    return (q * k).sum(-1)  # (n_queries, n_keys)


def entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of attention weights (0 = all on one key, ln Tk = uniform)."""
    return -torch.special.xlogy(weights, weights).sum(-1)  # 0 · log 0 = 0


def score_stats(d: int, divisor: float, n_queries: int = 2000, n_keys: int = 8, seed: int = 0) -> dict:
    """std of the scores q·k/divisor, mean max weight and mean entropy (nats) of their softmax rows."""
    return _stats(random_scores(d, n_queries, n_keys, seed) / divisor, d, divisor)


def _stats(s: torch.Tensor, d: int, divisor: float) -> dict:
    """score_stats of already scaled scores s (n_queries, n_keys)."""
    n_keys = s.shape[-1]
    w = torch.softmax(s, dim=-1)
    return {"d": d, "divisor": divisor, "score_std": s.std().item(), "mean_max_weight": w.max(-1).values.mean().item(),
            "mean_entropy": entropy(w).mean().item(), "uniform_entropy": math.log(n_keys)}


def plot_scaling(d: int = 64, divide_by: str = "√d", n_rows: int = 5, n_keys: int = 8):
    """Left: softmax weights of a few random queries over 8 random keys; right: histogram of the scaled scores.

    Drawn with plain imshow (not seaborn) so that the scale slider re-renders quickly.
    """
    divisor = divisor_value(d, divide_by)
    scores = random_scores(d, n_keys=n_keys) / divisor  # (2000, n_keys)
    weights = torch.softmax(scores, dim=-1)
    st = _stats(scores, d, divisor)  # = score_stats(d, divisor, n_keys=n_keys), without drawing the scores again
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1.3, 1]})
    w = weights[:n_rows].numpy()
    im = ax1.imshow(w, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            ax1.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=8, color="black" if w[i, j] > 0.6 else "white")
    ax1.set_xticks(range(n_keys), [f"k{j}" for j in range(n_keys)])
    ax1.set_yticks(range(n_rows), [f"q{i}" for i in range(n_rows)])
    ax1.set_xlabel("key")
    ax1.set_ylabel("query")
    ax1.set_title(f"softmax(q·k / {divide_by}), d = {d}: mean max weight {st['mean_max_weight']:.2f}", fontsize=10)
    fig.colorbar(im, ax=ax1, fraction=0.05)
    lim = 40.0  # one fixed range for every choice, so that the spread of the scores can be compared
    ax2.hist(scores.flatten().clamp(-lim, lim).numpy(), bins=80, range=(-lim, lim), color="tab:blue")
    ax2.set_xlim(-lim, lim)
    ax2.set_xlabel(f"score q·k / {divide_by}  (clipped to ±{lim:.0f})")
    ax2.set_ylabel("count (2000 queries × 8 keys)")
    ax2.set_title(f"std {st['score_std']:.2f}; mean entropy {st['mean_entropy']:.2f} of max {st['uniform_entropy']:.2f} nats",
                  fontsize=10)
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.17, top=0.89, wspace=0.25)
    return fig


# ---- 04: pick a layer, a place and a head of the trained model ----

PLACES = {"encoder self": ("encoder", "self"), "decoder self": ("decoder", "self"), "decoder cross": ("decoder", "cross")}


def plot_head(trace, layer: int = 0, place: str = "encoder self", head="all"):
    """Attention weights of one place of a Trace; head "all" or an int (one panel per head)."""
    if place not in PLACES:
        raise KeyError(f"place must be one of {list(PLACES)}; got {place!r}")
    side, kind = PLACES[place]
    n_layers = 1 + max(int(k.split(".")[1]) for k in trace.keys() if k.startswith(side + ".") and k.split(".")[1].isdigit())
    if not 0 <= layer < n_layers:
        raise IndexError(f"layer {layer} out of range: the {side} has layers 0..{n_layers - 1}")
    heads = None if head == "all" else int(head)
    return plot_attention(trace, side, layer, kind, heads=heads)


# ---- 04: many sentences at once ----

@torch.no_grad()
def record_batch(model, pairs, names="*.weights"):
    """Teacher-forced forward pass of all `pairs` in one padded batch (`tracing.record_pairs`).

    Returns (cache, src_real (B, Ts) bool, tgt_real (B, Tt) bool): recorded tensors with the batch
    dimension in front, and which source / decoder-input positions are real words (not padding).
    """
    cache, src, tgt_in = record_pairs(model, pairs, names)
    return cache, src != 0, tgt_in != 0


def head_tv_distance(model, pairs) -> pd.DataFrame:
    """Mean (over real query rows of all pairs) total-variation distance between every two heads' weights.

    TV(p, r) = ½ Σ_k |p_k − r_k|: 0 = the heads attend identically, 1 = to disjoint keys.
    One row per layer and place; column "mean TV" (averaged over head pairs) and "max TV".
    """
    cache, src_real, tgt_real = record_batch(model, pairs, "*.weights")
    rows = []
    for key in sorted(cache):
        side, layer, place, _ = key.split(".")
        w = cache[key]  # (B, H, Tq, Tk)
        real = src_real if side == "encoder" else tgt_real  # (B, Tq): which query rows are words
        H = w.shape[1]
        if H < 2:
            raise ValueError(f"{key} has {H} head: comparing heads needs at least 2")
        tvs = [0.5 * (w[:, a] - w[:, b]).abs().sum(-1)[real] for a in range(H) for b in range(a + 1, H)]
        tv = torch.cat(tvs)
        rows.append({"layer": int(layer), "place": f"{side} {place}", "mean TV": tv.mean().item(), "max TV": tv.max().item()})
    return pd.DataFrame(rows).sort_values(["place", "layer"], key=lambda s: s.map(
        {"encoder self": 0, "decoder self": 1, "decoder cross": 2}) if s.name == "place" else s).reset_index(drop=True)


def timing_ms(fn, *args, repeat: int = 3, **kwargs) -> float:
    """Best-of-`repeat` wall time of fn(*args, **kwargs) in milliseconds (figures are closed)."""
    import time

    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t)
        plt.close("all")
    return best * 1e3


__all__ = ["TOY_VECTORS", "TOY_FEATURES", "toy_embeddings", "DIVISORS", "divisor_value", "random_scores", "entropy",
           "score_stats", "plot_scaling", "PLACES", "plot_head", "record_batch", "head_tv_distance", "timing_ms"]
