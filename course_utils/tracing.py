"""Record and patch what happens inside attention (in the spirit of TransformerLens's hook points).

Every intermediate tensor of the translator passes a `HookPoint` whose name is its trace key:

    {side}.embed                          token embedding + position       (T, d_model)
    {side}.{layer}.{place}.q_input        what enters W^Q                  (Tq, d_model)
    {side}.{layer}.{place}.k_input / v_input   what enters W^K / W^V       (Tk, d_model)
    {side}.{layer}.{place}.q / k / v      per head                         (H, T, dh)
    {side}.{layer}.{place}.scores         q·kᵀ/√dh                         (H, Tq, Tk)
    {side}.{layer}.{place}.mask           True = the query may see the key (Tq, Tk)
    {side}.{layer}.{place}.weights        softmax(scores), rows sum to 1   (H, Tq, Tk)
    {side}.{layer}.{place}.x1             weights·v, per head              (H, Tq, dh)
    {side}.{layer}.{place}.concat         heads side by side               (Tq, d_model)
    {side}.{layer}.{place}.out            concat·W_O (the blog's X4)       (Tq, d_model)
    {side}.{layer}.layer_out              the layer's output               (T, d_model)

with side in {encoder, decoder}, place in {self, cross} (cross only on the decoder side).
Shapes above are for one sentence (`Trace`); `record` keeps the batch dimension in front.

Token labels: queries (and q, scores/weights rows, x1, concat, out) belong to the query tokens;
keys and values (and scores/weights columns) to the **key** tokens: in cross-attention those are
the English source tokens, not German ones.
"""

from __future__ import annotations

import fnmatch
import inspect
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from .attention import HookPoint
from .data import BOS, encode_source, encode_target, pad_batch, tokenize
from .model import Translator, translate

KEY_KINDS = ("k", "v", "k_input", "v_input")  # rows labelled by key tokens

# ---- the course's one vocabulary for where attention happens (every module and notebook uses these) ----
PLACES = ("encoder self", "decoder self", "cross")  # the three places attention happens, in model order
PLACE_NAMES = {  # how prose, tables and figure titles name them
    "encoder self": "encoder self-attention",
    "decoder self": "decoder self-attention",
    "cross": "cross-attention",
}
_PLACE_PARTS = {"encoder self": ("encoder", "self"), "decoder self": ("decoder", "self"), "cross": ("decoder", "cross")}
# the vector kinds the course compares per place (their colours: plotting.KIND_COLOURS)
VECTOR_KINDS = ("q", "k", "v", "x1", "out", "layer_out")


def place_prefix(place: str, layer: int) -> str:
    """("cross", 1) -> "decoder.1.cross": the trace-key prefix of one place and layer."""
    if place not in _PLACE_PARTS:
        raise ValueError(f"place must be one of {list(PLACES)}; got {place!r}")
    side, kind = _PLACE_PARTS[place]
    return f"{side}.{int(layer)}.{kind}"


def trace_key(place: str, layer: int, kind: str) -> str:
    """("encoder self", 0, "q") -> "encoder.0.self.q"; kind "layer_out" -> the layer's output "encoder.0.layer_out"."""
    prefix = place_prefix(place, layer)
    if kind == "layer_out":
        return prefix.rsplit(".", 1)[0] + ".layer_out"
    return f"{prefix}.{kind}"


def place_of(key: str) -> str:
    """ "decoder.1.cross.weights" -> "cross" (the inverse of place_prefix, for any trace key of a place)."""
    side, _, kind = (key.split(".") + ["", ""])[:3]
    for place, parts in _PLACE_PARTS.items():
        if parts == (side, kind):
            return place
    raise ValueError(f"{key!r} is not a trace key of an attention place")


def hook_points(model) -> dict[str, HookPoint]:
    """All named hook points of a model, by trace key."""
    return {m.name: m for m in model.modules() if isinstance(m, HookPoint)}


