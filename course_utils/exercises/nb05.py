"""Checkers for notebook 05 (training the tiny English→German translator): one Exercise spec each."""

from __future__ import annotations

import math
import re
from functools import partial

import torch
from torch import nn

from course_utils.exercises.framework import Exercise, Mistake, check_choice, whole

N_GERMAN, BOS = 41, 1  # tokens in the German vocabulary (the specials included); the index of <bos>


def layer_count(d, f, decoder, *, bias=1, norms=2, w_o=1, ff_linears=2, cross=1) -> int:
    """Exercise 1: one layer's parameters; a keyword off its default is a typical mistake. Used in notebook 05."""
    linear = d * d + d * bias
    ff = d * f + f * bias + (f * d + d * bias) * (ff_linears - 1)
    n_attention = 2 if decoder and cross else 1
    return n_attention * (4 if w_o else 3) * linear + ff + (n_attention + 1) * norms * d


_LAYER_MISTAKES = (  # layer_count's keyword arguments for a typical mistake, and its hint
    (dict(bias=0), "every nn.Linear(n_in, n_out) has a bias of n_out numbers."),
    (dict(norms=0), "each LayerNorm has a gain and a bias, d_model numbers each."),
    (dict(norms=1), "a LayerNorm has a gain AND a bias, d_model numbers each."),
    (dict(w_o=0), "an attention block has four linear layers: W^Q, W^K, W^V and W^O."),
    (dict(ff_linears=1), "the feed-forward block has two linear layers, d_model → d_ff → d_model."),
    (dict(cross=0), "a decoder layer has two attention blocks, self- and cross-attention, each with its LayerNorm."),
)
_ENC, _DEC = layer_count(64, 128, False), layer_count(64, 128, True)
LAYER_PARAMETERS = Exercise(  # Exercise 1: layer_parameters(d_model, d_ff, decoder=False)
    name="layer_parameters",
    success=f"every size right; the course model: encoder layer {_ENC}, decoder layer {_DEC}, {_DEC - _ENC} more (cross-attention 4·(64·64 + 64), its LayerNorm 2·64).",
    reference=layer_count,
    cases=[(f"d_model {d}, d_ff {f}, decoder={b}", (d, f, b)) for d, f in ((64, 128), (16, 48)) for b in (False, True)],
    mistakes=(
        *(Mistake(hint, gives=partial(layer_count, **kw)) for kw, hint in _LAYER_MISTAKES),
        Mistake("count from the arguments, not from 64 and 128.", when=lambda n, d, f, b: n == layer_count(64, 128, b)),
    ),
    otherwise="a built model has another count: go through the module tree of section 2, part by part.",
    returns="one whole number, the count",
    forbid=("course_utils",),
    forbid_hint="that is the course's own code: count the parts of section 2's module tree yourself.",
    convert=lambda got, want: whole(got),
    run=lambda fn, args: fn(*args[:2], decoder=args[2]),
)
check_layer_parameters = LAYER_PARAMETERS.check


EMITTING_ROW = Exercise(  # Exercise 2: which row's query (decoder input <bos> wir wollen brot essen) emits 'brot'?
    todo="answer with the row's decoder input token, a word such as 'wir', then re-run.",
    success="the query at input 'wollen' predicts the next word, 'brot' (row label 'wollen → brot').",
    reference="wollen",
    mistakes=(
        Mistake("the row of input 'brot' (label 'brot → essen') reads brot and predicts the next word.", "brot"),
    ),
    otherwise="the query at input position i predicts output word i + 1: find the input just before 'brot'.",
    returns="the row's decoder input token, a word such as 'wir'",
    convert=lambda got, want: str.split(got, "→")[0].strip(),  # a label "wollen → brot" names the same row
)
check_emitting_row = EMITTING_ROW.check


_WHY = " Their values vote for ich or wir, a wrong word, so weight on them costs loss: every step turns their keys away from q (and q away from them), while the verbs' keys turn toward q."
_SUBJECT_HINTS = {  # the toy's prediction: what training does to the subjects' scores q · k
    "rises": "only scores whose value helps the right word rise." + _WHY,
    "falls": "",
    "stays": "a word the row does not need still gets a gradient while it gets weight." + _WHY,
}


def check_subject_score(answer) -> bool:
    """Prediction (notebook 05 §1): what training does to the toy's subject scores q · k. Used in notebook 05."""
    todo = 'answer "rises", "falls" or "stays", then re-run this cell.'
    return check_choice(answer, "falls", _SUBJECT_HINTS, todo=todo, success="their scores fall, below zero." + _WHY)


