"""Checkers for notebook 05 (training the tiny English→German translator)."""

from __future__ import annotations

import math
import re

import torch
from torch import nn

from course_utils.exercises.framework import feedback, not_answered, uses


def _uses_course_code(fn, task: str) -> bool:
    """True (and the ❌ line printed) when fn is, or names, the course's own code (one static check, `uses`)."""
    used = uses(fn, ("course_utils", "nb05"))
    if used:
        feedback(False, "", f"your function uses {used}, the course's own code: {task}")
    return bool(used)


def _not_a_function(fn, name: str) -> bool:
    """True (and the ❌ line printed) when fn is not a function: an int, a string, a list, a dict, a result."""
    if callable(fn):
        return False
    return not feedback(
        False, "", f"give your function {name} itself (no brackets); got {type(fn).__name__} {_short(fn)}."
    )


def _short(x) -> str:
    """repr(x) on one line, at most 60 characters."""
    text = " ".join(repr(x).split())
    return text if len(text) <= 60 else text[:57] + "..."


_LAYER_SIZES = ((64, 128), (32, 64), (16, 48), (128, 256))  # (d_model, d_ff): the course's first


def layer_count(d, f, decoder, *, bias=True, norms=2, w_o=True, ff_linears=2, cross=True) -> int:
    """Parameters of one layer from its parts (norms: numbers per LayerNorm in units of d_model, 2 = gain and
    bias); the keyword arguments other than the defaults are the typical mistakes.
    Used in notebook 05 (an exercise)."""
    linear = d * d + (d if bias else 0)
    attention = (4 if w_o else 3) * linear
    ff = (d * f + (f if bias else 0)) + (f * d + (d if bias else 0)) * (ff_linears - 1)
    n_attention = 2 if decoder and cross else 1
    n_norms = n_attention + 1
    return n_attention * attention + ff + n_norms * norms * d


_LAYER_MISTAKES = (
    (dict(bias=False), "every nn.Linear(n_in, n_out) has a bias of n_out numbers next to its n_in × n_out weights."),
    (dict(norms=0), "each LayerNorm has parameters too: a gain and a bias of d_model numbers each."),
    (dict(norms=1), "a LayerNorm has a gain AND a bias, d_model numbers each."),
    (dict(w_o=False), "an attention block has four linear layers: W^Q, W^K, W^V and the output projection W^O."),
    (dict(ff_linears=1), "the feed-forward block has two linear layers, d_model → d_ff and d_ff → d_model."),
    (
        dict(cross=False),
        "a decoder layer has two attention blocks, self-attention and cross-attention, each followed by a "
        "residual connection and a LayerNorm.",
    ),
)


def _built_layer_counts(d_model: int, d_ff: int) -> tuple[int, int]:
    """(encoder layer, decoder layer) parameters of a model built with these sizes: the truth the checker uses."""
    from course_utils.core.model import ModelConfig, build_model, parameter_counts

    counts = parameter_counts(build_model(ModelConfig(d_model=d_model, d_ff=d_ff)))
    return counts["encoder layer 0"], counts["decoder layer 0"]


def _as_count(v):
    """A learner's count as an int (33472, 33472.0, a one-number tensor); None when it is not one whole number."""
    if isinstance(v, (bool, str, bytes)):
        return None
    try:
        x = float(v.item() if isinstance(v, torch.Tensor) else v)
    except (TypeError, ValueError, RuntimeError):
        return None
    return int(x) if math.isfinite(x) and x == int(x) else None


