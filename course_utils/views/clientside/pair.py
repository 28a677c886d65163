"""Notebook 01's pair widget, switched in the browser: two sentence vectors, their dot product and cosine.

    pair_view(defaults={"first": 0, "second": 5})    # 01: eat apple · read book, all 36 pairs embedded

Every pair is views.vectors.plot_pair's picture, with no kernel.
"""

from __future__ import annotations

import altair as alt

from course_utils.core.toys import SENTENCES_2D
from course_utils.measures.similarity import cosine, dot
from course_utils.views.clientside.base import ClientSideView, chart_view
from course_utils.views.clientside.controls import control_params
from course_utils.views.vectors import PAIR_COLOURS

# ---- notebook 01's two sentence vectors (views.vectors.plot_pair) for every pair ----


def pair_view(vectors=None, *, defaults: dict | None = None) -> ClientSideView:
    """views.vectors.plot_pair for every (first, second) of the 2-D sentence vectors (default
    core.toys.SENTENCES_2D), switched in the browser: every arrow from the origin, the other sentences faded grey,
    the first in black and the second in Okabe-Ito bluish green, bold (views.vectors.PAIR_COLOURS, no topic
    colour); the title gives their dot product, cosine and angle (precomputed with measures.similarity.dot / cosine,
    as plot_pair's).

    Used in notebook 01 (Try it: pick two sentences).
    """
    import numpy as np

    vectors = dict(SENTENCES_2D if vectors is None else vectors)
    names = list(vectors)
    titles = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            va, vb = vectors[a], vectors[b]
            angle = np.degrees(np.arccos(np.clip(cosine(va, vb), -1.0, 1.0)))
            titles[f"{i}|{j}"] = [
                f"{a} · {b}",
                f"dot = {dot(va, vb):.2f}, cosine = {cosine(va, vb):.2f} (angle {angle:.0f}°)",
            ]
    defaults = {"second": min(1, len(names) - 1), **(defaults or {})}
    params = control_params({"first": names, "second": names}, defaults)
    params.append(alt.param(name="titles", value=titles))
    rows = [{"i": i, "s": s, "x": float(v[0]), "y": float(v[1])} for i, (s, v) in enumerate(vectors.items())]
    colour = alt.Color("colour:N", scale=None)  # the second wins where first == second
    first_colour, second_colour = PAIR_COLOURS
    colour_expr = f"datum.i == second ? '{second_colour}' : datum.i == first ? '{first_colour}' : 'grey'"
    chosen = "datum.i == first || datum.i == second"
    opacity = alt.condition(chosen, alt.value(1.0), alt.value(0.35))
    lim = 1.05
    x = alt.X("x:Q", title="dimension 1 (food)", scale=alt.Scale(domain=[0, lim], nice=False))
    y = alt.Y("y:Q", title="dimension 2 (reading)", scale=alt.Scale(domain=[0, lim], nice=False))
    base = alt.Chart().encode(color=colour, opacity=opacity)
    shafts = base.mark_rule().encode(
        x=alt.X("x0:Q", scale=alt.Scale(domain=[0, lim], nice=False), title="dimension 1 (food)"),
        y=alt.Y("y0:Q", scale=alt.Scale(domain=[0, lim], nice=False), title="dimension 2 (reading)"),
        x2="x:Q",
        y2="y:Q",
        strokeWidth=alt.condition(chosen, alt.value(2.4), alt.value(1.0)),
    )
    heads = base.mark_point(shape="triangle-up", filled=True).encode(
        x=x,
        y=y,
        angle=alt.Angle("angle:Q", scale=None),
        size=alt.condition(chosen, alt.value(90), alt.value(40)),
        tooltip=[
            alt.Tooltip("s:N", title="sentence"),
            alt.Tooltip("x:Q", format=".2f"),
            alt.Tooltip("y:Q", format=".2f"),
        ],
    )
    labels = base.mark_text(align="left", baseline="bottom", dx=4, dy=-4).encode(
        x=x, y=y, text="s:N", size=alt.condition(chosen, alt.value(12), alt.value(10))
    )
    chart = (
        alt.layer(shafts, heads, labels, data=alt.Data(values=rows))
        .transform_calculate(x0="0", y0="0", angle="90 - atan2(datum.y, datum.x) * 180 / PI", colour=colour_expr)
        .properties(width=320, height=320, title=alt.Title(alt.ExprRef(expr="titles[first + '|' + second]")))
        .add_params(*params)
    )
    what = f"Two sentence vectors: interactive view of {len(names)} × {len(names)} pairs (first, second)"
    return chart_view(chart, what)
