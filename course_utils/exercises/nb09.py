"""Checkers for notebook 09 (heads and the "query" analogy)."""

from __future__ import annotations

import dataclasses
import functools
import math

import torch

from course_utils.core.data import encode_source, encode_target, pad_batch
from course_utils.core.places import PLACES, trace_key
from course_utils.exercises.framework import Exercise, Mistake, feedback, not_answered, short
from course_utils.measures.interventions import accuracy
from course_utils.measures.weight_maps import ov_map
from course_utils.trace.interventions import ablate_head
from course_utils.trace.tracing import patch

# Exercise 1: a head detector, run over the corpus

DETECTED = {"encoder self": ("itself", "previous"), "decoder self": ("itself", "previous"), "cross": ("aligned",)}


def detector_variant(batch, place: str, layer: int, head: int, mistake: str | None = None) -> dict[str, float]:
    """The detector's scores of one head, right (mistake None) or with a typical mistake:
    "padding" (every row and key of the padded batch), "next" (off by one: the key after the query),
    "keys" (the aligned weight averaged over the aligned keys instead of summed), "bos" (decoder <bos> row kept).
    Used in notebook 09 (an exercise)."""
    w_all = batch.weights[trace_key(place, layer, "weights")][:, head].double()  # (B, Tq, Tk)
    sums: dict[str, list[torch.Tensor]] = {}
    for b in range(len(batch.pairs)):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        if mistake == "padding":
            ns, nt = w_all.shape[2], w_all.shape[1]
        if place == "cross":
            made = [r for r in batch.out_roles[b][: int(batch.tgt_len[b])] if r != "end"]
            roles = batch.src_roles[b]
            w = w_all[b, : (nt if mistake == "padding" else len(made)), :ns]
            made = made + [None] * (w.shape[0] - len(made))
            cols = [[j for j, r in enumerate(roles) if r == m] for m in made]
            pick = [w[i, c].mean() if mistake == "keys" else w[i, c].sum() for i, c in enumerate(cols)]
            pick = [x for x, c in zip(pick, cols) if c or mistake == "padding"]  # padding: empty rows count as 0
            sums.setdefault("aligned", []).append(torch.stack(pick))
        else:
            n = ns if place == "encoder self" else nt
            w = w_all[b, :n, :n]
            q0 = 1 if place == "decoder self" and mistake != "bos" else 0
            sums.setdefault("itself", []).append(w.diagonal()[q0:])
            sums.setdefault("previous", []).append(w.diagonal(1 if mistake == "next" else -1))
    return {m: float(torch.cat(v).mean()) for m, v in sums.items()}


MISTAKES = {
    "padding": "padded positions counted: use only the real queries and keys of each pair "
    "(batch.src_len, batch.tgt_len), and for 'aligned' only the rows that produce a word (not <eos>).",
    "next": "'previous' is off by one: it reads the key AFTER the query (w[i, i + 1]); the previous key is "
    "w[i, i − 1], the diagonal below the main one.",
    "keys": "'aligned' is averaged over the aligned keys; a query's weight on its aligned word(s) is their SUM "
    "(want + to both count), then average that over the queries.",
    "bos": "decoder self-attention's <bos> row can only look at itself (weight 1): leave it out of 'itself'.",
}


def _scores(got, want) -> dict[str, float]:
    if not isinstance(got, dict) or set(got) != set(want):
        raise TypeError("not the scores")
    return {m: float(v) for m, v in got.items()}


DETECTOR = Exercise(
    name="head_detector",
    todo="write head_detector, then re-run this cell.",
    success="every head matches the course's measures (head_statistics).",
    reference=detector_variant,
    mistakes=tuple(Mistake(hint, gives=functools.partial(detector_variant, mistake=m)) for m, hint in MISTAKES.items()),
    otherwise="not the course's measures: average over every real query of every pair.",
    returns="a dict {'itself': .., 'previous': ..} (self-attention) or {'aligned': ..} (cross) of numbers",
    convert=_scores,
    compare=lambda got, want: all(math.isclose(got[m], want[m], abs_tol=1e-6) for m in want),
    forbid=("head_statistics", "detector_variant", "aligned_mass", "role_attention", "role_tables"),
    forbid_hint="the course's own version: compute the masses from batch.weights yourself (itself_mass, "
    "previous_mass and aligned_mass_of are allowed).",
)


