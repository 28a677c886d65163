"""Notebook 06's figures: how far one word moves per kind and epoch, and its path in one shared projection.

    plot_context_distance(context_distance_table(snaps))   # §3: relative distance of eat's two vectors, per place
    plot_word_projection(snaps, word="eat", layer=0)       # §2, §5: a panel per kind, one PCA, eat's epoch path

`check_projection_choices` turns every choice that cannot be drawn into a worded course error, the message the
widget of §5 shows. The numbers are `measures.clustering` and `measures.projection`; the browser view of the
projection is `views.clientside.word_path.word_path_view`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from course_utils.core.errors import CourseInputError, ShapeError
from course_utils.core.places import HEAD_KINDS, PLACES, VECTOR_KINDS, WHOLE_LAYER_KINDS, head_index, place_prefix
from course_utils.measures.clustering import PAIR
from course_utils.measures.projection import collect_vectors, fit_projection, identical_groups
from course_utils.views.style import (
    KIND_COLOURS,
    LABEL_FONTSIZE,
    LABEL_OFFSETS,
    SENTENCE_MARKERS,
    avoid_overlaps,
    describe,
    fixed_layout,
)


def plot_context_distance(table: pd.DataFrame, word: str = "eat", sentences=PAIR):
    """One panel per place: relative distance of the word's two vectors per kind, over epochs.

    Used in notebook 06 §3.
    """
    places = list(dict.fromkeys(table["place"]))
    fig, axes = plt.subplots(1, len(places), figsize=(3.2 * len(places) + 0.8, 3.4), sharey=True, squeeze=False)
    for ax, place in zip(axes[0], places):
        sub = table[table["place"] == place]
        for kind in dict.fromkeys(sub["kind"]):
            k = sub[sub["kind"] == kind]
            ax.plot(
                k["epoch"],
                k["relative distance"],
                marker="o",
                ms=4,
                color=KIND_COLOURS[kind],
                label=kind,
                linestyle="-" if kind in ("x1", "out", "layer_out") else "--",
                alpha=0.9,
            )
        zero = [k for k in dict.fromkeys(sub["kind"]) if sub.loc[sub["kind"] == k, "relative distance"].max() < 1e-6]
        if zero:  # lines on top of each other at 0: say which
            ax.text(0.5, 0.1, f"identical (0): {', '.join(zero)}", transform=ax.transAxes, ha="center", fontsize=8)
        ax.set_title(place, fontsize=10)
        ax.set_xlabel("epoch")
        ax.set_xticks(sorted(set(table["epoch"])))
    axes[0, 0].set_ylabel(f"‖{word}₁ − {word}₂‖ / mean length")
    handles = [
        Line2D(
            [],
            [],
            color=KIND_COLOURS[k],
            marker="o",
            label=k,
            linestyle="-" if k in ("x1", "out", "layer_out") else "--",
        )
        for k in VECTOR_KINDS
        if k in set(table["kind"])
    ]
    fig.legend(handles=handles, loc="center right", fontsize=8, title="kind")
    fig.suptitle(f"How different is '{word}' in '{sentences[0]}' and '{sentences[1]}'?", fontsize=11)
    fig.set_layout_engine("tight", rect=(0, 0, 0.88, 1))
    kinds = [k for k in VECTOR_KINDS if k in set(table["kind"])]
    describe(
        fig,
        f"Line charts, one per place ({', '.join(places)}): how far apart '{word}' in '{sentences[0]}' and in "
        f"'{sentences[1]}' are (‖{word}₁ − {word}₂‖ / mean length) over epochs "
        f"{', '.join(map(str, sorted(set(table['epoch']))))}, one line per vector kind ({', '.join(kinds)}).",
    )
    return fig


def check_projection_choices(snapshots, kinds, epochs, layer, head, place, method, dims, sentences):
    """Raise a worded course error (CourseInputError / ShapeError) for every choice that cannot be drawn.

    Used by plot_word_projection (notebook 06 §2, §6), whose messages a learner who calls it sees.
    """
    if not kinds:
        raise CourseInputError("choose at least one vector kind")
    unknown = [k for k in kinds if k not in VECTOR_KINDS]
    if unknown:
        raise CourseInputError(f"unknown kind(s) {', '.join(map(str, unknown))}; choose from {', '.join(VECTOR_KINDS)}")
    if not epochs:
        raise CourseInputError("choose at least one epoch")
    missing = [e for e in epochs if e not in snapshots]
    if missing:
        raise CourseInputError(f"no snapshot at epoch(s) {missing}; snapshots exist at {sorted(snapshots)}")
    if dims not in (2, 3):
        raise CourseInputError(f"dims must be 2 or 3; got {dims}")
    if method not in ("pca", "tsne"):
        raise CourseInputError(f"method must be 'pca' or 'tsne'; got {method!r}")
    if place not in PLACES:
        raise CourseInputError(f"place must be one of {list(PLACES)}; got {place!r}")
    n_layers = snapshots[epochs[0]][sentences[0]].n_layers
    if not 0 <= int(layer) < n_layers:
        raise CourseInputError(f"layer {layer} out of range: this model has layers 0..{n_layers - 1}")
    whole = [k for k in kinds if k in WHOLE_LAYER_KINDS]
    if head_index(head) is not None and whole:
        trace = snapshots[epochs[0]][sentences[0]]
        width, head_width = (
            trace.vectors("encoder.0.layer_out").shape[-1],
            trace.vectors("encoder.0.self.q", 0).shape[-1],
        )
        raise ShapeError(
            f"{' and '.join(whole)} {'mixes' if len(whole) == 1 else 'mix'} both heads ({width} numbers), while one "
            f"head's q, k, v and x1 have {head_width}: one projection cannot hold both. "
            "Set head to 'all', or keep only q, k, v, x1"
        )


# A label names its sentence by the shape of the sentence's marker (matplotlib marker -> the same shape as text)
MARKER_GLYPHS = {"o": "●", "^": "▲", "s": "■", "D": "◆", "v": "▼", "P": "✚"}


def _draw_path(ax, Y, mine, sent_arr, ep_arr, sentences, colour, markers, styles, dims, labels=True) -> list:
    """Draw one word's points (rows `mine` of Y) per sentence, joined in epoch order (arrows in 2-D); with
    labels, one epoch label per spot, ending with its sentence's marker shape ("15▲"; "=": the same point in every
    sentence), each remembering the other
    sentence's points (`_away_from`) so that it can be put on its own path's side. Returns the 2-D label texts."""

    for s in sentences:  # the word's path: epoch 1 -> 15 -> 30
        idx = sorted((i for i in mine if sent_arr[i] == s), key=lambda i: ep_arr[i])
        pts = Y[idx]
        ax.scatter(*pts.T, color=colour, marker=markers[s], s=46, edgecolors="black", linewidths=0.6, zorder=4)
        if dims == 3:
            ax.plot(*pts.T, color=colour, linestyle=styles[s], lw=1.2)
            continue
        for a, b in zip(pts[:-1], pts[1:]):
            ax.annotate(
                "",
                b,
                a,
                zorder=3,
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": colour,
                    "linestyle": styles[s],
                    "lw": 1.2,
                    "shrinkA": 4,
                    "shrinkB": 5,
                },
            )
    texts = []
    if not labels:
        return texts
    for g in identical_groups(Y[mine]):  # one label per spot, only where points are really the same
        i = mine[g[0]]
        both = len({sent_arr[mine[j]] for j in g}) == len(sentences)
        own_marker = MARKER_GLYPHS.get(markers[sent_arr[i]], "")  # which sentence's point, when not shared
        text = ",".join(str(e) for e in sorted({ep_arr[mine[j]] for j in g})) + ("=" if both else own_marker)
        if dims == 3:
            ax.text(*Y[i], " " + text, fontsize=LABEL_FONTSIZE - 1)
            continue
        texts.append(
            ax.annotate(
                text,
                Y[i],
                xytext=(5, 4),
                textcoords="offset points",
                fontsize=LABEL_FONTSIZE - 1,
                va="center",
                zorder=5,
                arrowprops={"arrowstyle": "-", "color": "0.45", "lw": 0.6, "shrinkA": 0, "shrinkB": 3},
            )
        )
        own = {sent_arr[mine[j]] for j in g}
        others = [j for j in mine if sent_arr[j] not in own] or list(mine)  # "=": away from the path's middle
        texts[-1]._away_from = Y[others].mean(0)
    return texts


def _place_path_labels(fig, texts, points, ax) -> None:
    """views.style.avoid_overlaps for path labels: each label tries the offsets pointing away from the other
    sentence's points (`_away_from`) first, so that it sits on its own path's side; then the same rules (free of
    labels and markers, inside `ax`; failing that, free of labels inside; failing that, free of labels)."""

    def away_first(t):
        away = ax.transData.transform(t.xy) - ax.transData.transform(t._away_from)  # pixels, from the other path
        if np.linalg.norm(away) <= 1:
            return LABEL_OFFSETS
        # the text's centre lies about 8 points beyond dx, on dx's side
        centre = lambda o: (o[0] + np.sign(o[0]) * 8, o[1])  # noqa: E731
        return sorted(LABEL_OFFSETS, key=lambda o: -np.dot(away, centre(o)) / np.hypot(*centre(o)))

    avoid_overlaps(fig, texts, points, ax, order=away_first)


INSET_SIZE, INSET_MAX = 0.42, 0.56  # an inset's side (share of the panel): at least, and at most
INSET_MARGIN, INSET_TIGHT = 1.8, 1.3  # its window: 1.8 x the path's extent, down to 1.3 x to reach MIN_ZOOM
ZOOM_BELOW = 0.25  # a path under a quarter of the panel both ways is drawn again in an inset (if one fits)
MIN_ZOOM = 2.0  # an inset enlarges at least this much
MIN_WINDOW = 0.08  # the enlarged box is at least this share of the panel each way: visible around its markers
INSET_GAP = 0.03  # an inset keeps this far (share of the panel) from the box it enlarges
TITLE_BAND = 0.08  # the inset's title ("enlarged 4×") takes this share of the panel above the inset


def _inset_place(Y, path, lo, hi, own=None):
    """Where an inset of `path` can go: (corner, size, window) in shares of the panel (limits lo..hi), or None.
    The window (the enlarged box, `window` of the panel each way, around the path, at least MIN_WINDOW so that the
    box shows around the path's markers) is drawn `size` wide, at least MIN_ZOOM times larger; the inset lies
    inside the panel, below room for its title, clear of the window by INSET_GAP, and it and its title cover as
    few points of Y as they can (a point of the panel's own kind, rows `own`, counts three times)."""
    span = hi - lo
    extent = float(np.max(np.ptp(path, axis=0) / span))
    centre = ((path.min(0) + path.max(0)) / 2 - lo) / span  # the path's middle, in shares of the panel
    top = 1 - TITLE_BAND  # room for the inset's title inside the panel
    P = (Y - lo) / span
    weight = np.ones(len(Y)) if own is None else np.where(own, 3.0, 1.0)
    best = None
    for margin in (INSET_MARGIN, (INSET_MARGIN + INSET_TIGHT) / 2, INSET_TIGHT):
        window = max(margin * extent, MIN_WINDOW)
        size = min(max(INSET_SIZE, MIN_ZOOM * window), INSET_MAX)
        if size / window < MIN_ZOOM - 1e-9:
            continue  # too large a path for an inset this big: try a tighter window
        c = np.clip(centre, window / 2, 1 - window / 2)  # the window stays inside the panel
        w0, w1 = c - window / 2 - INSET_GAP, c + window / 2 + INSET_GAP
        steps = np.linspace(0.02, 0.98 - size, 25), np.linspace(0.02, top - size, 25)
        for x0 in steps[0]:
            for y0 in steps[1]:
                if x0 < w1[0] and w0[0] < x0 + size and y0 < w1[1] and w0[1] < y0 + size:
                    continue  # it would cover the box it enlarges
                over = (P[:, 0] >= x0 - 0.01) & (P[:, 0] <= x0 + size + 0.01) & (P[:, 1] >= y0 - 0.01)
                covered = weight[over & (P[:, 1] <= y0 + size + TITLE_BAND)].sum()  # the inset and its title
                edge = min(x0 - 0.02, 0.98 - size - x0) + min(y0 - 0.02, top - size - y0)  # prefer the panel's edges
                cost = (covered, round(edge, 3))
                if best is None or cost < best[0]:
                    best = (cost, (x0, y0), size, window, c)
        if best is not None:
            return best[1:]
    return None


def _zoom_inset(ax, Y, path, lo, hi, place):
    """An inset at `place` (from _inset_place) showing the neighbourhood of `path` enlarged (same aspect as the
    panel), its window marked in the panel by a box joined to the inset."""
    corner, size, window, c = place
    span = hi - lo
    inset = ax.inset_axes([*corner, size, size])
    centre = lo + c * span
    inset.set_xlim(centre[0] - window * span[0] / 2, centre[0] + window * span[0] / 2)
    inset.set_ylim(centre[1] - window * span[1] / 2, centre[1] + window * span[1] / 2)
    inset.set_xticks([])
    inset.set_yticks([])
    zoom = size / window  # the window (`window` of the panel) is drawn `size` wide
    inset.set_title(f"enlarged {zoom:.1f}×" if zoom < 3 else f"enlarged {zoom:.0f}×", fontsize=7, pad=2)
    ax.indicate_inset_zoom(inset, edgecolor="0.35", alpha=0.8)
    return inset


LEGEND_ROW = 0.24  # inches per legend row under the panels


def _legend_handles(word, sentences, markers, styles, dims, insets: bool) -> list:
    """The drawing rules of plot_word_projection, as legend entries: one per sentence's path, the epoch labels, the
    "=" label, the inset (if one is drawn) and the two kinds of background dot."""
    step = "line" if dims == 3 else "arrow"
    handles = [
        Line2D([], [], color="0.3", marker=markers[s], linestyle=styles[s], label=f"'{word}' in '{s}'")
        for s in sentences
    ]
    handles += [
        Line2D(
            [],
            [],
            color="0.3",
            marker="$15▲$",
            markersize=14,
            linestyle="",
            label=f"label: epoch, sentence; {step}: to the next (none where they overlap)",
        ),
        Line2D(
            [], [], color="0.3", marker="$15=$", markersize=16, linestyle="", label="'=': same point in both sentences"
        ),
    ]
    if insets:
        handles.append(
            Patch(facecolor="none", edgecolor="0.35", label="grey box: drawn again, enlarged, in the framed inset")
        )
    handles += [
        Line2D(
            [],
            [],
            color="0.6",
            marker="o",
            markersize=4,
            alpha=0.5,
            linestyle="",
            label="faint: other words, same kind",
        ),
        Line2D([], [], color="0.85", marker="o", markersize=4, linestyle="", label="light grey: the other kinds"),
    ]
    return handles


def plot_word_projection(
    snapshots,
    word: str = "eat",
    kinds=HEAD_KINDS,
    epochs=(1, 15, 30),
    layer: int = 0,
    head="all",
    place: str = "encoder self",
    method: str = "pca",
    dims: int = 2,
    sentences=PAIR,
):
    """Small multiples, one panel per kind, of ONE projection (fitted on every word, kind, epoch and sentence:
    shared axes) with `word`'s path over the epochs drawn in each panel: one marker per epoch, joined in epoch
    order (arrows in 2-D), one line style and marker shape per sentence, each point labelled with its epoch.
    A label ending in "=" marks a point that is *identical* in both sentences (only identical points share a
    label). Faint dots: the other words of the panel's kind; light grey: the other kinds, for orientation.

    Per-head kinds (q, k, v, x1) and whole-layer kinds (out, layer_out) cannot share a projection when one head
    is chosen; that and every other choice that cannot be drawn raise a CourseInputError saying what to change.

    Used in notebook 06 §2 and §6 (the default of its client-side view).
    """
    kinds, epochs = tuple(dict.fromkeys(kinds)), tuple(sorted(int(e) for e in epochs))
    check_projection_choices(snapshots, kinds, epochs, layer, head, place, method, dims, sentences)
    prefix = place_prefix(place, layer)
    lv = collect_vectors(snapshots, sentences, prefix, kinds=kinds, epochs=epochs, head=head_index(head))
    focus = (lv.meta["word"] == word).to_numpy()
    if not focus.any():
        tokens = sorted(set(lv.meta["word"]), key=list(lv.meta["word"]).index)
        raise CourseInputError(
            f"{word!r} is not a token of {place} layer {layer} for kinds {', '.join(kinds)}; "
            f"tokens there: {', '.join(tokens)}"
        )
    if len(lv.X) <= dims + 1:
        raise CourseInputError(f"only {len(lv.X)} vectors: too few for a {dims}-D projection; choose more kinds")
    Y = fit_projection(lv.X, method, dims)  # one fit for all panels: a point that moves really moved
    n = len(kinds)
    ncols = 2 if n == 4 else min(n, 3)
    nrows = -(-n // ncols)
    below = LEGEND_ROW * 4 + 0.2 if n == nrows * ncols else 0.0  # room for the legend under full rows of panels
    fig = plt.figure(figsize=(3.5 * ncols + 0.4, 3.3 * nrows + 0.8 + below))
    proj = {"projection": "3d"} if dims == 3 else {}
    axes = [fig.add_subplot(nrows, ncols, i + 1, **proj) for i in range(n)]
    lo, hi = Y.min(0), Y.max(0)
    pad = 0.08 * np.where(hi > lo, hi - lo, 1.0)
    name = {"pca": "PCA", "tsne": "t-SNE"}[method]
    markers = dict(zip(sentences, SENTENCE_MARKERS))
    styles = dict(zip(sentences, ("-", "--", ":", "-.")))
    kind_arr, sent_arr, ep_arr = (lv.meta[c].to_numpy() for c in ("kind", "sentence", "epoch"))
    panels = []
    for ax, kind in zip(axes, kinds):
        this = kind_arr == kind
        ax.scatter(*Y[~this].T, color="0.85", s=8, linewidths=0, zorder=1)
        ax.scatter(*Y[this & ~focus].T, color=KIND_COLOURS[kind], s=12, alpha=0.3, linewidths=0, zorder=2)
        mine = np.flatnonzero(this & focus)
        path = (Y, mine, sent_arr, ep_arr, sentences, KIND_COLOURS[kind], markers, styles, dims)
        extent = np.ptp(Y[mine], axis=0) if len(mine) else hi - lo
        small = dims == 2 and len(mine) > 1 and bool((extent < ZOOM_BELOW * (hi - lo)).all())
        spot = _inset_place(Y, Y[mine], lo - pad, hi + pad, own=this) if small else None
        texts = _draw_path(ax, *path, labels=spot is None)
        target = ax
        if spot is not None:  # the path is a speck at the panel's scale: draw it again, enlarged, in an inset
            target = _zoom_inset(ax, Y, Y[mine], lo - pad, hi + pad, spot)
            target.scatter(*Y[this & ~focus].T, color=KIND_COLOURS[kind], s=10, alpha=0.3, linewidths=0, zorder=2)
            texts = _draw_path(target, *path, labels=True)
        panels.append((target, texts, Y[mine]))
        note = "" if len(mine) else f" (no '{word}' here)"
        ax.set_title(f"{kind}{note}", fontsize=10, color=KIND_COLOURS[kind])
        ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
        ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax.tick_params(labelsize=7)
        ax.set_xlabel(f"{name} 1", fontsize=8)
        ax.set_ylabel(f"{name} 2", fontsize=8)
        if dims == 3:
            ax.set_zlim(lo[2] - pad[2], hi[2] + pad[2])
            ax.set_zlabel(f"{name} 3", fontsize=8)
    handles = _legend_handles(word, sentences, markers, styles, dims, insets=any(t is not ax for t, _, _ in panels))
    if n < nrows * ncols:  # an empty slot: the legend goes there, outside every panel
        spare = fig.add_subplot(nrows, ncols, nrows * ncols)
        spare.axis("off")
        spare.legend(handles=handles, fontsize=8, loc="center", frameon=False)
        bottom = 0.0
    else:  # below the panels
        fig.legend(handles=handles, fontsize=8, loc="lower center", ncols=2, frameon=False)
        bottom = LEGEND_ROW * -(-len(handles) // 2) / fig.get_figheight()
    heads = "all heads" if head_index(head) is None else f"head {head}"
    fig.suptitle(
        (
            f"'{word}' over epochs {' → '.join(map(str, epochs))}"
            if len(epochs) > 1
            else f"'{word}' at epoch {epochs[0]}"
        )
        + f": {place} layer {layer}, {heads}\none {name} of all words, kinds and epochs (shared axes); "
        "colour: the panel's kind",
        fontsize=10,
    )
    describe(
        fig,
        f"{'3-D' if dims == 3 else '2-D'} scatter panels, one per kind ({', '.join(kinds)}), in one shared {name} of "
        f"{place} layer {layer}, {heads}: the path of '{word}' over epochs {', '.join(map(str, epochs))} in "
        + " and in ".join(f"'{s}'" for s in sentences)
        + ", each point labelled with its epoch; the other words are faint dots.",
    )
    if dims == 3:
        top = 1 - 0.75 / fig.get_figheight()
        fixed_layout(fig, left=0.02, right=0.93, bottom=bottom + 0.03, top=top, wspace=0.25)
        return fig
    fig.set_layout_engine("tight", rect=(0, bottom, 1, 1))
    fig.canvas.draw()  # lay out once: label overlaps are measured on the final page
    for ax, texts, points in panels:
        _place_path_labels(fig, texts, points, ax)
    fig.set_layout_engine("none")  # keep that page
    return fig
