"""Notebook 07's word-order widget, switched in the browser: 1 − cosine of the two orders per encoding and layer.

    word_order_view({f"{pe} PE": word_order_traces(models[pe]) for pe in PES})    # 07 Explore: 3 encodings

Every choice is views.probing.plot_word_order's table (the same log colour scale), drawn by
`views.clientside.heatmap.heatmap_view` with no kernel.
"""

from __future__ import annotations

from course_utils.core.places import PLACE_NAMES, PLACES, VECTOR_KINDS, trace_key
from course_utils.measures.similarity import cosine_matrix
from course_utils.views.clientside.attention import choices_text
from course_utils.views.clientside.base import ClientSideView
from course_utils.views.clientside.heatmap import heatmap_view
from course_utils.views.probing import DISTANCE_FLOOR, DISTANCE_LABEL

# ---- notebook 07's word-order table (views.probing.plot_word_order) per positional encoding ----


def word_order_view(pairs: dict, *, kinds=VECTOR_KINDS) -> ClientSideView:
    """views.probing.plot_word_order for every positional encoding, layer, vector kind and place: 1 − cosine
    between the vectors of the two word orders (rows: sentence A's words, columns: sentence B's), on
    plot_word_order's log colour scale from views.probing.DISTANCE_FLOOR to 2. `pairs`: {encoding label: (trace of
    A, trace of B)} from measures.probing.word_order_traces.

    Used in notebook 07 (Explore).
    """

    pairs = dict(pairs)
    if not pairs:
        raise ValueError("word_order_view needs at least one pair of traces")
    a0, b0 = next(iter(pairs.values()))
    n_layers = a0.n_layers
    cells = {}
    for e, (a, b) in enumerate(pairs.values()):
        for layer in range(n_layers):
            for k, kind in enumerate(kinds):
                for p, place in enumerate(PLACES):
                    key = trace_key(place, layer, kind)
                    A, B = a.vectors(key).double().numpy(), b.vectors(key).double().numpy()
                    D = (1.0 - cosine_matrix(A, B)).clip(0.0, 2.0)  # 0: same direction, 2: opposite
                    cells[(e, layer, k, p)] = (D, a.tokens(key), b.tokens(key))
    controls = {
        "encoding": list(pairs),
        "layer": list(range(n_layers)),
        "vector": list(kinds),
        "place": [PLACE_NAMES[p] for p in PLACES],
    }
    title = "1 − cosine between the two word orders' vectors"
    a_txt, b_txt = (" ".join(t.src_tokens) for t in (a0, b0))
    # rows come from the run on sentence A, columns from the run on B; in the decoder both runs read the same German,
    # so its rows and columns are German steps (not A's and B's English words): the line under the title says which
    note = [
        f"rows: the words of '{a_txt}'; columns: the words of '{b_txt}'"
        if place == "encoder self"
        else f"rows and columns: the German steps, the decoder reading '{a_txt}' (rows) and '{b_txt}' (columns)"
        for place in PLACES
    ]
    description = (
        f"{title}: interactive view of {choices_text(**controls)}, switched in the browser"
        " (the figure below shows one view)."
    )
    return heatmap_view(
        cells,
        controls,
        title=title,
        legend=DISTANCE_LABEL,
        description=description,
        row_title=f"the model reading '{a_txt}'",
        col_title=f"the model reading '{b_txt}'",
        axes_note=("place", note),
        scale={"scheme": "viridis", "type": "log", "domain": [DISTANCE_FLOOR, 2.0]},
        floor=DISTANCE_FLOOR,
        light_above=0.12,  # where viridis gets light on this log scale
        fmt=".3f",
        decimals=4,
    )
