"""Read a browser view's embedded data back (the inverse of course_utils.views.clientside.tsv.rows_tsv), for the
tests that check what a view shows."""

from __future__ import annotations


def tsv_rows(text: str) -> list[dict]:
    """rows_tsv's rows read back: control indices as ints, `q` the row label, `w` the list of cell values.

    Used by tests/test_clientside.py and tests/test_widget_nb05.py, which read views (e.g. notebook 05's) back.
    """
    head, *lines = text.split("\n")
    rows = [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]
    return [
        {k: (v if k == "q" else [float(x) for x in v.split(" ")] if k == "w" else int(v)) for k, v in r.items()}
        for r in rows
    ]
