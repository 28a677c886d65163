"""Attention written from scratch: scaled dot-product attention and multi-head attention, with hook points.

    out, weights = scaled_dot_product_attention(q, k, v, mask)   # softmax(q kᵀ / √d) v (notebook 03)
    weights = masked_softmax(scores, mask)                        # a masked key gets exactly 0
    mha = MultiHeadAttention(64, 2)                               # W_Q, W_K, W_V, split into heads, W_O (notebook 04)
    out, weights = mha(x, x, x, mask)                             # out (B, Tq, d_model), weights (B, H, Tq, Tk)

Every intermediate of MultiHeadAttention passes a `HookPoint` named by its trace key (`core.places.trace_key`), which
`inspect.tracing` records or patches. The translator (`core.model`) and MiniLM (`core.pretrained`) both use this class.

Shapes use these letters everywhere in the course:
    B batch, H heads, Tq query positions, Tk key positions, d / d_model features, dh = d_model // H.

Masks are bool and mean **True = may attend**, as in torch.nn.functional.scaled_dot_product_attention
(careful: torch.nn.MultiheadAttention's attn_mask uses the opposite convention).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course_utils.core.errors import ConfigError, ShapeError


class HookPoint(nn.Module):
    """An identity layer that gives a tensor a name, so `inspect.tracing` can record or patch it.

    `name` is the trace key, e.g. "encoder.0.self.q"; the model sets it when it is built.
    Used in notebooks 04 §1 (`record` on a layer's hook points) and 05 §2 (the "tracing hooks" of the module tree).
    """

    def __init__(self, name: str = ""):
        super().__init__()
        self.name = name

    def forward(self, x: torch.Tensor, *context) -> torch.Tensor:
        """Identity on x. `context` (e.g. the attention mask next to the weights) is passed on to hooks only."""
        return x

    def extra_repr(self) -> str:
        return repr(self.name)


PLACE_OF_MODULE = {"self_attn": "self", "cross_attn": "cross"}  # attention modules, named by their place in keys


def name_hooks(module: nn.Module, renames: dict[str, str] | None = None) -> None:
    """Name every HookPoint under `module` after its path in `module.named_modules()` (as TransformerLens does):
    "hook_" is dropped and the attention modules are named by their place, so in the translator
    "encoder.0.self_attn.hook_q" is the trace key "encoder.0.self.q" and "decoder.1.hook_layer_out" is
    "decoder.1.layer_out". `renames` maps more path parts (e.g. the translator's "src_embed" -> "encoder").
    Used by the course model and MiniLM when they are built (notebooks 05 §2, 10 §1)."""
    renames = {**PLACE_OF_MODULE, **(renames or {})}
    for path, hook in module.named_modules():
        if isinstance(hook, HookPoint):
            *parents, own = path.split(".")
            hook.name = ".".join([renames.get(p, p) for p in parents] + [own.removeprefix("hook_")])


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ShapeError(
            f"q, k, v need at least 2 dims (..., T, d); got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(
            f"q and k must have the same feature size to be multiplied: q {tuple(q.shape)} vs k {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"k and v must have one row per key position: k {tuple(k.shape)} vs v {tuple(v.shape)}")
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ShapeError(
            f"batch/head dims of q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} do not match"
        ) from None


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dim where only mask==True positions count: masked scores become -inf.

    Masked positions get exactly 0. A row with no allowed position gets all zeros (never NaN).
    (Which positions were allowed is recorded in a trace under "....mask", not read off the weights:
    in float32 an allowed weight can underflow to 0.0.)
    Taught in notebook 03 §5 (exercise 1 writes it); used in 03's Evidence part (Claim B4) on the trained model's scores.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    if mask.dtype != torch.bool:
        raise ShapeError(f"mask must be a bool tensor (True = may attend); got dtype {mask.dtype}")
    try:
        torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        raise ShapeError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to scores {tuple(scores.shape)} (..., Tq, Tk)"
        ) from None
    any_allowed = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~any_allowed, 0.0)  # all-masked row: no NaN
    return torch.softmax(scores, dim=-1) * mask * any_allowed


def scaled_dot_product_attention(q, k, v, mask=None, *, scale: float | None = None):
    """out = softmax(q kᵀ / √d) v.

    q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv); mask bool, broadcastable to (..., Tq, Tk), True = may attend.
    Returns (out (..., Tq, dv), weights (..., Tq, Tk)). `scale` defaults to √d (the divisor).
    Taught in notebook 03 §2 (step by step) and §5 (masks); checked against PyTorch in its Evidence part (Claim B4).
    """
    _check_qkv(q, k, v)
    scale = math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) / scale  # (..., Tq, Tk): the "energy"
    weights = masked_softmax(scores, mask)  # each row sums to 1 (or is all 0 if fully masked)
    return weights @ v, weights


def check_heads(d_model: int, n_heads: int) -> None:
    """The one check that d_model splits into n_heads equal heads (each gets d_model // n_heads features).
    Taught in notebook 04 §1 (Splitting d_model = 64 into 2 heads: dh = d_model // H)."""
    if n_heads < 1 or d_model < 1 or d_model % n_heads != 0:
        raise ConfigError(
            f"d_model ({d_model}) must be divisible by n_heads ({n_heads}) so every head gets "
            f"d_model // n_heads features; try n_heads in {[h for h in range(1, d_model + 1) if d_model % h == 0][:8]}"
        )


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four separate linear layers, as in "Attention Is All You Need".

    Q = query·W_Q, K = key·W_K, V = value·W_V (each d_model -> d_model), split into n_heads heads of
    size dh = d_model // n_heads; each head does scaled dot-product attention; the heads are
    concatenated and mixed by W_O.

    Every intermediate passes a HookPoint so that `inspect.tracing` can record or patch it: what
    enters the three projections (hook_q_input, hook_k_input, hook_v_input, as TransformerLens names them),
    hook_q, hook_k, hook_v, hook_scores, hook_mask (which keys each query may see, (B, Tq, Tk) bool),
    hook_weights, hook_x1, hook_concat, hook_out.
    Taught in notebook 04 §1 (shape by shape; = torch.nn.MultiheadAttention in §4); used in 10 §1 (MiniLM's layers).
    """

    KINDS = ("q_input", "k_input", "v_input", "q", "k", "v", "scores", "mask", "weights", "x1", "concat", "out")

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, tied: bool = False):
        super().__init__()
        check_heads(d_model, n_heads)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        # tied=True: one linear layer makes Q, K and V (the blog's "why don't we learn only 1 encoding?"), so
        # W^Q = W^K = W^V and every head's score matrix W^Q W^Kᵀ is symmetric (notebook 03's Evidence part)
        self.w_k = self.w_q if tied else nn.Linear(d_model, d_model)
        self.w_v = self.w_q if tied else nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.hook_q_input = HookPoint()  # (B, Tq, d_model): what enters W_Q
        self.hook_k_input = HookPoint()  # (B, Tk, d_model): what enters W_K
        self.hook_v_input = HookPoint()  # (B, Tk, d_model): what enters W_V
        self.hook_q = HookPoint()  # (B, H, Tq, dh)
        self.hook_k = HookPoint()  # (B, H, Tk, dh)
        self.hook_v = HookPoint()  # (B, H, Tk, dh)
        self.hook_scores = HookPoint()  # (B, H, Tq, Tk): q·k / √dh
        self.hook_mask = HookPoint()  # (B, Tq, Tk) bool: which keys each query may see
        self.hook_weights = HookPoint()  # (B, H, Tq, Tk): softmax of the scores, rows sum to 1
        self.hook_x1 = HookPoint()  # (B, H, Tq, dh): weights · V, the blog's X1
        self.hook_concat = HookPoint()  # (B, Tq, d_model): the heads side by side
        self.hook_out = HookPoint()  # (B, Tq, d_model): mixed by W_O, the blog's X4
        name_hooks(self)  # "q", "scores", ...; the model renames them from its module tree

    @property
    def W_QK(self) -> torch.Tensor:
        """(H, d_model, d_model): W^Q_h (W^K_h)ᵀ of every head, in the row convention: x · W_QK[h] · yᵀ / √dh is
        the score a query vector x gives a key vector y in head h (bias terms aside). Its rank is at most dh.
        Taught in notebook 09 §3."""
        H, dh, d = self.n_heads, self.d_head, self.d_model
        w_q = self.w_q.weight.detach().view(H, dh, d)  # head h's rows of w_q.weight = its columns of W^Q
        w_k = self.w_k.weight.detach().view(H, dh, d)
        return w_q.transpose(1, 2) @ w_k  # (H, d, dh) @ (H, dh, d)

    @property
    def W_OV(self) -> torch.Tensor:
        """(H, d_model, d_model): W^V_h W^O_h of every head, in the row convention: a key vector y that gets all of
        head h's weight adds y · W_OV[h] to the block's output (plus a bias term the same for every word).
        Taught in notebook 09 §3."""
        H, dh, d = self.n_heads, self.d_head, self.d_model
        w_v = self.w_v.weight.detach().view(H, dh, d)  # head h's columns of W^V, transposed
        w_o = self.w_o.weight.detach().view(d, H, dh).permute(1, 2, 0)  # head h's rows of W^O = w_o.weight.T
        return w_v.transpose(1, 2) @ w_o  # (H, d, dh) @ (H, dh, d)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape  # (B, T, d_model) -> (B, H, T, dh)
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, H, T, dh = x.shape  # (B, H, T, dh) -> (B, T, d_model)
        return x.transpose(1, 2).reshape(B, T, H * dh)

    def forward(self, query, key, value, mask=None):
        """query (B, Tq, d_model), key/value (B, Tk, d_model); mask broadcastable to (B, H, Tq, Tk).

        Returns (out (B, Tq, d_model), weights (B, H, Tq, Tk)).
        """
        if query.dim() != 3 or key.dim() != 3 or value.dim() != 3:
            raise ShapeError(
                f"expected (B, T, d_model) inputs; got query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if not (query.shape[-1] == key.shape[-1] == value.shape[-1] == self.d_model):
            raise ShapeError(
                f"last dim of query/key/value must be d_model={self.d_model}; got {query.shape[-1]}, {key.shape[-1]}, {value.shape[-1]}"
            )
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ShapeError(
                f"key and value need the same (B, Tk) and query the same B: query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        query, key, value = self.hook_q_input(query), self.hook_k_input(key), self.hook_v_input(value)
        q = self.hook_q(self.split_heads(self.w_q(query)))  # (B, H, Tq, dh)
        k = self.hook_k(self.split_heads(self.w_k(key)))  # (B, H, Tk, dh)
        v = self.hook_v(self.split_heads(self.w_v(value)))  # (B, H, Tk, dh)
        scores = self.hook_scores(q @ k.transpose(-2, -1) / math.sqrt(self.d_head))  # (B, H, Tq, Tk)
        B, Tq, Tk = query.shape[0], query.shape[1], key.shape[1]
        if mask is None:
            allowed = torch.ones(B, Tq, Tk, dtype=torch.bool, device=query.device)
        else:  # (B, Tq, Tk) True = may attend (the course's masks are the same for every head)
            allowed = torch.broadcast_to(mask, (B, self.n_heads, Tq, Tk)).any(1)
        allowed = self.hook_mask(allowed)  # recorded in a trace; the weights hook gets it too, for interventions
        weights = self.hook_weights(masked_softmax(scores, mask), allowed)  # (B, H, Tq, Tk), rows sum to 1
        x1 = self.hook_x1(self.dropout(weights) @ v)  # (B, H, Tq, dh): the blog's X1 = attention · V
        concat = self.hook_concat(self.merge_heads(x1))  # (B, Tq, d_model): heads side by side
        out = self.hook_out(self.w_o(concat))  # (B, Tq, d_model): mixed by W_O (the blog's X4)
        return out, weights
