"""Checkers for notebook 05 (training the tiny English→German translator)."""

from __future__ import annotations

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


_SHIFT_CASES = ("wir wollen brot essen", "ich lese eine zeitung", "er kann einen brief lesen", "du trinkst milch")


def _as_pairs(labels):
    """A learner's labels as (input, output) pairs: accepts 'a → b', 'a -> b' or (a, b); None if neither."""
    try:
        pairs = []
        for label in labels:
            if isinstance(label, str):
                parts = label.replace("->", "→").split("→")
                if len(parts) != 2:
                    return None
                pairs.append((parts[0].strip(), parts[1].strip()))
            else:
                a, b = label
                pairs.append((str(a).strip(), str(b).strip()))
        return pairs
    except (TypeError, ValueError):
        return None


def check_shift_labels(shift_labels) -> bool:
    """Exercise 3: shift_labels(german) returns one 'input → output' label per decoder row when the decoder reads
    the German sentence teacher-forced: inputs <bos> + words, outputs words + <eos>."""
    if not callable(shift_labels):
        return feedback(False, "", f"give your function shift_labels itself (no brackets); got {shift_labels!r}.")
    for german in _SHIFT_CASES:
        words = german.split()
        want = list(zip(["<bos>", *words], [*words, "<eos>"]))
        try:
            got = shift_labels(german)
        except Exception as err:  # the learner's code: report, never raise
            return feedback(False, "", f"your function raised {type(err).__name__}: {err}")
        if got is None:
            return feedback(False, "", "your function returns nothing yet: write its body and return the list.")
        pairs = _as_pairs(got) if not isinstance(got, str) else None
        if pairs is None:
            return feedback(False, "", f"return a list of labels such as '<bos> → wir'; got {got!r}.")
        if pairs == want:
            continue
        if pairs == [(w, w) for w in words] or pairs == [(a, a) for a, _ in want]:
            hint = "each row reads one word and predicts the NEXT one: the output is shifted by one."
        elif pairs == want[1:]:
            hint = "the decoder's first input is <bos>; its row predicts the first German word."
        elif pairs == want[:-1]:
            hint = "the row of the last German word predicts the end token <eos>: one row more."
        elif pairs == [(b, a) for a, b in want]:
            hint = "input and output are swapped: the row's input comes first, then the word it predicts."
        else:
            hint = "inputs are <bos> and the German words, outputs the German words and <eos>, pair them up."
        return feedback(False, "", f"for {german!r} you get {got!r}; {hint}")
    return feedback(
        True,
        "one row per decoder input: <bos> → first word, …, last word → <eos>; the query of each row predicts the "
        "next word.",
        "",
    )
