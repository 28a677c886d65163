"""Helpers for notebooks 03 (scaled dot-product attention, step by step) and 04 (multi-head attention).

    toy_embeddings()                   03: hand-made 2-D word vectors for "i can eat apple" (+ "we")
    score_stats(d, divisor)            03: std of q·k/divisor, max weight and entropy of the softmax
    mean_row_entropy(batch, place, layer)  03: mean entropy of a trained model's attention rows
    real_scores(model, pairs)          03: the scores q·k/√dh of every real, allowed (query, key) pair
    plot_scaling(d, divide_by)         03: the scale slider's picture
    plot_head(trace, layer, place, head)  04: the layer / place / head picker's picture
    record_batch(model, pairs, names)  04: record hooked tensors for many sentence pairs at once

How different the heads' weights are (04, claim F5) is measured by `heads.head_differences`, as in 09.

Shapes follow `attention.py`: (B, H, T, dh), weights (B, H, Tq, Tk).
"""

from __future__ import annotations

import functools
import math

import matplotlib.pyplot as plt
import torch

from .heads import _place_key, allowed_keys, decoder_row_labels
from .plotting import fixed_layout, show_heatmaps
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


# ---- 03: how hard a trained model's attention picks (places as in `heads`: "encoder self", "decoder self", "cross") ----


def mean_row_entropy(batch, place: str, layer: int, min_keys: int = 1) -> float:
    """Mean entropy (nats) of the attention rows of a `heads.trace_pairs` batch, over every head and every real
    query that may see at least `min_keys` keys: the same rows as `heads.mean_row_max` averages."""
    w = batch.weights[_place_key(place, layer)].double()  # (B, H, Tq, Tk); padded keys have weight 0
    rows = allowed_keys(batch, place) >= min_keys  # (B, Tq)
    return float(entropy(w).transpose(1, 2)[rows].mean())


@torch.no_grad()
def real_scores(model, pairs) -> dict[tuple[str, int], torch.Tensor]:
    """{(place, layer): 1-D tensor} of the scores q·k/√dh (before the softmax) of every head and every (query, key)
    pair of real words that the mask lets attend (padding left out; in decoder self-attention, no later keys).
    One teacher-forced pass of all `pairs`; places as in `heads.PLACES`."""
    cache, src_real, tgt_real = record_batch(model, pairs, "*.scores")
    out = {}
    for layer in range(model.cfg.n_layers):
        for place in ("encoder self", "decoder self", "cross"):
            s = cache[_place_key(place, layer).replace(".weights", ".scores")]  # (B, H, Tq, Tk)
            q_real = src_real if place == "encoder self" else tgt_real
            k_real = tgt_real if place == "decoder self" else src_real
            allowed = q_real[:, :, None] & k_real[:, None, :]  # (B, Tq, Tk)
            if place == "decoder self":
                allowed = allowed & torch.ones(s.shape[-2:], dtype=torch.bool).tril()
            out[place, layer] = s.transpose(0, 1)[:, allowed].flatten()  # (H, n) -> (H * n,)
    return out


# ---- 04: pick a layer, a place and a head of the trained model ----

PLACES = {
    "encoder self": ("encoder", "self"),
    "decoder self": ("decoder", "self"),
    "decoder cross": ("decoder", "cross"),
}
PLACE_NAMES = {
    "encoder self": "encoder self-attention",
    "decoder self": "decoder self-attention",
    "decoder cross": "cross-attention",
}  # the names used in prose and in the figure titles


def plot_head(trace, layer: int = 0, place: str = "encoder self", head="all"):
    """Attention weights of one place of a Trace; head "all" or an int (one panel per head).

    Decoder rows are labelled "input → output": the row of decoder input i is the query that produces word i+1.
    """
    if place not in PLACES:
        raise KeyError(f"place must be one of {list(PLACES)}; got {place!r}")
    side, kind = PLACES[place]
    n_layers = 1 + max(
        int(k.split(".")[1]) for k in trace.keys() if k.startswith(side + ".") and k.split(".")[1].isdigit()
    )
    if not 0 <= layer < n_layers:
        raise IndexError(f"layer {layer} out of range: the {side} has layers 0..{n_layers - 1}")
    key = f"{side}.{layer}.{kind}.weights"
    w = trace[key]  # (H, Tq, Tk)
    heads = range(w.shape[0]) if head == "all" else [int(head)]
    for h in heads:
        if not 0 <= h < w.shape[0]:
            raise IndexError(f"head {h} out of range: {key} has heads 0..{w.shape[0] - 1}")
    rows = trace.query_tokens(key)
    if side == "decoder":
        rows = decoder_row_labels(rows, trace.tgt_tokens[1:])
    return show_heatmaps(
        [w[h] for h in heads],
        rows,
        trace.key_tokens(key),
        [f"{PLACE_NAMES[place]}, layer {layer}, head {h}" for h in heads],
        xlabel="key (" + ("German input" if place == "decoder self" else "English") + ")",
        ylabel="query (" + ("English" if side == "encoder" else "German input → word it produces") + ")",
    )


# ---- 04: many sentences at once ----


@torch.no_grad()
def record_batch(model, pairs, names="*.weights"):
    """Teacher-forced forward pass of all `pairs` in one padded batch (`tracing.record_pairs`).

    Returns (cache, src_real (B, Ts) bool, tgt_real (B, Tt) bool): recorded tensors with the batch
    dimension in front, and which source / decoder-input positions are real words (not padding).
    """
    cache, src, tgt_in = record_pairs(model, pairs, names)
    return cache, src != 0, tgt_in != 0


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


__all__ = [
    "TOY_VECTORS",
    "TOY_FEATURES",
    "toy_embeddings",
    "DIVISORS",
    "divisor_value",
    "random_scores",
    "entropy",
    "score_stats",
    "mean_row_entropy",
    "real_scores",
    "plot_scaling",
    "PLACES",
    "PLACE_NAMES",
    "plot_head",
    "record_batch",
    "timing_ms",
]
