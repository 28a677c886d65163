"""The tiny English->German corpus shipped inside the package (course_utils/data/), its vocabularies and tokenisation.

    pairs = load_pairs("train")                       # 240 Pairs (english, german, split, pattern); "heldout": 24
    probes = load_probes("context_pair")              # probe sentences of probes.tsv -> German reference or None
    src_vocab, tgt_vocab = build_vocabs()             # from the training split; ids 0, 1, 2 = <pad>, <bos>, <eos>
    encode_source(src_vocab, "We eat bread.", 12)     # tokenize, then word ids; encode_target adds <bos> ... <eos>
    pad_batch([ids_a, ids_b])                         # (B, T) long tensor, right-padded with <pad> = 0

Sentences are lowercase and whitespace-tokenised. Source (English) sequences are the words only;
target (German) sequences are wrapped as <bos> w1 ... wn <eos>.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from course_utils.core.errors import EmptySentenceError, SentenceTooLongError, SpecialTokenError, UnknownWordError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
SPECIALS = (PAD, BOS, EOS)  # PAD is index 0 in every vocabulary


def data_dir() -> Traversable:
    """The corpus folder inside the package, course_utils/data/ (package data, read with importlib.resources: the
    same files from a clone, an editable install or an installed wheel). Used by load_pairs and load_probes (notebooks 03-09)."""
    return files("course_utils") / "data"


@dataclass(frozen=True)
class Pair:
    """One sentence pair of corpus.tsv, with its split and its pattern (the sentence template it was built from).
    Used in notebooks 03-09 (what load_pairs returns); notebook 05 §1 shows its fields as a table."""

    english: str
    german: str
    split: str  # "train" or "heldout"
    pattern: str  # "plain", "can", "want", "would_like"


def load_pairs(split: str | None = None, path: Path | None = None) -> list[Pair]:
    """All pairs of corpus.tsv (course_utils/data/), or only those of one split ("train" / "heldout").
    Used in notebooks 03 (Evidence part), 04 §6, 05 §1, 06 §3, 07 (What the models translate), 08 (The claims), 09 §1-§4."""
    path = Path(path) if path else data_dir() / "corpus.tsv"
    with path.open(encoding="utf-8", newline="") as f:
        rows = [Pair(**row) for row in csv.DictReader(f, delimiter="\t")]
    if split is None:
        return rows
    if split not in {"train", "heldout"}:
        raise ValueError(f"split must be 'train', 'heldout' or None; got {split!r}")
    return [p for p in rows if p.split == split]


def load_probes(probe_set: str | None = None, path: Path | None = None) -> dict[str, str | None]:
    """Probe sentences (not training pairs) -> German reference or None, in file order.

    probe_set: "word_order", "five_sentences", "context_pair", or None for all of them.
    Used in notebooks 05 §4, §6, 06 §3, 07 (Two word orders through the blog's model), 08 (The claims).
    """
    path = Path(path) if path else data_dir() / "probes.tsv"
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    names = sorted({r["probe_set"] for r in rows})
    if probe_set is not None and probe_set not in names:
        raise ValueError(f"unknown probe set {probe_set!r}; choose one of {names}")
    return {r["english"]: (r["german_reference"] or None) for r in rows if probe_set in (None, r["probe_set"])}


SENTENCE_PUNCTUATION = ".,!?;:\"'"  # stripped from the ends of typed words: punctuation is not in the vocabulary


def tokenize(sentence: str | list[str]) -> list[str]:
    """'We eat bread.' -> ['we', 'eat', 'bread']. Lowercased; sentence punctuation at the ends of words is dropped
    (the corpus has none). A list of words is passed through (lowercased). Special tokens such as <pad> are not
    words a learner can type.
    Used by encode_source and inspect.tracing.run_with_trace (notebooks 02-09; a sentence typed in 09 §5)."""
    if isinstance(sentence, (list, tuple)):
        words = list(sentence)
        if not all(isinstance(w, str) for w in words):
            raise TypeError(f"a sentence as a list must hold words (str); got {[type(w).__name__ for w in words]}")
    elif isinstance(sentence, str):
        words = sentence.split()
    else:
        raise TypeError(
            f"a sentence must be a string such as 'we eat bread' (or a list of words); got {type(sentence).__name__}"
        )
    words = [w.lower().strip(SENTENCE_PUNCTUATION) for w in words]
    words = [w for w in words if w]
    if not words:
        raise EmptySentenceError("The sentence is empty: type a few words, e.g. 'we eat bread'.")
    specials = [w for w in words if w in SPECIALS]
    if specials:
        raise SpecialTokenError(
            f"{', '.join(specials)} {'is a special token' if len(specials) == 1 else 'are special tokens'} the model "
            "adds itself, not a word: type only words, e.g. 'we eat bread'."
        )
    return words


class Vocab:
    """Token <-> index. Index 0 is <pad>; then <bos>, <eos>; then the words in sorted order.
    Taught in notebook 05 §1 (indices 0-2 are <pad>, <bos>, <eos>); decode is used in 05 §3."""

    def __init__(self, words, language: str):
        self.language = language
        self.itos: list[str] = list(SPECIALS) + sorted(set(words) - set(SPECIALS))
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def from_sentences(cls, sentences, language: str) -> Vocab:
        return cls((w for s in sentences for w in s.split()), language)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return word in self.stoi

    @property
    def words(self) -> list[str]:
        return self.itos[len(SPECIALS) :]

    def encode(self, words: list[str]) -> list[int]:
        for w in words:
            if w not in self.stoi:
                raise UnknownWordError(w, self.words, self.language)
        return [self.stoi[w] for w in words]

    def decode(self, ids, strip_specials: bool = True) -> list[str]:
        toks = [self.itos[int(i)] for i in ids]
        return [t for t in toks if t not in SPECIALS] if strip_specials else toks


def build_vocabs(pairs: list[Pair] | None = None) -> tuple[Vocab, Vocab]:
    """English and German vocabularies of the training split (held-out pairs use only these words).
    Taught in notebook 05 §1; used in 03's Evidence part."""
    pairs = load_pairs("train") if pairs is None else pairs
    return (
        Vocab.from_sentences([p.english for p in pairs], "English"),
        Vocab.from_sentences([p.german for p in pairs], "German"),
    )


def encode_source(vocab: Vocab, sentence, max_len: int) -> list[int]:
    """English sentence -> source ids (words only), with the course's clear errors.
    Used in notebooks 04 §6, 05 §2, §4, §5, §7, 06 §3."""
    words = tokenize(sentence)
    if len(words) > max_len:
        raise SentenceTooLongError(f"The sentence has {len(words)} words; this model reads at most {max_len}.")
    return vocab.encode(words)


def encode_target(vocab: Vocab, sentence, max_len: int) -> list[int]:
    """German sentence -> <bos> ids <eos>.
    Used in notebooks 05 §5, §7, 06 §3 (05 §3 explains the <bos> ... <eos> wrapping and the shift by one)."""
    words = tokenize(sentence)
    if len(words) + 1 > max_len:
        raise SentenceTooLongError(
            f"The German sentence has {len(words)} words; this model writes at most {max_len - 1}."
        )
    return [vocab.stoi[BOS]] + vocab.encode(words) + [vocab.stoi[EOS]]


def pad_batch(seqs: list[list[int]]) -> torch.Tensor:
    """List of id lists -> (B, T) long tensor, right-padded with PAD (= 0).
    Used in notebooks 04 §6, 05 §2, §5."""
    T = max(len(s) for s in seqs)
    return torch.tensor([s + [0] * (T - len(s)) for s in seqs], dtype=torch.long)
