"""09: word roles of the corpus sentences, and how much cross-attention puts on the aligned English word.

    english_roles("we want to eat apple".split())    # ['subject', 'modal', 'modal', 'verb', 'object']
    aligned_mass(trace, layer=1, head=1)              # [(German word, weight on its English word(s)), ...]

Word roles come from the corpus structure (see data/README.md): every English sentence is
subject [modal words] verb object, every German one subject verb/modal [article] object [infinitive],
so a German word is aligned with the English word(s) of the same role: subject<->subject,
modal<->modal ("want to", "would like to" count as one modal), verb<->verb (the German infinitive
at the end, too), article and noun<->object. `measures.attention_stats.trace_pairs` labels every pair with
these roles for the per-head statistics.
"""

from __future__ import annotations

import numpy as np

from course_utils.core.data import tokenize
from course_utils.core.places import trace_key

ROLES = ("subject", "modal", "verb", "object")


def english_roles(words: list[str]) -> list[str]:
    """['we', 'want', 'to', 'eat', 'apple'] -> ['subject', 'modal', 'modal', 'verb', 'object'].

    Used by aligned_mass and measures.attention_stats.trace_pairs (notebook 09 §1, §2).
    """
    words = tokenize(words)
    if len(words) < 3:
        raise ValueError(f"expected 'subject [modal] verb object', got {' '.join(words)!r}")
    return ["subject"] + ["modal"] * (len(words) - 3) + ["verb", "object"]


def german_roles(words: list[str], pattern: str) -> list[str]:
    """German words of a corpus sentence -> roles; pattern is the Pair's ('plain', 'can', ...).

    Used by aligned_mass and measures.attention_stats.trace_pairs (notebook 09 §1, §2).
    """
    words = tokenize(words)
    if pattern == "plain":  # subject verb [article] noun
        return ["subject", "verb"] + ["object"] * (len(words) - 2)
    return ["subject", "modal"] + ["object"] * (len(words) - 3) + ["verb"]  # subject modal [article] noun infinitive


def aligned_mass(trace, layer: int, head: int) -> list[tuple[str, float]]:
    """Cross-attention of one head in a Trace whose decoder read a German corpus-style sentence:
    for each German word, the mass that the query producing it puts on the aligned English word(s).

    Taught in notebook 09 §1; written out by hand (aligned_mass_of) in §2.
    """
    pattern = "plain" if len(trace.src_tokens) == 3 else "modal"
    german = trace.tgt_tokens[1:]
    en = np.array(english_roles(trace.src_tokens))
    w = trace[trace_key("cross", layer, "weights")][head]  # (Tq, Ts); row i produces German word i
    return [
        (word, float(w[i, en == role].sum()))
        for i, (word, role) in enumerate(zip(german, german_roles(german, pattern)))
    ]
