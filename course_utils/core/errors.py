"""Errors raised at the course's API boundary, each with a message a learner can act on.

    CourseInputError              the base class, a ValueError: `except ValueError` catches every course error
    UnknownWordError              a word not in the vocabulary; the message suggests close words
    EmptySentenceError, SentenceTooLongError, SpecialTokenError    a typed sentence the model cannot read
    ShapeError, ConfigError       tensors or a model configuration that cannot work together
    IncompatibleModelFileError    a model file the code cannot read (another format version, a wrong sha256)

A widget (`views.widgets`) shows any error as a one-line message, never a traceback; a CourseInputError counts
as a deliberate one, worded for the learner.
"""

from __future__ import annotations

import difflib


class CourseInputError(ValueError):
    """Base class: bad input to a course function (a ValueError, so `except ValueError` works).
    Used in notebooks 08, 09 §5 and 10 §4 (caught around a widget choice that cannot be drawn)."""


class UnknownWordError(CourseInputError, KeyError):
    """A word that is not in the vocabulary; the message names it and suggests close words.
    Used in notebooks 02 (Try it: q, k and v of a word) and 09 §5 (an unknown word typed into the view)."""

    def __init__(self, word: str, vocabulary, language: str = "English"):
        self.word = word
        self.suggestions = difflib.get_close_matches(word, list(vocabulary), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        sample = ", ".join(sorted(w for w in vocabulary if not w.startswith("<"))[:12])
        super().__init__(f"Unknown {language} word {word!r}.{hint} Known words include: {sample}, ...")

    __str__ = ValueError.__str__  # KeyError would wrap the message in quotes


class EmptySentenceError(CourseInputError):
    """A sentence with no word (or no token) to read.
    Used by core.data.tokenize and MiniLM.encode_text (a sentence typed in notebooks 09 §5, 10 §4)."""

    pass


class SentenceTooLongError(CourseInputError):
    """A sentence longer than the model reads (the translator's max_len words, MiniLM's MAX_TOKENS tokens).
    Used by core.data.encode_source / encode_target and MiniLM.encode_text (notebooks 09 §5, 10 §4)."""

    pass


class SpecialTokenError(CourseInputError):
    """A special token (<pad>, <bos>, <eos>) typed as if it were a word.
    Used by core.data.tokenize (a sentence typed in notebook 09 §5)."""


class ShapeError(CourseInputError):
    """Tensor shapes that cannot work together (e.g. q and k with different feature sizes).
    Used by plot_word_projection (notebook 06: a choice it cannot draw) and core.attention (notebooks 03, 04)."""


class ConfigError(CourseInputError):
    """A model configuration that cannot work (e.g. d_model not divisible by n_heads).
    Used by core.attention.check_heads, core.model.ModelConfig and training.zoo (the models of notebooks 02-09)."""


class IncompatibleModelFileError(CourseInputError):
    """A saved model file written by an incompatible version of course_utils (or MiniLM weights not the pinned ones).
    Used by training.files.load_course_model (notebooks 02-09) and core.pretrained.load_minilm (notebook 10)."""
