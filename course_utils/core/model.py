"""The course's translator: a small encoder-decoder transformer (English -> German) built from
`core.attention.MultiHeadAttention`, and greedy translation with it.

    model = build_model(ModelConfig(), seed=0)   # untrained, float64; same seed -> same weights (notebook 05 §2)
    logits = model(src, tgt_in)                  # (B, Tt, |German vocab|): the decoder reads tgt_in, teacher-forced
    translate(model, "we want to eat apple")     # greedy: ['wir', 'wollen', 'einen', 'apfel', 'essen'] (05 §4)
    parameter_counts(model)                      # per part and in total

Trained models come from `training.zoo` (`load_standard_model`); `inspect.tracing` records what happens inside.
Attention happens in three places (`core.places.PLACES`), each with its own trace keys:
    encoder.{i}.self   Q = K = V = the English sentence             (padding mask)
    decoder.{i}.self   Q = K = V = the German sentence so far       (causal + padding mask)
    decoder.{i}.cross  Q = German, K = V = the encoder's English     (padding mask)
Layers are post-norm, as in "Attention Is All You Need" and the source blog's code.

Initialisation (`ModelConfig.init`):
    "xavier"         the blog's code: after building, every weight with more than one dimension (token and
                     position embeddings, every linear layer) is re-drawn Xavier-uniform; biases and LayerNorm
                     keep PyTorch's defaults. Input vectors then have entries of roughly unit size.
    "torch_default"  PyTorch's defaults: embeddings N(0, 1), so token embedding x √d_model has entries of
                     size ~8 and the first layer's softmax saturates (attention becomes a hard pick). Kept
                     on purpose for notebook 03's lesson on why scores must stay small.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import torch
from torch import nn

from course_utils.core.attention import HookPoint, MultiHeadAttention, check_heads, name_hooks
from course_utils.core.data import BOS, EOS, PAD, Vocab, build_vocabs, encode_source, pad_batch
from course_utils.core.errors import ConfigError
from course_utils.core.precision import DTYPE, course_precision, float32_draws

POS_ENCODINGS = ("learned", "sinusoidal", "none")
INITS = ("xavier", "torch_default")


@dataclass(frozen=True)
class ModelConfig:
    """The translator's sizes, positional encoding and initialisation; the defaults are the course model.
    Used in notebooks 03 (Evidence part, init="torch_default"), 05 §2, §3, 07 (Three positional encodings)."""

    d_model: int = 64  # as in the source blog
    n_heads: int = 2
    n_layers: int = 2  # encoder layers = decoder layers
    d_ff: int = 128
    dropout: float = 0.0
    max_len: int = 12  # longest English input / German output (incl. <bos>)
    pos_encoding: str = "learned"  # "learned" | "sinusoidal" | "none"
    init: str = "xavier"  # "xavier" (the blog's code) | "torch_default" (saturated first layer, a lesson)
    tied_qkv: bool = False  # True: one linear layer makes Q, K and V in every attention block (W^Q = W^K = W^V)

    def __post_init__(self):
        if self.pos_encoding not in POS_ENCODINGS:
            raise ConfigError(f"pos_encoding must be one of {POS_ENCODINGS}; got {self.pos_encoding!r}")
        if self.init not in INITS:
            raise ConfigError(f"init must be one of {INITS}; got {self.init!r}")
        check_heads(self.d_model, self.n_heads)
        if self.n_layers < 1 or self.max_len < 2:
            raise ConfigError("need n_layers >= 1 and max_len >= 2")

    def to_dict(self) -> dict:
        return asdict(self)


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, d_model): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...).
    Used by Embedding (pos_encoding="sinusoidal"): the sinusoidal model of notebook 07 (Three positional encodings)."""
    pos = torch.arange(max_len, dtype=DTYPE)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=DTYPE) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model, dtype=DTYPE)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


def add_norm(norm: nn.LayerNorm, x: torch.Tensor, sublayer_out: torch.Tensor, dropout: nn.Module | None = None):
    """The residual connection and LayerNorm around every sublayer (post-norm, as in "Attention Is All You Need"
    and the source blog): norm(x + dropout(sublayer(x))). The course's one copy (the Annotated Transformer's
    SublayerConnection idea), used by the encoder and decoder layers here and by MiniLM's layers.
    Taught in notebook 05 §2 (One transformer layer: residual connection, then LayerNorm); used in 10 §1."""
    return norm(x + (sublayer_out if dropout is None else dropout(sublayer_out)))


