"""Any word-labelled heatmap whose choices are finite, every choice embedded and switched in the browser.

    heatmap_view(cells, {"layer": [0, 1], "head": [0, 1]}, title=..., legend=..., description=..., panels="head")

The browser twin of `views.heatmaps.heatmap`, with no notebook widget of its own: attention_view (04, 09, 10),
seed_attention_view (05) and word_order_view (07) are built on it. The display protocol is `views.clientside.base`.
"""

from __future__ import annotations

import json

import altair as alt

from course_utils.views.clientside.base import ClientSideView
from course_utils.views.clientside.controls import control_params
from course_utils.views.clientside.tsv import DECIMALS, label_key, rows_tsv

WRAP_PANELS = 4  # heatmap_view: more panels than this wrap into rows of this many


def embedded_value(x: float, decimals: int, fmt: str) -> float:
    """x rounded to `decimals` places, or to more where that rounding would change the annotation the view writes
    with `fmt` (a ".Nf" format): 0.1552 -> 0.155 would be written "0.15" where views.heatmaps.heatmap writes
    "0.16".

    Used by heatmap_view (notebooks 04, 05, 07, 09, 10).
    """
    shown = format(x, fmt) if fmt.startswith(".") and fmt.endswith("f") else None
    v = round(x, decimals)
    while shown is not None and format(v, fmt) != shown and decimals < 9:
        decimals += 1
        v = round(x, decimals)
    return v


def heatmap_view(
    cells: dict,
    controls: dict,
    *,
    title: str,
    legend: str,
    description: str,
    panels: str | None = None,
    row_title: str = "query",
    col_title: str = "key",
    axes_note: tuple[str, list[str]] | None = None,
    scale: dict | None = None,
    floor: float | None = None,
    light_above: float = 0.63,
    fmt: str = ".2f",
    decimals: int = DECIMALS,
    defaults: dict | None = None,
    hide_single: bool = False,
) -> ClientSideView:
    """A word-labelled heatmap (views.heatmaps.heatmap's look: rows × columns, words on both axes, one colour scale,
    the value written in each cell) for every combination of `controls`, switched in the browser.

    cells: {(option index per control, in `controls`' order): (matrix, row labels, column labels)}.
    controls: {name: [option labels]}; each name (an identifier) becomes a Vega-Lite param bound to radio buttons
    (up to 4 options) or a select (base.control_params). `panels`: one control drawn as side-by-side panels, with
    an extra first option "all" (every panel) — views.heatmaps.plot_attention's heads. `axes_note`: (control
    name, one line per option) shown under the title (what rows and columns are). `scale`: Vega-Lite colour scale
    (default viridis 0..1); `floor`: colour values below it are drawn at it (for a log scale); the text turns black
    above `light_above` (where viridis gets light: 0.63 on 0..1, as views.heatmaps.heatmap decides by luminance).
    `defaults`: {control name: option index} shown first (default: each control's first option; the panel
    control's "all" is -1). `hide_single`: a control with one option gets no buttons (a choice of one is no
    choice); its option is still named in the title.

    Used by attention_view, seed_attention_view and word_order_view (notebooks 04, 05, 07, 09, 10).
    """
    names = list(controls)
    rows, col_labels = [], {}
    for key, (matrix, row_labels, cols) in cells.items():
        if len(key) != len(names) or any(not 0 <= i < len(controls[n]) for i, n in zip(key, names)):
            raise ValueError(f"cell key {key} does not pick one option of each control {names}")
        m = [
            [embedded_value(float(x), decimals, fmt) for x in row]
            for row in (matrix.tolist() if hasattr(matrix, "tolist") else matrix)
        ]
        if len(m) != len(row_labels) or any(len(r) != len(cols) for r in m):
            raise ValueError(f"cell {key}: matrix does not fit {len(row_labels)} rows and {len(cols)} columns")
        col_labels["|".join(map(str, key))] = [label_key(j, c) for j, c in enumerate(cols)]
        for i, (label, values) in enumerate(zip(row_labels, m)):
            rows.append({**dict(zip(names, key)), "q": label_key(i, label), "w": values})
    fields = [*names, "q", "w"]
    data = alt.Data(
        values=rows_tsv(fields, rows), format=alt.DataFormat(type="tsv", parse=dict.fromkeys(names, "number"))
    )

    params = control_params(controls, defaults, panels=panels)
    if hide_single:  # the same param, unbound: the title still reads its one option
        params = [
            alt.param(name=n, value=0) if len(controls[n]) == 1 and n != panels else p for n, p in zip(names, params)
        ]
    params.append(alt.param(name="colLabels", value=col_labels))
    params.append(alt.param(name="optionLabels", value={n: [str(x) for x in controls[n]] for n in names}))
    shown = [n for n in names if n != panels]
    line1 = f"{json.dumps(title + ': ')} + " + " + ', ' + ".join(f"'{n} ' + optionLabels.{n}[{n}]" for n in shown)
    if axes_note:
        params.append(alt.param(name="axesNote", value=axes_note[1]))
        title_expr = f"[{line1}, axesNote[{axes_note[0]}]]"
    else:
        title_expr = line1

    keep = " && ".join(f"datum.{n} == {n}" for n in shown)
    if panels:
        keep += f" && ({panels} < 0 || datum.{panels} == {panels})"
    key_expr = " + '|' + ".join(f"datum.{n}" for n in names)
    x = alt.X("k:O", title=col_title, axis=alt.Axis(labelExpr="substring(datum.label, 3)", labelAngle=-45))
    y = alt.Y("q:O", title=row_title, axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    colour = "c:Q" if floor is not None else "w:Q"
    cell = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                colour,
                title=legend,
                legend=alt.Legend(titleLimit=400),
                scale=alt.Scale(**(scale or {"scheme": "viridis", "domain": [0, 1]})),
            ),
            tooltip=[
                alt.Tooltip("q:N", title=row_title),
                alt.Tooltip("k:N", title=col_title),
                alt.Tooltip("w:Q", format=".3f"),
            ],
        )
    )
    text = (
        alt.Chart()
        .mark_text(fontSize=9)
        .encode(
            x=x,
            y=y,
            text=alt.Text("w:Q", format=fmt),
            color=alt.condition(f"datum.{colour[0]} > {light_above}", alt.value("black"), alt.value("white")),
        )
    )
    chart = (
        alt.layer(cell, text, data=data)
        .transform_filter(keep)
        .transform_calculate(k=f"colLabels[{key_expr}]", ws="split(datum.w, ' ')")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
    )
    if floor is not None:
        chart = chart.transform_calculate(c=f"max(datum.w, {floor})")
    # 3-decimal annotations need wider cells than 2-decimal ones to stay inside them
    chart = chart.properties(width=alt.Step(26 if fmt.endswith("2f") else 34), height=alt.Step(20))
    if panels:
        chart = chart.transform_calculate(panel=f"'{panels} ' + optionLabels.{panels}[datum.{panels}]")
        header = {"title": None, "header": alt.Header(labelFontSize=11)}
        order = alt.EncodingSortField(field=panels, op="min")  # head 2 before head 10
        if len(controls[panels]) > WRAP_PANELS:  # "all" of 12 heads side by side would be squeezed unreadably
            chart = chart.facet(facet=alt.Facet("panel:N", sort=order, **header), columns=WRAP_PANELS)
        else:
            chart = chart.facet(column=alt.Column("panel:N", sort=order, **header))
    chart = chart.add_params(*params).properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    return ClientSideView(spec, description)
