"""Errors raised at the course's API boundary, each with a message a learner can act on."""

from __future__ import annotations

import difflib


class CourseInputError(ValueError):
    """Base class: bad input to a course function (a ValueError, so `except ValueError` works)."""


class UnknownWordError(CourseInputError, KeyError):
    """A word that is not in the vocabulary; the message names it and suggests close words."""

    def __init__(self, word: str, vocabulary, language: str = "English"):
        self.word = word
        self.suggestions = difflib.get_close_matches(word, list(vocabulary), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        sample = ", ".join(sorted(w for w in vocabulary if not w.startswith("<"))[:12])
        super().__init__(f"Unknown {language} word {word!r}.{hint} Known words include: {sample}, ...")

    __str__ = ValueError.__str__  # KeyError would wrap the message in quotes


class EmptySentenceError(CourseInputError):
    pass


class SentenceTooLongError(CourseInputError):
    pass


class SpecialTokenError(CourseInputError):
    """A special token (<pad>, <bos>, <eos>) typed as if it were a word."""


class ShapeError(CourseInputError):
    """Tensor shapes that cannot work together (e.g. q and k with different feature sizes)."""


class ConfigError(CourseInputError):
    """A model configuration that cannot work (e.g. d_model not divisible by n_heads)."""


class IncompatibleModelFileError(CourseInputError):
    """A saved model file written by an incompatible version of course_utils."""
