"""The embedded data of a browser view: rows as one TSV string, and the row and column labels that sort by
position.

    rows_tsv(["q", "layer", "w"], [{"q": "00 we", "layer": 0, "w": [0.25, 0.75]}])   # "q\tlayer\tw\n00 we\t0\t0.25 0.75"
    label_key(3, "eat")                                                          # "03 eat"

Values are rounded to `DECIMALS` places before they are written (heatmap_view: more where that would change a
written annotation), which keeps a view small and its bytes the same on every run.
"""

from __future__ import annotations

DECIMALS = 3  # weights in the embedded data; the annotations show 2


def label_key(i: int, word: str) -> str:
    """A row or column label that sorts by position `i` and shows `word`: "03 eat".

    Used by heatmap_view, word_qkv_view and scaling_view (notebooks 02-05, 07, 09, 10).
    """
    return f"{i:02d} {word}"  # sorts by position; the axis shows the word after the 3-character prefix


def rows_tsv(fields: list[str], rows: list[dict]) -> str:
    """Rows as one TSV string, the last field (the weights) space-separated: one JSON string in the notebook,
    not one line per number as nbformat's indented JSON would write a list.

    Used by heatmap_view, word_qkv_view and scaling_view (notebooks 02-05, 07, 09, 10).
    """
    lines = ["\t".join(fields)]
    for r in rows:
        lines.append("\t".join([*(str(r[f]) for f in fields[:-1]), " ".join(f"{x:g}" for x in r[fields[-1]])]))
    return "\n".join(lines)
