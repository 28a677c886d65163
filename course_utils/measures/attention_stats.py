"""What attention does, in numbers: why scores are divided by √d (03), and every head over the whole corpus (03-10).

    score_stats(64, divisor_value(64, "√d"))     # 03: std of q·k/divisor, mean max weight and entropy of softmax
    real_scores(model, pairs)                    # 03: the scores q·k/√dh of every real, allowed (query, key) pair
    batch = trace_pairs(model, load_pairs())     # one padded teacher-forced pass, every weight and mask recorded
    mean_row_max(batch, "encoder self", 0)       # 03, 05, 09: how hard attention picks
    head_differences(batch)                      # 04, 09: how different the two heads' rows are (total variation)
    head_statistics(batch)                       # 09: table place/layer/head -> where the queries look
    role_attention(batch, "cross", 1, head=0)    # 09: the same by word role (`measures.roles`)

Places are `core.places.PLACES`; shapes follow `core.attention`: q, k, v (B, H, T, dh), weights (B, H, Tq, Tk).
The pictures are elsewhere: the scale slider `views.scaling.plot_scaling`, the attention heatmap
`views.heatmaps.plot_attention`, the per-head figures `views.heads`; scored interventions are `measures.interventions`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from course_utils.core.data import Pair
from course_utils.core.model import Translator
from course_utils.core.places import PLACES, trace_key
from course_utils.measures.roles import ROLES, english_roles, german_roles
from course_utils.trace.tracing import record_batch

# ---- 03: why divide by √d ----


@dataclass
class BatchTrace:
    """Attention weights of many pairs at once, with the recorded masks, the real lengths and word roles.

    weights[key] is (B, H, Tq, Tk) for key "{side}.{layer}.{place}.weights", masks[key] the (B, Tq, Tk) bool mask
    the model recorded at "{side}.{layer}.{place}.mask" (which keys each query may see); src_len/tgt_len are the
    real lengths (English words; decoder input <bos> w1..wn, i.e. German words + 1); n_layers is the model's.

    Used in notebooks 09 §2 (what trace_pairs returns) and 10 §4.
    """

    pairs: list[Pair]
    weights: dict[str, torch.Tensor]
    masks: dict[str, torch.Tensor]
    src_len: torch.Tensor  # (B,)
    tgt_len: torch.Tensor  # (B,)
    src_roles: list[list[str]]
    out_roles: list[list[str]]  # role of the German word each decoder position *produces* (<eos>: "end")
    n_layers: int

    @property
    def n_heads(self) -> int:
        return next(iter(self.weights.values())).shape[1]


@torch.no_grad()
def trace_pairs(model: Translator, pairs: list[Pair]) -> BatchTrace:
    """Teacher-forced forward pass of all `pairs` in one padded batch, recording every attention weight and mask.

    Used in notebooks 03 (Evidence part), 04 §6, 05 §5 and 09 §2, §4 (explained in 09 §2).
    """
    cache, src_real, tgt_real = record_batch(model, pairs, ["*.weights", "*.mask"])
    return BatchTrace(
        pairs,
        {k: v for k, v in cache.items() if k.endswith(".weights")},
        {k: v for k, v in cache.items() if k.endswith(".mask")},
        src_real.sum(1),
        tgt_real.sum(1),
        [english_roles(p.english) for p in pairs],
        [german_roles(p.german, p.pattern) + ["end"] for p in pairs],
        model.cfg.n_layers,
    )


DIVISORS = ("1", "√d", "d")


def divisor_value(d: int, divide_by: str) -> float:
    """'1' -> 1, '√d' -> √d, 'd' -> d.

    Used in notebook 03 §4.
    """
    table = {"1": 1.0, "√d": math.sqrt(d), "d": float(d)}
    if divide_by not in table:
        raise ValueError(f"divide_by must be one of {DIVISORS}; got {divide_by!r}")
    return table[divide_by]


def random_scores(d: int, n_queries: int = 2000, n_keys: int = 8, seed: int = 0) -> torch.Tensor:
    """Raw scores q·k (n_queries, n_keys) for q, k with independent N(0, 1) entries (float64, fixed seed).

    Taught in notebook 03 §4.
    """
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
    """Entropy in nats of each row of attention weights (0 = all on one key, ln Tk = uniform).

    Taught in notebook 03 §4.
    """
    return -torch.special.xlogy(weights, weights).sum(-1)  # 0 · log 0 = 0


def score_stats(d: int, divisor: float, n_queries: int = 2000, n_keys: int = 8, seed: int = 0) -> dict:
    """std of the scores q·k/divisor, mean max weight and mean entropy (nats) of their softmax rows.

    Taught in notebook 03 §4.
    """
    return stats_of_scores(random_scores(d, n_queries, n_keys, seed) / divisor, d, divisor)


def stats_of_scores(s: torch.Tensor, d: int, divisor: float) -> dict:
    """score_stats of already scaled scores s (n_queries, n_keys).

    Used by views.scaling.plot_scaling and views.clientside.scaling.scaling_view (notebook 03 §4).
    """
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


# ---- 03: the scores of a trained model (places: core.places.PLACES) ----


@torch.no_grad()
def real_scores(model, pairs) -> dict[tuple[str, int], torch.Tensor]:
    """{(place, layer): 1-D tensor} of the scores q·k/√dh (before the softmax) of every head and every (query, key)
    pair of real words that the mask lets attend (padding left out; in decoder self-attention, no later keys).
    One teacher-forced pass of all `pairs`; places as in `core.places.PLACES`.

    Taught in notebook 03's Evidence part.
    """
    cache, src_real, tgt_real = record_batch(model, pairs, ["*.scores", "*.mask"])
    out = {}
    for layer in range(model.cfg.n_layers):
        for place in PLACES:
            s = cache[trace_key(place, layer, "scores")]  # (B, H, Tq, Tk)
            q_real = src_real if place == "encoder self" else tgt_real  # (B, Tq): real queries
            allowed = cache[trace_key(place, layer, "mask")] & q_real[:, :, None]  # (B, Tq, Tk): the recorded mask
            out[place, layer] = s.transpose(0, 1)[:, allowed].flatten()  # (H, n) -> (H * n,)
    return out


def _weights(batch: BatchTrace, place: str, layer: int) -> torch.Tensor:
    """(B, H, Tq, Tk) attention weights of one place and layer."""
    return batch.weights[trace_key(place, layer, "weights")]


def _masses(batch: BatchTrace, place: str, layer: int) -> dict[str, list[np.ndarray]]:
    """For one place/layer: per measure, a list of (H, n_queries) arrays (one per pair) of attention mass."""
    w = _weights(batch, place, layer)  # (B, H, Tq, Tk)
    out: dict[str, list[np.ndarray]] = {}

    def add(name, value):
        out.setdefault(name, []).append(value)

    for b, _pair in enumerate(batch.pairs):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        nq, nk = (ns, ns) if place == "encoder self" else (nt, nt) if place == "decoder self" else (nt, ns)
        a = w[b, :, :nq, :nk].double().numpy()  # (H, nq, nk): real rows and keys only; rows sum to 1
        q0 = 1 if place == "decoder self" else 0  # the <bos> query sees only itself: no choice, left out
        ent = entropy(torch.from_numpy(a)).numpy()
        add("entropy", ent[:, q0:])
        add("row max", a[:, q0:].max(-1))  # the largest weight of the row: 1 = one-hot, 1/n = uniform
        add("first", a[:, q0:, 0])
        if place != "cross":
            idx = np.arange(nq)
            add("itself", a[:, idx[q0:], idx[q0:]])
            add("previous", a[:, idx[1:], idx[1:] - 1])
        if place != "decoder self":  # English keys: mass on the verb, on the object
            roles = np.array(batch.src_roles[b])
            for role in ("verb", "object"):
                add(role, a[:, :, roles == role].sum(-1))
        if place == "cross":  # mass on the English word(s) that translate the German word this query produces
            roles = np.array(batch.src_roles[b])
            made = batch.out_roles[b][:nq]
            rows = [i for i, r in enumerate(made) if r != "end"]
            add("aligned", np.stack([a[:, i, roles == made[i]].sum(-1) for i in rows], axis=1))
    return out


MEASURES = ("itself", "previous", "first", "aligned", "verb", "object", "entropy", "row max")


def head_statistics(batch: BatchTrace, n_layers: int | None = None) -> pd.DataFrame:
    """One row per (place, layer, head): mean attention mass each query puts on a kind of key, and entropy.

    Columns (averaged over every real query of every pair, padding left out; decoder self-attention
    leaves out the <bos> query, which can only see itself; NaN where a measure does not apply):
      itself    the query's own position (encoder / decoder self-attention)
      previous  the position just before (queries after the first)
      first     key position 0 (English word 1, or <bos>)
      aligned   cross only: the English word(s) translating the German word the query produces
      verb, object   the English verb / object (encoder self, cross); the object is always the last word
      entropy   of the attention row, in nats (0 = one key; ln(n) = uniform over n keys)
      row max   the row's largest weight (1 = all on one key); its mean over a place's heads is
                mean_row_max(batch, place, layer, min_keys=2)
      uniform entropy  what uniform attention over the same keys would give

    Taught in notebook 09 §2; used in 09 §4.
    """
    if n_layers is None:
        n_layers = batch.n_layers
    rows = []
    for place in PLACES:
        for layer in range(n_layers):
            masses = _masses(batch, place, layer)
            uni = _uniform_entropy(batch, place)
            for h in range(batch.n_heads):
                row = {"place": place, "layer": layer, "head": h}
                for m in MEASURES:
                    row[m] = float(np.concatenate([x[h] for x in masses[m]]).mean()) if m in masses else np.nan
                row["uniform entropy"] = uni
                rows.append(row)
    return _indexed(rows, ["place", "layer", "head"])


def _indexed(rows: list[dict], index: list[str]) -> pd.DataFrame:
    """DataFrame indexed by `index`, places kept in model order (a sorted index: .loc without warnings)."""
    df = pd.DataFrame(rows)
    df["place"] = pd.Categorical(df["place"], categories=PLACES, ordered=True)
    return df.set_index(index).sort_index()


def _uniform_entropy(batch: BatchTrace, place: str) -> float:
    vals = []
    for b in range(len(batch.pairs)):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        if place == "encoder self":
            vals += [math.log(ns)] * ns
        elif place == "decoder self":
            vals += [math.log(i + 1) for i in range(1, nt)]  # query i sees keys 0..i (<bos> left out)
        else:
            vals += [math.log(ns)] * nt
    return float(np.mean(vals))


def allowed_keys(batch: BatchTrace, place: str, layer: int = 0) -> torch.Tensor:
    """(B, Tq) number of keys each query may see, read from the mask the model recorded: the sentence's English
    words (encoder self, cross), or positions 0..i for decoder query i (causal mask); 0 for padded queries.

    Used by mean_row_max and mean_row_entropy (notebook 03's Evidence part).
    """
    mask = batch.masks[trace_key(place, layer, "mask")]  # (B, Tq, Tk) bool
    lens_q = batch.src_len if place == "encoder self" else batch.tgt_len
    real_query = torch.arange(mask.shape[1])[None, :] < lens_q[:, None]  # (B, Tq)
    return mask.sum(-1) * real_query


def mean_row_max(batch: BatchTrace, place: str, layer: int, min_keys: int = 1) -> float:
    """How hard attention picks: the largest weight of each attention row, averaged over every head and every
    real query that may see at least `min_keys` keys (1.0 = every query puts all its weight on one key;
    1/n = uniform over n keys).

    Taught in notebook 03 §4 (row_max); used in 03's Evidence part, 05 §5, 09 §2 and 10 §4.
    """
    w = _weights(batch, place, layer)  # (B, H, Tq, Tk)
    rows = allowed_keys(batch, place, layer) >= min_keys  # (B, Tq)
    return float(w.amax(-1).transpose(1, 2)[rows].double().mean())


def mean_row_entropy(batch: BatchTrace, place: str, layer: int, min_keys: int = 1) -> float:
    """Mean entropy (nats) of the attention rows, over every head and every real query that may see at least
    `min_keys` keys: the same rows as `mean_row_max` averages.

    Taught in notebook 03 §4 (row_entropy); used in 03's Evidence part.
    """
    w = _weights(batch, place, layer).double()  # (B, H, Tq, Tk); padded keys have weight 0
    rows = allowed_keys(batch, place, layer) >= min_keys  # (B, Tq)
    return float(entropy(w).transpose(1, 2)[rows].mean())


def head_difference(batch: BatchTrace, place: str, layer: int) -> float:
    """Mean total-variation distance between head 0's and head 1's attention rows (0 = same, 1 = disjoint).

    With more than 2 heads: the mean over all head pairs.

    Taught in notebook 04 §6 (tv_distance); used in 10 §4.
    """
    w = _weights(batch, place, layer).double()  # (B, H, Tq, Tk), padded rows/columns are 0
    B, H = w.shape[:2]
    Tq = torch.arange(w.shape[2])
    lens = batch.src_len if place == "encoder self" else batch.tgt_len
    real = Tq[None, :] < lens[:, None]  # (B, Tq): real queries
    if place == "decoder self":
        real[:, 0] = False  # <bos> sees only itself in every head
    dists = []
    for h in range(H):
        for g in range(h + 1, H):
            tv = 0.5 * (w[:, h] - w[:, g]).abs().sum(-1)  # (B, Tq)
            dists.append(float(tv[real].mean()))
    return float(np.mean(dists))


def _per_place_and_layer(measure, batch: BatchTrace, n_layers: int | None) -> pd.DataFrame:
    """measure(batch, place, layer) for every place and layer, as a table indexed by (place, layer)."""
    n_layers = batch.n_layers if n_layers is None else n_layers
    rows = [
        {"place": place, "layer": layer, "head 0 vs head 1": measure(batch, place, layer)}
        for place in PLACES
        for layer in range(n_layers)
    ]
    return _indexed(rows, ["place", "layer"])


def head_differences(batch: BatchTrace, n_layers: int | None = None) -> pd.DataFrame:
    """head_difference for every place and layer, as a table.

    Taught in notebook 04 §6; used in 09 §2.
    """
    return _per_place_and_layer(head_difference, batch, n_layers)


def _row_and_key_roles(batch: BatchTrace, b: int, place: str) -> tuple[list[str], list[str]]:
    en = batch.src_roles[b]
    de_in = ["<bos>"] + batch.out_roles[b][:-1]  # the decoder reads <bos> w1..wn
    if place == "encoder self":
        return en, en
    if place == "decoder self":
        return de_in, de_in
    return batch.out_roles[b], en  # cross: rows by the German word they produce, keys English


def role_attention(batch: BatchTrace, place: str, layer: int, head: int) -> pd.DataFrame:
    """Mean attention mass from queries of one role (rows) onto keys of each role (columns).

    Rows of cross-attention are the role of the German word the query *produces* ("end" = <eos>);
    rows/columns of decoder self-attention are the roles of the German input tokens ("<bos>" first).
    Each row sums to 1.

    Used in notebook 09 §2, where the grouping by role is explained.
    """
    w = _weights(batch, place, layer)
    if not 0 <= head < w.shape[1]:
        raise IndexError(f"head {head} out of range: heads are 0..{w.shape[1] - 1}")
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for b in range(len(batch.pairs)):
        q_roles, k_roles = _row_and_key_roles(batch, b, place)
        a = w[b, head, : len(q_roles), : len(k_roles)].double().numpy()
        k_roles = np.array(k_roles)
        for i, r in enumerate(q_roles):
            row = sums.setdefault(r, {})
            for kr in dict.fromkeys(k_roles):
                row[kr] = row.get(kr, 0.0) + float(a[i, k_roles == kr].sum())
            counts[r] = counts.get(r, 0) + 1
    order = ["<bos>", *ROLES, "end"]
    rows = [r for r in order if r in sums]
    cols = [c for c in order if any(c in sums[r] for r in rows)]
    return pd.DataFrame([[sums[r].get(c, 0.0) / counts[r] for c in cols] for r in rows], index=rows, columns=cols)


# ---- 09, Claim F1: do the heads ask different "questions"? (where their weight goes, by kind of word) ----


def role_tables(batch: BatchTrace, place: str, layer: int) -> tuple[torch.Tensor, list[str], list[str]]:
    """Every head's role_attention table at once, vectorised: (H, query roles, key roles) mean weight from queries
    of one role onto keys of each role (rows sum to 1), with the row and column role names.

    Used by question_difference (notebook 09, Claim F1); equals role_attention head by head (tests/test_heads.py).
    """
    order = ["<bos>", *ROLES, "end"]
    w = _weights(batch, place, layer).double()  # (B, H, Tq, Tk), padded rows and keys are 0
    B, _, Tq, Tk = w.shape
    q_onehot, k_onehot = torch.zeros(B, Tq, len(order)), torch.zeros(B, Tk, len(order))
    for b in range(B):
        q_roles, k_roles = _row_and_key_roles(batch, b, place)
        q_onehot[b, torch.arange(len(q_roles)), [order.index(r) for r in q_roles]] = 1.0
        k_onehot[b, torch.arange(len(k_roles)), [order.index(r) for r in k_roles]] = 1.0
    mass = w @ k_onehot.to(w.dtype)[:, None]  # (B, H, Tq, roles): each row's weight per key role
    flat_q = q_onehot.to(w.dtype).reshape(B * Tq, -1)  # (B·Tq, roles): the role of every row
    sums = flat_q.T @ mass.transpose(0, 1).reshape(w.shape[1], B * Tq, -1)  # (H, query roles, key roles)
    counts = q_onehot.sum((0, 1))
    rows, cols = counts > 0, k_onehot.sum((0, 1)) > 0
    tables = (sums / counts.clamp(min=1).to(w.dtype)[None, :, None])[:, rows][:, :, cols]
    return tables, [r for r, keep in zip(order, rows) if keep], [c for c, keep in zip(order, cols) if keep]


def question_difference(batch: BatchTrace, place: str, layer: int) -> float:
    """How differently two heads ask, by kind of word: the total-variation distance between head 0's and head 1's
    role tables (where a query of each role sends its weight, by key role), averaged over the query roles
    (with more heads: over all head pairs). 0 = the heads send every kind of query to the same kinds of word.

    Used in notebook 09 (Claim F1: do different heads ask different questions?).
    """
    tables, _, _ = role_tables(batch, place, layer)
    H = tables.shape[0]
    dists = [float((0.5 * (tables[h] - tables[g]).abs().sum(-1)).mean()) for h in range(H) for g in range(h + 1, H)]
    return float(np.mean(dists))


def question_differences(batch: BatchTrace, n_layers: int | None = None) -> pd.DataFrame:
    """question_difference for every place and layer, as a table (the shape of head_differences).

    Used in notebook 09 (Claim F1).
    """
    return _per_place_and_layer(question_difference, batch, n_layers)
