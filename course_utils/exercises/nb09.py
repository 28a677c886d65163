"""Checkers for notebook 09 (heads and the "query" analogy)."""

from __future__ import annotations

import torch

from ..data import encode_source, encode_target, pad_batch
from ..interventions import accuracy
from ..projections import query_bank, query_inputs
from ..tracing import ablate_head, patch, run_with_trace
from . import feedback

# Exercise 2: the query of one head as a weighted sum of the bank's rows

EXAMPLE_SENTENCE, EXAMPLE_TARGET = "we would like to drink tea", "wir möchten tee trinken"


def check_q_from_bank(q_from_bank, model, prefix: str = "decoder.1.cross", head: int = 1) -> bool:
    """q_from_bank(x (d_model,), bank (d_model, dh), bias (dh,)) -> q (dh,) must give the model's q for every token."""
    bank, bias = query_bank(model, prefix, head)
    tokens, X = query_inputs(model, EXAMPLE_SENTENCE, prefix, target=EXAMPLE_TARGET)
    q_model = run_with_trace(model, EXAMPLE_SENTENCE, target=EXAMPLE_TARGET, names=[f"{prefix}.q"])[f"{prefix}.q"][head]
    try:
        got = [q_from_bank(x.clone(), bank.clone(), bias.clone()) for x in X]
    except Exception as exc:  # a learner's bug: say what happened, no traceback
        return feedback(False, "", f"q_from_bank raised {type(exc).__name__}: {exc}")
    if any(g is None for g in got):
        return feedback(False, "", "q_from_bank returns None: return sum_i x[i] * bank[i] + bias.")
    got = [torch.as_tensor(g, dtype=torch.float32) for g in got]
    if any(g.shape != bias.shape for g in got):
        return feedback(
            False, "", f"q must have shape {tuple(bias.shape)} (one head's dh features); got {tuple(got[0].shape)}."
        )
    worst = max(float((g - q).abs().max()) for g, q in zip(got, q_model))
    no_bias = max(float((g + bias - q).abs().max()) for g, q in zip(got, q_model))
    if worst < 1e-4:
        return feedback(
            True,
            f"q = Σ_i x_i·bank_i + b reproduces the model's query for all {len(tokens)} tokens "
            f"(largest difference {worst:.0e}).",
            "",
        )
    if no_bias < 1e-4:
        return feedback(False, "", "close: the weighted sum of rows is right, but the bias b is missing.")
    return feedback(
        False,
        "",
        f"the result differs from the model's q by up to {worst:.3f}; "
        "use the bank's ROWS (bank[i], i over d_model), weighted by x[i].",
    )


# Exercise 1: read the head that aligns most (or least) off the statistics table


def check_alignment_head(answer, stats, which: str = "most") -> bool:
    """answer: (layer, head) of the cross-attention head with the largest (which="most") or the smallest
    (which="least") 'aligned' share in `stats`."""
    if which not in ("most", "least"):
        raise ValueError(f"which must be 'most' or 'least'; got {which!r}")
    cross = stats.loc["cross", "aligned"]
    best = tuple(int(i) for i in (cross.idxmax() if which == "most" else cross.idxmin()))
    extreme = "largest" if which == "most" else "smallest"
    if answer is None:
        return feedback(False, "", "set answer = (layer, head).")
    try:
        answer = tuple(int(i) for i in answer)
    except (TypeError, ValueError):
        answer = ()
    if len(answer) != 2:
        return feedback(False, "", "answer must be a pair of integers (layer, head).")
    if answer == best:
        return feedback(
            True,
            f"cross-attention layer {best[0]}, head {best[1]} puts {cross[best]:.3f} of its weight "
            f"on the English word that translates the German word it produces: the {extreme} share of the "
            f"{len(cross)} cross-attention heads.",
            "",
        )
    if answer in cross.index:
        return feedback(
            False,
            "",
            f"layer {answer[0]}, head {answer[1]} has aligned = {cross[answer]:.3f}; "
            f"look for the {extreme} value in the 'aligned' column of the cross rows.",
        )
    return feedback(False, "", f"no cross-attention head {answer}; choose from {list(cross.index)}.")


# Exercise 3: remove a whole cross-attention layer


def _logits(model, pairs, patches):
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs])
    tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs])
    with torch.no_grad(), patch(model, patches):
        return model(src, tgt)


def reference_patches(layer: int = 0) -> dict:
    """Both heads of decoder layer `layer` cross-attention removed (their x1 set to 0)."""
    return {f"decoder.{layer}.cross.x1": lambda x1, name="": torch.zeros_like(x1)}


def check_remove_cross_layer(patches, model, pairs) -> bool:
    """patches: a tracing.patch dict that removes BOTH heads of decoder layer 0 cross-attention."""
    if not isinstance(patches, dict):
        return feedback(False, "", "patches must be a dict {trace key or pattern: function}.")
    sample = pairs[::11]
    try:
        got = _logits(model, sample, patches)
    except Exception as exc:
        return feedback(False, "", f"running with your patches raised {type(exc).__name__}: {exc}")
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
        return feedback(False, "", "with these patches the model's output is unchanged: patch 'decoder.0.cross.x1'.")
    one = [_logits(model, sample, {"decoder.0.cross.x1": ablate_head(h)}) for h in range(2)]
    if any(torch.allclose(got, o, atol=1e-5) for o in one):
        return feedback(False, "", "that removes only one head; remove both heads of decoder layer 0 cross-attention.")
    return feedback(
        False,
        "",
        "the output differs from removing both heads of decoder layer 0 cross-attention "
        "(zero its x1, the heads' outputs before W^O).",
    )
