"""Notebook 06's word-path widget, switched in the browser: a word's path over the epochs, per layer, place, kinds.

    word_path_view(snaps, PAIR, words=words, defaults={"layer": 1})    # 06 §6: one PCA per layer, place, kind set

Every choice is views.clustering.plot_word_projection's picture (all heads, PCA, 2-D), with no kernel; one head,
t-SNE, 3-D and hand-picked kinds or epochs: call plot_word_projection itself.
"""

from __future__ import annotations

import json

import altair as alt

from course_utils.core.places import HEAD_KINDS, PLACE_NAMES, PLACES, VECTOR_KINDS, place_prefix
from course_utils.measures.projection import collect_vectors, fit_projection, identical_groups
from course_utils.views.clientside.base import ClientSideView, chart_view
from course_utils.views.clientside.tsv import DECIMALS
from course_utils.views.style import KIND_COLOURS

NEAR_LABELS = 0.06  # word_path_view: one label for epochs closer than this share of the panel's span


# ---- notebook 06's word projection (views.clustering.plot_word_projection) per word, layer, place, kinds ----

SENTENCE_SHAPES = ("circle", "triangle-up", "square", "diamond")  # views.style.SENTENCE_MARKERS' Vega-Lite names
SENTENCE_DASHES = ([1, 0], [5, 3], [1, 2], [6, 2, 1, 2])  # "-", "--", ":", "-." as stroke dashes


