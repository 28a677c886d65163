"""Probing with sentences: word order (notebook 07) and the five probe sentences (notebook 08).

07 compares two sentences with the same words in another order, word by word:

    model = load_standard_model("none").model
    a, b = word_order_traces(model)                   # "we can eat apple", "apple eat can we"
    order_gaps(a, b, ["encoder.0.self.k", "encoder.1.layer_out"])
    cosine_across(a, b, "encoder.0.self.q", uuid="q0")   # colour-styled table, words on both axes

08 measures how far the vectors of a word move between sentences:

    traces = [course.snapshots[30][s] for s in load_probes("five_sentences")]
    spread_table(traces)                              # one row per side/layer/place/kind

Every function takes `tracing.Trace` objects; vectors come from `Trace.vectors` (heads side by
side when head is None).
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.text import Text

from . import analysis, plotting
from .analysis import StyledTable
from .clustering import SENTENCE_MARKERS  # one marker per sentence in the course
from .data import load_probes
from .plotting import KIND_COLOURS  # one colour per kind in the course
from .tracing import PLACES, VECTOR_KINDS, place_prefix, run_with_trace, trace_key
from .training import load_standard_model

WORD_ORDER = ("we can eat apple", "apple eat can we")  # the "word_order" probe set
WORD_ORDER_TARGET = "wir können einen apfel essen"  # one German decoder input for both: decoders comparable
TOLERANCE = 1e-9  # float64 rounding noise (~1e-15 here) stays below this: differences below it count as "equal"
DISTANCE_FLOOR = 1e-3  # plot_word_order: 1 − cos below this is drawn as the floor colour of the log scale
DISTANCE_LABEL = "1 − cosine (log scale; 0 = same direction)"  # plot_word_order's colour bar


def _check_layer(trace, key: str) -> None:
    if key not in trace.keys():
        layers = sorted({k.split(".")[1] for k in trace.keys() if k.split(".")[1].isdigit()})
        raise IndexError(f"no {key!r} in this trace; layers are {', '.join(layers)}")


# ---- 07: the same words in another order ----


def word_permutation(tokens_a, tokens_b) -> list[int]:
    """perm with tokens_b[i] == tokens_a[perm[i]]: where each word of b sits in a.

    ["we", "can", "eat", "apple"], ["apple", "eat", "can", "we"] -> [3, 2, 1, 0].
    """
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    if sorted(tokens_a) != sorted(tokens_b):
        raise ValueError(f"not the same words in another order: {tokens_a} vs {tokens_b}")
    if len(set(tokens_a)) != len(tokens_a):
        raise ValueError(f"a word occurs twice in {tokens_a}: which copy matches which is ambiguous")
    return [tokens_a.index(t) for t in tokens_b]


def _vectors(trace, key: str, head=None) -> np.ndarray:
    _check_layer(trace, key)
    head = None if head in (None, "all") else int(head)
    if key.endswith((".weights", ".scores")):
        w = trace[key].double().numpy()  # (H, Tq, Tk)
        if head is not None:
            if not 0 <= head < w.shape[0]:
                raise IndexError(f"head {head} out of range: {key} has heads 0..{w.shape[0] - 1}")
            w = w[head : head + 1]
        return w
    if head is not None and key.split(".")[-1] not in ("q", "k", "v", "x1"):
        raise ValueError(f"{key.split('.')[-1]} mixes the heads (it comes after W^O or the layer): choose head 'all'")
    return trace.vectors(key, head).double().numpy()


def aligned(trace_a, trace_b, key: str, head=None) -> tuple[np.ndarray, np.ndarray]:
    """(A reordered into b's word order, B): row i of both belongs to the same word.

    Vectors (T, dim) are reordered along T; attention weights (H, Tq, Tk) along both token axes.
    """
    A, B = _vectors(trace_a, key, head), _vectors(trace_b, key, head)
    if key.endswith((".weights", ".scores")):
        pq = word_permutation(trace_a.query_tokens(key), trace_b.query_tokens(key))
        pk = word_permutation(trace_a.key_tokens(key), trace_b.key_tokens(key))
        return A[:, pq][:, :, pk], B
    return A[word_permutation(trace_a.tokens(key), trace_b.tokens(key))], B


def _rowwise_cos(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A, B = A.reshape(-1, A.shape[-1]), B.reshape(-1, B.shape[-1])
    return (A * B).sum(-1) / np.maximum(np.linalg.norm(A, axis=-1) * np.linalg.norm(B, axis=-1), 1e-12)


def order_gaps(trace_a, trace_b, keys, head=None) -> pd.DataFrame:
    """How much changes between two orderings of the same words, per trace key.

    same position: max |B - A| row by row (0 would mean permutation INVARIANT: nothing changed);
    same word:     max |B - P·A|, A reordered to b's word order (0 means EQUIVARIANT: outputs only moved);
    same-word cos: the smallest cosine between a word's two vectors (1 = same direction).
    """
    rows = []
    for key in keys:
        A, B = _vectors(trace_a, key, head), _vectors(trace_b, key, head)
        PA, _ = aligned(trace_a, trace_b, key, head)
        rows.append(
            {
                "key": key,
                "same position max|Δ|": float(np.abs(B - A).max()),
                "same word max|Δ|": float(np.abs(B - PA).max()),
                "same word min cos": float(_rowwise_cos(PA, B).min()),
            }
        )
    return pd.DataFrame(rows).set_index("key")


def cosine_across(
    trace_a, trace_b, key: str, head=None, *, uuid: str, caption: str | None = None, decimals: int = 3
) -> StyledTable:
    """Colour-styled cosine table: rows = vectors of sentence a, columns = vectors of sentence b.

    `uuid` must differ between the tables of one notebook (the HTML ids must be unique and fixed).
    """
    A, B = _vectors(trace_a, key, head), _vectors(trace_b, key, head)
    if A.ndim != 2:
        raise ValueError(f"{key} is not a set of vectors; choose q, k, v, x1, out or layer_out")
    caption = (
        caption
        or f"{key}: cosine between the words of '{' '.join(trace_a.src_tokens)}' (rows) and '{' '.join(trace_b.src_tokens)}' (columns)"
    )
    return analysis.cosine_table(
        A, B, trace_a.tokens(key), trace_b.tokens(key), caption=caption, decimals=decimals, uuid=uuid
    )


def anti_diagonal(M) -> np.ndarray:
    """M[i, n-1-i]: where the same word sits when the columns are the rows' sentence reversed."""
    M = np.asarray(M)
    return M[np.arange(len(M)), len(M) - 1 - np.arange(len(M))]


def counterpart_stats(trace_a, trace_b, key: str, by: str = "word", head=None) -> dict:
    """How alike each vector of `trace_a` is to its counterpart in `trace_b` at one trace key.

    by="word": the counterpart is the same word wherever it sits (the anti-diagonal of a cosine table when b is
    a reversed); by="position": the row at the same position (the diagonal; e.g. decoder rows when both traces
    read the same German). Returns
      max|Δ|       the largest absolute difference between counterparts (0, up to float noise: "the same");
      min cos      the smallest cosine between counterparts (1 = the same direction);
      own nearest  True if every row is nearer (by cosine) to its counterpart than to any other row of b;
                   for attention weights: every query's strongest key is the same word in both.
    """
    if by not in ("word", "position"):
        raise ValueError(f"by must be 'word' or 'position'; got {by!r}")
    if by == "word":
        A, B = aligned(trace_a, trace_b, key, head)
    else:
        if trace_a.tokens(key) != trace_b.tokens(key):
            raise ValueError(f"{key}: the rows hold different tokens; compare by='word'")
        A, B = _vectors(trace_a, key, head), _vectors(trace_b, key, head)
    if key.endswith((".weights", ".scores")):
        nearest = bool((A.argmax(-1) == B.argmax(-1)).all())
    else:
        C = analysis.cosine_matrix(A, B)
        nearest = bool((np.diag(C) >= C.max(1) - 1e-12).all())
    return {
        "max|Δ|": float(np.abs(A - B).max()),
        "min cos": float(_rowwise_cos(A, B).min()),
        "own nearest": nearest,
    }


def seed_counterparts(pairs_by_seed: dict, keys, by: str = "word", head=None) -> pd.DataFrame:
    """`counterpart_stats` for every seed and key: {seed: (trace_a, trace_b)} -> rows (key, seed)."""
    rows = [
        {"key": key, "seed": seed, **counterpart_stats(a, b, key, by, head)}
        for key in keys
        for seed, (a, b) in pairs_by_seed.items()
    ]
    return pd.DataFrame(rows).set_index(["key", "seed"])


def word_order_traces(model, a: str = WORD_ORDER[0], b: str = WORD_ORDER[1], target: str | None = WORD_ORDER_TARGET):
    """(trace of a, trace of b) through `model` (e.g. `load_standard_model(pe).model`), the decoder reading
    `target` for both so that the decoders' rows compare position by position."""
    return run_with_trace(model, a, target=target), run_with_trace(model, b, target=target)


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
    `word_order_traces`; `label` (e.g. "learned") starts the title as "<label> PE: ...". With cbar=False the
    panel gets no colour bar and the figure's layout is left to the caller: several panels on one figure then
    share one bar, `fig.colorbar(axes[0].images[0], ax=axes, label=DISTANCE_LABEL)` (every panel has the same
    scale).
    """
    key = trace_key(place, layer, kind)
    if kind in ("weights", "scores"):
        raise ValueError("choose a vector kind (q, k, v, x1, out, layer_out)")
    if isinstance(traces, str) or len(traces) != 2:
        raise TypeError(f"traces must be the pair (trace_a, trace_b) from word_order_traces(model); got {traces!r}")
    a, b = traces
    A, B = _vectors(a, key, head), _vectors(b, key, head)
    gaps = order_gaps(a, b, [key], head).iloc[0]
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 4.2))
    D = np.clip(1.0 - analysis.cosine_matrix(A, B), 0.0, 2.0)  # 0: same direction, 1: orthogonal, 2: opposite
    plotting.heatmap(
        D,
        a.tokens(key),
        b.tokens(key),
        ax=ax,
        fmt=".3f",
        cmap="viridis",
        cbar=False,
        xlabel=f"'{' '.join(b.src_tokens)}'",
        ylabel=f"'{' '.join(a.src_tokens)}'",
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
    ax.set_title(
        f"{prefix}1 − cosine of {key}{head_txt}\nsame word max|Δ| {gaps['same word max|Δ|']:.3f}, "
        f"same position max|Δ| {gaps['same position max|Δ|']:.3f}",
        fontsize=10,
    )
    if cbar:
        ax.figure.set_layout_engine("tight")
    return ax.figure


def plot_same_word_distance(cos_min: pd.DataFrame, floor: float = 1e-6):
    """How far a word's q, k and v move when the word moves: 1 − (smallest same-word cosine), log scale.

    cos_min: rows the trace keys "encoder.{layer}.self.{q,k,v}", columns the positional encodings (the
    "same word min cos" of order_gaps per model). One panel per layer, bars coloured by vector kind; values below
    `floor` (float noise: no positional encoding) are drawn at the floor and labelled "≈0"."""
    layers = sorted({int(k.split(".")[1]) for k in cos_min.index})
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
                    ax.text(xi, floor * 1.5, "≈0", ha="center", va="bottom", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylim(floor, 1.0)
        ax.set_xticks(
            range(len(cos_min.columns)), labels=[f"{'no' if pe == 'none' else pe} PE" for pe in cos_min.columns]
        )
        ax.set_title(f"encoder layer {layer}")
        ax.set_xlabel("positional encoding")
    axes[0][0].set_ylabel("1 − cos of the same word\nat its two positions (log)")
    axes[0][-1].legend(title="vector", fontsize=8, loc="upper right")
    fig.suptitle("How much a word's q, k, v change when the word moves (smallest cosine, seed 0)")
    fig.set_layout_engine("tight")
    return fig


def distinct_translations(model, sentence: str) -> dict[str, int]:
    """Translate every ordering of the sentence's words: {German translation: how many orderings}."""
    from .model import translate_batch

    orders = [" ".join(p) for p in itertools.permutations(sentence.split())]
    counts: dict[str, int] = {}
    for out in translate_batch(model, orders):
        counts[" ".join(out)] = counts.get(" ".join(out), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


# ---- 08: how far a word's vectors move between sentences ----


def shared_positions(traces, key: str) -> list[tuple[int, str]]:
    """(position, token) pairs where every trace has the same token at the same position."""
    tokens = [t.tokens(key) for t in traces]
    n = min(len(t) for t in tokens)
    return [(p, tokens[0][p]) for p in range(n) if all(t[p] == tokens[0][p] for t in tokens)]


def mean_pairwise_cosine_distance(V) -> float:
    """Mean of 1 - cos(v_i, v_j) over all pairs i < j of the rows of V (n, dim): 0 = all point the same way."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or len(V) < 2:
        raise ValueError(f"need at least two vectors as rows of a 2-D array; got shape {V.shape}")
    C = analysis.cosine_matrix(V, V)
    return float(np.clip(1.0 - C[np.triu_indices(len(V), 1)], 0.0, 2.0).mean())  # clip: no -0.000 from rounding


def word_spread(traces, key: str, head=None) -> dict[str, float]:
    """{word: mean pairwise cosine distance of its vectors across the traces}, for every word that sits
    at the same position in all of them (the shared words)."""
    shared = shared_positions(traces, key)
    if not shared:
        raise ValueError(f"no word sits at the same position in all sentences for {key}")
    mats = [_vectors(t, key, head) for t in traces]
    return {w: mean_pairwise_cosine_distance(np.stack([M[p] for M in mats])) for p, w in shared}


def cloud_spread(traces, key: str, head=None) -> float:
    """Spread of the whole point cloud (every token of every trace): mean distance to the centroid
    divided by the mean norm (scale-free, so kinds of different size compare)."""
    X = np.concatenate([_vectors(t, key, head) for t in traces])
    return float(np.linalg.norm(X - X.mean(0), axis=1).mean() / np.linalg.norm(X, axis=1).mean())


def spread_table(traces, kinds=VECTOR_KINDS, head=None, n_layers: int | None = None) -> pd.DataFrame:
    """One row per (side, layer, place, kind): shared words, word spread (mean over shared words), cloud spread.

    kind "layer_out" is the layer's output (after attention, feed-forward and LayerNorm); on the
    decoder it belongs to the whole layer and is listed under both places.
    """
    if n_layers is None:
        n_layers = 1 + max(int(k.split(".")[1]) for k in traces[0].keys() if k.split(".")[1].isdigit())
    rows = []
    for place in PLACES:
        for layer in range(n_layers):
            for kind in kinds:
                if head not in (None, "all") and kind not in ("q", "k", "v", "x1"):
                    continue
                key = trace_key(place, layer, kind)
                spreads = word_spread(traces, key, head)
                side, _, where = place_prefix(place, layer).split(".")
                rows.append(
                    {
                        "side": side,
                        "layer": layer,
                        "place": where,
                        "kind": kind,
                        "key": key,
                        "shared words": " ".join(spreads),
                        "word spread": float(np.mean(list(spreads.values()))),
                        "cloud spread": cloud_spread(traces, key, head),
                    }
                )
    return pd.DataFrame(rows)


def spread_pivot(table: pd.DataFrame, value: str = "word spread", decimals: int | None = None) -> pd.DataFrame:
    """Rows "encoder L0 self" ..., columns the kinds (rounded to `decimals` if given)."""
    t = table.assign(where=table["side"] + " L" + table["layer"].astype(str) + " " + table["place"])
    order = list(dict.fromkeys(t["where"]))
    piv = t.pivot(index="where", columns="kind", values=value).loc[order, list(dict.fromkeys(t["kind"]))]
    piv.columns.name = None
    return piv if decimals is None else piv.round(decimals)


def spread(table: pd.DataFrame, side: str, layer: int, place: str, kind: str, value: str = "word spread") -> float:
    """One number from spread_table."""
    sel = table[(table.side == side) & (table.layer == layer) & (table.place == place) & (table.kind == kind)]
    if len(sel) != 1:
        raise KeyError(f"no single row for {side} {layer} {place} {kind}")
    return float(sel[value].iloc[0])


def _snapshots(traces) -> tuple[dict, list[str]]:
    names = [" ".join(t.src_tokens) for t in traces]
    return {0: dict(zip(names, traces))}, names


def five_projection(
    traces,
    places=("encoder self",),
    layer: int = 0,
    kinds=("q", "k", "v", "out"),
    head="all",
    method: str = "pca",
    unit: bool = True,
):
    """Vectors of the given places/kinds of all traces in ONE shared projection.

    unit=True divides every vector by its length first: the picture then shows directions, which is
    what cosine similarity (and the spread measure) compares, and no kind dominates by sheer size.
    Returns (points (N, 2), meta DataFrame with word, kind, sentence, place, sentence_no (1-based)).
    """
    from .errors import CourseInputError, ShapeError

    kinds, places = list(kinds), list(places)
    if not kinds:
        raise CourseInputError("pick at least one vector kind")
    if not places:
        raise CourseInputError(f"pick at least one place of {', '.join(PLACES)}")
    bad = [k for k in kinds if k not in VECTOR_KINDS]
    if bad:
        raise CourseInputError(f"unknown kind(s) {bad}; choose from {VECTOR_KINDS}")
    h = None if head in (None, "all") else int(head)
    if h is not None and any(k not in ("q", "k", "v", "x1") for k in kinds):
        raise ShapeError(
            "out and layer_out mix the heads (they are d_model wide): set head to 'all', or keep only q, k, v, x1"
        )
    snaps, names = _snapshots(traces)
    parts = []
    for place in places:
        key = trace_key(place, layer, "q")
        _check_layer(traces[0], key)
        lv = analysis.collect_vectors(snaps, names, key.rsplit(".", 1)[0], kinds=kinds, head=h)
        parts.append((lv.X, lv.meta.assign(place=place)))
    X = np.concatenate([p[0] for p in parts]).astype(np.float64)
    if unit:
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    meta = pd.concat([p[1] for p in parts], ignore_index=True)
    meta["sentence_no"] = meta["sentence"].map({s: i + 1 for i, s in enumerate(names)})
    return analysis.fit_projection(X, method=method), meta


def shared_mask(meta: pd.DataFrame) -> np.ndarray:
    """True for the rows of a `five_projection` meta whose word sits at the same position in every sentence
    (per place and kind: cross-attention keys and values are English rows, its queries German ones)."""
    n = meta["sentence"].nunique()
    words = meta.groupby(["place", "kind", "position"])["word"].agg(lambda w: w.nunique() == 1 and len(w) == n)
    return meta.set_index(["place", "kind", "position"]).index.map(words).to_numpy(dtype=bool)


LABEL_FONTSIZE = 9  # points at the saved size: the figure is drawn at its real size (no shrinking in a notebook)
_OFFSETS = [(5, 4), (5, -13), (-7, 4), (-7, -13), (5, 14), (-7, 14), (5, -23), (-7, -23), (14, -4), (-16, -4)]
_OFFSETS += [(dx, dy) for dy in (24, -33) for dx in (5, -7)]  # points from the anchor; <0 x: right-aligned


def _avoid_overlaps(fig, texts, points=(), ax=None, order=None) -> None:
    """Move each label to the first of a few offsets around its anchor where it overlaps no earlier label, no
    marker (`points`, data coordinates) and stays inside `ax`; failing that, inside `ax` free of labels; failing
    that, the first place free of labels. `order(t)`, when given, returns the offsets to try for label `t`, best
    first (default `_OFFSETS`); nowhere free, the label keeps the first of them. The one label placer of
    `plot_five` (notebooks 07, 08) and `clustering.plot_word_projection` (notebook 06)."""
    renderer = fig.canvas.get_renderer()
    r = 4.5 * fig.dpi / 72  # a marker's radius in pixels
    dots = (
        ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2)) if ax is not None else np.empty((0, 2))
    )
    frame = ax.get_window_extent(renderer) if ax is not None else None
    placed = []

    def _box(t, dx, dy):
        t.set_position((dx, dy))
        t.set_horizontalalignment("left" if dx > 0 else "right")
        return Text.get_window_extent(t, renderer).expanded(1.02, 1.05)  # the text alone, not its leader line

    def _clear(box, level):  # level 2: free of labels and markers, inside; 1: free of labels, inside; 0: labels
        if any(box.overlaps(b) for b in placed):
            return False
        inside = frame is None or (
            frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        )
        hit = (
            (dots[:, 0] > box.x0 - r)
            & (dots[:, 0] < box.x1 + r)
            & (dots[:, 1] > box.y0 - r)
            & (dots[:, 1] < box.y1 + r)
        ).any()
        return level == 0 or (inside and (level == 1 or not hit))

    for t in texts:
        offsets = _OFFSETS if order is None else order(t)
        spot = next((off for level in (2, 1, 0) for off in offsets if _clear(_box(t, *off), level)), offsets[0])
        placed.append(_box(t, *spot))


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
    markers = dict(zip(range(1, 6), SENTENCE_MARKERS))
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
                ax.scatter(
                    *P[idx].T,
                    color=KIND_COLOURS[kind],
                    marker=marker,
                    s=34,
                    edgecolors="black",
                    linewidths=0.4,
                    alpha=0.85,
                    zorder=3,
                )
            texts = []
            for word in dict.fromkeys(word_arr[this & shared]):  # one label per shared word: at its central point
                pts = P[this & shared & (word_arr == word)]
                xy = pts[np.linalg.norm(pts - pts.mean(0), axis=1).argmin()]
                texts.append(
                    ax.annotate(
                        word,
                        xy,
                        xytext=_OFFSETS[0],
                        textcoords="offset points",
                        fontsize=LABEL_FONTSIZE,
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
        _avoid_overlaps(fig, texts, points, ax)
    fig.set_layout_engine("none")  # keep that page: a second layout would move the panels under the labels
    return fig


def five_sentences(epoch: int = 30) -> list:
    """Traces of the "five_sentences" probe set from the shipped learned-PE model's snapshot at `epoch`."""
    course = load_standard_model("learned")
    return [course.snapshots[epoch][s] for s in load_probes("five_sentences")]


def five_sentence_traces(model) -> list:
    """Trace the "five_sentences" probe set through `model` as the snapshots do: the decoder reads the German
    reference, or the model's own translation where there is none (the misleading sentence). For seed 0 this
    equals `five_sentences()`; seeds 1-4 of "learned" ship no snapshot of these sentences."""
    return [run_with_trace(model, s, target=ref) for s, ref in load_probes("five_sentences").items()]
