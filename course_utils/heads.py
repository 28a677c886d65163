"""03-05, 09: what each attention head does, measured over the whole corpus, and its pictures.

    batch = trace_pairs(model, load_pairs())          # one padded forward pass, every weight recorded
    head_statistics(batch)                            # table: layer/place/head -> where the queries look
    mean_row_max(batch, "encoder self", 0)            # how hard attention picks
    role_attention(batch, "cross", 1, head=0)         # by word role (course_utils.roles)

Places are tracing.PLACES. Word roles and alignment: `roles`; scored interventions: `interventions`;
W^Q as a bank of queries: `projections`; the attention heatmap itself: `plotting.plot_attention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from .data import Pair
from .model import Translator
from .plotting import decoder_row_labels, show_heatmaps
from .roles import ROLES, english_roles, german_roles
from .stepwise import entropy
from .tracing import PLACE_NAMES, PLACES, record_pairs, trace_key

__all__ = ["decoder_row_labels"]  # re-exported: notebook 05 imports it from here


# ---------------------------------------------------------------- one batched, teacher-forced pass


@dataclass
class BatchTrace:
    """Attention weights of many pairs at once, with padding and word roles.

    weights[key] is (B, H, Tq, Tk) for key "{side}.{layer}.{place}.weights"; src_len/tgt_len are the
    real lengths (English words; decoder input <bos> w1..wn, i.e. German words + 1).
    """

    pairs: list[Pair]
    weights: dict[str, torch.Tensor]
    src_len: torch.Tensor  # (B,)
    tgt_len: torch.Tensor  # (B,)
    src_roles: list[list[str]]
    out_roles: list[list[str]]  # role of the German word each decoder position *produces* (<eos>: "end")

    @property
    def n_heads(self) -> int:
        return next(iter(self.weights.values())).shape[1]


@torch.no_grad()
def trace_pairs(model: Translator, pairs: list[Pair]) -> BatchTrace:
    """Teacher-forced forward pass of all `pairs` in one padded batch, recording every attention weight."""
    cache, src, tgt = record_pairs(model, pairs, "*.weights")
    return BatchTrace(
        pairs,
        dict(cache),
        (src != 0).sum(1),
        (tgt != 0).sum(1),
        [english_roles(p.english) for p in pairs],
        [german_roles(p.german, p.pattern) + ["end"] for p in pairs],
    )


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
    """
    if n_layers is None:
        n_layers = 1 + max(int(k.split(".")[1]) for k in batch.weights)
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


def allowed_keys(batch: BatchTrace, place: str) -> torch.Tensor:
    """(B, Tq) number of keys each query may see: the sentence's English words (encoder self, cross),
    or positions 0..i for decoder query i (causal mask); 0 for padded queries."""
    lens_q = batch.src_len if place == "encoder self" else batch.tgt_len
    lens_k = batch.tgt_len if place == "decoder self" else batch.src_len
    Tq = _weights(batch, place, 0).shape[2]
    i = torch.arange(Tq)[None, :]
    n = torch.minimum(i + 1, lens_k[:, None]) if place == "decoder self" else lens_k[:, None].expand(-1, Tq)
    return torch.where(i < lens_q[:, None], n, 0)


def mean_row_max(batch: BatchTrace, place: str, layer: int, min_keys: int = 1) -> float:
    """How hard attention picks: the largest weight of each attention row, averaged over every head and every
    real query that may see at least `min_keys` keys (1.0 = every query puts all its weight on one key;
    1/n = uniform over n keys)."""
    w = _weights(batch, place, layer)  # (B, H, Tq, Tk)
    rows = allowed_keys(batch, place) >= min_keys  # (B, Tq)
    return float(w.amax(-1).transpose(1, 2)[rows].double().mean())


def mean_row_entropy(batch: BatchTrace, place: str, layer: int, min_keys: int = 1) -> float:
    """Mean entropy (nats) of the attention rows, over every head and every real query that may see at least
    `min_keys` keys: the same rows as `mean_row_max` averages."""
    w = _weights(batch, place, layer).double()  # (B, H, Tq, Tk); padded keys have weight 0
    rows = allowed_keys(batch, place) >= min_keys  # (B, Tq)
    return float(entropy(w).transpose(1, 2)[rows].mean())


