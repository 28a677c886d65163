"""Weight matrices read as maps: W^Q as a bank of queries, and per head what it compares and what it writes.

    query_bank(attn.w_q)                      # 02: W^Q in the forum's convention, (d_in, d_out) = w_q.weight.T
    query_bank(model, "decoder.1.cross", 1)   # 09: one head's bank (d_model, dh) and its bias (dh,)
    qk_map(model, "encoder.0.self", 0)        # 09: W^Q_h (W^K_h)ᵀ, what head 0 compares (basis-free)
    ov_map(model, "encoder.0.self", 0)        # 09: W^V_h W^O_h, what head 0 writes
    vocab_scores(model, head=0)               # 09: the score every English word gives every other, one head
    head_bilinear(minilm, layer=0, head=2)    # 10: W^Q_h (W^K_h)ᵀ of the pretrained encoder

A prefix names an attention block as the trace keys do ("encoder.0.self", "decoder.1.cross": `core.places`).
"""

from __future__ import annotations

import math

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from course_utils.core.errors import CourseInputError
from course_utils.core.model import Translator
from course_utils.core.pretrained import MiniLM


def head_bilinear(model: MiniLM, layer: int, head: int) -> torch.Tensor:
    """W^Q_h W^K_hᵀ (d_model, d_model) in the course's row-vector convention: score(x, y) = x·M·yᵀ / √dh + bias
    terms, where x, y are the layer inputs at the query and key positions (the forum's W^Q is w_q.weight.T).

    Used in notebook 10 §6; the course model's version is qk_map (04 §5, 09 §3).
    """
    attn = model.layers[layer].self_attn
    head_slice(attn, head)  # checks the head number
    return attn.W_QK[head].double()


# ---------------------------------------------------------------- 09, Claim F6: what a head compares and what it writes


def head_slice(mha, head: int) -> slice:
    """The slice of head `head`'s dh features in an attention block; a head out of range is an IndexError.

    Used by head_bilinear, qk_map, ov_map and vocab_scores (notebooks 09 §3, 10 §6).
    """
    if not 0 <= head < mha.n_heads:
        raise IndexError(f"head {head} out of range: heads are 0..{mha.n_heads - 1}")
    return slice(head * mha.d_head, (head + 1) * mha.d_head)


def qk_map(model: Translator, prefix: str, head: int) -> torch.Tensor:
    """W^Q_h (W^K_h)ᵀ, (d_model, d_model), in the forum's row convention: the score a query vector x gives a key
    vector y in head h is x · W^Q_h (W^K_h)ᵀ · yᵀ / √dh, plus bias terms. Basis-free: rotating the head's query and
    key columns by the same orthogonal R leaves it unchanged. Its rank is at most dh.

    Taught in notebooks 04 §5 and 09 §3.
    """

    mha = attention_module(model, prefix)
    head_slice(mha, head)  # checks the head number
    return mha.W_QK[head]


def ov_map(model: Translator, prefix: str, head: int) -> torch.Tensor:
    """W^V_h W^O_h, (d_model, d_model), in the forum's row convention: a key vector y that gets all of head h's
    weight adds y · W^V_h W^O_h to the block's output (plus b^V_h W^O_h, the same for every word). W^V_h is head
    h's columns of W^V = w_v.weight.T; W^O_h is head h's ROWS of W^O = w_o.weight.T, i.e. its columns of
    w_o.weight.

    Taught in notebook 09 §3 (exercise 2).
    """

    mha = attention_module(model, prefix)
    head_slice(mha, head)  # checks the head number
    return mha.W_OV[head]


def english_words(model: Translator) -> list[str]:
    """The English vocabulary without <pad>, <bos> and <eos>.

    Used in notebook 09 §3.
    """
    return model.src_vocab.words


@torch.no_grad()
def word_parts(model: Translator, words=None) -> torch.Tensor:
    """(n_words, d_model): each English word's part of the encoder input, token embedding · √d_model (the position
    vector, about a seventh of its size, left out; notebook 07).

    Taught in notebook 09 §3.
    """
    words = english_words(model) if words is None else list(words)
    return model.src_embed.tok.weight[model.src_vocab.encode(words)] * model.src_embed.scale


