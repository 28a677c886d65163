"""Probing with sentences: word order (notebook 07) and the five probe sentences (notebook 08).

07 compares two sentences with the same words in another order, word by word:

    model = load_standard_model("none").model
    a, b = word_order_traces(model)                   # "we can eat apple", "apple eat can we"
    order_gaps(a, b, ["encoder.0.self.k", "encoder.1.layer_out"])

08 measures how far the vectors of a word move between sentences:

    traces = [course.snapshots[30][s] for s in load_probes("five_sentences")]   # = five_sentences(30)
    word_spread(traces, "encoder.0.self.x1")          # {shared word: how far its vectors move}
    spread_table(traces)                              # one row per side/layer/place/kind

Every function takes `inspect.tracing.Trace` objects; vectors come from `Trace.vectors` (heads side by
side when head is None). The distances are `measures.similarity`'s; the figures are `views.probing`, the cosine
tables `views.tables`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from course_utils.core.data import load_probes
from course_utils.core.errors import CourseInputError, ShapeError
from course_utils.core.model import translate_batch
from course_utils.core.places import HEAD_KINDS, PLACES, VECTOR_KINDS, head_index, place_prefix, trace_key
from course_utils.measures.projection import collect_vectors, fit_projection
from course_utils.measures.similarity import cosine_matrix, mean_pairwise_cosine_distance, rowwise_cosine
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import load_standard_model

WORD_ORDER = ("we can eat apple", "apple eat can we")  # the "word_order" probe set
WORD_ORDER_TARGET = "wir können einen apfel essen"  # one German decoder input for both: decoders comparable
TOLERANCE = 1e-9  # float64 rounding noise (~1e-15 here) stays below this: differences below it count as "equal"


def _check_layer(trace, key: str) -> None:
    if key not in trace.keys():
        raise IndexError(f"no {key!r} in this trace; layers are {', '.join(map(str, range(trace.n_layers)))}")


# ---- 07: the same words in another order ----


def word_permutation(tokens_a, tokens_b) -> list[int]:
    """perm with tokens_b[i] == tokens_a[perm[i]]: where each word of b sits in a.

    ["we", "can", "eat", "apple"], ["apple", "eat", "can", "we"] -> [3, 2, 1, 0].

    Taught in notebook 07 (Q across the two sentences); used in its exercise 2.
    """
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    if sorted(tokens_a) != sorted(tokens_b):
        raise ValueError(f"not the same words in another order: {tokens_a} vs {tokens_b}")
    if len(set(tokens_a)) != len(tokens_a):
        raise ValueError(f"a word occurs twice in {tokens_a}: which copy matches which is ambiguous")
    return [tokens_a.index(t) for t in tokens_b]


def key_vectors(trace, key: str, head=None) -> np.ndarray:
    """trace[key] as float64: vectors (T, dim) (heads side by side when head is None), or attention weights and
    scores (H, Tq, Tk) (one head kept when given); a head of a kind that mixes the heads is a ValueError.

    Used by every comparison below and by views.probing.plot_word_order (notebooks 07 and 08).
    """
    _check_layer(trace, key)
    head = head_index(head)
    if key.endswith((".weights", ".scores")):
        w = trace[key].double().numpy()  # (H, Tq, Tk)
        if head is not None:
            if not 0 <= head < w.shape[0]:
                raise IndexError(f"head {head} out of range: {key} has heads 0..{w.shape[0] - 1}")
            w = w[head : head + 1]
        return w
    if head is not None and key.split(".")[-1] not in HEAD_KINDS:
        raise ValueError(f"{key.split('.')[-1]} mixes the heads (it comes after W^O or the layer): choose head 'all'")
    return trace.vectors(key, head).double().numpy()


def aligned(trace_a, trace_b, key: str, head=None) -> tuple[np.ndarray, np.ndarray]:
    """(A reordered into b's word order, B): row i of both belongs to the same word.

    Vectors (T, dim) are reordered along T; attention weights (H, Tq, Tk) along both token axes.

    Taught in notebook 07 (Q across the two sentences); used in 07 (X4 and the layers above).
    """
    A, B = key_vectors(trace_a, key, head), key_vectors(trace_b, key, head)
    if key.endswith((".weights", ".scores")):
        pq = word_permutation(trace_a.query_tokens(key), trace_b.query_tokens(key))
        pk = word_permutation(trace_a.key_tokens(key), trace_b.key_tokens(key))
        return A[:, pq][:, :, pk], B
    return A[word_permutation(trace_a.tokens(key), trace_b.tokens(key))], B


def order_gaps(trace_a, trace_b, keys, head=None) -> pd.DataFrame:
    """How much changes between two orderings of the same words, per trace key.

    same position: max |B - A| row by row (0 would mean permutation INVARIANT: nothing changed);
    same word:     max |B - P·A|, A reordered to b's word order (0 means EQUIVARIANT: outputs only moved);
    same-word cos: the smallest cosine between a word's two vectors (1 = same direction).

    Taught in notebook 07 (Q across the two sentences); used in the rest of 07.
    """
    rows = []
    for key in keys:
        A, B = key_vectors(trace_a, key, head), key_vectors(trace_b, key, head)
        PA, _ = aligned(trace_a, trace_b, key, head)
        rows.append(
            {
                "key": key,
                "same position max|Δ|": float(np.abs(B - A).max()),
                "same word max|Δ|": float(np.abs(B - PA).max()),
                "same word min cos": float(rowwise_cosine(PA, B).min()),
            }
        )
    return pd.DataFrame(rows).set_index("key")


def anti_diagonal(M) -> np.ndarray:
    """M[i, n-1-i]: where the same word sits when the columns are the rows' sentence reversed.

    Taught in notebook 07 (Q across the two sentences); used in 07 (X4 and the layers above; Explore).
    """
    M = np.asarray(M)
    return M[np.arange(len(M)), len(M) - 1 - np.arange(len(M))]


def paired_rows(trace_a, trace_b, key: str, by: str = "word", head=None):
    """The rows of `key` in two traces, paired by word (aligned) or by position (the same tokens required).
    Used by counterpart_stats and counterpart_margin (notebook 07, Claim B8)."""
    if by not in ("word", "position"):
        raise ValueError(f"by must be 'word' or 'position'; got {by!r}")
    if by == "word":
        return aligned(trace_a, trace_b, key, head)
    if trace_a.tokens(key) != trace_b.tokens(key):
        raise ValueError(f"{key}: the rows hold different tokens; compare by='word'")
    return key_vectors(trace_a, key, head), key_vectors(trace_b, key, head)


def counterpart_stats(trace_a, trace_b, key: str, by: str = "word", head=None) -> dict:
    """How alike each vector of `trace_a` is to its counterpart in `trace_b` at one trace key.

    by="word": the counterpart is the same word wherever it sits (the anti-diagonal of a cosine table when b is
    a reversed); by="position": the row at the same position (the diagonal; e.g. decoder rows when both traces
    read the same German). Returns
      max|Δ|       the largest absolute difference between counterparts (0, up to float noise: "the same");
      min cos      the smallest cosine between counterparts (1 = the same direction);
      own nearest  True if every row is nearer (by cosine) to its counterpart than to any other row of b;
                   for attention weights: every query's strongest key is the same word in both.

    Taught in notebook 07 (Q across the two sentences).
    """
    A, B = paired_rows(trace_a, trace_b, key, by, head)
    if key.endswith((".weights", ".scores")):
        nearest = bool((A.argmax(-1) == B.argmax(-1)).all())
    else:
        C = cosine_matrix(A, B)
        nearest = bool((np.diag(C) >= C.max(1) - 1e-12).all())
    return {
        "max|Δ|": float(np.abs(A - B).max()),
        "min cos": float(rowwise_cosine(A, B).min()),
        "own nearest": nearest,
    }


def seed_counterparts(pairs_by_seed: dict, keys, by: str = "word", head=None) -> pd.DataFrame:
    """`counterpart_stats` for every seed and key: {seed: (trace_a, trace_b)} -> rows (key, seed).

    Used in notebook 07 for every B8 verdict over the five seeds, from Q across the two sentences on.
    """
    rows = [
        {"key": key, "seed": seed, **counterpart_stats(a, b, key, by, head)}
        for key in keys
        for seed, (a, b) in pairs_by_seed.items()
    ]
    return pd.DataFrame(rows).set_index(["key", "seed"])


def word_order_traces(model, a: str = WORD_ORDER[0], b: str = WORD_ORDER[1], target: str | None = WORD_ORDER_TARGET):
    """(trace of a, trace of b) through `model` (e.g. `load_standard_model(pe).model`), the decoder reading
    `target` for both so that the decoders' rows compare position by position.

    Taught in notebook 07 (Three positional encodings); used in its Evidence part on every seed.
    """
    return run_with_trace(model, a, target=target), run_with_trace(model, b, target=target)


def distinct_translations(model, sentence: str) -> dict[str, int]:
    """Translate every ordering of the sentence's words: {German translation: how many orderings}.

    Taught in notebook 07 (Exercises: exercise 3 writes the loop); used in 07 (What the model translates).
    """

    orders = [" ".join(p) for p in itertools.permutations(sentence.split())]
    counts: dict[str, int] = {}
    for out in translate_batch(model, orders):
        counts[" ".join(out)] = counts.get(" ".join(out), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


# ---- 08: how far a word's vectors move between sentences ----


def shared_positions(traces, key: str) -> list[tuple[int, str]]:
    """(position, token) pairs where every trace has the same token at the same position.

    Used in notebook 08 (The vectors we compare) and its exercise 2.
    """
    tokens = [t.tokens(key) for t in traces]
    n = min(len(t) for t in tokens)
    return [(p, tokens[0][p]) for p in range(n) if all(t[p] == tokens[0][p] for t in tokens)]


def word_spread(traces, key: str, head=None) -> dict[str, float]:
    """{word: mean pairwise cosine distance of its vectors across the traces}, for every word that sits
    at the same position in all of them (the shared words).

    Taught in notebook 08 (The vectors we compare); used in 08 (A number for "scatter").
    """
    shared = shared_positions(traces, key)
    if not shared:
        raise ValueError(f"no word sits at the same position in all sentences for {key}")
    mats = [key_vectors(t, key, head) for t in traces]
    return {w: mean_pairwise_cosine_distance(np.stack([M[p] for M in mats])) for p, w in shared}


def cloud_spread(traces, key: str, head=None) -> float:
    """Spread of the whole point cloud (every token of every trace): mean distance to the centroid
    divided by the mean norm (scale-free, so kinds of different size compare).

    Taught in notebook 08 (The vectors we compare).
    """
    X = np.concatenate([key_vectors(t, key, head) for t in traces])
    return float(np.linalg.norm(X - X.mean(0), axis=1).mean() / np.linalg.norm(X, axis=1).mean())


def spread_table(traces, kinds=VECTOR_KINDS, head=None, n_layers: int | None = None) -> pd.DataFrame:
    """One row per (side, layer, place, kind): shared words, word spread (mean over shared words), cloud spread.

    kind "layer_out" is the layer's output (after attention, feed-forward and LayerNorm); on the
    decoder it belongs to the whole layer and is listed under both places.

    Taught in notebook 08 (A number for "scatter").
    """
    if n_layers is None:
        n_layers = traces[0].n_layers
    rows = []
    for place in PLACES:
        for layer in range(n_layers):
            for kind in kinds:
                if head not in (None, "all") and kind not in HEAD_KINDS:
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
    """Rows "encoder L0 self" ..., columns the kinds (rounded to `decimals` if given).

    Used in notebook 08 (A number for "scatter").
    """
    t = table.assign(where=table["side"] + " L" + table["layer"].astype(str) + " " + table["place"])
    order = list(dict.fromkeys(t["where"]))
    piv = t.pivot(index="where", columns="kind", values=value).loc[order, list(dict.fromkeys(t["kind"]))]
    piv.columns.name = None
    return piv if decimals is None else piv.round(decimals)


def spread(table: pd.DataFrame, side: str, layer: int, place: str, kind: str, value: str = "word spread") -> float:
    """One number from spread_table.

    Used by tests/test_probing.py, to read single numbers of notebook 08's spread_table.
    """
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

    Used by views.probing.plot_five and views.clientside.five.five_view (notebook 08, The vectors we compare).
    """

    kinds, places = list(kinds), list(places)
    if not kinds:
        raise CourseInputError("pick at least one vector kind")
    if not places:
        raise CourseInputError(f"pick at least one place of {', '.join(PLACES)}")
    bad = [k for k in kinds if k not in VECTOR_KINDS]
    if bad:
        raise CourseInputError(f"unknown kind(s) {bad}; choose from {VECTOR_KINDS}")
    h = None if head in (None, "all") else int(head)
    if h is not None and any(k not in HEAD_KINDS for k in kinds):
        raise ShapeError(
            "out and layer_out mix the heads (they are d_model wide): set head to 'all', or keep only q, k, v, x1"
        )
    snaps, names = _snapshots(traces)
    parts = []
    for place in places:
        key = trace_key(place, layer, "q")
        _check_layer(traces[0], key)
        lv = collect_vectors(snaps, names, key.rsplit(".", 1)[0], kinds=kinds, head=h)
        parts.append((lv.X, lv.meta.assign(place=place)))
    X = np.concatenate([p[0] for p in parts]).astype(np.float64)
    if unit:
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    meta = pd.concat([p[1] for p in parts], ignore_index=True)
    meta["sentence_no"] = meta["sentence"].map({s: i + 1 for i, s in enumerate(names)})
    return fit_projection(X, method=method), meta


def shared_mask(meta: pd.DataFrame) -> np.ndarray:
    """True for the rows of a `five_projection` meta whose word sits at the same position in every sentence
    (per place and kind: cross-attention keys and values are English rows, its queries German ones).

    Used by views.probing.plot_five and views.clientside.five.five_view (notebook 08, The vectors we compare).
    """
    n = meta["sentence"].nunique()
    words = meta.groupby(["place", "kind", "position"])["word"].agg(lambda w: w.nunique() == 1 and len(w) == n)
    return meta.set_index(["place", "kind", "position"]).index.map(words).to_numpy(dtype=bool)


def five_sentences(epoch: int = 30) -> list:
    """Traces of the "five_sentences" probe set from the shipped learned-PE model's snapshot at `epoch`.

    Used by the tests of notebook 08: the traces its section The vectors we compare takes from the snapshots.
    """
    course = load_standard_model("learned")
    return [course.snapshots[epoch][s] for s in load_probes("five_sentences")]


def five_sentence_traces(model) -> list:
    """Trace the "five_sentences" probe set through `model` as the snapshots do: the decoder reads the German
    reference, or the model's own translation where there is none (the misleading sentence). For seed 0 this
    equals `five_sentences()`; seeds 1-4 of "learned" ship no snapshot of these sentences.

    Used in notebook 08 (The vectors we compare).
    """
    return [run_with_trace(model, s, target=ref) for s, ref in load_probes("five_sentences").items()]


# ---- 07: by how much a vector is nearer its counterpart (the margin of the practical reading) ----


def counterpart_margin(trace_a, trace_b, key: str, by: str = "word", head=None) -> float:
    """By how much every row of `trace_a` at `key` is nearer its counterpart in `trace_b` than anything else there
    (the margin of `counterpart_stats`' "own nearest": positive exactly when it is True).

    Vectors: the smallest, over the rows, of (cosine with the counterpart) minus (the largest cosine with another
    row of b). Attention weights: the smallest, over the queries and both orders, of (the weight on the key that is
    strongest in the other order) minus (the largest weight on another key): negative when the strongest key moves.

    Used by nearest_margins (notebook 07, every practical B8 verdict).
    """
    A, B = paired_rows(trace_a, trace_b, key, by, head)
    if key.endswith((".weights", ".scores")):
        margins = []
        for X, Y in ((A, B), (B, A)):  # X's strongest key, read in Y
            top = X.argmax(-1)[..., None]
            on_top = np.take_along_axis(Y, top, -1)[..., 0]
            others = Y.copy()
            np.put_along_axis(others, top, -np.inf, -1)
            margins.append(float((on_top - others.max(-1)).min()))
        return min(margins)
    C = cosine_matrix(A, B)
    others = C.copy()
    np.fill_diagonal(others, -np.inf)
    return float((np.diag(C) - others.max(1)).min())


def nearest_margins(pairs_by_seed: dict, keys, by: str = "word", head=None) -> dict:
    """{seed: the smallest counterpart_margin over `keys`}: the per-seed value that verdicts.judge compares with
    CUTOFFS["nearer_own"] (vectors) or CUTOFFS["same_strongest_key"] (attention weights).

    Used in notebook 07 for every practical ("similar") B8 verdict, on the blog's model and the course model.
    """
    return {s: min(counterpart_margin(a, b, k, by, head) for k in keys) for s, (a, b) in pairs_by_seed.items()}


def residual_sum_spread(traces, residual_key: str, sublayer_key: str) -> float:
    """Word spread (mean over the shared words) of residual + sublayer output, the sum a post-norm layer feeds
    to its LayerNorm: e.g. "encoder.embed" + "encoder.0.self.out" (the blog's model) or "encoder.0.layer_out" +
    "encoder.1.self.out" (layer 1 of the course model). Set beside the word spread of the sublayer output alone,
    it measures how much adding the residual stream back dilutes what attention mixed in.

    Used in notebook 08 (Claim B9: why the encoder output moves less than X4).
    """
    shared = shared_positions(traces, sublayer_key)
    if not shared:
        raise ValueError(f"no word sits at the same position in all sentences for {sublayer_key}")
    sums = [key_vectors(t, residual_key) + key_vectors(t, sublayer_key) for t in traces]
    return float(np.mean([mean_pairwise_cosine_distance(np.stack([S[p] for S in sums])) for p, _ in shared]))
