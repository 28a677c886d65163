"""Alt text on every figure: `views.style.describe` (a sentence), its fallback (the suptitle or the axes' titles),
the IPython hook that puts it into a figure output's metadata, and the committed notebooks' figure outputs.

test_every_committed_figure_has_alt passes once the notebooks are re-executed with the hook in place
(`make execute`): outputs saved before it carry no alt.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from course_utils.views.style import alt_text, describe, with_alt

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_describe_sets_the_sentence():
    fig, ax = plt.subplots()
    assert alt_text(fig) == ""
    ax.set_title("Loss per epoch")
    assert alt_text(fig) == "A figure: Loss per epoch."
    fig.suptitle("Training")
    assert alt_text(fig) == "A figure: Training."
    assert describe(fig, "The loss  falls\nfrom 2.3 to 0.1.") is fig
    assert alt_text(fig) == "The loss falls from 2.3 to 0.1."
    plt.close(fig)


def test_formatter_returns_the_alt_as_metadata():
    fig, _ = plt.subplots()
    describe(fig, "An empty panel.")
    formatter = with_alt(lambda f: b"png")
    assert formatter(fig) == (b"png", {"alt": "An empty panel."})
    assert with_alt(formatter) is formatter, "wrapped once"
    plt.close(fig)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_committed_figure_has_alt(notebook):
    missing = []
    for i, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                meta = output.get("metadata", {})
                alt = (meta.get("image/png") or {}).get("alt") or meta.get("alt")
                if not (alt and alt.strip()):
                    missing.append(i)
    assert not missing, f"figure outputs with no alt in cells {missing} (re-execute: make execute NB={notebook})"