@contextmanager
def eval_mode(model: nn.Module):
    """Within the block the model is in eval mode (dropout off); afterwards its mode is what it was, also after
    an error. The course's one copy of this pattern (greedy decoding, recording, patched forward passes).
    Used by greedy_decode, inspect.tracing.record_forward and next_word_log_probs (notebooks 05 §4-§5, 06 §3)."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


class Embedding(nn.Module):
    """token embedding · √d_model + positional encoding (learned, sinusoidal or none).
    Taught in notebook 05 §2 (its forward, printed and recomputed by hand); positions() is used in 04 §6 and 07."""

    def __init__(self, vocab_size: int, cfg: ModelConfig):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, cfg.d_model, padding_idx=0)
        self.kind, self.scale = cfg.pos_encoding, math.sqrt(cfg.d_model)
        if self.kind == "learned":
            self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        elif self.kind == "sinusoidal":
            self.register_buffer("pos_table", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_embed = HookPoint()  # (B, T, d_model): token part + position part

    def positions(self, T: int) -> torch.Tensor:
        """(T, d_model) positional part added to the token embeddings (zeros for "none")."""
        if self.kind == "learned":
            return self.pos.weight[:T]
        if self.kind == "sinusoidal":
            return self.pos_table[:T]
        return torch.zeros(T, self.tok.embedding_dim, device=self.tok.weight.device)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, d_model)
        x = self.tok(ids) * self.scale
        if self.kind != "none":
            x = x + self.positions(ids.shape[1])
        return self.hook_embed(self.dropout(x))


class FeedForward(nn.Sequential):
    """The feed-forward block of every layer: d_model -> d_ff -> ReLU -> d_model, on each position separately.
    Taught in notebook 05 §2 (One transformer layer: 64 -> 128 -> ReLU -> 64)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(
            nn.Linear(cfg.d_model, cfg.d_ff), nn.ReLU(), nn.Dropout(cfg.dropout), nn.Linear(cfg.d_ff, cfg.d_model)
        )


class EncoderLayer(nn.Module):
    """One post-norm encoder layer: self-attention, then feed-forward, each followed by add & LayerNorm.
    Taught in notebook 05 §2 (its forward, printed and recomputed by hand)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, cfg.tied_qkv)
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_layer_out = HookPoint()  # (B, T, d_model): the layer's output
        name_hooks(self)

    def forward(self, x, src_mask):  # x (B, Ts, d), src_mask (B, 1, 1, Ts)
        a, _ = self.self_attn(x, x, x, src_mask)
        x = add_norm(self.norm1, x, a, self.dropout)
        x = add_norm(self.norm2, x, self.ff(x), self.dropout)
        return self.hook_layer_out(x)


class DecoderLayer(nn.Module):
    """One post-norm decoder layer: masked self-attention, cross-attention (Q from the German, K and V from the
    encoder's output), feed-forward, each followed by add & LayerNorm.
    Taught in notebook 05 §2 (drawn next to the encoder layer)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, cfg.tied_qkv)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, cfg.tied_qkv)
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(cfg.d_model) for _ in range(3))
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_layer_out = HookPoint()  # (B, T, d_model): the layer's output
        name_hooks(self)

    def forward(self, y, memory, tgt_mask, src_mask):  # y (B, Tt, d), memory (B, Ts, d)
        a, _ = self.self_attn(y, y, y, tgt_mask)
        y = add_norm(self.norm1, y, a, self.dropout)
        a, _ = self.cross_attn(y, memory, memory, src_mask)  # Q from German, K and V from English
        y = add_norm(self.norm2, y, a, self.dropout)
        y = add_norm(self.norm3, y, self.ff(y), self.dropout)
        return self.hook_layer_out(y)


