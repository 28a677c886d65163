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

from . import analysis, plotting
from .analysis import StyledTable
from .data import load_probes
from .tracing import run_with_trace
from .training import load_standard_model

WORD_ORDER = ("we can eat apple", "apple eat can we")  # the "word_order" probe set
WORD_ORDER_TARGET = "wir können einen apfel essen"  # one German decoder input for both: decoders comparable
VECTOR_KINDS = ("q", "k", "v", "x1", "out", "layer_out")
PLACES = ("encoder self", "decoder self", "decoder cross")
KIND_COLOURS = dict(zip(VECTOR_KINDS, ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:red", "tab:brown")))
TOLERANCE = 1e-5  # float32 noise: differences below this count as "equal"


# ---- trace keys ----


def trace_key(place: str = "encoder self", layer: int = 0, kind: str = "q") -> str:
    """("encoder self", 0, "q") -> "encoder.0.self.q"; kind "layer_out" -> "encoder.0.layer_out"; "embed" -> "encoder.embed"."""
    if place not in PLACES:
        raise ValueError(f"place must be one of {PLACES}; got {place!r}")
    side, where = place.split()
    if kind == "embed":
        return f"{side}.embed"
    if kind == "layer_out":
        return f"{side}.{layer}.layer_out"
    if kind not in VECTOR_KINDS + ("weights", "scores", "concat"):
        raise ValueError(f"kind must be one of {VECTOR_KINDS + ('embed', 'weights')}; got {kind!r}")
    return f"{side}.{layer}.{where}.{kind}"


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
    traces, layer: int = 0, kind: str = "q", place: str = "encoder self", head="all", ax=None, label: str = ""
):
    """Heatmap of cosines between the two word orders' vectors at one place, with the gaps in the title.

    `traces` is the pair (trace_a, trace_b) from `word_order_traces`; `label` (e.g. "learned") starts the
    title as "<label> PE: ...".
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
    plotting.heatmap(
        analysis.cosine_matrix(A, B),
        a.tokens(key),
        b.tokens(key),
        ax=ax,
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
        xlabel=f"'{' '.join(b.src_tokens)}'",
        ylabel=f"'{' '.join(a.src_tokens)}'",
    )
    head_txt = "" if head in (None, "all") else f", head {head}"
    prefix = f"{label} PE: " if label else ""
    ax.set_title(
        f"{prefix}cosine of {key}{head_txt}\nsame word max|Δ| {gaps['same word max|Δ|']:.3f}, "
        f"same position max|Δ| {gaps['same position max|Δ|']:.3f}",
        fontsize=10,
    )
    ax.figure.set_layout_engine("tight")
    return ax.figure


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
                rows.append(
                    {
                        "side": place.split()[0],
                        "layer": layer,
                        "place": place.split()[1],
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
    kinds = list(kinds)
    if not kinds:
        raise ValueError("pick at least one vector kind")
    bad = [k for k in kinds if k not in VECTOR_KINDS]
    if bad:
        raise ValueError(f"unknown kind(s) {bad}; choose from {VECTOR_KINDS}")
    h = None if head in (None, "all") else int(head)
    if h is not None and any(k not in ("q", "k", "v", "x1") for k in kinds):
        raise ValueError("out and layer_out mix the heads (they are d_model wide): with one head pick only q, k, v, x1")
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


def merged_labels(points, words, numbers, kinds, tol: float = 1e-3) -> list[str]:
    """One label per group of coinciding points of the same word and kind ("eat 1-5"); "" for the rest."""
    points = np.asarray(points)
    scale = max(float(np.ptp(points, axis=0).max()), 1e-12)
    labels, done = [], set()
    for i in range(len(points)):
        if i in done:
            labels.append("")
            continue
        same = [
            j
            for j in range(i, len(points))
            if j not in done
            and words[j] == words[i]
            and kinds[j] == kinds[i]
            and np.abs(points[j] - points[i]).max() <= tol * scale
        ]
        done.update(same)
        nums = sorted(numbers[j] for j in same)
        run = len(nums) > 2 and nums == list(range(nums[0], nums[-1] + 1))
        labels.append(f"{words[i]} " + (f"{nums[0]}-{nums[-1]}" if run else ",".join(map(str, nums))))
    return labels


def shared_mask(meta: pd.DataFrame) -> np.ndarray:
    """True for the rows of a `five_projection` meta whose word sits at the same position in every sentence
    (per place and kind: cross-attention keys and values are English rows, its queries German ones)."""
    n = meta["sentence"].nunique()
    words = meta.groupby(["place", "kind", "position"])["word"].agg(lambda w: w.nunique() == 1 and len(w) == n)
    return meta.set_index(["place", "kind", "position"]).index.map(words).to_numpy(dtype=bool)


LABEL_FONTSIZE = 9  # points at the saved size: the figure is drawn at its real size (no shrinking in a notebook)
LABEL_MERGE = 0.02  # points of one word and kind closer than 2 % of the picture share one label ("i 1-5")
_OFFSETS = [(4, 3), (4, -12), (-6, 3), (-6, -12), (4, 12), (-6, 12), (4, -21), (-6, -21)]  # points; <0 x: right-aligned


def _avoid_overlaps(fig, texts) -> None:
    """Move each label to the first of a few offsets around its marker where it overlaps no earlier label."""
    renderer = fig.canvas.get_renderer()
    placed = []
    for t in texts:
        for dx, dy in _OFFSETS:
            t.set_position((dx, dy))
            t.set_horizontalalignment("left" if dx > 0 else "right")
            box = t.get_window_extent(renderer).expanded(1.02, 1.05)
            if not any(box.overlaps(b) for b in placed):
                break
        else:  # nowhere free: keep the default place
            t.set_position(_OFFSETS[0])
            t.set_horizontalalignment("left")
            box = t.get_window_extent(renderer)
        placed.append(box)


def plot_five(
    traces,
    place="encoder self",
    layer: int = 0,
    kinds=("q", "k", "v", "out"),
    head="all",
    method: str = "pca",
    unit: bool = True,
):
    """Scatter of the five sentences' vectors (colour = kind), labelled for the words all five share.

    `place` may be one place or a list of places: one panel each, stacked, all in one shared projection.
    Only the words that sit at the same position in all five sentences (`shared_mask`) are drawn solid and
    labelled, with word + sentence number(s); points of the same word and kind that fall on one spot share
    one label, e.g. "eat 1-5". All other tokens are drawn faint and unlabelled.
    """
    places = [place] if isinstance(place, str) else list(place)
    P, meta = five_projection(traces, places, layer, kinds, head, method, unit)
    shared = shared_mask(meta)
    fig, axes = plt.subplots(len(places), 1, figsize=(8.0, 5.0 * len(places) + 0.6), squeeze=False)
    lo, hi = P.min(0), P.max(0)
    pad = 0.08 * (hi - lo)
    axis = ("PCA" if method == "pca" else "t-SNE") + (" of unit vectors" if unit else "")
    head_txt = "all heads" if head in (None, "all") else f"head {head}"
    panel_texts = []
    for ax, pl in zip(axes[:, 0], places):
        m = (meta["place"] == pl).to_numpy()
        Pm, sm, kinds_here = P[m], shared[m], meta["kind"][m].to_numpy()
        labels = merged_labels(
            Pm[sm],
            meta["word"][m][sm].tolist(),
            meta["sentence_no"][m][sm].tolist(),
            kinds_here[sm].tolist(),
            tol=LABEL_MERGE,
        )
        for kind in dict.fromkeys(kinds_here):  # one fixed colour per kind in every figure
            idx = kinds_here == kind
            ax.scatter(*Pm[idx & ~sm].T, color=KIND_COLOURS[kind], s=14, alpha=0.2, linewidths=0)
            ax.scatter(*Pm[idx & sm].T, color=KIND_COLOURS[kind], label=kind, s=30, edgecolors="white", linewidths=0.5)
        texts = [
            ax.annotate(
                lab, xy, xytext=(4, 3), textcoords="offset points", fontsize=LABEL_FONTSIZE, color=KIND_COLOURS[kind]
            )  # offset: the marker must not hide the first letter
            for xy, lab, kind in zip(Pm[sm], labels, kinds_here[sm])
            if lab
        ]
        panel_texts.append(texts)
        ax.scatter([], [], color="grey", s=14, alpha=0.3, linewidths=0, label="faint: other words\n(not shared)")
        ax.set_title(f"{pl} attention, layer {layer} ({head_txt})", fontsize=11)
        ax.set(
            xlabel=f"{axis} 1",
            ylabel=f"{axis} 2",
            xlim=(lo[0] - pad[0], hi[0] + pad[0]),
            ylim=(lo[1] - pad[1], hi[1] + pad[1]),
        )
        # a fixed place: loc="best" would search over every label at each draw
        ax.legend(title="kind", fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    names = list(dict.fromkeys(meta["sentence"]))
    fig.suptitle(
        "one shared projection; labels: words shared by all five sentences + sentence number(s)\n"
        + "; ".join(f"{i + 1} = {s}" for i, s in enumerate(names)),
        fontsize=9,
    )
    fig.set_layout_engine("tight")  # laid out when drawn: once per PNG in a widget
    for texts in panel_texts:  # after the layout: overlaps are measured on the final page
        _avoid_overlaps(fig, texts)
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
