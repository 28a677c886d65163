"""Traces of all-MiniLM-L6-v2 (`core.pretrained.MiniLM`), with the course model's trace keys (notebook 10).

    cache, batch = record_sentences(model, sentences, "*.weights")   # one padded pass, batch dim in front
    trace = trace_sentence(model, "we eat bread")                    # an `inspect.tracing.Trace` of one sentence
    trace["encoder.0.self.weights"]                                  # (12 heads, T, T)

A MiniLM trace has the encoder side only: src_tokens are the WordPiece tokens ([CLS] … [SEP]), tgt_tokens and
translation are empty, and every attention key belongs to the place "encoder self".
"""

from __future__ import annotations

import torch  # noqa: E402

from course_utils.core.pretrained import Encoded, MiniLM
from course_utils.trace.tracing import Trace, record

# ------------------------------------------------------------------------------------------- tracing


@torch.no_grad()
def record_sentences(model: MiniLM, sentences, names=None) -> tuple[dict[str, torch.Tensor], Encoded]:
    """One padded forward pass of many sentences, recording hooked tensors (batch dim in front).
    Used in notebook 10 §4 (the 72 heads over 30 sentences)."""
    batch = model.as_encoded(sentences)
    with record(model, names) as cache:
        model(batch.ids, batch.token_types, batch.mask)
    return dict(cache), batch


@torch.no_grad()
def trace_sentence(model: MiniLM, sentence: str, names=None) -> Trace:
    """Trace one sentence: an inspect.tracing.Trace whose src_tokens are its WordPiece tokens ([CLS] … [SEP]).
    Used in notebook 10 §3, §4, §5."""
    cache, batch = record_sentences(model, [sentence], names)
    return Trace(batch.tokens[0], [], [], {k: v[0] for k, v in cache.items()}, n_layers=model.cfg.n_layers)


# ------------------------------------------------------------------------------------------- interventions


def ablate_heads(heads):
    """A patch for `*.x1` (B, H, Tq, dh) that zeroes several heads' outputs before W_O (inspect.interventions'
    ablate_head for a set of heads). Used in notebook 10 §7 (half the heads of every layer removed)."""
    heads = list(heads)

    def fn(x1: torch.Tensor, name: str = "") -> torch.Tensor:
        if any(not 0 <= h < x1.shape[1] for h in heads):
            raise IndexError(f"heads {heads} out of range: this layer has heads 0..{x1.shape[1] - 1}")
        x1 = x1.clone()
        x1[:, heads] = 0.0
        return x1

    return fn
