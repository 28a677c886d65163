"""Labelled vectors from training snapshots, and the one shared projection behind every word-path figure.

    lv = collect_vectors(snaps, PAIR, "encoder.0.self")   # 06: q, k, v, x1 of every word, sentence and epoch
    lv.where(word="eat", kind="k")                        # a subset, by metadata
    Y = fit_projection(lv.X, "pca")                       # one fit for all rows: shared axes, comparable epochs
    identical_groups(Y)                                   # the points that are exactly the same ("=" labels)

Vector labels follow the source blog: word@kind@epoch, e.g. "eat@k@30". The figures built on these are
`views.clustering`, `views.probing` and `views.clientside.word_path`; the numbers, `measures.clustering` and
`measures.probing`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from course_utils.core.places import HEAD_KINDS, layer_of, place_of, trace_key


@dataclass
class LabelledVectors:
    """Rows of `X` with a label and metadata columns (word, kind, epoch, sentence, position).

    Used in notebook 06 §1 (what collect_vectors returns).
    """

    X: np.ndarray  # (N, dim)
    meta: pd.DataFrame  # N rows: label, word, kind, epoch, sentence, position

    @property
    def labels(self) -> list[str]:
        return self.meta["label"].tolist()

    def where(self, **conditions) -> LabelledVectors:
        """Subset by metadata, e.g. where(word="eat", kind="x1")."""
        keep = np.ones(len(self.meta), dtype=bool)
        for col, val in conditions.items():
            keep &= self.meta[col].isin(val if isinstance(val, (list, tuple, set)) else [val]).to_numpy()
        return LabelledVectors(self.X[keep], self.meta[keep].reset_index(drop=True))


def collect_vectors(
    snapshots: dict,
    sentences,
    prefix: str,
    kinds=HEAD_KINDS,
    head: int | None = None,
    words=None,
    epochs=None,
) -> LabelledVectors:
    """Gather vectors from training snapshots (epoch -> sentence -> Trace).

    prefix: "encoder.0.self", "decoder.1.cross", ...; kinds may include "out", "concat" and
    "layer_out" (the layer output: core.places.trace_key). head=None: all heads side by side.
    Every vector is labelled with the token its row belongs to (keys/values of cross-attention:
    the English source token).

    Taught in notebook 06 §1; used in 06 §3, §4.
    """
    epochs = sorted(snapshots) if epochs is None else list(epochs)
    missing = [e for e in epochs if e not in snapshots]
    if missing:
        raise KeyError(f"no snapshot at epoch(s) {missing}; snapshots exist at {sorted(snapshots)}")
    rows, vecs = [], []
    place, layer = place_of(prefix), layer_of(prefix)
    for epoch in epochs:
        for sentence in sentences:
            if sentence not in snapshots[epoch]:
                raise KeyError(f"{sentence!r} was not traced; traced sentences: {sorted(snapshots[epoch])}")
            trace = snapshots[epoch][sentence]
            for kind in kinds:
                key = trace_key(place, layer, kind)
                V = trace.vectors(key, head)
                for pos, (tok, v) in enumerate(zip(trace.tokens(key), V)):
                    if words is not None and tok not in words:
                        continue
                    rows.append(
                        {
                            "label": f"{tok}@{kind}@{epoch}",
                            "word": tok,
                            "kind": kind,
                            "epoch": epoch,
                            "sentence": sentence,
                            "position": pos,
                        }
                    )
                    vecs.append(v.numpy())
    if not rows:
        raise ValueError(f"no vectors matched words={words}")
    return LabelledVectors(np.stack(vecs), pd.DataFrame(rows))


def fit_projection(X: np.ndarray, method: str = "pca", n_components: int = 2, seed: int = 0) -> np.ndarray:
    """Project all rows together (one fit, shared axes for every epoch/kind). method: "pca" or "tsne".

    Taught in notebook 06 §2; used in 10 §2.
    """
    X = np.asarray(X, dtype=np.float64)
    if method not in ("pca", "tsne"):
        raise ValueError(f"method must be 'pca' or 'tsne'; got {method!r}")
    from sklearn.decomposition import PCA  # here, not at the top: importing scikit-learn takes ~1 s, and half the
    from sklearn.manifold import TSNE  # notebooks never project

    with threadpool_limits(1):  # small SVDs: one BLAS thread is faster (10 ms vs 300 ms on 2 busy cores) and stable
        if method == "pca":
            Y = PCA(n_components=n_components, random_state=seed).fit_transform(X)
            return Y * np.sign(Y[np.abs(Y).argmax(0), range(n_components)])  # fix each axis's sign: stable plots
        perplexity = min(30.0, max(2.0, (len(X) - 1) / 3))
        return TSNE(n_components=n_components, perplexity=perplexity, init="pca", random_state=seed).fit_transform(X)


def identical_groups(P, tol: float = 1e-9) -> list[list[int]]:
    """Group the rows of P that are the same point (up to float noise; not "close": only identical).

    Used by views.clustering.plot_word_projection and views.clientside.word_path (notebook 06 §2, §5).
    """
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
