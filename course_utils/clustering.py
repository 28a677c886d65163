"""06: how the vectors of one word move between sentences and epochs, and how Q, K, V spread out.

All functions read training snapshots (epoch -> sentence -> tracing.Trace), e.g.
`load_standard_model().snapshots`. Places are tracing.PLACES (trace-key prefixes: tracing.place_prefix):

    "encoder self"   encoder.{layer}.self    Q = K = V = English
    "decoder self"   decoder.{layer}.self    Q = K = V = German (decoder input: <bos> w1 ... wn)
    "cross"          decoder.{layer}.cross   Q = German, K = V = English (keys/values are English tokens)

Vector kinds (tracing.VECTOR_KINDS): "q", "k", "v", "x1" (weights·V, per head), "out" (after W^O, the source
blog's X4) and "layer_out" (the whole layer's output). head=None means all heads side by side (d_model numbers).
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.lines import Line2D
from sklearn.metrics import silhouette_score

from .analysis import collect_vectors, fit_projection
from .data import encode_source, encode_target
from .errors import CourseInputError, ShapeError
from .plotting import KIND_COLOURS, fixed_layout
from .tracing import PLACES, VECTOR_KINDS, patch, place_of, place_prefix, trace_key

PAIR = ("we want to eat apple", "we want to eat bread")  # the source blog's two sentences
SENTENCE_MARKERS = ("o", "^", "s", "D", "v", "P")


def _head(head):
    """None / "all" -> None (all heads side by side); "0" / 0 -> 0."""
    return None if head is None or head == "all" else int(head)


def word_vector(trace, key: str, word: str, head=None) -> np.ndarray:
    """The vector of `word` in `trace[key]` (first occurrence), as float64."""
    tokens = trace.tokens(key)
    if word not in tokens:
        raise ValueError(f"{word!r} is not a token of {key} in this sentence; its tokens are {', '.join(tokens)}")
    return trace.vectors(key, _head(head))[tokens.index(word)].double().numpy()


def cosine_distance(a, b) -> float:
    return float(max(0.0, 1.0 - np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))) + 0.0


def relative_distance(a, b) -> float:
    """‖a − b‖ divided by the mean length of a and b (0: the same vector; about 1.4: unrelated directions)."""
    return float(np.linalg.norm(a - b) / ((np.linalg.norm(a) + np.linalg.norm(b)) / 2)) + 0.0


def between_word_distance(trace, key: str, head=None) -> float:
    """Mean relative distance between the vectors of two different positions of one sentence (a yardstick)."""
    V = trace.vectors(key, _head(head)).double().numpy()
    return float(np.mean([relative_distance(V[i], V[j]) for i, j in itertools.combinations(range(len(V)), 2)]))


def context_distance_table(
    snapshots,
    word: str = "eat",
    sentences=PAIR,
    prefixes=("encoder.0.self", "encoder.1.self", "decoder.0.cross", "decoder.1.cross"),
    kinds=VECTOR_KINDS,
    epochs=None,
    head=None,
) -> pd.DataFrame:
    """How far `word`'s vector in sentence 1 is from its vector in sentence 2, per place, kind and epoch.

    Columns: place, kind, epoch, cosine distance, relative distance (see `relative_distance`), and
    "between words": the mean relative distance between two different words of the same kind
    (averaged over both sentences), so that a word's context shift can be compared with it.
    Kinds in which `word` is not a token of the place (e.g. "eat" as a cross-attention query) are skipped.
    """
    s1, s2 = sentences
    epochs = sorted(snapshots) if epochs is None else list(epochs)
    rows = []
    for prefix in prefixes:
        for kind in kinds:
            if kind not in VECTOR_KINDS:
                raise ValueError(f"kind must be one of {VECTOR_KINDS}; got {kind!r}")
            key = trace_key(place_of(prefix), int(prefix.split(".")[1]), kind)  # as analysis.collect_vectors
            for epoch in epochs:
                t1, t2 = snapshots[epoch][s1], snapshots[epoch][s2]
                if word not in t1.tokens(key) or word not in t2.tokens(key):
                    continue
                a, b = word_vector(t1, key, word, head), word_vector(t2, key, word, head)
                rows.append(
                    {
                        "place": prefix,
                        "kind": kind,
                        "epoch": epoch,
                        "cosine distance": cosine_distance(a, b),
                        "relative distance": relative_distance(a, b),
                        "between words": (between_word_distance(t1, key, head) + between_word_distance(t2, key, head))
                        / 2,
                    }
                )
    if not rows:
        raise ValueError(f"{word!r} occurs in none of {list(prefixes)} for both sentences")
    return pd.DataFrame(rows)


def plot_context_distance(table: pd.DataFrame, word: str = "eat", sentences=PAIR):
    """One panel per place: relative distance of the word's two vectors per kind, over epochs."""
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
    return fig