def check_first_loss(my_first_loss, first_loss: float) -> bool:
    """Prediction: the untrained model's first loss, right from 0.85 · ln 41 to 1.15 × first_loss. Used in notebook 05."""
    even = math.log(N_GERMAN)
    why = f" Knowing nothing, a model gives each of the {N_GERMAN} German tokens about 1/{N_GERMAN}: ln {N_GERMAN} = "
    why += f"{even:.2f}; the random start is a little worse ({first_loss:.2f})."
    return Exercise(
        todo="write your guess (a number) into my_first_loss in the cell above, run it, then re-run this one.",
        success=f"the untrained model's loss is {first_loss:.2f}." + why,
        reference=first_loss,
        mistakes=(
            Mistake("a loss −ln p is never below 0, and 0 means certain and right." + why, when=lambda g: g <= 0),
            Mistake("that gives the right word over a third of the probability." + why, when=lambda g: g < 1),
            Mistake("lower than a model that spreads its probability evenly." + why, when=lambda g: g < 0.85 * even),
            Mistake("the loss is −ln p, not the number of choices." + why, when=lambda g: g >= N_GERMAN - 1),
        ),
        otherwise="higher than the start gives." + why,
        returns="one number, without quotes",
        compare=lambda got, want: 0.85 * even <= got <= 1.15 * want,
    ).check(my_first_loss)


def reference_step(model, opt, src, labels, *, bos=1, last=1, zero_grad=1, pad=1, copy=0, axes="bt", step=1):
    """Exercise 3's step (labels = tgt[:, 1:]); a keyword off its default is a typical mistake. Used in notebook 05."""
    dec_in = torch.cat([torch.full((len(labels), 1), BOS), labels[:, :-1] if last else labels], dim=1)
    dec_in, gold = (labels, labels) if copy else (dec_in, labels) if bos else (labels[:, :-1], labels[:, 1:])
    logits = model(src, dec_in)
    logits = logits.transpose(0, 1) if axes == "tb" else logits  # scores position-major, labels sentence-major
    loss = nn.CrossEntropyLoss(ignore_index=0 if pad else -100)(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
    if zero_grad:
        opt.zero_grad()
    loss.backward()
    if step:
        opt.step()
    return loss.item()


def _three_steps(step, args=()):  # step(model, opt, src, labels) on a fresh seed-0 model's first three batches
    from course_utils import core, training

    pairs, cfg = core.load_pairs("train"), training.TrainConfig()
    with training.single_thread():
        model = core.build_model(core.ModelConfig(), *core.build_vocabs(pairs), seed=0)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        batches = training.make_batches(model, pairs, cfg.batch_size, torch.Generator().manual_seed(0))
        losses = tuple(step(model, opt, src, tgt[:, 1:].clone()) for _, (src, tgt) in zip(range(3), batches))
    return None if all(x is None for x in losses) else losses


_AXES = "the loss wants scores (N, vocabulary), labels (N,): logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)."


def _step_error(exc, args) -> str | None:
    text = str(exc)
    if "batch_size" in text:  # scores and labels flattened to different lengths
        too_long = re.findall(r"batch_size \((\d+)\)", text)[:1] != [str(N_GERMAN)]
        return "the decoder input is one column too long: drop the labels' last column." if too_long else _AXES
    if "not implemented for 'Long'" in text:
        return "the loss takes the scores first and the labels second: loss_fn(scores, labels)."
    return _AXES if "Expected target size" in text else None  # (B, T, vocabulary) scores, unflattened


_STEP_MISTAKES = (  # reference_step's keyword arguments for a typical mistake, and its hint
    (dict(copy=1), "the decoder reads the labels themselves and learns to copy: put <bos> in front of what it reads."),
    (dict(bos=0), "without <bos> in front the first German word is never predicted: the input starts with <bos>."),
    (dict(zero_grad=0), "the first step is right, the next are not: gradients add up until opt.zero_grad()."),
    (dict(pad=0), "the loss also scores <pad>: use nn.CrossEntropyLoss(ignore_index=0)."),
    (dict(axes="tb"), "scores and labels are flattened in different orders, so words are scored against others."),
    (dict(step=0), "the weights did not change: after loss.backward() call opt.step()."),
)
TRAINING_STEP = Exercise(  # Exercise 3: training_step(model, opt, src, labels), three steps against the reference
    name="training_step",
    success="your three steps give the reference losses: your decoder input is exactly section 3's tgt[:, :-1].",
    reference=reference_step,
    cases=[("", ())],
    mistakes=tuple(Mistake(hint, gives=partial(reference_step, **kw)) for kw, hint in _STEP_MISTAKES),
    otherwise="the losses differ from the reference: check what the decoder reads, what it is scored against, the loss.",
    returns="the loss, a number (loss or loss.item()), at each step",
    forbid=("course_utils",),
    forbid_hint="that is the course's own code: build the decoder input, the loss and the update yourself.",
    rtol=1e-4,
    run=_three_steps,
    on_error=_step_error,
)
check_training_step = TRAINING_STEP.check
