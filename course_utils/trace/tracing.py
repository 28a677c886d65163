"""Record and patch what happens inside attention (in the spirit of TransformerLens's hook points).

    trace = run_with_trace(model, "we want to eat apple")   # a Trace: one sentence's tensors and their tokens
    trace["encoder.0.self.weights"]                          # (H, Ts, Ts); trace.tokens(key) labels the rows
    with record(model, "decoder.*.cross.weights") as cache:  # any forward pass; the batch dimension is kept
        model(src, tgt_in)
    with patch(model, {"*.x1": ablate_head(0)}):             # replace hooked tensors (inspect.interventions)
        translate(model, "we eat bread")
    cache, src_real, tgt_real = record_batch(model, pairs)   # many pairs in one padded pass

Every intermediate tensor of the translator passes a `HookPoint` whose name is its trace key
(`core.places.trace_key` builds them):

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

from course_utils.core.attention import HookPoint
from course_utils.core.data import BOS, encode_source, encode_target, pad_batch, tokenize
from course_utils.core.model import Translator, eval_mode, translate
from course_utils.core.places import HEAD_KINDS, KEY_KINDS, trace_key


def hook_points(model) -> dict[str, HookPoint]:
    """All named hook points of a model, by trace key.
    Used by record and patch (every trace and intervention of notebooks 02-10)."""
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
    Used in notebooks 04 §1 (one layer's hook points) and 05 §5 (the cross-attention of 198 sentences).
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
    Taught in notebook 06 §3 (how it replaces a tensor); used in 08 (A number for "scatter"), 09 §4, 10 §7.
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


# ---- one sentence, fully labelled ----


@dataclass
class Trace:
    """Everything attention computed for one sentence pair, with the tokens each row belongs to.
    Taught in notebook 05 §6 (What a training snapshot holds); used from notebook 02 §2 on."""

    src_tokens: list[str]  # English words (encoder positions)
    tgt_tokens: list[str]  # decoder input: <bos> + German words (decoder positions)
    translation: list[str]  # the model's greedy translation of the source
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    n_layers: int = field(default=0, kw_only=True)  # the model's layers (its config), not parsed from the keys

    def __getitem__(self, key) -> torch.Tensor:
        """trace["encoder.0.self.q"], or the same tensor as trace["q", 0, "encoder self"] (kind, layer, place)."""
        if isinstance(key, tuple):
            if len(key) != 3:
                raise KeyError(
                    f"look up a trace by its key or by (kind, layer, place), e.g. ('q', 0, 'encoder self'); got {key!r}"
                )
            kind, layer, place = key
            key = trace_key(place, layer, kind)
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
        if key.split(".")[-1] in HEAD_KINDS:
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
    def from_dict(cls, d: dict, n_layers: int) -> Trace:
        """The inverse of to_dict; n_layers comes from the config of the model the trace belongs to."""
        return cls(d["src_tokens"], d["tgt_tokens"], d["translation"], dict(d["tensors"]), n_layers=n_layers)


@torch.no_grad()
def record_forward(model: Translator, src: torch.Tensor, tgt_in: torch.Tensor, names=None) -> dict[str, torch.Tensor]:
    """One teacher-forced forward pass in eval mode (restored afterwards), recording hooked tensors.
    Used by run_with_trace and record_batch (every trace of notebooks 02-09)."""
    with eval_mode(model), record(model, names) as cache:
        model(src, tgt_in)
    return cache


@torch.no_grad()
def run_with_trace(model: Translator, sentence, target=None, names=None) -> Trace:
    """Trace one sentence. The decoder reads `target` (German words) if given, else the model's own
    greedy translation (teacher forcing either way, so every decoder position is traced once).
    Used in notebooks 02 §2, 03 §7 and its Evidence part, 04 §3, 05 §5 (which explains it), 06 §3, 07, 09 §1-§5."""
    words = tokenize(sentence)
    translation = translate(model, words)
    target_words = tokenize(target) if target is not None else translation
    device = next(model.parameters()).device
    src = torch.tensor([encode_source(model.src_vocab, words, model.cfg.max_len)], device=device)
    bos = [model.tgt_vocab.stoi[BOS]]
    tgt_ids = encode_target(model.tgt_vocab, target_words, model.cfg.max_len)[:-1] if target_words else bos
    tgt = torch.tensor([tgt_ids], device=device)  # decoder input: <bos> w1 ... wn
    tensors = {k: v[0] for k, v in record_forward(model, src, tgt, names).items()}  # drop the batch dim
    return Trace(words, [BOS] + list(target_words), translation, tensors, n_layers=model.cfg.n_layers)


@torch.no_grad()
def record_batch(model: Translator, pairs, names="*.weights"):
    """Teacher-forced forward pass of many pairs (objects with .english and .german) in one padded batch: the
    course's one batched pass.

    Returns (cache, src_real (B, Ts) bool, tgt_real (B, Tt) bool): the recorded tensors with the batch dimension
    in front, and which source / decoder-input positions (<bos> w1 ... wn) are real words, not padding.
    Used in notebooks 03 (Evidence part), 04 §6, and by measures.attention_stats.trace_pairs (notebooks 03-05, 09).
    """
    device = next(model.parameters()).device
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs]).to(device)
    tgt_in = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs]).to(device)
    return record_forward(model, src, tgt_in, names), src != 0, tgt_in != 0  # PAD is id 0 in both vocabularies
