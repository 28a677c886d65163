"""Notebook 08's five-sentences widget, switched in the browser: the five probe sentences in one projection.

    five_view(traces, label="seed 0")    # 08: one PCA per place set, layer and kind set, computed here

Every choice is views.probing.plot_five's picture (all heads, PCA of unit vectors), with no kernel; one head, any
kinds and t-SNE stay with the kernel widget of the same section.
"""

from __future__ import annotations

import json

import altair as alt

from course_utils.core.places import HEAD_KINDS, PLACE_NAMES, PLACES, VECTOR_KINDS, WHOLE_LAYER_KINDS
from course_utils.measures.probing import five_projection, shared_mask
from course_utils.views.clientside.base import ClientSideView, chart_view
from course_utils.views.clientside.tsv import DECIMALS
from course_utils.views.style import KIND_COLOURS

# ---- notebook 08's five sentences in one projection (views.probing.plot_five) per places, layer, kinds ----

FIVE_SHAPES = ("circle", "triangle-up", "square", "diamond", "triangle-down")  # views.style.SENTENCE_MARKERS


def _spread_labels(P, meta, labs, *, char=0.035, line=0.085) -> list:
    """Where five_view writes each label (data units): at its point, or moved down one line at a time while it
    would overlap a label already placed in the same panel (place, kind). `char`, `line`: a character's width and
    a line's height as shares of the projection's x and y span (10 px text on a ~170 px panel)."""
    span_x = float(P[:, 0].max() - P[:, 0].min()) or 1.0
    span_y = float(P[:, 1].max() - P[:, 1].min()) or 1.0
    anchors = [(float(x), float(y)) for x, y in P]
    placed: dict = {}
    for i in (i for i in range(len(labs)) if labs[i]):
        x, y = anchors[i]
        boxes = placed.setdefault((meta["place"][i], meta["kind"][i]), [])
        width = len(labs[i]) * char * span_x
        while any(abs(y - by) < line * span_y and x < bx + bw and bx < x + width for bx, by, bw in boxes):
            y -= line * span_y
        boxes.append((x, y, width))
        anchors[i] = (x, y)
    return anchors


