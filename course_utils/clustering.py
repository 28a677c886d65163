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


def _coinciding(Y, idx, tol: float = 0.01) -> list[list[int]]:
    """Group the points idx of Y that lie within tol × (size of the whole cloud) of each other."""
    span = float(np.linalg.norm(Y.max(0) - Y.min(0))) or 1.0
    groups: list[list[int]] = []
    for i in idx:
        for g in groups:
            if np.linalg.norm(Y[i] - Y[g].mean(0)) <= tol * span:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _label_positions(anchors, Y, gap: float = 0.045, width: float = 0.3):
    """(x, y, ha) for each label: beside its point (left of it in the right third of the plot), pushed
    up until it overlaps no label placed before it (greedy, from the bottom)."""
    lo, hi = Y.min(0), Y.max(0)
    dx, dy = (hi[0] - lo[0]) or 1.0, (hi[1] - lo[1]) or 1.0
    placed: list[tuple[float, float, float]] = []  # (x from, x to, y)
    out: list[tuple[float, float, str]] = [None] * len(anchors)
    for i in np.argsort(anchors[:, 1], kind="stable"):
        right = anchors[i, 0] > lo[0] + 0.65 * dx
        x = anchors[i, 0] + (-0.03 if right else 0.03) * dx
        span = (x - width * dx, x) if right else (x, x + width * dx)
        y = anchors[i, 1]
        while True:
            clash = [py for a, b, py in placed if a < span[1] and span[0] < b and abs(py - y) < gap * dy]
            if not clash:
                break
            y = max(clash) + 1.001 * gap * dy  # (1.001: float rounding must not leave it clashing)
        placed.append((*span, y))
        out[i] = (x, y, "right" if right else "left")
    return out


def _merged_label(meta: pd.DataFrame, sentences) -> str:
    """One label for the points drawn on one spot: eat@k@15 and eat@k@30 -> "eat@k@15,30". An epoch whose point
    on this spot belongs to only some of the sentences is tagged with that sentence's own words ("·apple")."""

    def tag(s):
        others = {w for t in sentences if t != s for w in t.split()}
        return " ·" + " ".join(w for w in s.split() if w not in others)

    parts = []
    for (word, kind), g in meta.groupby(["word", "kind"], sort=False):
        by_epoch = g.groupby("epoch")["sentence"].apply(set)
        shared = [e for e, ss in by_epoch.items() if len(ss) == len(sentences)]
        if shared:
            parts.append(f"{word}@{kind}@" + ",".join(map(str, shared)))
        for s in sentences:
            own = [e for e, ss in by_epoch.items() if s in ss and len(ss) < len(sentences)]
            if own:
                parts.append(f"{word}@{kind}@" + ",".join(map(str, own)) + tag(s))
    return " / ".join(parts)


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
    label_others: bool = False,
):
    """Project the vectors of every word of `sentences` (chosen kinds and epochs, one fit: shared axes)
    and highlight `word`, labelled word@kind@epoch as in the source blog; marker shape = sentence.

    Raises ValueError / KeyError with a readable message for choices that cannot be drawn.
    """
    kinds, epochs = tuple(kinds), tuple(int(e) for e in epochs)
    if not kinds:
        raise ValueError("choose at least one vector kind")
    if not epochs:
        raise ValueError("choose at least one epoch")
    if dims not in (2, 3):
        raise ValueError(f"dims must be 2 or 3; got {dims}")
    prefix = place_prefix(place, layer)
    n_layers = sum(1 for k in snapshots[epochs[0]][sentences[0]].keys() if k.endswith(".layer_out")) // 2
    if not 0 <= int(layer) < n_layers:
        raise IndexError(f"layer {layer} out of range: this model has layers 0..{n_layers - 1}")
    lv = collect_vectors(snapshots, sentences, prefix, kinds=kinds, epochs=epochs, head=_head(head))
    focus = (lv.meta["word"] == word).to_numpy()
    if not focus.any():
        tokens = sorted(set(lv.meta["word"]), key=list(lv.meta["word"]).index)
        raise ValueError(
            f"{word!r} is not a token of {place} layer {layer} for kinds {', '.join(kinds)}; "
            f"tokens there: {', '.join(tokens)}"
        )
    if len(lv.X) <= dims:
        raise ValueError(f"only {len(lv.X)} vectors: too few for a {dims}-D projection")
    Y = fit_projection(lv.X, method, dims)  # one BLAS thread inside: faster for a 120 x 64 SVD
    fig = plt.figure(figsize=(8, 6.2))
    ax = fig.add_subplot(111, projection="3d" if dims == 3 else None)
    markers = dict(zip(sentences, SENTENCE_MARKERS))
    colours = lv.meta["kind"].map(KIND_COLOURS).to_numpy()
    sent = lv.meta["sentence"].to_numpy()
    for s in sentences:  # the other words: small and faint
        idx = (~focus) & (sent == s)
        ax.scatter(*Y[idx].T, c=colours[idx], marker=markers[s], s=14, alpha=0.3)
        idx = focus & (sent == s)
        ax.scatter(*Y[idx].T, c=colours[idx], marker=markers[s], s=70, edgecolors="black", linewidths=0.6)
    if label_others:
        for i in np.flatnonzero(~focus):
            ax.text(*Y[i], lv.meta["label"].iat[i], fontsize=6, alpha=0.6)
    groups = _coinciding(Y, np.flatnonzero(focus), tol=0.01 if dims == 2 else 0.03)  # one label per spot: "eat@k@15,30"
    texts = [_merged_label(lv.meta.iloc[g], sentences) for g in groups]
    anchors = np.stack([Y[g].mean(0) for g in groups])
    if dims == 2:
        for (x, y), (lx, ly, ha), text in zip(anchors, _label_positions(anchors, Y), texts):
            ax.annotate(
                text,
                (x, y),
                (lx, ly),
                fontsize=8,
                va="center",
                ha=ha,
                arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5, "shrinkA": 0, "shrinkB": 4},
            )
    else:
        for xyz, text in zip(anchors, texts):
            ax.text(*xyz, "  " + text, fontsize=8)
    present = [k for k in kinds if k in set(lv.meta.loc[focus, "kind"])]
    handles = [Line2D([], [], color=KIND_COLOURS[k], marker="o", linestyle="", label=k) for k in kinds]
    handles += [Line2D([], [], color="grey", marker=markers[s], linestyle="", label=s) for s in sentences]
    handles += [
        Line2D(
            [],
            [],
            color="grey",
            marker="o",
            linestyle="",
            markersize=8,
            markeredgecolor="black",
            label=f"'{word}' (large, labelled)",
        ),
        Line2D([], [], color="grey", marker="o", linestyle="", markersize=4, alpha=0.3, label="other words"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="best")
    name = {"pca": "PCA", "tsne": "t-SNE"}[method]
    ax.set_xlabel(f"{name} 1")
    ax.set_ylabel(f"{name} 2")
    if dims == 3:
        ax.set_zlabel(f"{name} 3")
    heads = "all heads" if _head(head) is None else f"head {head}"
    missing = [k for k in kinds if k not in present]
    note = f"\n('{word}' has no {', '.join(missing)} vectors here)" if missing else ""
    ax.set_title(
        f"'{word}' (large, labelled) among all words: {place} layer {layer}, {heads}, "
        f"epochs {', '.join(map(str, epochs))}{note}",
        fontsize=9,
    )
    fixed_layout(fig, left=0.1, right=0.95, bottom=0.09, top=0.9)  # fixed margins: tight_layout costs ~0.2 s
    return fig
