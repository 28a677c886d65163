"""Checkers for notebook 09 (heads and the "query" analogy)."""

from __future__ import annotations

import dataclasses
import functools

import torch

from course_utils.core.data import encode_source, encode_target, pad_batch
from course_utils.core.places import PLACES, trace_key
from course_utils.exercises.framework import Exercise, Mistake, number
from course_utils.measures.interventions import accuracy
from course_utils.measures.weight_maps import attention_module, ov_map
from course_utils.trace.interventions import ablate_head
from course_utils.trace.tracing import patch

# Exercise 1: a head detector, run over the corpus


def _detector(batch, place: str, layer: int, head: int, mistake: str | None = None) -> dict[str, float]:
    w_all = batch.weights[trace_key(place, layer, "weights")][:, head].double()  # (B, Tq, Tk)
    sums: dict[str, list[torch.Tensor]] = {}
    for b in range(len(batch.pairs)):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        if mistake == "padding":
            ns, nt = w_all.shape[2], w_all.shape[1]
        if place == "cross":
            made = [r for r in batch.out_roles[b][: int(batch.tgt_len[b])] if r != "end"]
            w = w_all[b, : (nt if mistake == "padding" else len(made)), :ns]
            made = made + [None] * (w.shape[0] - len(made))
            cols = [[j for j, r in enumerate(batch.src_roles[b]) if r == m] for m in made]
            pick = [w[i, c].mean() if mistake == "keys" else w[i, c].sum() for i, c in enumerate(cols)]
            pick = [x for x, c in zip(pick, cols) if c or mistake == "padding"]  # padding: empty rows count as 0
            sums.setdefault("aligned", []).append(torch.stack(pick))
        else:
            w = w_all[b, : ns if place == "encoder self" else nt, : ns if place == "encoder self" else nt]
            q0 = 1 if place == "decoder self" and mistake != "bos" else 0
            sums.setdefault("itself", []).append(w.diagonal()[q0:])
            sums.setdefault("previous", []).append(w.diagonal(1 if mistake == "next" else -1))
    return {m: float(torch.cat(v).mean()) for m, v in sums.items()}


MISTAKES = {
    "padding": "padding counted: use each pair's real queries and keys (src_len, tgt_len); 'aligned': no <eos> row.",
    "next": "'previous' reads the key AFTER the query, w[i, i + 1]; the previous key is w[i, i − 1].",
    "keys": "'aligned' averages the aligned keys; a query's weight on its aligned word(s) is their SUM.",
    "bos": "decoder self-attention's <bos> row can only look at itself (weight 1): leave it out of 'itself'.",
}
DETECTOR = Exercise(
    name="head_detector",
    success="every head matches the course's measures (head_statistics).",
    reference=_detector,
    mistakes=tuple(Mistake(hint, gives=functools.partial(_detector, mistake=m)) for m, hint in MISTAKES.items()),
    otherwise="not the course's measures: average over every real query of every pair.",
    returns="a dict {'itself': .., 'previous': ..} (self-attention) or {'aligned': ..} (cross) of numbers",
    forbid=("head_statistics", "_detector", "aligned_mass", "role_attention", "role_tables"),
    forbid_hint="the course's own version: compute the masses from batch.weights yourself (itself_mass, previous_mass and aligned_mass_of are allowed).",
)


def check_head_detector(head_detector, batch) -> bool:
    """Exercise 1: DETECTOR on every head of the batch. Used in notebook 09."""
    heads = [(p, layer, h) for p in PLACES for layer in range(batch.n_layers) for h in range(batch.n_heads)]
    cases = [(f"{p}, layer {layer}, head {h}", (batch, p, layer, h)) for p, layer, h in heads]
    return dataclasses.replace(DETECTOR, cases=cases).check(head_detector)


# Exercise 2: what a head writes, W^V_h W^O_h


def _ov(attn, h: int, w_o_rows: bool = False) -> torch.Tensor:
    part = slice(h * attn.d_head, (h + 1) * attn.d_head)
    w_o = attn.w_o.weight[part] if w_o_rows else attn.w_o.weight[:, part].T
    return (attn.w_v.weight[part].T @ w_o).detach()