def check_head_detector(head_detector, batch) -> bool:
    """head_detector(batch, place, layer, head) -> {"itself": .., "previous": ..} (self-attention) or
    {"aligned": ..} (cross), each the mean over every real query of every pair, as detector_variant (DETECTOR).
    Used in notebook 09 §2 (its exercise)."""
    heads = [(p, layer, h) for p in PLACES for layer in range(batch.n_layers) for h in range(batch.n_heads)]
    cases = [(f"{p}, layer {layer}, head {h}", (batch, p, layer, h)) for p, layer, h in heads]
    return dataclasses.replace(DETECTOR, cases=cases).check(head_detector)


# Exercise 2: what a head writes, W^V_h W^O_h


def _head(attn, head: int) -> slice:
    return slice(head * attn.d_head, (head + 1) * attn.d_head)


def _weights(attn):
    return attn.w_v.weight.detach(), attn.w_o.weight.detach()


OV_MISTAKES = (
    Mistake(
        "W^O_h is head h's dh COLUMNS of w_o.weight (nn.Linear stores (out, in)), not its rows.",
        gives=lambda attn, h: _weights(attn)[0][_head(attn, h)].T @ _weights(attn)[1][_head(attn, h)],
    ),  # fmt: skip
    Mistake(
        "that is the transpose: a key vector y is written as y · W^V_h · W^O_h, so W^V_h (d_model, dh) comes first.",
        gives=lambda attn, h: _weights(attn)[1][:, _head(attn, h)] @ _weights(attn)[0][_head(attn, h)],
    ),  # fmt: skip
    Mistake(
        "that is every head together (W^V W^O); take only head h's dh features.",
        gives=lambda attn, h: _weights(attn)[0].T @ _weights(attn)[1].T,
    ),  # fmt: skip
    Mistake(
        "the heads are swapped: head h uses features h·dh to (h + 1)·dh.",
        gives=lambda attn, h: _weights(attn)[0][_head(attn, 1 - h)].T @ _weights(attn)[1][:, _head(attn, 1 - h)].T,
    ),  # fmt: skip
)


def ov_spec(model, prefix: str = "encoder.0.self") -> Exercise:
    """Exercise 2's spec: ov_map(attn, head) -> W^V_h W^O_h (d_model, d_model) for every head of `prefix`, as
    weight_maps.ov_map, written without the course's code. Used in notebook 09 §3 (its exercise)."""
    from course_utils.measures.weight_maps import attention_module

    attn = attention_module(model, prefix)
    return Exercise(
        name="ov_map",
        todo="write ov_map, then re-run this cell.",
        success=f"W^V_h W^O_h of every head of {prefix} ({attn.d_model} × {attn.d_model}, rank dh = {attn.d_head}: "
        f"the head writes into a {attn.d_head}-dimensional part of the {attn.d_model} features).",
        reference=lambda attn, h: ov_map(model, prefix, h),
        cases=[(f"head {h}", (attn, h)) for h in range(attn.n_heads)],
        mistakes=OV_MISTAKES,
        otherwise="not W^V_h W^O_h: take head h's columns of W^V = w_v.weight.T and head h's rows of W^O = "
        "w_o.weight.T, and multiply them in that order.",
        returns=f"a ({attn.d_model}, {attn.d_model}) tensor",
        forbid=("course_utils",),
        forbid_hint="the course's code; build W^V_h W^O_h yourself from attn.w_v and attn.w_o.",
        atol=1e-5,
    )


def check_ov_map(ov_map_fn, model, prefix: str = "encoder.0.self") -> bool:
    """ov_map_fn(attn, head) -> W^V_h W^O_h (d_model, d_model), attn a MultiHeadAttention (ov_spec).
    Used in notebook 09 §3 (its exercise)."""
    return ov_spec(model, prefix).check(ov_map_fn)


# A prediction before the interventions table: cross-attention forced uniform (no earlier notebook prints it)

PREDICTED_ROW = "uniform: cross"  # the row of the interventions table (score_interventions) the prediction is about