class Translator(nn.Module):
    """Encoder-decoder transformer. forward(src (B, Ts), tgt_in (B, Tt)) -> logits (B, Tt, |German vocab|).
    Taught in notebook 05 §2 (its module tree); encode and decode are used in 05 §4's greedy decoding."""

    def __init__(self, cfg: ModelConfig, src_vocab: Vocab, tgt_vocab: Vocab):
        super().__init__()
        self.cfg, self.src_vocab, self.tgt_vocab = cfg, src_vocab, tgt_vocab
        self.src_embed = Embedding(len(src_vocab), cfg)
        self.tgt_embed = Embedding(len(tgt_vocab), cfg)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers))
        self.generator = nn.Linear(cfg.d_model, len(tgt_vocab))
        name_hooks(self, {"src_embed": "encoder", "tgt_embed": "decoder"})  # trace keys from the module tree

    @staticmethod
    def source_mask(src: torch.Tensor) -> torch.Tensor:
        return (src != 0)[:, None, None, :]  # (B, 1, 1, Ts): True = a real word, may attend

    @staticmethod
    def target_mask(tgt: torch.Tensor) -> torch.Tensor:
        T = tgt.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).tril()  # (Tt, Tt): no peeking ahead
        return causal & (tgt != 0)[:, None, None, :]  # (B, 1, Tt, Tt)

    def encode(self, src: torch.Tensor):
        src_mask = self.source_mask(src)
        x = self.src_embed(src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return x, src_mask  # memory (B, Ts, d)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
        y, tgt_mask = self.tgt_embed(tgt_in), self.target_mask(tgt_in)
        for layer in self.decoder:
            y = layer(y, memory, tgt_mask, src_mask)
        return self.generator(y)  # (B, Tt, |German vocab|)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        memory, src_mask = self.encode(src)
        return self.decode(tgt_in, memory, src_mask)


def initialize_weights(module: nn.Module) -> None:
    """The blog's initialisation, applied with `model.apply`: Xavier-uniform for every weight with more
    than one dimension (embeddings and linear layers); biases and LayerNorm are left as PyTorch made them.
    Taught in notebook 05 §2 (How the weights start); 03's Evidence part uses it first."""
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.dim() > 1:
        nn.init.xavier_uniform_(weight.data)


def build_model(
    cfg: ModelConfig | None = None, src_vocab: Vocab | None = None, tgt_vocab: Vocab | None = None, seed: int = 0
) -> Translator:
    """A freshly initialised translator; same seed -> same weights. Vocabularies default to the course corpus.

    Built, initialised, trained and traced in float64 (`core.precision.DTYPE`), whatever the caller's default dtype.
    The initial weights read PyTorch's float32 random stream, as a float32 model's init does, with the last
    step done in float64 (`core.precision.float32_draws`): PyTorch's own float32 init differs between CPUs in its
    last bit, and training would amplify that.
    Taught in notebook 05 §2; used in 03 (Evidence part), 04 §5, §6, 06 §3, 07 (Three positional encodings), 09 §3."""

    if src_vocab is None or tgt_vocab is None:
        src_vocab, tgt_vocab = build_vocabs()
    cfg = cfg or ModelConfig()
    with torch.random.fork_rng(), course_precision(), float32_draws():
        torch.manual_seed(seed)
        model = Translator(cfg, src_vocab, tgt_vocab)
        if cfg.init == "xavier":
            model.apply(initialize_weights)
        return model


def parameter_counts(model: Translator) -> dict[str, int]:
    """Number of parameters per part (embeddings, each encoder/decoder layer, generator) and in total.
    Taught in notebook 05 §2 (its exercise 1 counts one layer by hand)."""
    parts = {"source embedding": model.src_embed, "target embedding": model.tgt_embed}
    parts.update({f"encoder layer {i}": layer for i, layer in enumerate(model.encoder)})
    parts.update({f"decoder layer {i}": layer for i, layer in enumerate(model.decoder)})
    parts["generator"] = model.generator
    counts = {k: sum(p.numel() for p in m.parameters()) for k, m in parts.items()}
    counts["total"] = sum(p.numel() for p in model.parameters())
    return counts


@torch.no_grad()
def greedy_decode(model: Translator, src: torch.Tensor) -> torch.Tensor:
    """src (B, Ts) -> German ids (B, T<=max_len) starting with <bos>; each row stops after <eos>.
    Taught in notebook 05 §4 (greedy decoding, written out); used by translate_batch and translate."""
    with eval_mode(model):
        bos, eos = model.tgt_vocab.stoi[BOS], model.tgt_vocab.stoi[EOS]
        memory, src_mask = model.encode(src)
        out = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(model.cfg.max_len - 1):
            logits = model.decode(out, memory, src_mask)[:, -1]
            logits[:, [model.tgt_vocab.stoi[PAD], bos]] = float("-inf")  # never emit <pad> or <bos>
            nxt = logits.argmax(-1)
            nxt = nxt.masked_fill(done, 0)  # after <eos>: pad
            out = torch.cat([out, nxt[:, None]], dim=1)
            done |= nxt == eos
            if done.all():
                break
        return out


def _strip(ids, vocab: Vocab) -> list[str]:
    toks = vocab.decode(ids, strip_specials=False)[1:]  # drop <bos>
    toks = toks[: toks.index(EOS)] if EOS in toks else toks
    return [t for t in toks if t != PAD]


def translate_batch(model: Translator, sentences) -> list[list[str]]:
    """Greedy translations of several English sentences (strings or word lists).
    Used in notebooks 05 §4, §7, and by training.train.exact_matches (every exact match of 04-09)."""
    device = next(model.parameters()).device
    src = pad_batch([encode_source(model.src_vocab, s, model.cfg.max_len) for s in sentences]).to(device)
    return [_strip(row.tolist(), model.tgt_vocab) for row in greedy_decode(model, src)]


def translate(model: Translator, sentence) -> list[str]:
    """'we want to eat apple' -> ['wir', 'wollen', 'einen', 'apfel', 'essen'] (greedy, no special tokens).
    Taught in notebook 05 §4; used in 06 §3, 07 (What the models translate), 08 (The claims)."""
    return translate_batch(model, [sentence])[0]
