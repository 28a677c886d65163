"""Notebook 02: Q, K and V are three linear layers; W^Q read as a bank of queries.

    qkv_of_sentence(model, "we want to eat apple")              # {"q","k","v"}: (H, T, dh), from the layer's input
    plot_word_qkv(model, "we want to eat apple", "eat")          # the widget view: q, k, v of a word, 3 x d_model
    places_table(trace)                                          # the three places attention happens
    query_bank(model, "decoder.0.cross", head=0)                 # 09: one head's bank in a trained model

PyTorch convention: nn.Linear computes x · weightᵀ + bias, with weight of shape (out, in). The forum's
W^Q (x · W^Q, one query per row) is therefore `w_q.weight.T`: its rows are the columns of `w_q.weight`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from .data import encode_source, tokenize
from .errors import CourseInputError, UnknownWordError
from .plotting import decoder_row_labels, fixed_layout, heatmap
from .precision import DTYPE
from .tracing import PLACE_NAMES, PLACES, place_prefix, record, run_with_trace, trace_key

# A toy vocabulary and an explicit W^Q in the forum's convention (x · W^Q): one row per word, d_k = 3.
TOY_VOCAB = ["eat", "drink", "read", "apple"]
TOY_WQ = torch.tensor(  # float64 (precision.DTYPE), whatever the default dtype at import
    [
        [1.0, 0.0, 2.0],  # the query "eat" asks
        [0.0, 1.0, 1.0],  # ... "drink"
        [3.0, 0.0, 0.0],  # ... "read"
        [0.0, 2.0, 1.0],
    ],
    dtype=DTYPE,
)  # ... "apple"


def one_hot(word: str, vocab=TOY_VOCAB) -> torch.Tensor:
    """'read' -> tensor([0., 0., 1., 0.]) over `vocab`."""
    vocab = list(vocab)
    if word not in vocab:
        raise CourseInputError(f"{word!r} is not in the toy vocabulary {vocab}")
    x = torch.zeros(len(vocab))
    x[vocab.index(word)] = 1.0
    return x


def query_bank(source, prefix: str | None = None, head: int | None = None):
    """W^Q read as a bank of queries, in the forum's convention (q = x · W^Q + b): row i is the query that input
    feature i contributes. nn.Linear stores its weight as (out, in), so the bank is its transpose: the forum's
    "rows of W^Q" are columns of w_q.weight.

        query_bank(attn.w_q)                       # 02: an nn.Linear -> (d_in, d_out) = w_q.weight.T
        query_bank(model, "decoder.1.cross", 1)    # 09: head 1 of a trained model -> (bank (d_model, dh), bias (dh,))
        query_bank(model, "decoder.1.cross")       # every head -> (bank (d_model, d_model), bias (d_model,))

    With a model, `prefix` names the attention block ("encoder.0.self", "decoder.1.cross", ...) and q_head =
    x @ bank + bias = sum_i x_i * bank[i] + bias.
    """
    if prefix is None:
        if head is not None:
            raise CourseInputError("a head needs a model and a prefix: query_bank(model, 'decoder.1.cross', head)")
        return source.weight.detach().T
    mha = _mha(source, prefix)
    if head is None:
        return query_bank(mha.w_q).clone(), mha.w_q.bias.detach().clone()
    if not 0 <= head < mha.n_heads:
        raise IndexError(f"head {head} out of range: {prefix} has heads 0..{mha.n_heads - 1}")
    sl = slice(head * mha.d_head, (head + 1) * mha.d_head)
    return head_banks(mha.w_q, mha.n_heads)[head].clone(), mha.w_q.bias[sl].detach().clone()


def head_banks(linear: torch.nn.Linear, n_heads: int) -> list[torch.Tensor]:
    """Each head's own bank: the columns of W^Q (= rows of linear.weight) that head uses, each (d_in, dh)."""
    W = query_bank(linear)
    dh = W.shape[1] // n_heads
    return [W[:, h * dh : (h + 1) * dh] for h in range(n_heads)]


@torch.no_grad()
def layer_input(model, sentence, layer: int = 0) -> tuple[torch.Tensor, list[str]]:
    """The input (T, d_model) of encoder layer `layer` for an English sentence, and its words: what enters
    W^Q there (trace key f"encoder.{layer}.self.q_input"; layer 0 reads the embedding, layer i > 0 layer i-1's output).
    """
    if not 0 <= layer < len(model.encoder):
        raise IndexError(f"layer {layer} out of range: the encoder has layers 0..{len(model.encoder) - 1}")
    words = tokenize(sentence)
    key = trace_key("encoder self", layer, "q_input")
    src = torch.tensor([encode_source(model.src_vocab, words, model.cfg.max_len)])
    with record(model, key) as cache:
        model.encode(src)  # the encoder alone: no translation needed
    return cache[key][0], words