def five_view(
    traces,
    *,
    place_sets=(("encoder self", "cross"), ("encoder self",), ("decoder self",), ("cross",)),
    kind_sets=(HEAD_KINDS, ("q", "v", *WHOLE_LAYER_KINDS)),
    layers=None,
    label: str = "",
) -> ClientSideView:
    """views.probing.plot_five (head "all", PCA of unit vectors) for every place set, layer and kind set, switched
    in the browser: one panel row per place and one panel per kind, all in ONE shared projection per choice
    (precomputed with measures.probing.five_projection); the words at the same position in all five sentences
    (measures.probing.shared_mask) solid in the kind's colour (KIND_COLOURS), one marker shape per sentence, one
    label per word at its central point (kind sets of one length: a row of panels per place); faint: the kind's
    other tokens; light grey: the place's other kinds. One head and t-SNE stay with plot_five (a kernel).

    Used in notebook 08 (The vectors we compare).
    """
    import numpy as np

    traces = list(traces)
    place_sets = [tuple(ps) for ps in place_sets]
    kind_sets = [tuple(ks) for ks in kind_sets]
    width = len(kind_sets[0])
    if any(len(ks) != width for ks in kind_sets):
        raise ValueError("every kind set needs as many kinds: one row of panels per place")
    n_layers = traces[0].n_layers
    layers = list(range(n_layers)) if layers is None else list(layers)
    names = [" ".join(t.src_tokens) for t in traces]
    words: list[str] = []
    rows = []
    for pi, ps in enumerate(place_sets):
        for li, layer in enumerate(layers):
            for ki, ks in enumerate(kind_sets):
                P, meta = five_projection(traces, ps, layer, ks)
                shared = shared_mask(meta)
                labs = [""] * len(meta)
                for (_pl, _k, _w), idx in meta[shared].groupby(["place", "kind", "word"], sort=False).groups.items():
                    idx = list(idx)
                    pts = P[idx]
                    # points equal in exact arithmetic (a word before any context) tie: rounding the distances
                    # lets the first of them win on every CPU, not whichever float noise favours
                    dist = np.round(np.linalg.norm(pts - pts.mean(0), axis=1), 9)
                    labs[idx[int(dist.argmin())]] = _w
                anchors = _spread_labels(P, meta, labs)
                for i, r in meta.iterrows():
                    if r["word"] not in words:
                        words.append(r["word"])
                    rows.append(
                        [
                            pi, li, ki, PLACES.index(r["place"]), VECTOR_KINDS.index(r["kind"]),
                            int(r["sentence_no"]), words.index(r["word"]), int(shared[i]),
                            f"{P[i, 0]:.{DECIMALS}f}", f"{P[i, 1]:.{DECIMALS}f}",
                            f"{anchors[i][0]:.{DECIMALS}f}", f"{anchors[i][1]:.{DECIMALS}f}", labs[i] or "-",
                        ]
                    )  # fmt: skip
    fields = ["places", "layer", "kinds", "place", "kind", "no", "word", "shared", "x", "y", "lx", "ly", "lab"]
    text = "\n".join(["\t".join(fields), *("\t".join(map(str, r)) for r in rows)])
    data = alt.Data(values=text, format=alt.DataFormat(type="tsv", parse={f: "number" for f in fields[:-1]}))
    controls = {
        "places": [" + ".join(PLACE_NAMES[p] for p in ps) for ps in place_sets],
        "layer": [str(x) for x in layers],
        "kinds": [", ".join(ks) for ks in kind_sets],
    }
    params = [
        alt.param(
            name=name,
            value=0,
            bind=(alt.binding_radio if len(labels) <= 4 else alt.binding_select)(
                options=list(range(len(labels))), labels=labels, name=name + " "
            ),
        )
        for name, labels in controls.items()
    ]
    params += [
        alt.param(name="optionLabels", value=controls),
        alt.param(name="kindNames", value=list(VECTOR_KINDS)),
        alt.param(name="placeNames", value=[PLACE_NAMES[p] for p in PLACES]),
        alt.param(name="kindLists", value=[list(ks) for ks in kind_sets]),
        alt.param(name="words", value=words),
    ]
    glyphs = ("●", "▲", "■", "◆", "▼")
    legend = "   ".join(f"{glyphs[i]} {i + 1} = {s}" for i, s in enumerate(names))
    line1 = (
        json.dumps(
            (f"{label}: " if label else "") + "The five sentences in one shared projection (all heads, PCA of unit"
            " vectors); colour = kind, marker = sentence; "
        )
        + " + 'layer ' + optionLabels.layer[layer]"
    )
    line2 = json.dumps("solid and labelled: the words that sit at the same position in all five")
    title_expr = f"[{line1}, {line2}, {json.dumps(legend)}]"
    kinds_all = list(VECTOR_KINDS)
    colour = alt.Color(
        "kindName:N", scale=alt.Scale(domain=kinds_all, range=[KIND_COLOURS[k] for k in kinds_all]), legend=None
    )
    base = alt.Chart().encode(
        x=alt.X("x:Q", title="PCA of unit vectors 1", axis=alt.Axis(grid=False)),
        y=alt.Y("y:Q", title="PCA of unit vectors 2", axis=alt.Axis(grid=False)),
    )
    tip = [alt.Tooltip("word:N"), alt.Tooltip("kindName:N", title="kind"), alt.Tooltip("sentence:N")]
    own = "datum.kindName == datum.panel"
    grey = base.mark_circle(size=10, color="#cccccc", opacity=1).transform_filter(f"!({own})")
    faint = (
        base.mark_circle(size=14, opacity=0.3).encode(color=colour, tooltip=tip)
        .transform_filter(f"{own} && !datum.shared")
    )  # fmt: skip
    solid = (
        base.mark_point(filled=True, size=40, stroke="black", strokeWidth=0.4, opacity=0.85)
        .encode(
            color=colour,
            shape=alt.Shape("no:N", scale=alt.Scale(domain=list(range(1, len(names) + 1)), range=list(FIVE_SHAPES[: len(names)])), legend=None),
            tooltip=tip,
        )
        .transform_filter(f"{own} && datum.shared")
    )  # fmt: skip
    texts = (
        base.mark_text(align="left", dx=6, dy=-6, fontSize=10)
        .encode(
            x=alt.X("lx:Q", title="PCA of unit vectors 1", axis=alt.Axis(grid=False)),
            y=alt.Y("ly:Q", title="PCA of unit vectors 2", axis=alt.Axis(grid=False)),
            text="lab:N",
        )  # _spread_labels' anchors: no two labels piled
        .transform_filter(f"{own} && datum.shared && datum.lab != '-'")
    )  # fmt: skip
    leaders = (  # a thin line from a point to its label where _spread_labels moved the label down
        base.mark_rule(color="#555555", strokeWidth=0.6)
        .encode(x2="lx:Q", y2="ly:Q")
        .transform_filter(f"{own} && datum.shared && datum.lab != '-' && datum.ly != datum.y")
    )
    chart = (
        alt.layer(grey, faint, solid, leaders, texts, data=data)
        .transform_filter("datum.places == places && datum.layer == layer && datum.kinds == kinds")
        .transform_calculate(
            kindName="kindNames[datum.kind]",
            placeName="placeNames[datum.place]",
            word="words[datum.word]",
            sentence=f"{json.dumps(names)}[datum.no - 1]",
            panels="kindLists[kinds]",
        )
        .transform_flatten(["panels"], as_=["panel"])
        .transform_calculate(
            panelNo="datum.place * 10 + indexof(kindLists[kinds], datum.panel)",
            panelName="datum.placeName + ', layer ' + optionLabels.layer[layer] + ': ' + datum.panel",
        )
        .properties(width=190, height=170)
        .facet(  # one wrapped facet, not rows x columns: a row x column facet keeps the old rows when places change
            facet=alt.Facet("panelName:N", title=None, sort=alt.EncodingSortField("panelNo", op="min"), header=alt.Header(labelFontSize=11)),
            columns=width,
        )
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    )  # fmt: skip
    n = {k: len(v) for k, v in controls.items()}
    what = (
        f"The five sentences in one projection: interactive view of {n['places']} place sets × {n['layer']} layers"
        f" × {n['kinds']} kind sets (one PCA each, all heads)"
    )
    return chart_view(chart, what)
