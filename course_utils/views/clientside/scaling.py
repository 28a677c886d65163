"""Notebook 03's scale slider, switched in the browser: softmax weights and scaled scores per d and divisor.

    scaling_view(defaults={"d": 2, "divide_by": 1})    # 03 §4: d = 64, divide by √d; all 12 choices embedded

Every choice is views.scaling.plot_scaling's picture, from measures.attention_stats' random scores.
"""

from __future__ import annotations

import altair as alt

from course_utils.measures.attention_stats import DIVISORS, divisor_value, random_scores, stats_of_scores
from course_utils.views.clientside.base import ClientSideView, chart_view
from course_utils.views.clientside.controls import control_params
from course_utils.views.clientside.tsv import label_key, rows_tsv

# ---- notebook 03's scaling picture (views.scaling.plot_scaling) per d and divisor ----


def scaling_view(
    ds=(4, 16, 64, 256), divisors=None, *, n_rows: int = 5, n_keys: int = 8, defaults: dict | None = None
) -> ClientSideView:
    """views.scaling.plot_scaling for every d × divisor, switched in the browser: left, the softmax weights of the
    first `n_rows` random queries over `n_keys` random keys (viridis 0..1, weights written); right, the histogram of
    all 2000 × n_keys scaled scores on plot_scaling's fixed axis (−40..40, 80 bins, values beyond clipped into the
    edge bins). The titles carry plot_scaling's numbers (mean max weight; score std, mean entropy).

    Used in notebook 03 §4.
    """
    import numpy as np
    import torch

    ds, divisors = [int(d) for d in ds], list(DIVISORS if divisors is None else divisors)
    lim, bins = 40.0, 80
    edges = np.linspace(-lim, lim, bins + 1)
    w_rows, h_rows, left, right = [], [], {}, {}
    for di, d in enumerate(ds):
        for vi, div in enumerate(divisors):
            scores = random_scores(d, n_keys=n_keys) / divisor_value(d, div)
            weights = torch.softmax(scores, dim=-1)
            st = stats_of_scores(scores, d, divisor_value(d, div))
            key = f"{di}|{vi}"
            left[key] = f"softmax(q·k / {div}), d = {d}: mean max weight {st['mean_max_weight']:.2f}"
            right[key] = (
                f"std {st['score_std']:.2f}; mean entropy {st['mean_entropy']:.2f} of max"
                f" {st['uniform_entropy']:.2f} nats"
            )
            for i, row in enumerate(weights[:n_rows].tolist()):
                w_rows.append({"d": di, "divide_by": vi, "q": label_key(i, f"q{i}"), "w": [round(x, 4) for x in row]})
            counts, _ = np.histogram(scores.flatten().clamp(-lim, lim).numpy(), bins=bins, range=(-lim, lim))
            h_rows.append({"d": di, "divide_by": vi, "q": "counts", "w": [int(c) for c in counts]})
    params = control_params({"d": ds, "divide_by": divisors}, defaults, captions={"divide_by": "divide q·k by"})
    params += [
        alt.param(name="leftTitles", value=left),
        alt.param(name="rightTitles", value=right),
        alt.param(name="keyLabels", value=[f"k{j}" for j in range(n_keys)]),
        alt.param(name="binStarts", value=[round(float(x), 6) for x in edges[:-1]]),
    ]
    choice = "d + '|' + divide_by"
    keep = "datum.d == d && datum.divide_by == divide_by"
    fmt = alt.DataFormat(type="tsv", parse={"d": "number", "divide_by": "number"})
    x = alt.X("k:O", title="key", sort=None, axis=alt.Axis(labelAngle=0))
    y = alt.Y("q:O", title="query", axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    weights_chart = (
        alt.layer(
            alt.Chart()
            .mark_rect()
            .encode(
                x=x,
                y=y,
                color=alt.Color("w:Q", title="attention weight", scale=alt.Scale(scheme="viridis", domain=[0, 1])),
                tooltip=[
                    alt.Tooltip("q:N", title="query"),
                    alt.Tooltip("k:N", title="key"),
                    alt.Tooltip("w:Q", format=".3f"),
                ],
            ),
            alt.Chart()
            .mark_text(fontSize=9)
            .encode(
                x=x,
                y=y,
                text=alt.Text("w:Q", format=".2f"),
                color=alt.condition("datum.w > 0.6", alt.value("black"), alt.value("white")),
            ),
            data=alt.Data(values=rows_tsv(["d", "divide_by", "q", "w"], w_rows), format=fmt),
        )
        .transform_filter(keep)
        .transform_calculate(ws="split(datum.w, ' ')", k="keyLabels")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
        .properties(width=alt.Step(34), height=alt.Step(26), title=alt.Title(alt.ExprRef(expr=f"leftTitles[{choice}]")))
    )
    hist_chart = (
        alt.Chart(alt.Data(values=rows_tsv(["d", "divide_by", "q", "w"], h_rows), format=fmt))
        .mark_bar(color="#1f77b4", binSpacing=0)
        .encode(
            x=alt.X("start:Q", title="score q·k / divisor  (clipped to ±40)", scale=alt.Scale(domain=[-lim, lim])),
            x2="end:Q",
            y=alt.Y("count:Q", title=f"count (2000 queries × {n_keys} keys)"),
            y2=alt.datum(0),
            tooltip=[alt.Tooltip("start:Q", title="from"), alt.Tooltip("end:Q", title="to"), "count:Q"],
        )
        .transform_filter(keep)
        .transform_calculate(ws="split(datum.w, ' ')", start="binStarts")
        .transform_flatten(["ws", "start"])
        .transform_calculate(count="toNumber(datum.ws)", end=f"datum.start + {(2 * lim) / bins}")
        .properties(width=330, height=190, title=alt.Title(alt.ExprRef(expr=f"rightTitles[{choice}]")))
    )
    chart = alt.hconcat(weights_chart, hist_chart, spacing=40).add_params(*params)
    what = f"Scaling the scores: interactive view of {len(ds)} values of d × {len(divisors)} divisors"
    return chart_view(chart, what)
