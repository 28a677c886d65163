"""Notebooks 07 and 08's figures: word order as 1 − cosine, how far a word's q, k, v move, the five sentences.

    plot_word_order(word_order_traces(model), 0, "q")        # 07: 1 − cosine of the two orders' vectors, log scale
    plot_same_word_distance(cos_min)                         # 07: how much a word's q, k, v change when it moves
    plot_five(traces, place=["encoder self", "cross"])       # 08: the five sentences in one shared projection
    plot_five_words(traces, layer=0, head=0)                  # 08: the same, one panel per word (no piled labels)

The numbers are `measures.probing`; the browser views are `views.clientside.word_order` and
`views.clientside.five`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

import course_utils.views.style as style
from course_utils.core.places import HEAD_KINDS, VECTOR_KINDS, layer_of, trace_key
from course_utils.measures.probing import five_projection, key_vectors, order_gaps, shared_mask
from course_utils.measures.similarity import cosine_matrix
from course_utils.views.heatmaps import heatmap
from course_utils.views.style import KIND_COLOURS, describe

DISTANCE_FLOOR = 1e-3  # plot_word_order: 1 − cos below this is drawn as the floor colour of the log scale
DISTANCE_LABEL = "1 − cosine (log scale; 0 = same direction)"  # plot_word_order's colour bar


def plot_word_order(
    traces,
    layer: int = 0,
    kind: str = "q",
    place: str = "encoder self",
    head="all",
    ax=None,
    label: str = "",
    cbar: bool = True,
):
    """Heatmap of 1 − cosine between the two word orders' vectors at one place, with the gaps in the title.

    0 means the same direction; a log colour scale (from 0.001, below which a cell counts as 0) makes 0.025
    (cos 0.975) and 0.000 (cos 1.000) look different. `traces` is the pair (trace_a, trace_b) from
    `measures.probing.word_order_traces`; `label` (e.g. "learned") starts the title as "<label> PE: ...". With
    cbar=False the panel gets no colour bar and the figure's layout is left to the caller: several panels on one
    figure then share one bar, `fig.colorbar(axes[0].images[0], ax=axes, label=DISTANCE_LABEL)` (every panel has
    the same scale).

    Used in notebook 07 (Explore).
    """
    key = trace_key(place, layer, kind)
    if kind in ("weights", "scores"):
        raise ValueError("choose a vector kind (q, k, v, x1, out, layer_out)")
    if isinstance(traces, str) or len(traces) != 2:
        raise TypeError(f"traces must be the pair (trace_a, trace_b) from word_order_traces(model); got {traces!r}")
    a, b = traces
    A, B = key_vectors(a, key, head), key_vectors(b, key, head)
    gaps = order_gaps(a, b, [key], head).iloc[0]
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 4.2))
    D = np.clip(1.0 - cosine_matrix(A, B), 0.0, 2.0)  # 0: same direction, 1: orthogonal, 2: opposite
    steps = "" if place == "encoder self" else "German steps, the model reading "  # decoder rows are German steps
    heatmap(
        D,
        a.tokens(key),
        b.tokens(key),
        ax=ax,
        fmt=".3f",
        cmap="viridis",
        cbar=False,
        xlabel=f"{steps}'{' '.join(b.src_tokens)}'",
        ylabel=f"{steps}'{' '.join(a.src_tokens)}'",
    )
    im = ax.images[-1]  # the same cells on a log scale: differences near 0 (cos near 1) get their own colours
    im.set_data(np.clip(D, DISTANCE_FLOOR, 2.0))
    im.set_norm(LogNorm(vmin=DISTANCE_FLOOR, vmax=2.0))
    rgba = im.cmap(im.norm(np.clip(D, DISTANCE_FLOOR, 2.0))).reshape(-1, 4)
    for text, c in zip(ax.texts[-D.size :], rgba):  # annotation colour for the new scale
        text.set_color("black" if 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] > 0.5 else "white")
    if cbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label=DISTANCE_LABEL)
    head_txt = "" if head in (None, "all") else f", head {head}"
    prefix = f"{label} PE: " if label else ""
    gap = {k: "below 1e-9" if abs(v) < 1e-9 else f"{v:.3f}" for k, v in gaps.items()}  # zero but for rounding: a bound
    ax.set_title(
        f"{prefix}1 − cosine of {key}{head_txt}\nlargest change of one number:\nsame word "
        f"{gap['same word max|Δ|']}, same position {gap['same position max|Δ|']}",
        fontsize=10,
    )
    if cbar:
        ax.figure.set_layout_engine("tight")
    ax._course_alt_panel = (  # this panel's sentence; the figure's alt text is every panel's, in order
        f"{prefix}Heatmap of 1 − cosine between the {kind} vectors of {place} layer {layer}{head_txt} for "
        f"'{' '.join(a.src_tokens)}' (rows) and '{' '.join(b.src_tokens)}' (columns), on a log colour scale where "
        "0 = same direction."
    )
    describe(ax.figure, " ".join(p._course_alt_panel for p in ax.figure.axes if getattr(p, "_course_alt_panel", "")))
    return ax.figure


def plot_same_word_distance(cos_min: pd.DataFrame, floor: float = 1e-6):
    """How far a word's q, k and v move when the word moves: 1 − (smallest same-word cosine), log scale.

    cos_min: rows the trace keys "encoder.{layer}.self.{q,k,v}", columns the positional encodings (the
    "same word min cos" of order_gaps per model). One panel per layer, bars coloured by vector kind; values below
    `floor` (float noise: no positional encoding) are drawn at the floor and labelled "≈0".

    Used in notebook 07 (Evidence part: the computation is permutation invariant).
    """
    layers = sorted({layer_of(k) for k in cos_min.index})
    kinds = [k for k in VECTOR_KINDS if any(key.endswith(f".{k}") for key in cos_min.index)]
    fig, axes = plt.subplots(1, len(layers), figsize=(4.6 * len(layers), 3.6), sharey=True, squeeze=False)
    width = 0.8 / len(kinds)
    for ax, layer in zip(axes[0], layers):
        for i, kind in enumerate(kinds):
            d = 1.0 - cos_min.loc[trace_key("encoder self", layer, kind)].to_numpy(dtype=float)
            x = np.arange(len(cos_min.columns)) + (i - (len(kinds) - 1) / 2) * width
            ax.bar(x, np.maximum(d, floor), width, color=KIND_COLOURS[kind], label=kind, bottom=0)
            for xi, di in zip(x, d):
                if di < floor:
                    ax.text(xi, floor * 1.5, "≈0", ha="center", va="bottom", fontsize=11, fontweight="bold")
        ax.set_yscale("log")
        ax.set_ylim(floor, 1.0)
        ax.set_xticks(
            range(len(cos_min.columns)), labels=[f"{'no' if pe == 'none' else pe} PE" for pe in cos_min.columns]
        )
        ax.set_title(f"encoder layer {layer}")
        ax.set_xlabel("positional encoding")
    axes[0][0].set_ylabel("1 − cos of the same word\nat its two positions (log)")
    axes[0][-1].legend(title="vector", fontsize=8, loc="upper right")
    fig.suptitle("How much a word's q, k, v change when the word moves: 1 − its smallest cosine, seed 0")
    fig.set_layout_engine("tight")
    pes = ", ".join(f"{'no' if pe == 'none' else pe} PE" for pe in cos_min.columns)
    describe(
        fig,
        f"Bar charts, one per encoder layer ({', '.join(map(str, layers))}): 1 − the smallest cosine of the same word "
        f"at its two positions (log scale) for {', '.join(kinds)}, one group of bars per positional encoding ({pes}).",
    )
    return fig


def plot_five(
    traces,
    place="encoder self",
    layer: int = 0,
    kinds=("q", "k", "v", "out"),
    head="all",
    method: str = "pca",
    unit: bool = True,
    label: str = "",
):
    """Small multiples of the five sentences' vectors: one panel per place (row) and kind (column), all in ONE
    shared projection and on the same axes, so that panels compare directly.

    `place` may be one place or a list of places. In a kind's panel the words that sit at the same position in
    all five sentences (`shared_mask`) are drawn solid in the kind's colour, with one marker shape per sentence
    and one label per word; where a word's five markers fall on one spot its vectors hardly move. Other tokens
    of that kind are faint dots; the other kinds are light grey dots behind, for orientation. `label` (e.g.
    "seed 0") starts the title.

    Used in notebook 08 (The vectors we compare; A number for "scatter").
    """
    places = [place] if isinstance(place, str) else list(place)
    P, meta = five_projection(traces, places, layer, kinds, head, method, unit)
    shared = shared_mask(meta)
    kinds = list(dict.fromkeys(kinds))
    ncols = len(kinds) if len(kinds) <= 4 else 3
    per_place = -(-len(kinds) // ncols)
    nrows = per_place * len(places)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(2.9 * ncols + 0.3, 2.75 * nrows + 1.3), squeeze=False, sharex=True, sharey=True
    )
    lo, hi = P.min(0), P.max(0)
    pad = 0.08 * (hi - lo)
    axis = ("PCA" if method == "pca" else "t-SNE") + (" of unit vectors" if unit else "")
    head_txt = "all heads" if head in (None, "all") else f"head {head}"
    markers = dict(zip(range(1, 6), style.SENTENCE_MARKERS))
    kind_arr, word_arr, no_arr = meta["kind"].to_numpy(), meta["word"].to_numpy(), meta["sentence_no"].to_numpy()
    place_arr = meta["place"].to_numpy()
    panel_texts = []
    for p_i, pl in enumerate(places):
        for k_i, kind in enumerate(kinds):
            ax = axes[p_i * per_place + k_i // ncols, k_i % ncols]
            here = place_arr == pl
            this = here & (kind_arr == kind)
            ax.scatter(*P[here & (kind_arr != kind)].T, color="0.8", s=8, linewidths=0, zorder=1)
            ax.scatter(*P[this & ~shared].T, color=KIND_COLOURS[kind], s=12, alpha=0.3, linewidths=0, zorder=2)
            for no, marker in markers.items():
                idx = this & shared & (no_arr == no)
                _outlined(ax, P[idx], kind, marker, 34)
            texts = []
            for word in dict.fromkeys(word_arr[this & shared]):  # one label per shared word: at its central point
                pts = P[this & shared & (word_arr == word)]
                xy = pts[np.linalg.norm(pts - pts.mean(0), axis=1).argmin()]
                texts.append(
                    ax.annotate(
                        word,
                        xy,
                        xytext=style.LABEL_OFFSETS[0],
                        textcoords="offset points",
                        fontsize=style.LABEL_FONTSIZE,
                        zorder=4,
                        va="center",
                        arrowprops={"arrowstyle": "-", "color": "0.4", "lw": 0.5, "shrinkA": 1, "shrinkB": 3},
                    )
                )
            panel_texts.append((ax, texts, P[this & shared]))
            ax.set_title(f"{pl}, layer {layer}: {kind}", fontsize=10, color=KIND_COLOURS[kind])
            ax.set(xlim=(lo[0] - pad[0], hi[0] + pad[0]), ylim=(lo[1] - pad[1], hi[1] + pad[1]))
            ax.tick_params(labelsize=8)
        for ax in axes[p_i * per_place : (p_i + 1) * per_place].ravel()[len(kinds) :]:
            ax.set_visible(False)  # an unused panel in the last row of this place
    for ax in axes[-1]:
        ax.set_xlabel(f"{axis} 1", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{axis} 2", fontsize=9)
    names = list(dict.fromkeys(meta["sentence"]))
    handles = [
        plt.Line2D([], [], color="0.35", marker=markers[i + 1], linestyle="", label=f"{i + 1} = {s}")
        for i, s in enumerate(names)
    ]
    handles += [
        plt.Line2D([], [], color="0.6", marker="o", markersize=4, alpha=0.5, linestyle="", label="faint: other words"),
        plt.Line2D([], [], color="0.8", marker="o", markersize=4, linestyle="", label="grey: the other kinds"),
    ]
    fig.legend(handles=handles, fontsize=8, loc="lower center", ncols=4, frameon=False)
    fig.suptitle(
        (f"{label}: " if label else "")
        + f"The five sentences in one shared projection ({head_txt}); colour = kind, marker = sentence;\n"
        "solid and labelled: the words that sit at the same position in all five",
        fontsize=10,
    )
    fig.set_layout_engine("tight", rect=(0, 0.5 / fig.get_figheight(), 1, 1))  # room for the legend below
    fig.canvas.draw()  # lay out once: overlaps are measured on the final page
    for ax, texts, points in panel_texts:
        style.avoid_overlaps(fig, texts, points, ax)
    fig.set_layout_engine("none")  # keep that page: a second layout would move the panels under the labels
    describe(
        fig,
        (f"{label}: " if label else "")
        + f"Scatter panels of the five sentences' vectors ({'; '.join(names)}) in one shared {axis}, layer {layer}, "
        f"{head_txt}: one panel per place ({', '.join(places)}) and kind ({', '.join(kinds)}), colour = kind, "
        "marker = sentence; the words at the same position in all five are labelled.",
    )
    return fig


def plot_five_words(
    traces,
    place=("encoder self", "cross"),
    layer: int = 0,
    kinds=HEAD_KINDS,
    head="all",
    method: str = "pca",
    unit: bool = True,
    label: str = "",
):
    """Small multiples by word: one panel per word that sits at the same position in all five sentences, each
    showing only that word's vectors (colour = kind, marker = sentence), all panels in ONE shared projection on the
    same axes. Every coloured point in a panel is the word in its title, so no label sits on a point; where the
    five markers of a kind fall on one spot, the word's vector of that kind hardly moves between the sentences.

    One row of panels per place and word set: cross-attention gets two rows when both sides are chosen, its
    queries (q, x1, out, layer_out: the German words) and its keys and values (k, v: the English words; the title
    names the kinds drawn). Light grey behind: every other vector of the place, for orientation. The legend names
    the kinds as the lessons do (X1, X4, layer output). `label` (e.g. "seed 0") starts the title.

    Used in notebook 08 (The vectors we compare; Layer 1 in a picture).
    """
    places = [place] if isinstance(place, str) else list(place)
    P, meta = five_projection(traces, places, layer, kinds, head, method, unit)
    shared = shared_mask(meta)
    kinds = list(dict.fromkeys(kinds))
    kind_arr, word_arr, no_arr = meta["kind"].to_numpy(), meta["word"].to_numpy(), meta["sentence_no"].to_numpy()
    place_arr = meta["place"].to_numpy()
    rows = []  # (place, words, kinds): one row of panels
    for pl in places:
        groups: dict[tuple, list] = {}
        for kind in kinds:
            words = tuple(dict.fromkeys(word_arr[(place_arr == pl) & (kind_arr == kind) & shared]))
            groups.setdefault(words, []).append(kind)
        rows += [(pl, words, ks) for words, ks in groups.items() if words]
    ncols = max(len(words) for _, words, _ in rows)
    fig, axes = plt.subplots(
        len(rows), ncols, figsize=(2.9 * ncols + 0.6, 2.6 * len(rows) + 1.2), squeeze=False, sharex=True, sharey=True
    )
    lo, hi = P.min(0), P.max(0)
    pad = 0.08 * (hi - lo)
    axis = ("PCA" if method == "pca" else "t-SNE") + (" of unit vectors" if unit else "")
    head_txt = "all heads" if head in (None, "all") else f"head {head}"
    markers = dict(zip(range(1, 6), style.SENTENCE_MARKERS))
    for r, (pl, words, ks) in enumerate(rows):
        here = place_arr == pl
        for c in range(ncols):
            ax = axes[r, c]
            if c >= len(words):
                ax.set_visible(False)
                continue
            word = words[c]
            ax.scatter(*P[here].T, color="0.85", s=7, linewidths=0, zorder=1)
            for kind in ks:
                for no, marker in markers.items():
                    idx = here & shared & (kind_arr == kind) & (word_arr == word) & (no_arr == no)
                    _outlined(ax, P[idx], kind, marker, 38)
            english = pl == "cross" and set(ks) <= {"k", "v"}  # the English row of cross-attention: name its kinds
            side = " " + ", ".join(ks) if english else ""
            ax.set_title(f"'{word}' ({pl}{side}, layer {layer})", fontsize=10)
            ax.set(xlim=(lo[0] - pad[0], hi[0] + pad[0]), ylim=(lo[1] - pad[1], hi[1] + pad[1]))
            ax.tick_params(labelsize=8)
            if r == len(rows) - 1 or r + 1 < len(rows) and c >= len(rows[r + 1][1]):
                ax.set_xlabel(f"{axis} 1", fontsize=9)
                ax.xaxis.set_tick_params(labelbottom=True)
        axes[r, 0].set_ylabel(f"{axis} 2", fontsize=9)
    names = list(dict.fromkeys(meta["sentence"]))
    names_of = {"x1": "X1 (x1)", "out": "X4 (out)", "layer_out": "layer output"}  # the lesson's names
    colours = [
        plt.Line2D([], [], color=KIND_COLOURS[k], marker="o", linestyle="", label=names_of.get(k, k)) for k in kinds
    ]
    colours.append(plt.Line2D([], [], color="0.85", marker="o", markersize=4, linestyle="", label="grey: the rest"))
    shapes = [
        plt.Line2D([], [], color="0.35", marker=markers[i + 1], linestyle="", label=f"{i + 1} = {s}")
        for i, s in enumerate(names)
    ]
    inch = 1 / fig.get_figheight()
    fig.legend(handles=colours, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 0.3 * inch), ncols=len(colours))
    fig.legend(handles=shapes, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 0.02 * inch), ncols=len(shapes))
    fig.suptitle(
        (f"{label}: " if label else "")
        + f"One panel per word at the same position in all five sentences ({head_txt}, one shared projection);\n"
        "colour = kind, marker = sentence: five markers on one spot = the vector does not move",
        fontsize=10,
    )
    fig.set_layout_engine("tight", rect=(0, 0.62 * inch, 1, 1))
    words = ", ".join(dict.fromkeys(f"'{w}'" for _, ws, _ in rows for w in ws))
    describe(
        fig,
        (f"{label}: " if label else "")
        + f"Scatter panels, one per word at the same position in all five sentences ({words}), in one shared {axis} "
        f"of {', '.join(places)} layer {layer}, {head_txt}: colour = kind ({', '.join(kinds)}), marker = sentence "
        f"({'; '.join(names)}).",
    )
    return fig


def _outlined(ax, points, kind: str, marker: str, size: float) -> None:
    """The shared words' points of one kind and sentence: its colour, the sentence's marker, a thin black outline."""
    ax.scatter(
        *points.T,
        color=KIND_COLOURS[kind],
        marker=marker,
        s=size,
        edgecolors="black",
        linewidths=0.4,
        alpha=0.85,
        zorder=3,
    )