@torch.no_grad()
def qkv_of_sentence(model, sentence, layer: int = 0) -> tuple[dict[str, torch.Tensor], list[str]]:
    """q, k, v (H, T, dh) of encoder layer `layer`'s self-attention, computed directly from its input."""
    x, words = layer_input(model, sentence, layer)
    attn = model.encoder[layer].self_attn
    out = {kind: attn.split_heads(getattr(attn, f"w_{kind}")(x[None]))[0] for kind in ("q", "k", "v")}
    return out, words


@torch.no_grad()
def word_qkv(model, sentence, word: str, layer: int = 0) -> tuple[torch.Tensor, str]:
    """(3, d_model): the whole-layer q, k and v of one word (encoder self-attention of `layer`, no split into heads),
    and a note on where the word was read.

    The word is read at its (first) position in the sentence; a vocabulary word that is not in the
    sentence is read on its own (a one-word sentence, position 0). An unknown word raises
    UnknownWordError (a CourseInputError whose message suggests close words); a layer out of range a CourseInputError.
    """
    if not 0 <= int(layer) < len(model.encoder):
        raise CourseInputError(f"layer {layer} out of range: the encoder has layers 0..{len(model.encoder) - 1}")
    word = str(word).strip().lower()
    if not word:
        raise CourseInputError("type a word, e.g. 'eat'")
    if word not in model.src_vocab.words:
        raise UnknownWordError(word, model.src_vocab.words, "English")
    words = tokenize(sentence)
    if word in words:
        pos, note = words.index(word), f"in {' '.join(words)!r}, position {words.index(word)}"
    else:
        words, pos, note = [word], 0, "alone (not in the sentence), position 0"
    x, _ = layer_input(model, words, int(layer))  # (T, d_model): what enters W^Q, W^K and W^V
    attn = model.encoder[int(layer)].self_attn
    return torch.stack([getattr(attn, f"w_{kind}")(x[pos]) for kind in ("q", "k", "v")]), note


def plot_word_qkv(model, sentence="we want to eat apple", word: str = "eat", layer: int = 0):
    """The widget view of notebook 02: the whole-layer q, k and v of one word (d_model numbers each) as a
    3 x d_model heatmap, one row per layer (encoder self-attention)."""
    M, note = word_qkv(model, sentence, word, layer)
    m = M.numpy()
    lim = float(np.abs(m).max())
    fig, ax = plt.subplots(figsize=(10, 2.3))
    im = ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")  # imshow, not seaborn: fast re-render
    ax.set_yticks(range(3), [f"{kind}  |{kind}|={np.linalg.norm(r):.1f}" for kind, r in zip("qkv", m)])
    ax.set_xticks(range(0, m.shape[1], 8))
    ax.set_xlabel(f"output feature of w_q, w_k, w_v (0..{m.shape[1] - 1})")
    ax.set_title(f"encoder layer {layer}: q, k, v of {word.strip().lower()!r} {note}", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.01, label="value")
    fixed_layout(fig, left=0.13, right=0.95, bottom=0.22, top=0.86)
    return fig


def plot_query_bank(linear: torch.nn.Linear, n_heads: int, title: str = "$W^Q$ as a bank of queries"):
    """Heatmap of W^Q = weightᵀ (d_in rows, d_out columns) with a line between the heads' column blocks."""
    W = query_bank(linear).numpy()
    lim = float(np.abs(W).max())
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    im = ax.imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    dh = W.shape[1] // n_heads
    for h in range(1, n_heads):
        ax.axvline(h * dh - 0.5, color="black", lw=2)
    for h in range(n_heads):
        ax.text(h * dh + dh / 2 - 0.5, -1.5, f"head {h}", ha="center", va="bottom", fontsize=9)
    ax.set_xlabel("output feature (column of $W^Q$ = row of w_q.weight)")
    ax.set_ylabel("input feature i (row i of $W^Q$ = one query)")
    ax.set_title(title, pad=18)
    fig.colorbar(im, ax=ax, fraction=0.046, label="weight")
    fig.set_layout_engine("tight")  # laid out when drawn: once per PNG in a widget
    return fig