def _select(model, names) -> dict[str, HookPoint]:
    points = hook_points(model)
    if names is None:
        return points
    patterns = [names] if isinstance(names, str) else list(names)
    chosen = {n: p for n, p in points.items() if any(fnmatch.fnmatchcase(n, pat) for pat in patterns)}
    if not chosen:
        raise KeyError(f"no hook point matches {patterns}; names look like {sorted(points)[:6]} ...")
    return chosen


@contextmanager
def record(model, names=None):
    """Record detached CPU copies of hooked tensors during the forward passes inside the block.

        with record(model) as cache:
            model(src, tgt_in)
        cache["encoder.0.self.weights"]  # (B, H, Ts, Ts)

    `names`: trace keys or glob patterns ("decoder.*.cross.*"); default all. A later forward pass
    overwrites an earlier one. Hooks are removed on exit, even after an error.
    """
    cache: dict[str, torch.Tensor] = {}
    handles = []

    def make_hook(name):
        def hook(module, inputs, output):
            cache[name] = output.detach().to("cpu", copy=True)

        return hook

    try:
        for name, point in _select(model, names).items():
            handles.append(point.register_forward_hook(make_hook(name)))
        yield cache
    finally:
        for h in handles:
            h.remove()


@contextmanager
def patch(model, patches: dict):
    """Replace hooked tensors while the block runs: {trace key or glob: fn(tensor, name) -> tensor}.

    with patch(model, {"decoder.*.cross.weights": uniform_attention}):
        translate(model, "we eat bread")

    A function patched onto attention weights that takes a `mask` argument also gets the attention mask
    ((B, Tq, Tk) bool, True = the query may see the key), as `uniform_attention` does.
    """
    handles = []

    def make_hook(fn, name):
        wants_mask = "mask" in inspect.signature(fn).parameters

        def hook(module, inputs, output):
            if wants_mask and len(inputs) > 1:
                return fn(output, name, mask=inputs[1])
            return fn(output, name)

        return hook

    try:
        for pattern, fn in patches.items():
            for name, point in _select(model, pattern).items():
                handles.append(point.register_forward_hook(make_hook(fn, name)))
        yield model
    finally:
        for h in handles:
            h.remove()


# ---- interventions for `patch` (weights are (B, H, Tq, Tk); mask (B, Tq, Tk), True = may attend) ----


