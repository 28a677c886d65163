"""The course's hand-made examples: small vectors and matrices with values chosen so they can be read by eye.

    SENTENCES_2D, SENTENCES_3D    sentences as 2-D / 3-D topic vectors (notebook 01; SENTENCES_2D again in 10 §2)
    WORDS_2D                      word vectors for 01's closing question ("devour" in "devour apple" / "devour book")
    TOY_VOCAB, TOY_WQ, one_hot    a four-word vocabulary and a W^Q with one row per word (notebook 02 §3)
    toy_embeddings(words)         (T, 2) word vectors, features TOY_FEATURES = (action, edible) (notebook 03)

TOY_WQ and toy_embeddings are float64 (`core.precision.DTYPE`) whatever the default dtype; one_hot follows
torch's default dtype (float64 in the notebooks).
"""

from __future__ import annotations

import torch

from course_utils.core.errors import CourseInputError
from course_utils.core.precision import DTYPE

# x = "food-ness", y = "reading-ness". Blog values: eat apple, eat bread, read book. Ours: the other three
# (drinks sit between the two axes: in 2-D a third topic has nowhere else to go).
SENTENCES_2D: dict[str, tuple[float, float]] = {
    "eat apple": (0.8, 0.1),
    "eat bread": (0.7, 0.2),
    "drink water": (0.6, 0.5),
    "drink beer": (0.5, 0.6),
    "read newspaper": (0.1, 0.9),
    "read book": (0.2, 0.8),
}

# Three topics, three axes: x = food, y = drink, z = reading (all values the course's choice).
SENTENCES_3D: dict[str, tuple[float, float, float]] = {
    "eat apple": (0.8, 0.1, 0.1),
    "eat bread": (0.7, 0.2, 0.1),
    "eat cake": (0.9, 0.2, 0.0),
    "drink water": (0.1, 0.9, 0.1),
    "drink beer": (0.2, 0.7, 0.0),
    "drink tea": (0.1, 0.8, 0.2),
    "read newspaper": (0.1, 0.0, 0.9),
    "read book": (0.0, 0.1, 0.8),
    "read letter": (0.2, 0.1, 0.7),
}

# Word vectors for the closing question (course's choice): "devour" means eat in "devour apple", read eagerly in
# "devour book", yet a fixed table gives it one vector
WORDS_2D: dict[str, tuple[float, float]] = {"devour": (0.7, 0.3), "apple": (0.9, 0.1), "book": (0.1, 0.9)}

# ---- 03: a tiny sentence with hand-made 2-D word vectors ----

#: feature 0 = "is an action (verb)", feature 1 = "is edible (food)"
TOY_VECTORS = {
    "i": (0.1, 0.0),
    "we": (0.1, 0.0),
    "can": (0.4, 0.0),
    "eat": (1.0, 0.2),
    "apple": (0.1, 1.0),
}
TOY_FEATURES = ("action", "edible")


def toy_embeddings(words=("i", "can", "eat", "apple")) -> torch.Tensor:
    """(T, 2) float tensor of the hand-made vectors of `words` (feature 0: action, feature 1: edible).
    Taught in notebook 03 §1 (the sentence X); used again in 03 §5 for the padded batch."""
    unknown = [w for w in words if w not in TOY_VECTORS]
    if unknown:
        raise KeyError(f"no toy vector for {unknown}; toy words: {sorted(TOY_VECTORS)}")
    return torch.tensor([TOY_VECTORS[w] for w in words], dtype=DTYPE)


# A toy vocabulary and an explicit W^Q in the forum's convention (x · W^Q): one row per word, d_k = 3.
TOY_VOCAB = ["eat", "drink", "read", "apple"]
TOY_WQ = torch.tensor(  # float64 (core.precision.DTYPE), whatever the default dtype at import
    [
        [1.0, 0.0, 2.0],  # the query "eat" asks
        [0.0, 1.0, 1.0],  # ... "drink"
        [3.0, 0.0, 0.0],  # ... "read"
        [0.0, 2.0, 1.0],
    ],
    dtype=DTYPE,
)  # ... "apple"


def one_hot(word: str, vocab=TOY_VOCAB) -> torch.Tensor:
    """'read' -> tensor([0., 0., 1., 0.]) over `vocab`.
    Taught in notebook 02 §3 (claim F2: a one-hot input selects one row of W^Q); used in its exercise 2."""
    vocab = list(vocab)
    if word not in vocab:
        raise CourseInputError(f"{word!r} is not in the toy vocabulary {vocab}")
    x = torch.zeros(len(vocab))
    x[vocab.index(word)] = 1.0
    return x
