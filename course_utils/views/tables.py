"""Colour-styled tables with fixed HTML: a pandas Styler whose every representation is the same on every run.

    cosine_table(A, B, rows, cols, uuid="b1")             # 10 §2: a StyledTable of cosines, words on both axes
    cosine_across(a, b, "encoder.0.self.q", uuid="q0")    # 07: the same for one trace key of two sentences

The numbers are `measures.similarity.cosine_matrix` and `measures.probing.key_vectors`; this module only colours
them (`background_gradient`) and fixes the HTML ids (`set_uuid`).
"""

from __future__ import annotations

import pandas as pd

from course_utils.measures.probing import key_vectors
from course_utils.measures.similarity import cosine_matrix


class StyledTable:
    """A colour-styled table whose every representation is the same on every run.

    A pandas Styler shows as HTML in Jupyter, but its text/plain form (which nbval also compares)
    is "<Styler at 0x7f...>", a memory address. This wrapper shows the same HTML and, as text, the
    rounded numbers.

    Used by cosine_table and cosine_across (notebooks 07 and 10 §2).
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

    Used in notebook 10 §2, and in 07 through cosine_across.
    """
    df = pd.DataFrame(cosine_matrix(A, B).round(decimals), index=list(row_labels), columns=list(col_labels))
    return StyledTable(
        df.style.set_uuid(uuid)
        .format(f"{{:.{decimals}f}}")
        .background_gradient(cmap="RdBu_r", vmin=-1, vmax=1)
        .set_caption(caption)
    )


def cosine_across(
    trace_a, trace_b, key: str, head=None, *, uuid: str, caption: str | None = None, decimals: int = 3
) -> StyledTable:
    """Colour-styled cosine table: rows = vectors of sentence a, columns = vectors of sentence b.

    `uuid` must differ between the tables of one notebook (the HTML ids must be unique and fixed).

    Used in notebook 07 (The trained model reads two word orders; the Evidence part's K and V tables).
    """
    A, B = key_vectors(trace_a, key, head), key_vectors(trace_b, key, head)
    if A.ndim != 2:
        raise ValueError(f"{key} is not a set of vectors; choose q, k, v, x1, out or layer_out")
    caption = (
        caption
        or f"{key}: cosine between the words of '{' '.join(trace_a.src_tokens)}' (rows) and '{' '.join(trace_b.src_tokens)}' (columns)"
    )
    return cosine_table(A, B, trace_a.tokens(key), trace_b.tokens(key), caption=caption, decimals=decimals, uuid=uuid)