# ---- activation patching: is a word's context-dependent state used? (claim B5) ----


def copy_row_from(source, position: int):
    """A patch for `tracing.patch`: replace row `position` (one word) of the hooked tensor (B, T, d_model)
    by the same row of `source[name]`, where `source` is a Trace of another sentence recorded at the same
    hook point. Every other row, and the rest of the forward pass, is left as it is."""

    def fn(tensor, name):
        patched = tensor.clone()
        patched[:, position] = source[name][position]
        return patched

    return fn


@torch.no_grad()
def next_word_log_probs(model, sentence, target, patches=None) -> torch.Tensor:
    """(T, |German vocab|) log-probabilities of the next German word, teacher-forced: row i is the model's
    prediction after reading <bos> and the first i words of `target` (row 2 predicts the third word).
    `patches` ({trace key: fn}) are applied during the forward pass (see `tracing.patch`)."""
    was_training = model.training
    model.eval()
    try:
        src = torch.tensor([encode_source(model.src_vocab, sentence, model.cfg.max_len)])
        tgt_in = torch.tensor([encode_target(model.tgt_vocab, target, model.cfg.max_len)[:-1]])
        with patch(model, patches or {}):
            return model(src, tgt_in)[0].log_softmax(-1)
    finally:
        model.train(was_training)


# ---- pairwise spread (claim B6) and kind clusters (claim B5) ----


