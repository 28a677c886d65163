"""Notebook 01: sentences as small vectors, dot products and cosine similarity.

    M = dot_matrix(SENTENCES_2D)                     # (6, 6) all pairwise dot products
    topic_check(M, SENTENCES_2D)                     # does every sentence score highest with its own topic?
    plot_sentence_vectors(SENTENCES_2D); plot_pair("eat apple", "read book")

The three 2-D values of the source blog (eat apple, eat bread, read book) are kept exactly; the other
three 2-D values and all 3-D values are the course's own choice (plausible, not measured).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import analysis
from .errors import CourseInputError
from .plotting import fixed_layout

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

# Word vectors for the closing question (course's choice): is "eat" in "eat apple" the same as in "eat book"?
WORDS_2D: dict[str, tuple[float, float]] = {"eat": (0.7, 0.3), "apple": (0.9, 0.1), "book": (0.1, 0.9)}

TOPIC_COLOURS = {"eat": "tab:green", "drink": "tab:blue", "read": "tab:red"}


def topic(sentence: str) -> str:
    """The topic of a sentence is its verb: 'eat apple' -> 'eat'."""
    return sentence.split()[0]


def as_matrix(vectors: dict) -> tuple[np.ndarray, list[str]]:
    """{sentence: vector} -> (N, d) array and the N sentence labels, in dict order."""
    labels = list(vectors)
    return np.array([vectors[s] for s in labels], dtype=np.float64), labels


def _lookup(sentence: str, vectors: dict) -> np.ndarray:
    if sentence not in vectors:
        raise CourseInputError(f"Unknown sentence {sentence!r}; choose one of: {', '.join(vectors)}")
    return np.asarray(vectors[sentence], dtype=np.float64)


def dot(a, b) -> float:
    """a · b = Σ a_i b_i."""
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


def cosine(a, b) -> float:
    """cos(angle) = a · b / (|a| |b|): the dot product with the lengths divided out."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise CourseInputError("cosine is undefined for a zero vector")
    return float(a @ b / (na * nb))


def dot_matrix(vectors: dict) -> np.ndarray:
    """(N, N) matrix of all pairwise dot products X Xᵀ."""
    X, _ = as_matrix(vectors)
    return X @ X.T


def cosine_matrix_of(vectors: dict) -> np.ndarray:
    """(N, N) matrix of all pairwise cosines (`analysis.cosine_matrix` of the dict's vectors with themselves)."""
    X, _ = as_matrix(vectors)
    return analysis.cosine_matrix(X, X)


def topic_check(M: np.ndarray, vectors: dict) -> dict:
    """How well a similarity matrix M separates the topics (the diagonal, a sentence with itself, is ignored).

    Returns:
      per_sentence  {sentence: True if its best same-topic partner beats every other-topic sentence}
      min_same      the smallest same-topic score (over pairs of different sentences)
      max_cross     the largest cross-topic score
      global_ok     min_same > max_cross: every same-topic pair beats every cross-topic pair
      worst_cross   the pair that scores max_cross
    """
    labels = list(vectors)
    topics = [topic(s) for s in labels]
    n = len(labels)
    per, same, cross = {}, [], []
    for i in range(n):
        mine = [M[i, j] for j in range(n) if j != i and topics[j] == topics[i]]
        other = [M[i, j] for j in range(n) if topics[j] != topics[i]]
        per[labels[i]] = bool(mine) and bool(max(mine) > max(other))
        for j in range(i + 1, n):
            (same if topics[i] == topics[j] else cross).append((M[i, j], labels[i], labels[j]))
    worst = max(cross)
    return {
        "per_sentence": per,
        "min_same": float(min(same)[0]),
        "max_cross": float(worst[0]),
        "global_ok": bool(min(same)[0] > worst[0]),
        "worst_cross": (worst[1], worst[2]),
    }


def _arrow(ax, v, colour, label=None, alpha=1.0, lw=1.8, fontsize=9):
    ax.annotate(
        "",
        xy=(v[0], v[1]),
        xytext=(0, 0),
        arrowprops=dict(arrowstyle="-|>", color=colour, lw=lw, alpha=alpha, shrinkA=0, shrinkB=0),
    )
    if label:
        ax.text(v[0] + 0.02, v[1] + 0.02, label, color=colour, fontsize=fontsize, alpha=alpha)