@torch.no_grad()
def vocab_scores(model: Translator, head: int, layer: int = 0) -> pd.DataFrame:
    """Encoder self-attention of `layer`, head h, between word parts (layer 0: what enters it, without position):
    score[i, j] = (e_i W^Q_h + b^Q_h)(e_j W^K_h + b^K_h)ᵀ / √dh, rows the query word, columns the key word.
    Softmax only sees differences within a row, so read a row against its own mean.

    Taught in notebook 09 §3.
    """

    mha = attention_module(model, f"encoder.{layer}.self")
    sl = head_slice(mha, head)
    words = english_words(model)
    E = word_parts(model, words)
    q = E @ mha.w_q.weight[sl].T + mha.w_q.bias[sl]
    k = E @ mha.w_k.weight[sl].T + mha.w_k.bias[sl]
    return pd.DataFrame((q @ k.T / math.sqrt(mha.d_head)).double().numpy(), index=words, columns=words)


def query_bank(source, prefix: str | None = None, head: int | None = None):
    """W^Q read as a bank of queries, in the forum's convention (q = x · W^Q + b): row i is the query that input
    feature i contributes. nn.Linear stores its weight as (out, in), so the bank is its transpose: the forum's
    "rows of W^Q" are columns of w_q.weight.

        query_bank(attn.w_q)                       # 02: an nn.Linear -> (d_in, d_out) = w_q.weight.T
        query_bank(model, "decoder.1.cross", 1)    # 09: head 1 of a trained model -> (bank (d_model, dh), bias (dh,))
        query_bank(model, "decoder.1.cross")       # every head -> (bank (d_model, d_model), bias (d_model,))

    With a model, `prefix` names the attention block ("encoder.0.self", "decoder.1.cross", ...) and q_head =
    x @ bank + bias = sum_i x_i * bank[i] + bias.

    Taught in notebooks 02 §3 and 09 §3.
    """
    if prefix is None:
        if head is not None:
            raise CourseInputError("a head needs a model and a prefix: query_bank(model, 'decoder.1.cross', head)")
        return source.weight.detach().T
    mha = attention_module(source, prefix)
    if head is None:
        return query_bank(mha.w_q).clone(), mha.w_q.bias.detach().clone()
    if not 0 <= head < mha.n_heads:
        raise IndexError(f"head {head} out of range: {prefix} has heads 0..{mha.n_heads - 1}")
    sl = slice(head * mha.d_head, (head + 1) * mha.d_head)
    return head_banks(mha.w_q, mha.n_heads)[head].clone(), mha.w_q.bias[sl].detach().clone()


def head_banks(linear: torch.nn.Linear, n_heads: int) -> list[torch.Tensor]:
    """Each head's own bank: the columns of W^Q (= rows of linear.weight) that head uses, each (d_in, dh).

    Used in notebook 09 §3.
    """
    W = query_bank(linear)
    dh = W.shape[1] // n_heads
    return [W[:, h * dh : (h + 1) * dh] for h in range(n_heads)]


# ---- the attention block a trace-key prefix names ----


def attention_module(model, prefix: str):
    """The attention block of a Translator that `prefix` names ("encoder.0.self", "decoder.1.cross", ...); a layer
    out of range is an IndexError.

    Used by qk_map, ov_map, vocab_scores, query_bank and measures.qkv.query_inputs (notebook 09 §3).
    """
    side, layer, place = prefix.split(".")
    layers = model.encoder if side == "encoder" else model.decoder
    if not 0 <= int(layer) < len(layers):
        raise IndexError(f"layer {layer} out of range: the {side} has layers 0..{len(layers) - 1}")
    return layers[int(layer)].self_attn if place == "self" else layers[int(layer)].cross_attn


# ---- 09, Claims F9 and B12: what each head writes, over the vocabulary ----


@torch.no_grad()
def written_vectors(model: Translator, head: int, prefix: str = "encoder.0.self") -> torch.Tensor:
    """(n_words, d_model): what each English word's part e writes through head h when it gets all the weight,
    e · W^V_h W^O_h (ov_map; the bias term, the same for every word, left out).

    Used in notebook 09 (Claims F9 and B12: what a head writes, trained and untrained).
    """
    return word_parts(model) @ ov_map(model, prefix, head)


def n_directions(M: torch.Tensor) -> float:
    """How many directions a matrix's rows really use: the participation ratio (Σσ²)² / Σσ⁴ of its singular values
    σ (d for d equal stretches, 1 for a single direction).

    Used in notebook 09 (Claim F9: does a head's W^V W^O specialise into fewer directions than at the start?).
    """
    s2 = torch.linalg.svdvals(M.double()) ** 2
    return float(s2.sum() ** 2 / (s2**2).sum())