def head_difference(batch: BatchTrace, place: str, layer: int) -> float:
    """Mean total-variation distance between head 0's and head 1's attention rows (0 = same, 1 = disjoint).

    With more than 2 heads: the mean over all head pairs.
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


def head_differences(batch: BatchTrace, n_layers: int | None = None) -> pd.DataFrame:
    """head_difference for every place and layer, as a table."""
    if n_layers is None:
        n_layers = 1 + max(int(k.split(".")[1]) for k in batch.weights)
    return _indexed(
        [
            {"place": place, "layer": layer, "head 0 vs head 1": head_difference(batch, place, layer)}
            for place in PLACES
            for layer in range(n_layers)
        ],
        ["place", "layer"],
    )


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


def plot_roles(batch: BatchTrace, place: str, layer: int):
    """One panel per head: role_attention as a heatmap."""
    tables = [role_attention(batch, place, layer, h) for h in range(batch.n_heads)]
    ylabel = {
        "encoder self": "query: English word's role",
        "decoder self": "query: German input's role",
        "cross": "query: role of the German word it produces",
    }[place]
    xlabel = "key: German input's role" if place == "decoder self" else "key: English word's role"
    return show_heatmaps(
        [t.to_numpy() for t in tables],
        list(tables[0].index),
        list(tables[0].columns),
        [f"{PLACE_NAMES[place]}, layer {layer}, head {h}" for h in range(batch.n_heads)],
        suptitle=f"Where each {PLACE_NAMES[place]} head looks, by word role (mean over all {len(batch.pairs)} pairs)",
        xlabel=xlabel,
        ylabel=ylabel,
    )


# ---------------------------------------------------------------- 09, Claim F6: what a head compares and what it writes


def _head_slice(mha, head: int) -> slice:
    if not 0 <= head < mha.n_heads:
        raise IndexError(f"head {head} out of range: heads are 0..{mha.n_heads - 1}")
    return slice(head * mha.d_head, (head + 1) * mha.d_head)


def qk_map(model: Translator, prefix: str, head: int) -> torch.Tensor:
    """W^Q_h (W^K_h)ᵀ, (d_model, d_model), in the forum's row convention: the score a query vector x gives a key
    vector y in head h is x · W^Q_h (W^K_h)ᵀ · yᵀ / √dh, plus bias terms. Basis-free: rotating the head's query and
    key columns by the same orthogonal R leaves it unchanged. Its rank is at most dh."""
    from .projections import _mha

    mha = _mha(model, prefix)
    sl = _head_slice(mha, head)
    return (mha.w_q.weight[sl].T @ mha.w_k.weight[sl]).detach()  # (d, dh) @ (dh, d)


def ov_map(model: Translator, prefix: str, head: int) -> torch.Tensor:
    """W^V_h W^O_h, (d_model, d_model), in the forum's row convention: a key vector y that gets all of head h's
    weight adds y · W^V_h W^O_h to the block's output (plus b^V_h W^O_h, the same for every word). W^V_h is head
    h's columns of W^V = w_v.weight.T; W^O_h is head h's ROWS of W^O = w_o.weight.T, i.e. its columns of
    w_o.weight."""
    from .projections import _mha

    mha = _mha(model, prefix)
    sl = _head_slice(mha, head)
    return (mha.w_v.weight[sl].T @ mha.w_o.weight[:, sl].T).detach()  # (d, dh) @ (dh, d)


def english_words(model: Translator) -> list[str]:
    """The English vocabulary without <pad>, <bos> and <eos>."""
    return model.src_vocab.words


@torch.no_grad()
def word_parts(model: Translator, words=None) -> torch.Tensor:
    """(n_words, d_model): each English word's part of the encoder input, token embedding · √d_model (the position
    vector, about a seventh of its size, left out; notebook 07)."""
    words = english_words(model) if words is None else list(words)
    return model.src_embed.tok.weight[model.src_vocab.encode(words)] * model.src_embed.scale


@torch.no_grad()
def vocab_scores(model: Translator, head: int, layer: int = 0) -> pd.DataFrame:
    """Encoder self-attention of `layer`, head h, between word parts (layer 0: what enters it, without position):
    score[i, j] = (e_i W^Q_h + b^Q_h)(e_j W^K_h + b^K_h)ᵀ / √dh, rows the query word, columns the key word.
    Softmax only sees differences within a row, so read a row against its own mean."""
    from .projections import _mha

    mha = _mha(model, f"encoder.{layer}.self")
    sl = _head_slice(mha, head)
    words = english_words(model)
    E = word_parts(model, words)
    q = E @ mha.w_q.weight[sl].T + mha.w_q.bias[sl]
    k = E @ mha.w_k.weight[sl].T + mha.w_k.bias[sl]
    return pd.DataFrame((q @ k.T / math.sqrt(mha.d_head)).double().numpy(), index=words, columns=words)


def plot_vocab_scores(tables: list[pd.DataFrame], titles: list[str], suptitle: str = ""):
    """One panel per head: the vocabulary's scores, each row minus its mean (what softmax sees), one colour bar."""
    import matplotlib.pyplot as plt

    from .plotting import heatmap

    centred = [t.to_numpy() - t.to_numpy().mean(1, keepdims=True) for t in tables]
    v = max(float(np.abs(c).max()) for c in centred)
    fig, axes = plt.subplots(1, len(tables), figsize=(6.2 * len(tables) + 0.8, 6.4), layout="constrained")
    axes = np.atleast_1d(axes)
    for i, (ax, c, t, title) in enumerate(zip(axes, centred, tables, titles)):
        heatmap(
            c,
            list(t.index),
            list(t.columns),
            ax=ax,
            title=title,
            xlabel="key word",
            ylabel="query word" if i == 0 else "",
            annot=False,
            cmap="RdBu_r",
            vmin=-v,
            vmax=v,
            cbar=False,
        )
        ax.tick_params(labelsize=8)
    fig.colorbar(axes[-1].images[0], ax=list(axes), fraction=0.03, pad=0.02, label="score − its row's mean")
    if suptitle:
        fig.suptitle(suptitle)
    return fig