def _frame(ax, title, lim=1.05):
    ax.set_xlim(0, lim)
    ax.set_ylim(0, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("dimension 1 (food)")
    ax.set_ylabel("dimension 2 (reading)")
    ax.grid(alpha=0.3)
    ax.set_title(title)


def plot_sentence_vectors(vectors: dict | None = None, *, ax=None, title: str = "Six sentences as 2-D vectors"):
    """Arrows from the origin, one per sentence, coloured by topic and labelled."""
    vectors = SENTENCES_2D if vectors is None else vectors
    if ax is None:
        _, ax = plt.subplots(figsize=(5.2, 5.2))
    for s, v in vectors.items():
        _arrow(ax, v, TOPIC_COLOURS.get(topic(s), "black"), s)
    _frame(ax, title)
    return ax.figure


def plot_pair(first: str, second: str, vectors: dict | None = None):
    """The widget view: all sentences faded, the chosen two bold, their dot product and cosine in the title."""
    vectors = SENTENCES_2D if vectors is None else vectors
    a, b = _lookup(first, vectors), _lookup(second, vectors)
    fig, ax = plt.subplots(figsize=(4.6, 4.6))
    for s, v in vectors.items():
        if s not in (first, second):
            _arrow(ax, v, "grey", s, alpha=0.35, lw=1.0, fontsize=8)
    _arrow(ax, a, "tab:purple", first, lw=2.4)
    _arrow(ax, b, "tab:orange", second, lw=2.4)
    angle = np.degrees(np.arccos(np.clip(cosine(a, b), -1.0, 1.0)))
    _frame(ax, f"{first} · {second}\ndot = {dot(a, b):.2f}, cosine = {cosine(a, b):.2f} (angle {angle:.0f}°)")
    fixed_layout(fig, left=0.15, right=0.97, bottom=0.11, top=0.88)  # not tight_layout: keeps re-rendering fast
    return fig


def plot_vectors_3d(
    vectors: dict | None = None,
    title: str = "Nine sentences as 3-D vectors",
    *,
    fontsize: int = 12,
    elev: float = 32,
    azim: float = 35,
):
    """3-D arrows from the origin, coloured by topic (legend: the verb), each labelled with its object word.

    The labels sit just beyond the arrow tips; the default view (elev 32°, azim 35°) looks in between the three axes,
    so that no axis points at the reader and the nine labels do not overlap.
    """
    vectors = SENTENCES_3D if vectors is None else vectors
    fig = plt.figure(figsize=(7.5, 6.5))
    ax = fig.add_subplot(111, projection="3d")
    for s, v in vectors.items():
        c = TOPIC_COLOURS.get(topic(s), "black")
        ax.quiver(0, 0, 0, *v, color=c, arrow_length_ratio=0.08, lw=2)
        tip = 1.1 * np.asarray(v, dtype=np.float64)  # a little beyond the tip
        ax.text(*tip, " ".join(s.split()[1:]) or s, color=c, fontsize=fontsize, ha="center", va="center")
    for verb in dict.fromkeys(topic(s) for s in vectors):
        ax.plot([], [], color=TOPIC_COLOURS.get(verb, "black"), lw=2, label=f"{verb} ...")  # legend handle
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_zlim(0, 1)
    ax.set_xlabel("dim 1 (food)", fontsize=fontsize)
    ax.set_ylabel("dim 2 (drink)", fontsize=fontsize)
    ax.set_zlabel("dim 3 (reading)", fontsize=fontsize)
    ax.tick_params(labelsize=fontsize - 3)
    ax.view_init(elev=elev, azim=azim)
    ax.legend(fontsize=fontsize - 2, title_fontsize=fontsize - 1, loc="upper left", title="sentence")
    ax.set_title(title, fontsize=fontsize + 1)
    return fig


def topic_palette(vectors: dict) -> list[str]:
    """One colour per sentence (by topic), e.g. for tick labels."""
    return [TOPIC_COLOURS.get(topic(s), "black") for s in vectors]


def colour_ticks(fig, vectors: dict) -> None:
    """Colour a heatmap's tick labels by topic (every axes of `fig` that has sentence tick labels)."""
    colours = dict(zip(vectors, topic_palette(vectors)))
    for ax in fig.axes:
        for lab in ax.get_xticklabels() + ax.get_yticklabels():
            if lab.get_text() in colours:
                lab.set_color(colours[lab.get_text()])


__all__ = [
    "SENTENCES_2D",
    "SENTENCES_3D",
    "WORDS_2D",
    "TOPIC_COLOURS",
    "topic",
    "as_matrix",
    "dot",
    "cosine",
    "dot_matrix",
    "cosine_matrix_of",
    "topic_check",
    "plot_sentence_vectors",
    "plot_pair",
    "plot_vectors_3d",
    "topic_palette",
    "colour_ticks",
]
