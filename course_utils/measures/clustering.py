"""06: how the vectors of one word move between sentences and epochs, and how Q, K, V spread out.

    dist = context_distance_table(snaps, word="eat")       # eat's two vectors apart, per place, kind and epoch
    kind_separation(snaps, probes, "encoder.0.self", 30)   # do q, k and v form their own clusters?
    pairwise_spread_table(snaps, probes, epoch=30)         # how wide each kind's cloud is, per place and layer

The tables read training snapshots (epoch -> sentence -> inspect.tracing.Trace), e.g.
`load_standard_model().snapshots`; `word_vector` reads one Trace. Places are core.places.PLACES (trace-key
prefixes: core.places.place_prefix):

    "encoder self"   encoder.{layer}.self    Q = K = V = English
    "decoder self"   decoder.{layer}.self    Q = K = V = German (decoder input: <bos> w1 ... wn)
    "cross"          decoder.{layer}.cross   Q = German, K = V = English (keys/values are English tokens)

Vector kinds (core.places.VECTOR_KINDS): "q", "k", "v", "x1" (weights·V, per head), "out" (after W^O, the source
blog's X4) and "layer_out" (the whole layer's output). head=None means all heads side by side (d_model numbers).
The figures are `views.clustering`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from course_utils.core.places import PLACES, VECTOR_KINDS, head_index, layer_of, place_of, place_prefix, trace_key
from course_utils.measures.projection import collect_vectors, fit_projection
from course_utils.measures.similarity import cosine_distance, pairwise_spread, relative_distance

PAIR = ("we want to eat apple", "we want to eat bread")  # the source blog's two sentences


def word_vector(trace, key: str, word: str, head=None) -> np.ndarray:
    """The vector of `word` in `trace[key]` (first occurrence), as float64.

    Used in notebooks 06 §2, §3 and 10 §3, §5.
    """
    tokens = trace.tokens(key)
    if word not in tokens:
        raise ValueError(f"{word!r} is not a token of {key} in this sentence; its tokens are {', '.join(tokens)}")
    return trace.vectors(key, head_index(head))[tokens.index(word)].double().numpy()


def between_word_distance(trace, key: str, head=None) -> float:
    """Mean relative distance between the vectors of two different positions of one sentence (a yardstick).

    Taught in notebook 06 §3 (the "between words" column of context_distance_table).
    """
    V = trace.vectors(key, head_index(head)).double().numpy()
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

    Taught in notebook 06 §3.
    """
    s1, s2 = sentences
    epochs = sorted(snapshots) if epochs is None else list(epochs)
    rows = []
    for prefix in prefixes:
        for kind in kinds:
            if kind not in VECTOR_KINDS:
                raise ValueError(f"kind must be one of {VECTOR_KINDS}; got {kind!r}")
            key = trace_key(place_of(prefix), layer_of(prefix), kind)  # as projection.collect_vectors
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


def pairwise_spread_table(
    snapshots, sentences, epoch: int, layers=(0, 1), kinds=VECTOR_KINDS, head=None
) -> pd.DataFrame:
    """`pairwise_spread` of all vectors of one kind (all words of all `sentences`), per place, at one epoch.

    Rows (layer, kind); columns core.places.PLACES: "encoder self", "decoder self", "cross". Cross-attention keys
    and values are computed from the encoder's output, so their column is left empty for k and v (and for
    layer_out, which is the decoder layer's output, already in "decoder self").

    Taught in notebook 06 §4.
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

    Taught in notebook 06 §3 (my_silhouette and centroid accuracy).
    """
    from sklearn.metrics import silhouette_score  # here: importing scikit-learn takes ~1 s (as in fit_projection)

    lv = collect_vectors(snapshots, sentences, prefix, kinds=kinds, epochs=[epoch], head=head)
    labels = lv.meta["kind"].to_numpy()
    centroids = np.stack([lv.X[labels == k].mean(0) for k in kinds])
    nearest = np.array(kinds)[np.linalg.norm(lv.X[:, None, :] - centroids[None], axis=-1).argmin(1)]
    return {
        "silhouette": float(silhouette_score(lv.X, labels)),
        "silhouette_2d": float(silhouette_score(fit_projection(lv.X, "pca", 2), labels)),
        "centroid_accuracy": float((nearest == labels).mean()),
    }


# ---- the projection plot behind the widget: views.clustering.plot_word_projection ----