OV_MISTAKES = (
    Mistake("W^O_h is head h's COLUMNS of w_o.weight, not its rows.", gives=lambda attn, h: _ov(attn, h, True)),
    Mistake("transposed: a key vector y is written as y · W^V_h · W^O_h.", gives=lambda attn, h: _ov(attn, h).T),
    Mistake("that is every head together (W^V W^O); take head h's.", gives=lambda attn, h: _ov(attn, 0) + _ov(attn, 1)),
    Mistake("the heads are swapped: head h uses features h·dh to (h + 1)·dh.", gives=lambda attn, h: _ov(attn, 1 - h)),
)


def check_ov_map(ov_map_fn, model, prefix: str = "encoder.0.self") -> bool:
    """Exercise 2: ov_map_fn(attn, head) = W^V_h W^O_h, as weight_maps.ov_map, for every head. Used in notebook 09."""
    attn = attention_module(model, prefix)
    return Exercise(
        name="ov_map",
        success=f"W^V_h W^O_h of every head of {prefix}: {attn.d_model} × {attn.d_model}, rank dh = {attn.d_head}.",
        reference=lambda attn, h: ov_map(model, prefix, h),
        cases=[(f"head {h}", (attn, h)) for h in range(attn.n_heads)],
        mistakes=OV_MISTAKES,
        otherwise="not W^V_h W^O_h: head h's columns of W^V = w_v.weight.T times its rows of W^O = w_o.weight.T.",
        returns=f"a ({attn.d_model}, {attn.d_model}) tensor",
        forbid=("course_utils",),
        forbid_hint="the course's code; build W^V_h W^O_h yourself from attn.w_v and attn.w_o.",
        atol=1e-5,
    ).check(ov_map_fn)


# A prediction before the interventions table: cross-attention forced uniform (no earlier notebook prints it)

PREDICTED_ROW = "uniform: cross"  # the row of the interventions table (score_interventions) the prediction is about


def _share(got, want) -> float:
    value = number(got) / (100 if 1 < number(got) <= 100 else 1)  # a percentage too
    if not 0 <= value <= 1:
        raise ValueError("not a share")
    return value


def check_cross_uniform_prediction(my_prediction, table) -> bool:
    """Prediction: the train share of table row PREDICTED_ROW (cross-attention uniform), ± 0.15. Used in notebook 09."""
    truth = float(table.loc[PREDICTED_ROW, "train"])
    kept = f"the model keeps {truth:.3f} of the training pairs"
    low = f"{kept}: more than most expect: every German word still reads the average of the English sentence."
    return Exercise(
        todo="write your guess (a share from 0 to 1) into my_prediction before you look at the table, then re-run.",
        success=f"{kept}: about half the translations survive without any learned cross-attention pattern.",
        reference=truth,
        mistakes=(Mistake(low, when=lambda got: got < truth),),
        otherwise=f"{kept}: without its pattern, cross-attention loses about half the translations.",
        returns="a share from 0 to 1 (or a percent)",
        convert=_share,
        atol=0.15,
    ).check(my_prediction)


# Exercise 3: remove a whole cross-attention layer


def _logits(model, pairs, patches):
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs])
    tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs])
    with torch.no_grad(), patch(model, patches):
        return model(src, tgt)


def _run(out, patches):
    try:
        return out(patches)
    except Exception as exc:  # not a dict, a key that names no trace point, a function that fails: one line
        raise TypeError("the patches do not run") from exc


def _zeros(x1, name):
    return torch.zeros_like(x1)


def check_remove_cross_layer(patches, model, pairs) -> bool:
    """Exercise 3: patches removing both heads of decoder layer 0 cross-attention (every 11th pair). Used in notebook 09."""
    out, x1 = functools.partial(_logits, model, pairs[::11]), "decoder.0.cross.x1"
    acc = accuracy(model, pairs, {x1: _zeros})
    return Exercise(
        todo="write the patches dict, then re-run this cell.",
        success=f"without cross-attention layer 0 the model translates {acc['train']:.1%} of the training and {acc['heldout']:.1%} of the held-out pairs exactly.",
        reference=out({x1: _zeros}),
        mistakes=(
            Mistake(
                "the output is unchanged: is the key decoder layer 0 cross's x1, and is the new tensor returned?", {}
            ),
            *(Mistake(f"that removes only one head (head {h}); remove both.", {x1: ablate_head(h)}) for h in (0, 1)),
        ),
        otherwise="not the output without both heads of decoder layer 0 cross-attention (zero its x1, before W^O).",
        returns="patches that run: {trace key: function(tensor, name) -> tensor}, keys as trace_key builds them",
        convert=lambda got, want: _run(out, got),
        atol=1e-5,
    ).check(patches or None)
