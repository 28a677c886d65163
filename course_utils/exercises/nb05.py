"""Checkers for notebook 05 (training the tiny English→German translator)."""

from __future__ import annotations

import torch

from ..data import encode_source, encode_target
from . import feedback

D_MODEL, D_FF = 64, 128


def check_decoder_extra(n_extra) -> bool:
    """Exercise 1: how many more parameters a decoder layer has than an encoder layer (standard config)."""
    attention = 4 * (D_MODEL * D_MODEL + D_MODEL)  # W^Q, W^K, W^V, W^O with biases
    layer_norm = 2 * D_MODEL  # gain and bias
    want = attention + layer_norm  # the cross-attention and the LayerNorm after it
    try:
        n = int(n_extra)
    except (TypeError, ValueError):
        return feedback(False, "", f"give a whole number of parameters; got {n_extra!r}.")
    if n == attention:
        return feedback(
            False,
            "",
            "that is one attention block; after it the decoder layer has one more LayerNorm (a gain and a bias of d_model each).",
        )
    if n == 4 * D_MODEL * D_MODEL or n == 4 * D_MODEL * D_MODEL + layer_norm:
        return feedback(False, "", "nn.Linear has a bias of d_model numbers next to its d_model × d_model weights.")
    if n != want:
        return feedback(
            False, "", "compare the two layers in model.py: what does DecoderLayer have that EncoderLayer has not?"
        )
    return feedback(
        True,
        f"{want} = one cross-attention block 4·(64·64 + 64) = {attention} plus one LayerNorm 2·64 = {layer_norm}.",
        "",
    )


def check_emitting_row(row_word) -> bool:
    """Exercise 2: in 'we want to eat bread' (decoder input <bos> wir wollen brot essen), which row's query
    produces the output word 'brot'?"""
    inputs = ["<bos>", "wir", "wollen", "brot", "essen"]
    outputs = ["wir", "wollen", "brot", "essen", "<eos>"]
    want = inputs[outputs.index("brot")]
    if not isinstance(row_word, str):
        return feedback(
            False, "", f"answer with the row's decoder input token, a word such as 'wir'; got {row_word!r}."
        )
    row_word = row_word.split("→")[0].strip()  # a heatmap label "wollen → brot" names the same row
    if row_word == want:
        return feedback(
            True,
            "the query at input 'wollen' predicts the next word, 'brot' (row label 'wollen → brot'); "
            "in the row of input 'brot' the model already knows brot and predicts 'essen'.",
            "",
        )
    if row_word == "brot":
        return feedback(
            False, "", "the row of input 'brot' (label 'brot → essen') reads brot and predicts the word after it."
        )
    return feedback(
        False, "", "the query at input position i predicts output word i + 1: find the input just before 'brot'."
    )


@torch.no_grad()
def _probability(model, english: str, german_prefix: str, word: str) -> float:
    src = torch.tensor([encode_source(model.src_vocab, english, model.cfg.max_len)])
    tgt = torch.tensor([encode_target(model.tgt_vocab, german_prefix, model.cfg.max_len)[:-1]])
    return model(src, tgt)[0, -1].softmax(-1)[model.tgt_vocab.stoi[word]].item()


def check_drink_bread(p_trinken, p_essen) -> bool:
    """Exercise 3: P(next = 'trinken') and P(next = 'essen') for 'i can drink bread' after 'ich kann brot'."""
    from ..training import load_standard_model

    model = load_standard_model().model
    want_t = _probability(model, "i can drink bread", "ich kann brot", "trinken")
    want_e = _probability(model, "i can drink bread", "ich kann brot", "essen")
    try:
        pt, pe = float(p_trinken), float(p_essen)
    except (TypeError, ValueError):
        return feedback(False, "", f"give two probabilities (numbers between 0 and 1); got {p_trinken!r}, {p_essen!r}.")
    if abs(pt - want_e) < 0.01 and abs(pe - want_t) < 0.01:
        return feedback(False, "", "the two numbers are swapped.")
    if abs(pt - want_t) >= 0.01 or abs(pe - want_e) >= 0.01:
        return feedback(
            False,
            "",
            "use next_word_probs(model, 'i can drink bread', 'ich kann brot') and read the "
            "entries 'trinken' and 'essen' (the English sentence, then the German words so far).",
        )
    share = "almost all" if want_e > 0.9 else "most" if want_e > 0.5 else "a good share"
    return feedback(
        True,
        f"trinken {want_t:.2f}, essen {want_e:.2f}: the English says drink, yet {share} of the "
        "probability goes to the verb that bread always came with.",
        "",
    )
