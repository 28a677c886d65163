"""Helpers for notebooks 03 (scaled dot-product attention, step by step) and 04 (multi-head attention).

    toy_embeddings()                   03: hand-made 2-D word vectors for "i can eat apple" (+ "we")
    score_stats(d, divisor)            03: std of q·k/divisor, max weight and entropy of the softmax
    real_scores(model, pairs)          03: the scores q·k/√dh of every real, allowed (query, key) pair
    plot_scaling(d, divide_by)         03: the scale slider's picture
    record_batch(model, pairs, names)  04: record hooked tensors for many sentence pairs at once

How different the heads' weights are (04, claim F5) is measured by `heads.head_differences`, as in 09, and how
hard a trained model's attention picks (03) by `heads.mean_row_max` and `heads.mean_row_entropy`.

Shapes follow `attention.py`: (B, H, T, dh), weights (B, H, Tq, Tk).
"""

from __future__ import annotations

import functools
import math

import matplotlib.pyplot as plt
import torch

from .plotting import fixed_layout
from .precision import DTYPE
from .tracing import PLACES, record_pairs, trace_key

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
    return torch.tensor([TOY_VECTORS[w] for w in words], dtype=DTYPE)


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
    return _random_scores(int(d), n_queries, n_keys, seed).clone()  # a copy: callers may change theirs


@functools.lru_cache(maxsize=16)
def _random_scores(d: int, n_queries: int, n_keys: int, seed: int) -> torch.Tensor:
    # the draws for d = 256 take ~0.1 s; the scaling widget asks for the same few d again and again
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
    return {
        "d": d,
        "divisor": divisor,
        "score_std": s.std().item(),
        "mean_max_weight": w.max(-1).values.mean().item(),
        "mean_entropy": entropy(w).mean().item(),
        "uniform_entropy": math.log(n_keys),
    }


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
            ax1.text(
                j,
                i,
                f"{w[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if w[i, j] > 0.6 else "white",
            )
    ax1.set_xticks(range(n_keys), [f"k{j}" for j in range(n_keys)])
    ax1.set_yticks(range(n_rows), [f"q{i}" for i in range(n_rows)])
    ax1.set_xlabel("key")
    ax1.set_ylabel("query")
    ax1.set_title(f"softmax(q·k / {divide_by}), d = {d}: mean max weight {st['mean_max_weight']:.2f}", fontsize=10)
    fig.colorbar(im, ax=ax1, fraction=0.05, label="attention weight")
    lim = 40.0  # one fixed range for every choice, so that the spread of the scores can be compared
    ax2.hist(
        scores.flatten().clamp(-lim, lim).numpy(), bins=80, range=(-lim, lim), color="tab:blue", histtype="stepfilled"
    )
    ax2.set_xlim(-lim, lim)
    ax2.set_xlabel(f"score q·k / {divide_by}  (clipped to ±{lim:.0f})")
    ax2.set_ylabel("count (2000 queries × 8 keys)")
    ax2.set_title(
        f"std {st['score_std']:.2f}; mean entropy {st['mean_entropy']:.2f} of max {st['uniform_entropy']:.2f} nats",
        fontsize=10,
    )
    fixed_layout(fig, left=0.06, right=0.98, bottom=0.17, top=0.89, wspace=0.25)
    return fig


# ---- 03: the scores of a trained model (places: tracing.PLACES) ----


@torch.no_grad()
def real_scores(model, pairs) -> dict[tuple[str, int], torch.Tensor]:
    """{(place, layer): 1-D tensor} of the scores q·k/√dh (before the softmax) of every head and every (query, key)
    pair of real words that the mask lets attend (padding left out; in decoder self-attention, no later keys).
    One teacher-forced pass of all `pairs`; places as in `tracing.PLACES`."""
    cache, src_real, tgt_real = record_batch(model, pairs, "*.scores")
    out = {}
    for layer in range(model.cfg.n_layers):
        for place in PLACES:
            s = cache[trace_key(place, layer, "scores")]  # (B, H, Tq, Tk)
            q_real = src_real if place == "encoder self" else tgt_real
            k_real = tgt_real if place == "decoder self" else src_real
            allowed = q_real[:, :, None] & k_real[:, None, :]  # (B, Tq, Tk)
            if place == "decoder self":
                allowed = allowed & torch.ones(s.shape[-2:], dtype=torch.bool).tril()
            out[place, layer] = s.transpose(0, 1)[:, allowed].flatten()  # (H, n) -> (H * n,)
    return out


# ---- 04: many sentences at once ----


@torch.no_grad()
def record_batch(model, pairs, names="*.weights"):
    """Teacher-forced forward pass of all `pairs` in one padded batch (`tracing.record_pairs`).

    Returns (cache, src_real (B, Ts) bool, tgt_real (B, Tt) bool): recorded tensors with the batch
    dimension in front, and which source / decoder-input positions are real words (not padding).
    """
    cache, src, tgt_in = record_pairs(model, pairs, names)
    return cache, src != 0, tgt_in != 0


__all__ = [
    "TOY_VECTORS",
    "TOY_FEATURES",
    "toy_embeddings",
    "DIVISORS",
    "divisor_value",
    "random_scores",
    "entropy",
    "score_stats",
    "real_scores",
    "plot_scaling",
    "record_batch",
]