def check_layer_parameters(layer_parameters) -> bool:
    """Exercise 1: layer_parameters(d_model, d_ff, decoder=False) counts one encoder (or decoder) layer's
    parameters from its parts; tried on four sizes, both kinds, against parameter_counts of built models.
    Used in notebook 05 (its Exercises section)."""
    if _not_a_function(layer_parameters, "layer_parameters") or _uses_course_code(
        layer_parameters, "count the parts of section 2's module tree yourself, from d_model and d_ff."
    ):
        return False
    cases = [(d, f, dec) for d, f in _LAYER_SIZES for dec in (False, True)]
    got = {}
    for d, f, dec in cases:
        try:
            got[d, f, dec] = layer_parameters(d, f, decoder=dec)
        except Exception as err:  # the learner's code: report, never raise
            return feedback(False, "", f"your function raised {type(err).__name__}: {err}")
    if all(v is None for v in got.values()):
        return not_answered("your function returns nothing: write its body, then re-run.")
    for c, v in got.items():
        got[c] = _as_count(v)
        if got[c] is None:
            return feedback(False, "", f"return one whole number, the count; got {type(v).__name__} {_short(v)}.")
    want = {}
    for d, f in _LAYER_SIZES:
        want[d, f, False], want[d, f, True] = _built_layer_counts(d, f)
    assert all(want[c] == layer_count(*c) for c in cases)  # the parts below are the model's parts
    if got == want:
        d, f = _LAYER_SIZES[0]
        extra = want[d, f, True] - want[d, f, False]
        return feedback(
            True,
            f"every size right. For the course model (d_model {d}, d_ff {f}): encoder layer {want[d, f, False]}, "
            f"decoder layer {want[d, f, True]}, {extra} more: the cross-attention block 4·({d}·{d} + {d}) and its "
            f"LayerNorm 2·{d}.",
            "",
        )
    for kwargs, hint in _LAYER_MISTAKES:
        if all(got[c] == layer_count(*c, **kwargs) for c in cases):
            return feedback(False, "", hint)
    first = next(c for c in cases if got[c] != want[c])
    if all(got[c] == want[c] for c in cases if c[:2] == _LAYER_SIZES[0]):
        return feedback(
            False,
            "",
            "right for d_model 64, d_ff 128 only: count from the arguments d_model and d_ff, not the course's sizes.",
        )
    d, f, dec = first
    kind = "a decoder" if dec else "an encoder"
    return feedback(
        False,
        "",
        f"for {kind} layer with d_model {d}, d_ff {f} your function gives {got[first]}; a built model has "
        f"{want[first]}. Go through the module tree of section 2, part by part.",
    )