def check_cross_uniform_prediction(my_prediction, table) -> bool:
    """my_prediction: the share (0..1, or a percentage) of training pairs still translated exactly with every
    cross-attention row forced uniform (both decoder layers); `table` is the interventions table (score_interventions).
    Used in notebook 09 §4 (its prediction)."""
    if my_prediction is None:
        return not_answered(
            "write your guess into my_prediction (a share from 0 to 1) "
            "before you look at the table, then re-run both cells."
        )
    try:
        guess = float(my_prediction) if not isinstance(my_prediction, bool) else math.nan
    except (TypeError, ValueError):
        guess = math.nan
    if 1 < guess <= 100:
        guess /= 100  # a percentage
    if not 0 <= guess <= 1:
        return feedback(
            False, "", f"my_prediction must be a share from 0 to 1 (or a percent); got {short(my_prediction)}."
        )
    try:
        truth = float(table.loc[PREDICTED_ROW, "train"])
    except (AttributeError, KeyError, TypeError):
        return feedback(False, "", "pass the interventions table of the cell above as the second argument.")
    close = abs(guess - truth) <= 0.15
    return feedback(
        close,
        f"you guessed {guess:.2f}; the model keeps {truth:.3f} of the training pairs: about half the translations "
        "survive without any learned cross-attention pattern, half need it.",
        f"you guessed {guess:.2f}; the model keeps {truth:.3f} of the training pairs. "
        + (
            "More than most expect: every German word still reads the average of the English sentence, and the "
            "decoder's own words do the rest for many pairs."
            if guess < truth
            else "Fewer than you thought: without its pattern, cross-attention loses about half the translations."
        ),
    )


# Exercise 3: remove a whole cross-attention layer


def _logits(model, pairs, patches):
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs])
    tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs])
    with torch.no_grad(), patch(model, patches):
        return model(src, tgt)


def reference_patches(layer: int = 0) -> dict:
    """Both heads of decoder layer `layer` cross-attention removed (their x1 set to 0).
    Used in notebook 09 (an exercise)."""
    return {f"decoder.{layer}.cross.x1": lambda x1, name="": torch.zeros_like(x1)}


def check_remove_cross_layer(patches, model, pairs) -> bool:
    """patches: a patch() dict that removes BOTH heads of decoder layer 0 cross-attention.
    Used in notebook 09 §4 (its exercise)."""
    if patches is None or (isinstance(patches, dict) and not patches):
        return not_answered("write the patches dict, then re-run this cell.")
    if not isinstance(patches, dict):
        return feedback(
            False, "", f"patches must be a dict {{trace key or pattern: function}}; got {type(patches).__name__}."
        )
    if not all(isinstance(k, str) and callable(f) for k, f in patches.items()):
        return feedback(False, "", "each entry of patches maps a trace key (a str) to a function(tensor, name).")
    if any(getattr(f, "__qualname__", "").startswith("reference_patches.") for f in patches.values()):
        return feedback(False, "", "that is the course's own answer (reference_patches): write the patch yourself.")
    sample = pairs[::11]
    try:
        got = _logits(model, sample, patches)
    except Exception as exc:
        return feedback(
            False, "", f"running with your patches raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        )
    want, plain = _logits(model, sample, reference_patches(0)), _logits(model, sample, {})
    if torch.allclose(got, want, atol=1e-5):
        acc = accuracy(model, pairs, patches)
        return feedback(
            True,
            f"without cross-attention layer 0 the model translates {acc['train']:.1%} of the training "
            f"and {acc['heldout']:.1%} of the held-out pairs exactly.",
            "",
        )
    if torch.allclose(got, plain, atol=1e-5):
        return feedback(
            False,
            "",
            "with these patches the model's output is unchanged: does the key name the x1 of decoder layer 0 "
            "cross-attention (trace_key builds keys), and does the function return the changed tensor?",
        )
    one = [_logits(model, sample, {"decoder.0.cross.x1": ablate_head(h)}) for h in range(2)]
    if any(torch.allclose(got, o, atol=1e-5) for o in one):
        return feedback(False, "", "that removes only one head; remove both heads of decoder layer 0 cross-attention.")
    return feedback(
        False,
        "",
        "the output differs from removing both heads of decoder layer 0 cross-attention "
        "(zero its x1, the heads' outputs before W^O).",
    )