def word_path_view(
    snapshots,
    sentences,
    *,
    kind_sets=(HEAD_KINDS, VECTOR_KINDS),
    layers=None,
    places=PLACES,
    words=None,
    defaults: dict | None = None,
) -> ClientSideView:
    """views.clustering.plot_word_projection (head "all", PCA, 2-D) for every word, layer, place and kind set,
    switched in the browser: small multiples, one panel per kind (KIND_COLOURS), all panels in ONE PCA fitted on every
    word, kind, epoch and sentence of the choice; the chosen word's path over the epochs in each panel (one
    marker shape and dash per sentence, joined in epoch order, each spot labelled with its epochs, "=" where
    the point is identical in every sentence); faint: the other words of the panel's kind; light grey: the
    other kinds. Tooltips give word@kind@epoch. Drag to pan, scroll to zoom (a path can be a speck).

    The PCA is precomputed for each (layer, place, kind set): the word only picks which path is drawn. t-SNE,
    3-D, one head and hand-picked kinds or epochs stay with plot_word_projection (a kernel).

    Used in notebook 06 §6.
    """

    sentences, places = list(sentences), tuple(places)
    kind_sets = [tuple(ks) for ks in kind_sets]
    epochs = sorted(snapshots)
    first = snapshots[epochs[0]][sentences[0]]
    n_layers = first.n_layers
    layers = list(range(n_layers)) if layers is None else list(layers)
    fits = {}
    for li, layer in enumerate(layers):
        for pi, place in enumerate(places):
            for ki, ks in enumerate(kind_sets):
                lv = collect_vectors(snapshots, sentences, place_prefix(place, layer), kinds=ks, epochs=epochs)
                fits[(li, pi, ki)] = (lv.meta.reset_index(drop=True), fit_projection(lv.X, "pca", 2))
    seen = [w for meta, _ in fits.values() for w in meta["word"]]
    words = list(dict.fromkeys(seen)) if words is None else list(words)
    rows = []
    notes = {}
    for (li, pi, ki), (meta, Y) in fits.items():
        labs = [""] * len(meta)
        for idx in meta.groupby(["word", "kind"], sort=False).groups.values():
            idx = list(idx)
            for g in identical_groups(Y[idx]):
                members = [idx[j] for j in g]
                both = len({meta["sentence"][m] for m in members}) == len(sentences)
                labs[members[0]] = ",".join(str(e) for e in sorted({int(meta["epoch"][m]) for m in members})) + (
                    "=" if both else ""
                )
        # one sentence's epochs that sit closer than NEAR_LABELS of the panel's span share one label ("15,30"):
        # separate labels there were piled into an unreadable blot (zoom in to tell the points apart)
        near = NEAR_LABELS * float(max(Y[:, 0].max() - Y[:, 0].min(), Y[:, 1].max() - Y[:, 1].min()))
        for idx in meta.groupby(["word", "kind", "sentence"], sort=False).groups.values():
            kept = []
            for m in sorted(idx, key=lambda j: int(meta["epoch"][j])):
                if not labs[m] or "=" in labs[m]:
                    continue
                host = next((k for k in kept if abs(Y[k] - Y[m]).max() < near), None)
                if host is None:
                    kept.append(m)
                else:
                    labs[host], labs[m] = f"{labs[host]},{labs[m]}", ""
        for i, r in meta.iterrows():
            w = words.index(r["word"]) if r["word"] in words else -1
            rows.append(
                [
                    li,
                    pi,
                    ki,
                    w,
                    VECTOR_KINDS.index(r["kind"]),
                    sentences.index(r["sentence"]),
                    int(r["epoch"]),
                    f"{Y[i, 0]:.{DECIMALS}f}",
                    f"{Y[i, 1]:.{DECIMALS}f}",
                    labs[i] or "-",
                ]
            )
        if ki == 0:
            for wi, word in enumerate(words):
                for kj, ks in enumerate(kind_sets):
                    m = fits[(li, pi, kj)][0]
                    missing = [k for k in ks if not ((m["kind"] == k) & (m["word"] == word)).any()]
                    toks = list(dict.fromkeys(m["word"]))
                    notes[f"{li}|{pi}|{kj}|{wi}"] = (
                        ""
                        if not missing
                        else f"no '{word}' among {', '.join(missing)} here; tokens there: {', '.join(toks)}"
                        if len(missing) < len(ks)
                        else f"'{word}' is no token of {places[pi]} layer {layers[li]}; tokens: {', '.join(toks)}"
                    )
    fields = ["layer", "place", "kinds", "word", "kind", "s", "epoch", "x", "y", "lab"]
    text = "\n".join(["\t".join(fields), *("\t".join(map(str, r)) for r in rows)])
    data = alt.Data(values=text, format=alt.DataFormat(type="tsv", parse={f: "number" for f in fields if f != "lab"}))
    controls = {
        "word": words,
        "layer": [str(x) for x in layers],
        "place": [PLACE_NAMES[p] for p in places],
        "kinds": [", ".join(ks) for ks in kind_sets],
    }
    defaults = dict(defaults or {})
    if set(defaults) - set(controls):
        raise ValueError(f"defaults name no control: {sorted(set(defaults) - set(controls))}")
    if "word" not in defaults and "eat" in words:
        defaults["word"] = words.index("eat")
    params = []
    for name, labels in controls.items():
        binding = alt.binding_radio if len(labels) <= 4 else alt.binding_select
        value = defaults.get(name, 0)
        if not 0 <= value < len(labels):
            raise ValueError(f"default {value} is no option of {name}: 0..{len(labels) - 1}")
        params.append(
            alt.param(
                name=name, value=value, bind=binding(options=list(range(len(labels))), labels=labels, name=name + " ")
            )
        )
    params += [
        alt.param(name="optionLabels", value=controls),
        alt.param(name="kindNames", value=list(VECTOR_KINDS)),
        alt.param(name="kindLists", value=[list(ks) for ks in kind_sets]),
        alt.param(name="notes", value=notes),
    ]
    line1 = (
        f'"\'" + optionLabels.word[word] + "\' over epochs {" → ".join(map(str, epochs))}: "'
        " + optionLabels.place[place] + ' layer ' + optionLabels.layer[layer] + ', all heads, one PCA of all words'"
    )
    glyphs = ("●", "▲", "■", "◆")
    dashes = ("solid", "dashed", "dotted", "dash-dot")
    legend = "; ".join(f"{glyphs[i]} {dashes[i]}: in '{s}'" for i, s in enumerate(sentences))
    line2 = (
        json.dumps(legend)
        + ", "
        + json.dumps(
            "labels: epoch ('15,30': about the same spot; '=': the same point in both sentences);"
            " drag to pan, scroll to zoom"
        )
    )
    note = "notes[layer + '|' + place + '|' + kinds + '|' + word]"
    title_expr = f"{note} ? [{line1}, {line2}, {note}] : [{line1}, {line2}]"

    kinds_all = list(VECTOR_KINDS)
    colour = alt.Color(
        "kindName:N", scale=alt.Scale(domain=kinds_all, range=[KIND_COLOURS[k] for k in kinds_all]), legend=None
    )
    x = alt.X("x:Q", title="PCA 1", axis=alt.Axis(grid=False))
    y = alt.Y("y:Q", title="PCA 2", axis=alt.Axis(grid=False))
    tip = [alt.Tooltip("label:N", title="word@kind@epoch"), alt.Tooltip("sentence:N")]
    base = alt.Chart().encode(x=x, y=y)
    grey = base.mark_circle(size=14, color="#d9d9d9", opacity=1).transform_filter("datum.kindName != datum.panel")
    own = "datum.kindName == datum.panel"
    mine = f"{own} && datum.word == word"
    faint = (
        base.mark_circle(size=20, opacity=0.3)
        .encode(color=colour, tooltip=tip)
        .transform_filter(f"{own} && datum.word != word")
    )
    path = (
        base.mark_line(strokeWidth=1.4)
        .encode(
            color=colour,
            detail="sentence:N",
            order="epoch:Q",
            strokeDash=alt.StrokeDash(
                "sentence:N",
                scale=alt.Scale(domain=sentences, range=list(SENTENCE_DASHES[: len(sentences)])),
                legend=None,
            ),
        )
        .transform_filter(mine)
    )
    points = (
        base.mark_point(filled=True, size=60, stroke="black", strokeWidth=0.6, opacity=1)
        .encode(
            color=colour,
            shape=alt.Shape(
                "sentence:N",
                scale=alt.Scale(domain=sentences, range=list(SENTENCE_SHAPES[: len(sentences)])),
                legend=None,  # the title's second line says which shape is which sentence
            ),
            tooltip=tip,
        )
        .transform_filter(mine)
    )
    labels = (  # the first sentence's epochs above right of their points, the others' below right (not left:
        # the panel clips, and a path at its left edge lost the start of its labels)
        base.mark_text(align="left", dx=6, dy=-7, fontSize=10)
        .encode(text="lab:N")
        .transform_filter(f"{mine} && datum.lab != '-' && datum.s == 0")
    )
    labels_other = (
        base.mark_text(align="left", dx=6, dy=11, fontSize=10)
        .encode(text="lab:N")
        .transform_filter(f"{mine} && datum.lab != '-' && datum.s != 0")
    )
    zoom = alt.selection_interval(bind="scales", name="zoom")
    chart = (
        alt.layer(
            grey, faint, path, points, labels_other, labels.add_params(zoom).properties(name="wordPaths"), data=data
        )
        .transform_filter("datum.layer == layer && datum.place == place && datum.kinds == kinds")
        .transform_calculate(
            kindName="kindNames[datum.kind]",
            sentence=f"{json.dumps(sentences)}[datum.s]",
            label="optionLabels.word[datum.word] + '@' + kindNames[datum.kind] + '@' + datum.epoch",
            panels="kindLists[kinds]",
        )
        .transform_flatten(["panels"], as_=["panel"])
        .properties(width=260, height=220)
        .facet(
            facet=alt.Facet(
                "panel:N",
                sort=kinds_all,
                title=None,
                header=alt.Header(labelFontSize=12, labelExpr="datum.label"),
            ),
            columns=2,
        )
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    )
    n = {k: len(v) for k, v in controls.items()}
    what = (
        f"A word's path over epochs {' → '.join(map(str, epochs))}: interactive view of {n['word']} words"
        f" × {n['layer']} layers × {n['place']} places × {n['kinds']} kind sets (one PCA each, all heads)"
    )
    return chart_view(chart, what)
