"""Tables and verdicts as text: colour-styled cosine tables with fixed HTML, and how a claim fares over the seeds.

    cosine_table(A, B, rows, cols, uuid="b1")     # a StyledTable: the same HTML and text on every run
    seed_verdict({0: True, 1: True, 2: False})    # "seed-dependent (holds on 2/3 seeds: 0, 1)"
    seed_range([0.78, 0.86, 0.81])                # "0.78–0.86"

Every verdict the notebooks print about a trained model is counted over the shipped seeds with `seed_verdict`.
"""

from __future__ import annotations

import pandas as pd

from course_utils.measures.similarity import cosine_matrix


class StyledTable:
    """A colour-styled table whose every representation is the same on every run.

    A pandas Styler shows as HTML in Jupyter, but its text/plain form (which nbval also compares)
    is "<Styler at 0x7f...>", a memory address. This wrapper shows the same HTML and, as text, the
    rounded numbers.

    Used by cosine_table and measures.probing.cosine_across (notebooks 07 and 10 §2).
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

    Used in notebook 10 §2, and in 07 through measures.probing.cosine_across.
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
    "seed-dependent (holds on 3/5 seeds: 0, 1, 3)". `what` names the positive reading ("holds only weakly", ...).

    Used in notebooks 02-09 for every verdict over the five seeds (first in 02 §2).
    """
    if not holds:
        raise ValueError("seed_verdict needs at least one seed")
    n, k = len(holds), sum(bool(v) for v in holds.values())
    if k == n:
        return f"{what} ({n}/{n} seeds)"
    if k == 0:
        return f"false ({n}/{n} seeds)"
    return f"seed-dependent ({what} on {k}/{n} seeds: {', '.join(str(s) for s, v in holds.items() if v)})"


def seed_range(values, decimals: int = 2) -> str:
    """A spread over seeds as text: [0.78, 0.86, 0.81] -> "0.78–0.86" (one number if they all round alike).

    Used in notebooks 03-09 wherever a number is quoted over the five seeds (first in 03's Evidence part).
    """
    vals = [float(v) for v in (values.values() if isinstance(values, dict) else values)]
    lo, hi = f"{min(vals):.{decimals}f}", f"{max(vals):.{decimals}f}"
    return lo if lo == hi else f"{lo}–{hi}"
