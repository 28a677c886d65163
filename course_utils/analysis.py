"""Numbers behind the pictures: labelled vectors from traces, one shared projection, cosine tables.

Vector labels follow the source blog: word@kind@epoch, e.g. "eat@k@30".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE
from threadpoolctl import threadpool_limits

from .tracing import place_of, trace_key


@dataclass
class LabelledVectors:
    """Rows of `X` with a label and metadata columns (word, kind, epoch, sentence, position)."""

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
    kinds=("q", "k", "v", "x1"),
    head: int | None = None,
    words=None,
    epochs=None,
) -> LabelledVectors:
    """Gather vectors from training snapshots (epoch -> sentence -> Trace).

    prefix: "encoder.0.self", "decoder.1.cross", ...; kinds may include "out", "concat" and
    "layer_out" (the layer output: tracing.trace_key). head=None: all heads side by side.
    Every vector is labelled with the token its row belongs to (keys/values of cross-attention:
    the English source token).
    """
    epochs = sorted(snapshots) if epochs is None else list(epochs)
    missing = [e for e in epochs if e not in snapshots]
    if missing:
        raise KeyError(f"no snapshot at epoch(s) {missing}; snapshots exist at {sorted(snapshots)}")
    rows, vecs = [], []
    place, layer = place_of(prefix), int(prefix.split(".")[1])
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
    """Project all rows together (one fit, shared axes for every epoch/kind). method: "pca" or "tsne"."""
    X = np.asarray(X, dtype=np.float64)
    if method not in ("pca", "tsne"):
        raise ValueError(f"method must be 'pca' or 'tsne'; got {method!r}")
    with threadpool_limits(1):  # small SVDs: one BLAS thread is faster (10 ms vs 300 ms on 2 busy cores) and stable
        if method == "pca":
            Y = PCA(n_components=n_components, random_state=seed).fit_transform(X)
            return Y * np.sign(Y[np.abs(Y).argmax(0), range(n_components)])  # fix each axis's sign: stable plots
        perplexity = min(30.0, max(2.0, (len(X) - 1) / 3))
        return TSNE(n_components=n_components, perplexity=perplexity, init="pca", random_state=seed).fit_transform(X)


def cosine_matrix(A, B) -> np.ndarray:
    """(n, d) x (m, d) -> (n, m) cosine similarities."""
    A = torch.as_tensor(np.asarray(A), dtype=torch.float64)
    B = torch.as_tensor(np.asarray(B), dtype=torch.float64)
    return torch.nn.functional.cosine_similarity(A[:, None, :], B[None, :, :], dim=-1).numpy()


class StyledTable:
    """A colour-styled table whose every representation is the same on every run.

    A pandas Styler shows as HTML in Jupyter, but its text/plain form (which nbval also compares)
    is "<Styler at 0x7f...>", a memory address. This wrapper shows the same HTML and, as text, the
    rounded numbers.
    """

    def __init__(self, styler):
        self.styler = styler
        self.data = styler.data  # the rounded DataFrame

    def _repr_html_(self) -> str:
        return self.styler.to_html()

    def to_html(self) -> str:
        return self.styler.to_html()

    def __repr__(self) -> str:
        caption = self.styler.caption or ""
        return (caption + "\n" if caption else "") + self.data.to_string()


def cosine_table(
    A, B, row_labels, col_labels, caption: str = "", decimals: int = 2, *, uuid: str = "cos"
) -> StyledTable:
    """Colour-styled table of cosine similarities, rounded before colouring so the HTML is identical every run.

    `uuid` fixes the HTML ids: give each table of one notebook its own.
    """
    df = pd.DataFrame(cosine_matrix(A, B).round(decimals), index=list(row_labels), columns=list(col_labels))
    return StyledTable(
        df.style.set_uuid(uuid)
        .format(f"{{:.{decimals}f}}")
        .background_gradient(cmap="RdBu_r", vmin=-1, vmax=1)
        .set_caption(caption)
    )


# ---- verdicts across seeds: a claim about a trained model holds only if it holds on every shipped seed ----


def seed_verdict(holds: dict[int, bool], what: str = "holds") -> str:
    """{seed: does the claim hold on that seed} -> "holds (5/5 seeds)", "false (5/5 seeds)" or
    "seed-dependent (holds on 3/5 seeds)". `what` names the positive reading ("holds only weakly", ...)."""
    if not holds:
        raise ValueError("seed_verdict needs at least one seed")
    n, k = len(holds), sum(bool(v) for v in holds.values())
    if k == n:
        return f"{what} ({n}/{n} seeds)"
    if k == 0:
        return f"false ({n}/{n} seeds)"
    return f"seed-dependent ({what} on {k}/{n} seeds: {', '.join(str(s) for s, v in holds.items() if v)})"


def seed_range(values, decimals: int = 2) -> str:
    """A spread over seeds as text: [0.78, 0.86, 0.81] -> "0.78–0.86" (one number if they all round alike)."""
    vals = [float(v) for v in (values.values() if isinstance(values, dict) else values)]
    lo, hi = f"{min(vals):.{decimals}f}", f"{max(vals):.{decimals}f}"
    return lo if lo == hi else f"{lo}–{hi}"