def plot_singular_values(
    spectra: dict[str, np.ndarray], title: str = "Singular values", band=None, band_label: str = "range"
):
    """What training did to each direction of a matrix: trained / initial singular value, direction by direction.

    spectra: {"<name> trained": s, "<name> init": s0, ...} (singular values, largest first), e.g. "$W^Q$ trained";
    one panel per name (equal sizes, shared log y axis), a line at 1 (= unchanged), and the weak directions of the
    initial matrix (below 10 % of its largest singular value) shaded. band: optional {"<name>": (low, high)} per-direction
    ratios drawn as a light range behind the line (e.g. over seeds), labelled band_label.
    """
    import re

    from .plotting import KIND_COLOURS

    names = [n[: -len(" trained")] for n in spectra if n.endswith(" trained")]
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 3.4), sharey=True, squeeze=False)
    for i, (ax, name) in enumerate(zip(axes[0], names)):
        s, s0 = np.asarray(spectra[f"{name} trained"]), np.asarray(spectra[f"{name} init"])
        letter = re.search(r"W\^\{?([A-Za-z])", name)
        colour = KIND_COLOURS.get(letter.group(1).lower(), f"C{i}") if letter else f"C{i}"
        idx = np.arange(1, len(s) + 1)
        n_strong = int((s0 > 0.1 * s0[0]).sum())
        ax.axvspan(n_strong + 0.5, len(s) + 0.5, color="0.88", zorder=0, label="weak at init (< 10 % of the largest)")
        if band is not None and name in band:
            lo, hi = band[name]
            ax.fill_between(idx, lo, hi, color=colour, alpha=0.2, lw=0, label=band_label)
        ax.axhline(1.0, color="0.3", lw=0.8, ls="--")
        ax.plot(idx, s / s0, marker="o", ms=2.5, lw=1, color=colour, label=name)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(plt.LogLocator(base=2))  # ticks at ..., 0.25, 0.5, 1, 2, ...
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))  # 0.5, 1, 2 instead of 2^x
        ax.yaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xlim(0.5, len(s) + 0.5)
        ax.set_xlabel("direction (1 = strongest)")
        ax.set_title(name, fontsize=10)
    axes[0, 0].set_ylabel("trained / initial singular value\n(log scale; 1 = unchanged)")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.suptitle(title, fontsize=11)
    fig.set_layout_engine("tight")  # laid out when drawn: once per PNG in a widget
    return fig


# ---- 09: one head's W^Q in a trained model, and what enters it ----


def _mha(model, prefix: str):
    side, layer, place = prefix.split(".")
    layers = model.encoder if side == "encoder" else model.decoder
    if not 0 <= int(layer) < len(layers):
        raise IndexError(f"layer {layer} out of range: the {side} has layers 0..{len(layers) - 1}")
    return layers[int(layer)].self_attn if place == "self" else layers[int(layer)].cross_attn


@torch.no_grad()
def query_inputs(model, sentence, prefix: str, target=None) -> tuple[list[str], torch.Tensor]:
    """The vectors x that enter W^Q at `prefix` for one sentence (trace key f"{prefix}.q_input"): (tokens, (T, d_model))."""
    _mha(model, prefix)  # a clear error for a bad prefix
    key = f"{prefix}.q_input"
    trace = run_with_trace(model, sentence, target=target, names=[key])
    return trace.query_tokens(key), trace[key]


PLACE_SOURCES = {  # tracing.PLACES -> (queries from, keys and values from, mask)
    "encoder self": ("English", "English", "padding"),
    "decoder self": ("German", "German", "causal + padding"),
    "cross": ("German", "English (encoder output)", "padding"),
}


def places_table(trace, layer: int = 0) -> pd.DataFrame:
    """The three places attention happens in one layer: what Q and K/V are made from, shapes, tokens."""
    rows = []
    for place in PLACES:
        qfrom, kvfrom, mask = PLACE_SOURCES[place]
        p = place_prefix(place, layer)
        rows.append(
            {
                "place": PLACE_NAMES[place],
                "trace key": p,
                "Q from": qfrom,
                "K, V from": kvfrom,
                "mask": mask,
                "q (H, Tq, dh)": tuple(trace[f"{p}.q"].shape),
                "k (H, Tk, dh)": tuple(trace[f"{p}.k"].shape),
                "v (H, Tk, dh)": tuple(trace[f"{p}.v"].shape),
                "query tokens": " ".join(trace.tokens(f"{p}.q")),
                "key tokens": " ".join(trace.tokens(f"{p}.k")),
            }
        )
    return pd.DataFrame(rows).set_index("place")


def plot_three_places(trace, layer: int = 0, head: int = 0):
    """Attention weights of the three places (one head), side by side, each labelled with its tokens.

    Decoder rows are labelled 'input → output': the row of decoder input token i produces the next word.
    """
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")  # laid out when drawn
    for ax, place in zip(axes, PLACES):
        qfrom, kvfrom, _ = PLACE_SOURCES[place]
        key = f"{place_prefix(place, layer)}.weights"
        rows, ylabel = trace.query_tokens(key), f"query ({qfrom})"
        if key.startswith("decoder"):
            rows, ylabel = decoder_row_labels(rows, trace.tgt_tokens[1:]), f"query ({qfrom} input → next word)"
        heatmap(
            trace[key][head],
            rows,
            trace.key_tokens(key),
            ax=ax,
            vmin=0,
            vmax=1,
            title=f"{PLACE_NAMES[place]}\n(layer {layer}, head {head})",
            xlabel=f"key ({kvfrom.split()[0]})",
            ylabel=ylabel,
            cbar=False,
        )
    # one colour bar for all three panels: taken from every panel alike, so the panels keep the same size
    fig.colorbar(axes[0].images[0], ax=list(axes), fraction=0.02, pad=0.01, label="attention weight")
    return fig
