"""The interventions the course runs with `inspect.tracing.patch`: forced attention patterns, a removed head, a
word's row copied from another sentence's run.

    with patch(model, {"encoder.*.self.weights": uniform_attention}):   # each query: even over the keys it may see
        translate(model, "we eat bread")
    patches = {"*.x1": ablate_head(0)}                                   # head 0's output set to 0 before W_O
    patches = {"encoder.1.layer_out": copy_row_from(other_trace, 3)}     # word 3's row from another sentence's run
    next_word_log_probs(model, sentence, german, patches)                # (T, |German vocab|), teacher-forced

Each patch function is fn(tensor, name) -> tensor; one that takes `mask` also gets the attention mask.
Exact-match scores under interventions are `measures.interventions` (accuracy, score_interventions).
"""

from __future__ import annotations

import torch

from course_utils.core.data import encode_source, encode_target
from course_utils.core.model import eval_mode
from course_utils.trace.tracing import patch

# ---- interventions for `patch` (weights are (B, H, Tq, Tk); mask (B, Tq, Tk), True = may attend) ----


def _allowed(w: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """(B, 1, Tq, Tk) or w's shape: where a query may look. Without a mask (a function called by hand on
    weights), positions with weight > 0 count as allowed."""
    return w > 0 if mask is None else mask[:, None].expand_as(w)


def uniform_attention(w: torch.Tensor, name: str = "", mask: torch.Tensor | None = None) -> torch.Tensor:
    """Every query spreads its attention evenly over the keys it may see.
    Taught in notebook 06 §3 (a stronger test of B5); used in 08 (A number for "scatter") and 09 §4."""
    allowed = _allowed(w, mask).to(w.dtype)
    return allowed / allowed.sum(-1, keepdim=True).clamp_min(1)


def first_token_attention(w: torch.Tensor, name: str = "") -> torch.Tensor:
    """Every query looks only at the first key.
    Taught in notebook 09 §4 (force the attention pattern of a place)."""
    out = torch.zeros_like(w)
    out[..., 0] = 1.0
    return out


def last_token_attention(w: torch.Tensor, name: str = "", mask: torch.Tensor | None = None) -> torch.Tensor:
    """Every query looks only at the last key it may see (the last word, or itself under a causal mask).
    Taught in notebook 09 §4 (force the attention pattern of a place)."""
    idx = torch.arange(w.shape[-1], device=w.device)
    last = torch.where(_allowed(w, mask), idx, -1).amax(-1, keepdim=True).clamp_min(0)
    return torch.zeros_like(w).scatter(-1, last, 1.0)


def ablate_head(head: int):
    """A patch for `*.x1` (B, H, Tq, dh) that zeroes one head's output before W_O.
    Taught in notebooks 04 §6 (claim F7) and 09 §4 (place by place); used in 10 §7."""

    def fn(x1: torch.Tensor, name: str = "") -> torch.Tensor:
        if not 0 <= head < x1.shape[1]:
            raise IndexError(f"head {head} out of range: this layer has heads 0..{x1.shape[1] - 1}")
        x1 = x1.clone()
        x1[:, head] = 0.0
        return x1

    return fn


# ---- activation patching: is a word's context-dependent state used? (claim B5) ----


def copy_row_from(source, position: int):
    """A patch for `inspect.tracing.patch`: replace row `position` (one word) of the hooked tensor (B, T, d_model)
    by the same row of `source[name]`, where `source` is a Trace of another sentence recorded at the same
    hook point. Every other row, and the rest of the forward pass, is left as it is.
    Taught in notebook 06 §3 (written out there, for claim B5)."""

    def fn(tensor, name):
        patched = tensor.clone()
        patched[:, position] = source[name][position]
        return patched

    return fn


@torch.no_grad()
def next_word_log_probs(model, sentence, target, patches=None) -> torch.Tensor:
    """(T, |German vocab|) log-probabilities of the next German word, teacher-forced: row i is the model's
    prediction after reading <bos> and the first i words of `target` (row 2 predicts the third word).
    `patches` ({trace key: fn}) are applied during the forward pass (see `inspect.tracing.patch`).
    Taught in notebook 06 §3 (written out there, for claim B5)."""
    with eval_mode(model):
        src = torch.tensor([encode_source(model.src_vocab, sentence, model.cfg.max_len)])
        tgt_in = torch.tensor([encode_target(model.tgt_vocab, target, model.cfg.max_len)[:-1]])
        with patch(model, patches or {}):
            return model(src, tgt_in)[0].log_softmax(-1)
