"""Notebook 02's q, k, v widget, switched in the browser: one word's q, k and v per word choice and encoder layer.

    word_qkv_view(model, [(sentence, "eat"), ("eat", "eat")], defaults={"word": 0, "layer": 0})   # 02, Try it

Every choice is views.qkv.plot_word_qkv's picture of measures.qkv.word_qkv, with no kernel; a sentence of the
learner's own still needs plot_word_qkv and a running kernel.
"""

from __future__ import annotations

import altair as alt

from course_utils.measures.qkv import word_qkv
from course_utils.views.clientside.attention import choices_text
from course_utils.views.clientside.base import ClientSideView, chart_view
from course_utils.views.clientside.controls import control_params
from course_utils.views.clientside.tsv import DECIMALS, label_key, rows_tsv

# ---- notebook 02's q, k and v of one word (views.qkv.plot_word_qkv) per word choice and layer ----


def word_qkv_view(model, choices, *, layers=None, defaults: dict | None = None, scale: str = "each") -> ClientSideView:
    """views.qkv.plot_word_qkv for every (sentence, word) of `choices` and every encoder layer, switched in the
    browser: the word's whole-layer q, k and v (3 rows × d_model columns, no numbers written: 64 per row), on
    plot_word_qkv's diverging colour scale, symmetric about 0, the rows labelled with their lengths. scale="each":
    the scale of each choice and layer is its own largest |value|; scale="shared": one scale for every choice and
    layer (the largest |value| of all), so that choices can be compared by colour. A word that is not in its
    sentence is read alone (measures.qkv.word_qkv).

    Used in notebook 02 (Try it: q, k and v of a word).
    """

    choices = [(str(s), str(w)) for s, w in choices]
    if scale not in ("each", "shared"):
        raise ValueError(f"scale must be 'each' or 'shared', not {scale!r}")
    if not choices:
        raise ValueError("word_qkv_view needs at least one (sentence, word)")
    layers = list(range(len(model.encoder))) if layers is None else [int(x) for x in layers]
    rows, lims, notes, labels = [], {}, {}, []
    for c, (sentence, word) in enumerate(choices):
        for li, layer in enumerate(layers):
            M, note = word_qkv(model, sentence, word, layer)
            m = M.double().numpy()
            if li == 0:
                labels.append(f"{word.strip().lower()} {note}")
            lims[f"{c}|{li}"] = round(float(abs(m).max()), DECIMALS)
            notes[f"{c}|{li}"] = f"encoder layer {layer}: q, k, v of {word.strip().lower()!r} {note}"
            for r, (kind, vec) in enumerate(zip("qkv", m)):
                norm = float((vec**2).sum() ** 0.5)
                values = [round(float(x), DECIMALS) for x in vec]
                rows.append({"word": c, "layer": li, "q": label_key(r, f"{kind}  |{kind}|={norm:.1f}"), "w": values})
    if scale == "shared":
        lims = dict.fromkeys(lims, max(lims.values()))
    d = len(rows[0]["w"])
    data = alt.Data(
        values=rows_tsv(["word", "layer", "q", "w"], rows),
        format=alt.DataFormat(type="tsv", parse={"word": "number", "layer": "number"}),
    )
    params = control_params({"word": labels, "layer": layers}, defaults)
    params += [alt.param(name="lims", value=lims), alt.param(name="notes", value=notes)]
    params.append(alt.param(name="dims", value=list(range(d))))
    choice = "word + '|' + layer"
    x = alt.X(
        "k:O",
        title=f"output feature of w_q, w_k, w_v (0..{d - 1})",
        axis=alt.Axis(values=list(range(0, d, 8)), labelAngle=0),
    )
    y = alt.Y("q:O", title=None, axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    chart = (
        alt.Chart(data)
        .mark_rect()
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "w:Q",
                title="value" if scale == "each" else "value (one scale for all)",
                scale=alt.Scale(
                    scheme="redblue", reverse=True, domain=alt.ExprRef(expr=f"[-lims[{choice}], lims[{choice}]]")
                ),
            ),
            tooltip=[
                alt.Tooltip("q:N", title="vector"),
                alt.Tooltip("k:O", title="feature"),
                alt.Tooltip("w:Q", format=".3f"),
            ],
        )
        .transform_filter("datum.word == word && datum.layer == layer")
        .transform_calculate(ws="split(datum.w, ' ')", k="dims")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
        .properties(width=alt.Step(11), height=alt.Step(26))
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=f"notes[{choice}]"), anchor="start"))
    )
    what = f"q, k and v of a word: interactive view of {choices_text(word=labels, layer=layers)}"
    return chart_view(chart, what)