def pairwise_spread(X) -> float:
    """The *pairwise spread* of a point cloud: mean Euclidean distance over all pairs of different rows,
    divided by the mean row length (scale-free).

    0 means all vectors are the same; vectors pointing in unrelated directions give about √2 ≈ 1.41.
    It measures how wide a cloud of many different words is. Not to be confused with notebook 08's
    "word spread" (how far the *same* word moves between sentences, 1 − cos) or its "cloud spread"
    (mean distance to the centroid / mean length), see `probing`.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"need at least two vectors as an (N, dim) array; got shape {X.shape}")
    i, j = np.triu_indices(len(X), k=1)
    return float(np.linalg.norm(X[i] - X[j], axis=1).mean() / np.linalg.norm(X, axis=1).mean())


def pairwise_spread_table(
    snapshots, sentences, epoch: int, layers=(0, 1), kinds=("q", "k", "v", "x1", "out", "layer_out"), head=None
) -> pd.DataFrame:
    """`pairwise_spread` of all vectors of one kind (all words of all `sentences`), per place, at one epoch.

    Rows (layer, kind); columns tracing.PLACES: "encoder self", "decoder self", "cross". Cross-attention keys and
    values are computed from the encoder's output, so their column is left empty for k and v (and for
    layer_out, which is the decoder layer's output, already in "decoder self").
    """
    rows = []
    for layer in layers:
        for kind in kinds:
            row = {"layer": layer, "kind": kind}
            for place in PLACES:
                if place == "cross" and kind in ("k", "v", "layer_out"):
                    row[place] = np.nan
                    continue
                lv = collect_vectors(
                    snapshots, sentences, place_prefix(place, layer), kinds=(kind,), epochs=[epoch], head=head
                )
                row[place] = pairwise_spread(lv.X)
            rows.append(row)
    return pd.DataFrame(rows).set_index(["layer", "kind"])


def kind_separation(snapshots, sentences, prefix: str, epoch: int, kinds=("q", "k", "v"), head=None) -> dict:
    """How well the vectors of different kinds form their own clusters (all words of `sentences`).

    silhouette: sklearn's silhouette score with the kind as cluster label, in the full space
    (−1 … 1; above 0.5 clear clusters, below about 0.25 no real cluster structure);
    silhouette_2d: the same in the 2-D PCA plane a plot would show;
    centroid_accuracy: share of vectors whose nearest kind-centroid (Euclidean) is their own kind's
    (chance: 1 / number of kinds).
    """
    lv = collect_vectors(snapshots, sentences, prefix, kinds=kinds, epochs=[epoch], head=head)
    labels = lv.meta["kind"].to_numpy()
    centroids = np.stack([lv.X[labels == k].mean(0) for k in kinds])
    nearest = np.array(kinds)[np.linalg.norm(lv.X[:, None, :] - centroids[None], axis=-1).argmin(1)]
    return {
        "silhouette": float(silhouette_score(lv.X, labels)),
        "silhouette_2d": float(silhouette_score(fit_projection(lv.X, "pca", 2), labels)),
        "centroid_accuracy": float((nearest == labels).mean()),
    }


# ---- the projection plot behind the widget ----

WHOLE_LAYER_KINDS = ("out", "layer_out")  # d_model numbers that mix the heads: no per-head version exists


def _check_projection_choices(snapshots, kinds, epochs, layer, head, place, method, dims, sentences):
    """Raise a worded course error (CourseInputError / ShapeError) for every choice that cannot be drawn."""
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
    n_layers = sum(1 for k in snapshots[epochs[0]][sentences[0]].keys() if k.endswith(".layer_out")) // 2
    if not 0 <= int(layer) < n_layers:
        raise CourseInputError(f"layer {layer} out of range: this model has layers 0..{n_layers - 1}")
    whole = [k for k in kinds if k in WHOLE_LAYER_KINDS]
    if _head(head) is not None and whole:
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


def _identical_groups(P, tol: float = 1e-9) -> list[list[int]]:
    """Group the rows of P that are the same point (up to float noise; not "close": only identical)."""
    span = float(np.linalg.norm(P.max(0) - P.min(0))) if len(P) else 1.0
    groups: list[list[int]] = []
    for i in range(len(P)):
        for g in groups:
            if np.linalg.norm(P[i] - P[g[0]]) <= tol * max(span, 1.0):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _draw_path(ax, Y, mine, sent_arr, ep_arr, sentences, colour, markers, styles, dims, labels=True) -> list:
    """Draw one word's points (rows `mine` of Y) per sentence, joined in epoch order (arrows in 2-D); with
    labels, one epoch label per spot ("=": the same point in every sentence), each remembering the other
    sentence's points (`_away_from`) so that it can be put on its own path's side. Returns the 2-D label texts."""
    from .probing import LABEL_FONTSIZE

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
    for g in _identical_groups(Y[mine]):  # one label per spot, only where points are really the same
        i = mine[g[0]]
        both = len({sent_arr[mine[j]] for j in g}) == len(sentences)
        text = ",".join(str(e) for e in sorted({ep_arr[mine[j]] for j in g})) + ("=" if both else "")
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
    """probing._avoid_overlaps for path labels: each label tries the offsets pointing away from the other
    sentence's points (`_away_from`) first, so that it sits on its own path's side; then the same rules (free of
    labels and markers, inside `ax`; failing that, free of labels inside; failing that, free of labels)."""
    from .probing import _OFFSETS, _avoid_overlaps

    def away_first(t):
        away = ax.transData.transform(t.xy) - ax.transData.transform(t._away_from)  # pixels, from the other path
        if np.linalg.norm(away) <= 1:
            return _OFFSETS
        # the text's centre lies about 8 points beyond dx, on dx's side
        centre = lambda o: (o[0] + np.sign(o[0]) * 8, o[1])  # noqa: E731
        return sorted(_OFFSETS, key=lambda o: -np.dot(away, centre(o)) / np.hypot(*centre(o)))

    _avoid_overlaps(fig, texts, points, ax, order=away_first)


INSET_SIZE, INSET_MARGIN = 0.42, 1.8  # an inset's side (share of the panel); its window: 1.8 x the path's extent
ZOOM_BELOW = 0.25  # a path under a quarter of the panel both ways is drawn again in an inset
MIN_ZOOM = 1.25  # an inset enlarges at least this much (a tighter margin around paths near ZOOM_BELOW)


def _zoom_inset(ax, Y, path, lo, hi, size: float = INSET_SIZE):
    """An inset in the corner of `ax` (limits lo..hi) that covers the fewest points of Y and none of `path`,
    showing the neighbourhood of `path` enlarged (same aspect as the panel), with its frame marked in the panel."""
    span = hi - lo
    top = 1 - size - 0.08  # room for the inset's title inside the panel
    corners = [(1 - size - 0.02, top), (0.02, top), (0.02, 0.02), (1 - size - 0.02, 0.02)]

    def cost(corner):
        x0, y0 = lo + np.array(corner) * span
        x1, y1 = x0 + size * span[0], y0 + size * span[1]
        inside = lambda P: ((P[:, 0] >= x0) & (P[:, 0] <= x1) & (P[:, 1] >= y0) & (P[:, 1] <= y1)).sum()  # noqa: E731
        return 1000 * inside(path) + inside(Y)

    corner = min(corners, key=cost)
    inset = ax.inset_axes([*corner, size, size])
    centre = (path.min(0) + path.max(0)) / 2
    f = max(INSET_MARGIN * float(np.max(np.ptp(path, axis=0) / span)), 0.03)  # the window, as a share of the panel
    f = min(f, size / MIN_ZOOM)
    centre = np.clip(centre, lo + f * span / 2, hi - f * span / 2)  # the enlarged box stays inside the panel
    inset.set_xlim(centre[0] - f * span[0] / 2, centre[0] + f * span[0] / 2)
    inset.set_ylim(centre[1] - f * span[1] / 2, centre[1] + f * span[1] / 2)
    inset.set_xticks([])
    inset.set_yticks([])
    zoom = size / f  # the window (f of the panel) is drawn `size` wide
    inset.set_title(f"enlarged {zoom:.1f}×" if zoom < 3 else f"enlarged {zoom:.0f}×", fontsize=7, pad=2)
    ax.indicate_inset_zoom(inset, edgecolor="0.35", alpha=0.8)
    return inset


def plot_word_projection(
    snapshots,
    word: str = "eat",
    kinds=("q", "k", "v", "x1"),
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
    """
    kinds, epochs = tuple(dict.fromkeys(kinds)), tuple(sorted(int(e) for e in epochs))
    _check_projection_choices(snapshots, kinds, epochs, layer, head, place, method, dims, sentences)
    prefix = place_prefix(place, layer)
    lv = collect_vectors(snapshots, sentences, prefix, kinds=kinds, epochs=epochs, head=_head(head))
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
    fig = plt.figure(figsize=(3.5 * ncols + 0.4, 3.3 * nrows + (1.3 if n == nrows * ncols else 0.8)))
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
        texts = _draw_path(ax, *path, labels=not small)
        target = ax
        if small:  # the path is a speck at the panel's scale: draw it again, enlarged, in an inset
            target = _zoom_inset(ax, Y, Y[mine], lo - pad, hi + pad)
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
    handles = [
        Line2D([], [], color="0.3", marker=markers[s], linestyle=styles[s], label=f"'{word}' in '{s}'")
        for s in sentences
    ]
    handles += [
        Line2D(
            [],
            [],
            color="0.6",
            marker="o",
            markersize=4,
            alpha=0.5,
            linestyle="",
            label="faint: other words (same kind)",
        ),
        Line2D([], [], color="0.85", marker="o", markersize=4, linestyle="", label="grey: the other kinds"),
    ]
    if n < nrows * ncols:  # an empty slot: the legend goes there, outside every panel
        spare = fig.add_subplot(nrows, ncols, nrows * ncols)
        spare.axis("off")
        spare.legend(handles=handles, fontsize=8, loc="center", frameon=False)
        bottom = 0.0
    else:  # below the panels
        fig.legend(handles=handles, fontsize=8, loc="lower center", ncols=2, frameon=False)
        bottom = 0.6 / fig.get_figheight()
    heads = "all heads" if _head(head) is None else f"head {head}"
    fig.suptitle(
        (
            f"'{word}' over epochs {' → '.join(map(str, epochs))}"
            if len(epochs) > 1
            else f"'{word}' at epoch {epochs[0]}"
        )
        + f": {place} layer {layer}, {heads}, one {name} of all "
        "words\nlabels: epoch; '=': the same point in both sentences",
        fontsize=10,
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