def _allowed(w: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """(B, 1, Tq, Tk) or w's shape: where a query may look. Without a mask (a function called by hand on
    weights), positions with weight > 0 count as allowed."""
    return w > 0 if mask is None else mask[:, None].expand_as(w)


def uniform_attention(w: torch.Tensor, name: str = "", mask: torch.Tensor | None = None) -> torch.Tensor:
    """Every query spreads its attention evenly over the keys it may see."""
    allowed = _allowed(w, mask).to(w.dtype)
    return allowed / allowed.sum(-1, keepdim=True).clamp_min(1)


def first_token_attention(w: torch.Tensor, name: str = "") -> torch.Tensor:
    """Every query looks only at the first key."""
    out = torch.zeros_like(w)
    out[..., 0] = 1.0
    return out


def last_token_attention(w: torch.Tensor, name: str = "", mask: torch.Tensor | None = None) -> torch.Tensor:
    """Every query looks only at the last key it may see (the last word, or itself under a causal mask)."""
    idx = torch.arange(w.shape[-1], device=w.device)
    last = torch.where(_allowed(w, mask), idx, -1).amax(-1, keepdim=True).clamp_min(0)
    return torch.zeros_like(w).scatter(-1, last, 1.0)


def ablate_head(head: int):
    """A patch for `*.x1` (B, H, Tq, dh) that zeroes one head's output before W_O."""

    def fn(x1: torch.Tensor, name: str = "") -> torch.Tensor:
        if not 0 <= head < x1.shape[1]:
            raise IndexError(f"head {head} out of range: this layer has heads 0..{x1.shape[1] - 1}")
        x1 = x1.clone()
        x1[:, head] = 0.0
        return x1

    return fn


# ---- one sentence, fully labelled ----


@dataclass
class Trace:
    """Everything attention computed for one sentence pair, with the tokens each row belongs to."""

    src_tokens: list[str]  # English words (encoder positions)
    tgt_tokens: list[str]  # decoder input: <bos> + German words (decoder positions)
    translation: list[str]  # the model's greedy translation of the source
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)

    def __getitem__(self, key: str) -> torch.Tensor:
        if key not in self.tensors:
            close = fnmatch.filter(self.tensors, f"*{key.split('.')[-1]}")[:6]
            raise KeyError(f"no trace key {key!r}; e.g. {close or sorted(self.tensors)[:6]}")
        return self.tensors[key]

    def keys(self):
        return self.tensors.keys()

    def query_tokens(self, key: str) -> list[str]:
        return self.src_tokens if key.startswith("encoder") else self.tgt_tokens

    def key_tokens(self, key: str) -> list[str]:
        """Tokens of the keys/values: English source tokens for cross-attention."""
        return self.src_tokens if key.startswith("encoder") or ".cross." in key else self.tgt_tokens

    def tokens(self, key: str) -> list[str]:
        """Labels of the rows of `self[key]` (for (H, T, dh) tensors: of the T axis)."""
        return self.key_tokens(key) if key.split(".")[-1] in KEY_KINDS else self.query_tokens(key)

    def vectors(self, key: str, head: int | None = None) -> torch.Tensor:
        """(T, dim) vectors of one kind: per-head kinds give head `head`'s (T, dh), or all heads
        side by side (T, d_model) when head is None; other kinds are returned as they are."""
        t = self[key]
        if key.split(".")[-1] in ("q", "k", "v", "x1"):
            if head is None:
                return t.transpose(0, 1).reshape(t.shape[1], -1)
            if not 0 <= head < t.shape[0]:
                raise IndexError(f"head {head} out of range: {key} has heads 0..{t.shape[0] - 1}")
            return t[head]
        return t

    def to_dict(self) -> dict:
        return {
            "src_tokens": list(self.src_tokens),
            "tgt_tokens": list(self.tgt_tokens),
            "translation": list(self.translation),
            "tensors": dict(self.tensors),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        return cls(d["src_tokens"], d["tgt_tokens"], d["translation"], dict(d["tensors"]))


@torch.no_grad()
def record_forward(model: Translator, src: torch.Tensor, tgt_in: torch.Tensor, names=None) -> dict[str, torch.Tensor]:
    """One teacher-forced forward pass in eval mode (restored afterwards), recording hooked tensors."""
    was_training = model.training
    model.eval()
    try:
        with record(model, names) as cache:
            model(src, tgt_in)
    finally:
        model.train(was_training)
    return cache


@torch.no_grad()
def run_with_trace(model: Translator, sentence, target=None, names=None) -> Trace:
    """Trace one sentence. The decoder reads `target` (German words) if given, else the model's own
    greedy translation (teacher forcing either way, so every decoder position is traced once)."""
    words = tokenize(sentence)
    translation = translate(model, words)
    target_words = tokenize(target) if target is not None else translation
    device = next(model.parameters()).device
    src = torch.tensor([encode_source(model.src_vocab, words, model.cfg.max_len)], device=device)
    bos = [model.tgt_vocab.stoi[BOS]]
    tgt_ids = encode_target(model.tgt_vocab, target_words, model.cfg.max_len)[:-1] if target_words else bos
    tgt = torch.tensor([tgt_ids], device=device)  # decoder input: <bos> w1 ... wn
    tensors = {k: v[0] for k, v in record_forward(model, src, tgt, names).items()}  # drop the batch dim
    return Trace(words, [BOS] + list(target_words), translation, tensors)


@torch.no_grad()
def record_pairs(model: Translator, pairs, names=None):
    """Teacher-forced forward pass of many pairs (objects with .english and .german) in one padded batch.

    Returns (cache, src (B, Ts), tgt_in (B, Tt)): the recorded tensors with the batch dim in front, and the
    padded ids (0 = padding; tgt_in is <bos> w1 ... wn) so callers can tell real positions from padding.
    """
    device = next(model.parameters()).device
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs]).to(device)
    tgt_in = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs]).to(device)
    return record_forward(model, src, tgt_in, names), src, tgt_in