def check_emitting_row(row_word) -> bool:
    """Exercise 2: in 'we want to eat bread' (decoder input <bos> wir wollen brot essen), which row's query
    produces the output word 'brot'?
    Used in notebook 05 (its Exercises section)."""
    inputs = ["<bos>", "wir", "wollen", "brot", "essen"]
    outputs = ["wir", "wollen", "brot", "essen", "<eos>"]
    want = inputs[outputs.index("brot")]
    if row_word is None:
        return not_answered("answer with the row's decoder input token, a word such as 'wir', then re-run.")
    if not isinstance(row_word, str):
        return feedback(
            False,
            "",
            f"answer with the row's decoder input token, a word such as 'wir'; got {type(row_word).__name__} "
            f"{_short(row_word)}.",
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
    the German sentence teacher-forced: inputs <bos> + words, outputs words + <eos>; written without the
    course's decoder_row_labels or any other course function (refused, called or passed as it is).
    Used in notebook 05 (its Exercises section)."""
    if _not_a_function(shift_labels, "shift_labels") or _uses_course_code(
        shift_labels,
        "pair the inputs (<bos> and the German words) with the outputs (the German words and <eos>) yourself.",
    ):
        return False
    for german in _SHIFT_CASES:
        words = german.split()
        want = list(zip(["<bos>", *words], [*words, "<eos>"]))
        try:
            got = shift_labels(german)
        except Exception as err:  # the learner's code: report, never raise
            return feedback(False, "", f"your function raised {type(err).__name__}: {err}")
        if got is None:
            return not_answered("your function returns nothing: write its body and return the list.")
        pairs = _as_pairs(got) if not isinstance(got, str) else None
        if pairs is None:
            return feedback(False, "", f"return a list of labels such as '<bos> → wir'; got {_short(got)}.")
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
        return feedback(False, "", f"for {german!r} you get {_short(got)}; {hint}")
    return feedback(
        True,
        "one row per decoder input: <bos> → first word, …, last word → <eos>; the query of each row predicts the "
        "next word.",
        "",
    )


# ---- Predict before you look: the loss of the untrained model ----

N_GERMAN = 41  # tokens in the German vocabulary, the specials included


def check_first_loss(my_first_loss, first_loss: float) -> bool:
    """Section 3's prompt: the learner's guess of the untrained model's loss on the first batch, compared with the
    loss the next cell computes. Right within 15 % of it or of the even-spread loss ln 41.
    Used in notebook 05 §3 (its exercise)."""
    if my_first_loss is None:
        return not_answered(
            "write your guess (a number) into my_first_loss in the cell above, run it, then re-run this one."
        )
    if isinstance(my_first_loss, (str, bytes, bool)):
        return feedback(False, "", f"give your guess as a number, without quotes; got {_short(my_first_loss)}.")
    try:
        guess = float(my_first_loss)
    except (TypeError, ValueError, RuntimeError):
        return feedback(
            False, "", f"give your guess as one number; got {type(my_first_loss).__name__} {_short(my_first_loss)}."
        )
    if not math.isfinite(guess):
        return feedback(False, "", f"give your guess as a finite number; got {guess}.")
    even = math.log(N_GERMAN)  # −ln(1/41): every one of the 41 tokens equally likely
    why = (
        f"A model that has learned nothing gives each of the {N_GERMAN} German tokens about the same probability, "
        f"1/{N_GERMAN}, so its loss is about −ln(1/{N_GERMAN}) = ln {N_GERMAN} = {even:.2f}. The random start is a "
        f"little worse ({first_loss:.2f}): its scores are not all equal, so some wrong words get more than "
        f"1/{N_GERMAN} and the right word, on average, less."
    )
    if 0.85 * even <= guess <= 1.15 * first_loss:
        return feedback(True, f"{guess:g} against {first_loss:.2f}. {why}", "")
    if guess <= 0:
        return feedback(False, "", f"a loss −ln p is never below 0, and 0 means certain and right. {why}")
    if guess < 1:
        hint = "that would be a model that gives the right word more than a third of its probability"
    elif guess < 0.85 * even:
        hint = "lower than even a model that spreads its probability evenly would get"
    elif guess >= N_GERMAN - 1:
        hint = f"the loss is −ln p, not the number of choices: p of the right word is about 1/{N_GERMAN}"
    else:
        hint = "higher than the start gives"
    return feedback(False, "", f"your guess {guess:g}, the untrained model {first_loss:.2f}: {hint}. {why}")


# ---- Exercise 4: one training step, from labels ----
#
# The learner's step gets `labels` = w1 … wn <eos> (right-padded with 0), i.e. tgt[:, 1:] of section 3, and must
# build the decoder input itself: <bos> in front, the last column dropped (it holds only <eos> or <pad>). That input
# is exactly tgt[:, :-1], so a right step is bit-identical to the loop of section 3.

BOS = 1  # index of <bos> in the German vocabulary


def reference_step(
    model, opt, src, labels, *, bos=True, drop_last=True, zero_grad=True, ignore_pad=True, copy=False, axes="bt"
) -> float:
    """The reference step on (src, labels) (all flags default) and its typical mistakes; axes="tb" flattens the
    scores position-major but the labels sentence-major, so each row of scores is scored against another word.
    Used in notebook 05 (an exercise)."""
    loss_fn = nn.CrossEntropyLoss(ignore_index=0) if ignore_pad else nn.CrossEntropyLoss()
    if copy:  # the decoder reads the labels themselves and is asked for the same tokens
        dec_in, gold = labels, labels
    elif not bos:  # no <bos>: read w1 … and predict w2 …; the first word is never predicted
        dec_in, gold = labels[:, :-1], labels[:, 1:]
    else:
        start = torch.full((labels.shape[0], 1), BOS, dtype=labels.dtype)
        dec_in = torch.cat([start, labels[:, :-1] if drop_last else labels], dim=1)
        gold = labels
    logits = model(src, dec_in)
    if axes == "tb":
        logits = logits.transpose(0, 1)
    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
    if zero_grad:
        opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


_MISTAKES = {
    "copy": (
        dict(copy=True),
        "the decoder reads the labels themselves, so at every position it sees the word it must predict and "
        "learns to copy: put <bos> in front of what it reads.",
    ),
    "no <bos>": (
        dict(bos=False),
        "without <bos> in front the first German word is never predicted, and each row sees a different word "
        "than in section 3: the decoder input starts with <bos>.",
    ),
    "no zero_grad": (
        dict(zero_grad=False),
        "the first step is right, the second is not: gradients add up across steps until opt.zero_grad() "
        "clears them, before loss.backward().",
    ),
    "no ignore_index": (
        dict(ignore_pad=False),
        "the loss also scores the <pad> positions: use nn.CrossEntropyLoss(ignore_index=0).",
    ),
    "axes swapped": (
        dict(axes="tb"),
        "the scores and the labels are flattened in different orders (one position by position, the other sentence "
        "by sentence), so each row of scores is scored against another sentence's word: flatten both the same way, "
        "logits.reshape(-1, logits.shape[-1]) with labels.reshape(-1).",
    ),
}

_AXES = (
    "the loss reads the wrong axis as the vocabulary: nn.CrossEntropyLoss wants scores (N, vocabulary) with "
    "labels (N,) — flatten with logits.reshape(-1, logits.shape[-1]) and labels.reshape(-1) — or scores "
    "(B, vocabulary, T) with labels (B, T): logits.transpose(1, 2)."
)
_ARGUMENT_ORDER = "the loss takes the scores first and the labels second: loss_fn(scores, labels)."


def _error_hint(err: Exception, n_vocab: int) -> str:
    """A hint for the errors the typical mistakes raise; else the error itself."""
    text = str(err)
    if isinstance(err, ValueError) and "batch_size" in text:  # logits and labels flattened to different lengths
        sizes = [int(n) for n in re.findall(r"batch_size \((\d+)\)", text)]
        return _AXES if sizes[:1] == [n_vocab] else _TOO_LONG
    if "Expected target size" in text:  # (B, T, vocabulary) scores passed unflattened
        return _AXES
    if "not implemented for 'Long'" in text:  # loss_fn(labels, logits)
        return _ARGUMENT_ORDER
    return f"your function raised {type(err).__name__}: {err}"


_TOO_LONG = (
    "the decoder input is one column longer than the labels, so there is one row of scores too many: after "
    "putting <bos> in front, drop the last column of the labels (it holds only <eos> or <pad>, which no row "
    "has to read)."
)


def _two_steps(step, n_steps: int = 2):
    """Run `step(model, opt, src, labels)` on the first n_steps batches of a fresh seed-0 model, labels =
    tgt[:, 1:]; (losses, weights, error)."""
    from course_utils.core.data import build_vocabs, load_pairs
    from course_utils.core.model import ModelConfig, build_model
    from course_utils.training.train import TrainConfig, make_batches, single_thread

    pairs = load_pairs("train")
    src_vocab, tgt_vocab = build_vocabs(pairs)
    assert tgt_vocab.stoi["<bos>"] == BOS
    losses = []
    with single_thread():
        model = build_model(ModelConfig(), src_vocab, tgt_vocab, seed=0)
        opt = torch.optim.Adam(model.parameters(), lr=TrainConfig().lr)
        batches = make_batches(model, pairs, TrainConfig().batch_size, torch.Generator().manual_seed(0))
        for _, (src, tgt) in zip(range(n_steps), batches):
            labels = tgt[:, 1:].clone()  # w1 … wn <eos>, padded; no <bos>
            try:
                losses.append(step(model, opt, src, labels))
            except Exception as err:  # the learner's code: report, never raise
                return losses, None, _error_hint(err, len(tgt_vocab))
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return losses, weights, None


def _as_number(x):
    try:
        return float(x.detach()) if isinstance(x, torch.Tensor) else float(x)
    except (TypeError, ValueError, RuntimeError):
        return None


def _same(run_a, run_b) -> bool:
    (losses_a, w_a), (losses_b, w_b) = run_a, run_b
    if len(losses_a) != len(losses_b) or any(
        a is None or abs(a - b) > 1e-4 * abs(b) for a, b in zip(losses_a, losses_b)
    ):
        return False
    # Nearly every weight must agree. A few may not, with no mistake: the key biases get a zero gradient in exact
    # arithmetic (adding one constant to a row of scores leaves its softmax unchanged), so their gradient is float
    # noise, and Adam's first steps (about lr · sign of the gradient) turn noise into a visible change. A mistake
    # changes most of the 176 297 weights.
    close = sum(int(torch.isclose(w_a[k], w_b[k], rtol=1e-4, atol=1e-4).sum()) for k in w_b)
    return close >= 0.995 * sum(w.numel() for w in w_b.values())


def check_training_step(training_step) -> bool:
    """Exercise 4: training_step(model, opt, src, labels) gets labels = w1 … wn <eos> (padded with 0, no <bos>),
    builds the decoder input itself (<bos> in front, last column dropped), does one step and returns the loss.

    Run twice (two batches) on a fresh seed-0 model and compared with the reference step: the returned losses and
    the new weights must agree; typical mistakes (copying, no <bos>, input one column too long, no zero_grad, no
    ignore_index, no opt.step(), scores and labels on the wrong axes) get their own hint.
    Used in notebook 05 (its Exercises section)."""
    if _not_a_function(training_step, "training_step") or _uses_course_code(
        training_step, "build the decoder input, the loss and the update yourself."
    ):
        return False
    losses, weights, error = _two_steps(training_step)
    if error:
        return feedback(False, "", error)
    untouched = _two_steps(lambda *args: None)[1]
    if all(torch.equal(weights[k], untouched[k]) for k in weights):
        if all(x is None for x in losses):
            return not_answered("your function returns nothing and changes no weight: write its body.")
        return feedback(False, "", "the weights did not change: after loss.backward() call opt.step().")
    numbers = [_as_number(x) for x in losses]
    if any(x is None for x in numbers):
        bad = next(x for x, n in zip(losses, numbers) if n is None)
        return feedback(False, "", f"return the loss, a number (loss or loss.item()); got {_short(bad)}.")
    reference = _two_steps(reference_step)[:2]
    if _same((numbers, weights), reference):
        return feedback(
            True,
            f"your two steps give the reference losses ({reference[0][0]:.3f}, {reference[0][1]:.3f}) and the same "
            "new weights as the loop of section 3: your decoder input is exactly its tgt[:, :-1].",
            "",
        )
    for kwargs, hint in _MISTAKES.values():
        if _same((numbers, weights), _two_steps(lambda *a, kw=kwargs: reference_step(*a, **kw))[:2]):
            return feedback(False, "", hint)
    if len(numbers) and abs(numbers[0] - reference[0][0]) > 1e-4 * reference[0][0]:
        return feedback(
            False,
            "",
            f"your first loss is {numbers[0]:.4f}, the reference {reference[0][0]:.4f}: check what the decoder "
            "reads, what it is scored against, and the loss.",
        )
    return feedback(
        False, "", "the loss is right but the new weights are not: one opt.zero_grad(), loss.backward(), opt.step()."
    )
