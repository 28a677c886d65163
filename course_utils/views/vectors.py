"""Notebook 01's figures: sentences as arrows, two of them with their dot product and cosine, nine in 3-D.

    plot_sentence_vectors(SENTENCES_2D)     # six arrows from the origin, coloured by topic
    plot_pair("eat apple", "read book")     # the pair view: dot product, cosine and angle in the title
    plot_vectors_3d(SENTENCES_3D)           # nine 3-D arrows, one axis per topic
    colour_ticks(fig, SENTENCES_2D)         # a heatmap's sentence labels coloured by topic

The vectors are `core.toys.SENTENCES_2D` and `SENTENCES_3D` (three 2-D values from the source blog, the rest the
course's own choice); the numbers are `measures.sentence_vectors` and `measures.similarity`; the pair view in the
browser is `views.clientside.pair.pair_view`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D
from course_utils.measures.sentence_vectors import AXIS_TOPICS, sentence_vector, topic
from course_utils.measures.similarity import cosine, dot
from course_utils.views.style import describe, fixed_layout

# Okabe-Ito colours (colour-blind safe, no red/green pair): food orange, drink blue, reading reddish purple.
TOPIC_COLOURS = {"eat": "#E69F00", "drink": "#0072B2", "read": "#CC79A7"}
PAIR_COLOURS = ("black", "#009E73")  # plot_pair's first and second sentence (no topic colour)
AXIS_NAMES = {"eat": "food", "drink": "drink", "read": "reading"}
AXIS_LABEL_AT = (1.3, 1.5, 1.2)  # where plot_vectors_3d names each axis (along it), clear of the word labels


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
    """Arrows from the origin, one per sentence, coloured by topic and labelled.

    Used in notebook 01 (Six sentences as arrows).
    """
    vectors = SENTENCES_2D if vectors is None else vectors
    if ax is None:
        _, ax = plt.subplots(figsize=(5.2, 5.2))
    for s, v in vectors.items():
        _arrow(ax, v, TOPIC_COLOURS.get(topic(s), "black"), s)
    _frame(ax, title)
    describe(
        ax.figure,
        f"{title}: one arrow from the origin per sentence ({', '.join(vectors)}), coloured by topic; "
        "x axis dimension 1 (food), y axis dimension 2 (reading).",
    )
    return ax.figure


def plot_pair(first: str, second: str, vectors: dict | None = None):
    """The widget view: all sentences faded, the chosen two bold, their dot product and cosine in the title.

    Used in notebook 01 (Try it: pick two sentences).
    """
    vectors = SENTENCES_2D if vectors is None else vectors
    a, b = sentence_vector(first, vectors), sentence_vector(second, vectors)
    fig, ax = plt.subplots(figsize=(4.6, 4.6))
    for s, v in vectors.items():
        if s not in (first, second):
            _arrow(ax, v, "grey", s, alpha=0.35, lw=1.0, fontsize=8)
    # black and Okabe-Ito bluish green: apart from the grey rest and from the topic colours of TOPIC_COLOURS
    _arrow(ax, a, PAIR_COLOURS[0], first, lw=2.4)
    _arrow(ax, b, PAIR_COLOURS[1], second, lw=2.4)
    angle = np.degrees(np.arccos(np.clip(cosine(a, b), -1.0, 1.0)))
    _frame(ax, f"{first} · {second}\ndot = {dot(a, b):.2f}, cosine = {cosine(a, b):.2f} (angle {angle:.0f}°)")
    fixed_layout(fig, left=0.15, right=0.97, bottom=0.11, top=0.88)  # not tight_layout: keeps re-rendering fast
    describe(
        fig,
        f"Arrows from the origin for the sentences, '{first}' in bold black and '{second}' in bold green, the rest "
        "faint grey; "
        f"x axis dimension 1 (food), y axis dimension 2 (reading): dot product {dot(a, b):.2f}, cosine "
        f"{cosine(a, b):.2f}, angle {angle:.0f}°.",
    )
    return fig


def plot_vectors_3d(
    vectors: dict | None = None,
    title: str = "Nine sentences as 3-D vectors",
    *,
    fontsize: int = 12,
    elev: float = 35,
    azim: float = -12,
):
    """3-D arrows from the origin, coloured by topic, each labelled with its object word.

    Each axis is named near its end in its topic's colour (food = dim 1, drink = dim 2,
    reading = dim 3), so the name sits next to that topic's arrows. The default view (elev 35°, azim -12°) is the one,
    of a 2° grid, that keeps every pair of arrows at least 4° apart on screen while no topic's arrows point at the
    reader (tests/test_vectors.py measures it). Within a topic the word labels are pushed apart sideways.

    Used in notebook 01 (More dimensions keep more topics apart).
    """
    from mpl_toolkits.mplot3d import proj3d

    vectors = SENTENCES_3D if vectors is None else vectors
    fig = plt.figure(figsize=(7.5, 6.5))
    ax = fig.add_subplot(111, projection="3d")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_zlim(0, 1)
    ax.view_init(elev=elev, azim=azim)
    M = ax.get_proj()
    screen = {
        s: np.subtract(proj3d.proj_transform(*v, M)[:2], proj3d.proj_transform(0, 0, 0, M)[:2])
        for s, v in vectors.items()
    }
    for axis, verb in enumerate(AXIS_TOPICS):
        end = np.zeros(3)
        end[axis] = AXIS_LABEL_AT[axis]
        # a 2-D annotation at the projected point, not ax.text (a 3-D Text3D): matplotlib leaves Text3D out of the
        # tight bounding box, so the inline backend's bbox_inches="tight" cut the names off at the figure's edge
        ax.annotate(
            f"{AXIS_NAMES[verb]} axis\n(dim {axis + 1})",
            xy=proj3d.proj_transform(*end, M)[:2],
            color=TOPIC_COLOURS[verb],
            fontsize=fontsize,
            ha="center",
            va="center",
            fontweight="bold",
            annotation_clip=False,
        )
    by_topic: dict[str, list[str]] = {}
    for s in vectors:
        by_topic.setdefault(topic(s), []).append(s)
    for verb, members in by_topic.items():
        c = TOPIC_COLOURS.get(verb, "black")
        order = sorted(members, key=lambda s: np.arctan2(screen[s][1], screen[s][0]))  # clockwise .. anticlockwise
        for rank, s in enumerate(order):
            v = np.asarray(vectors[s], dtype=np.float64)
            ax.quiver(0, 0, 0, *v, color=c, arrow_length_ratio=0.08, lw=2)
            u = screen[s] / (np.linalg.norm(screen[s]) or 1.0)  # on-screen direction of the arrow
            side = rank - (len(order) - 1) / 2  # -1, 0, +1: push the outer labels apart, sideways
            off = 14 * u + 16 * side * np.array([-u[1], u[0]])
            ax.annotate(
                " ".join(s.split()[1:]) or s,
                xy=proj3d.proj_transform(*v, M)[:2],
                xytext=off,
                textcoords="offset points",
                color=c,
                fontsize=fontsize,
                ha="left" if off[0] > 4 else "right" if off[0] < -4 else "center",
                va="center",
            )
    ax.set_xticklabels([])
    ax.set_yticklabels([])
    ax.set_zticklabels([])
    ax.set_title(title, fontsize=fontsize + 1, pad=24)
    describe(
        fig,
        f"{title}: 3-D arrows from the origin, one per sentence ({', '.join(vectors)}), coloured by topic, with one "
        "axis per topic: food (dimension 1), drink (dimension 2) and reading (dimension 3).",
    )
    return fig


def topic_palette(vectors: dict) -> list[str]:
    """One colour per sentence (by topic), e.g. for tick labels.

    Used by colour_ticks (notebook 01, Six sentences as arrows).
    """
    return [TOPIC_COLOURS.get(topic(s), "black") for s in vectors]


def colour_ticks(fig, vectors: dict) -> None:
    """Colour a heatmap's tick labels by topic (every axes of `fig` that has sentence tick labels).

    Used in notebook 01 (Six sentences as arrows; More dimensions keep more topics apart).
    """
    colours = dict(zip(vectors, topic_palette(vectors)))
    for ax in fig.axes:
        for lab in ax.get_xticklabels() + ax.get_yticklabels():
            if lab.get_text() in colours:
                lab.set_color(colours[lab.get_text()])
