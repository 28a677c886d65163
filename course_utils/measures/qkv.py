"""Notebook 02's Q, K and V of the trained model: what enters W^Q, W^K and W^V, and the three places attention happens.

    qkv_of_sentence(model, "we want to eat apple")        # {"q","k","v"}: (H, T, dh), from the layer's input
    word_qkv(model, "we want to eat apple", "eat")        # (3, d_model): one word's whole-layer q, k, v, and a note
    places_table(trace)                                   # the three places: what Q and K/V are made from, shapes
    query_inputs(model, sentence, "decoder.1.cross")      # 09: the vectors x that enter W^Q there

PyTorch convention: nn.Linear computes x · weightᵀ + bias, with weight of shape (out, in). The forum's
W^Q (x · W^Q, one query per row) is therefore `w_q.weight.T`: its rows are the columns of `w_q.weight`
(`measures.weight_maps.query_bank`). The picture of word_qkv is `views.qkv.plot_word_qkv`.
"""

from __future__ import annotations

import pandas as pd
import torch

from course_utils.core.data import encode_source, tokenize
from course_utils.core.errors import CourseInputError, UnknownWordError
from course_utils.core.places import PLACE_NAMES, PLACES, place_prefix, trace_key
from course_utils.measures.weight_maps import attention_module
from course_utils.trace.tracing import record, run_with_trace


@torch.no_grad()
def layer_input(model, sentence, layer: int = 0) -> tuple[torch.Tensor, list[str]]:
    """The input (T, d_model) of encoder layer `layer` for an English sentence, and its words: what enters
    W^Q there (trace key f"encoder.{layer}.self.q_input"; layer 0 reads the embedding, layer i > 0 layer i-1's
    output).

    Used by qkv_of_sentence and word_qkv (notebook 02, Try it: q, k and v of a word).
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
    """q, k, v (H, T, dh) of encoder layer `layer`'s self-attention, computed directly from its input.

    Used by tests/test_exercises_nb02.py; the computation is notebook 02 §2's, split into heads as in 04 §1.
    """
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
    UnknownWordError (a CourseInputError whose message suggests close words); a layer out of range a
    CourseInputError.

    Used in notebook 02 (Try it: q, k and v of a word).
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


@torch.no_grad()
def query_inputs(model, sentence, prefix: str, target=None) -> tuple[list[str], torch.Tensor]:
    """The vectors x that enter W^Q at `prefix` for one sentence (trace key f"{prefix}.q_input"):
    (tokens, (T, d_model)).

    Used in notebook 09 §3.
    """
    attention_module(model, prefix)  # a clear error for a bad prefix
    key = f"{prefix}.q_input"
    trace = run_with_trace(model, sentence, target=target, names=[key])
    return trace.query_tokens(key), trace[key]


PLACE_SOURCES = {  # core.places.PLACES -> (queries from, keys and values from, mask)
    "encoder self": ("English", "English", "padding"),
    "decoder self": ("German", "German", "causal + padding"),
    "cross": ("German", "English (encoder output)", "padding"),
}


def places_table(trace, layer: int = 0) -> pd.DataFrame:
    """The three places attention happens in one layer: what Q and K/V are made from, shapes, tokens.

    Taught in notebook 02 §4, where the same table is built by hand.
    """
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
