"""The attention-heatmap widget of notebooks 04, 09 and 10, switched in the browser: sentence, place, layer, head.

    attention_view({"we want to eat apple": trace}, title="Seed 0 attention")    # 04 §2
    attention_view(traces, defaults={"place": 2, "layer": 1})                    # 09 §1: opens on cross, layer 1

Each view is views.heatmaps.plot_attention's heatmap for every choice, with no kernel; `attention_heatmaps` builds
it for `views.clientside.seed_attention` (notebook 05) too.
"""

from __future__ import annotations

from course_utils.core.places import PLACE_NAMES, PLACES, trace_key
from course_utils.views.clientside.base import ClientSideView
from course_utils.views.clientside.heatmap import heatmap_view
from course_utils.views.clientside.tsv import DECIMALS
from course_utils.views.heatmaps import decoder_row_labels


def choices_text(**controls) -> str:
    """The choices of a view in words: choices_text(sentence=five_sentences, layer=[0, 1]) -> "5 sentences × 2 layers".

    Used by the descriptions of attention_view, word_order_view and word_qkv_view (notebooks 02, 04, 05, 07, 09, 10).
    """
    return " × ".join(f"{len(v)} {k}{'s' * (len(v) != 1)}" for k, v in controls.items())


# ---- the attention heatmap (views.heatmaps.plot_attention) for every sentence, place, layer and head ----


def attention_heatmaps(
    traces: dict, places, *, title: str, defaults, decimals: int, hide_single: bool = False
) -> ClientSideView:
    """The one attention-view builder behind attention_view and seed_attention_view. `traces`: {"controls":
    {name: options} of the leading controls (sentence, or sentence and seed), "traces": {(option index per leading
    control): Trace}}; place, layer and head (panels) follow.

    `hide_single`: a control with one option (one sentence, one place) gets no buttons (heatmap_view's).

    Used by attention_view and seed_attention_view (notebooks 04, 05, 09, 10).
    """
    leading, by_key = traces["controls"], traces["traces"]
    first = next(iter(by_key.values()))
    n_layers = first.n_layers
    n_heads = first[trace_key("encoder self", 0, "weights")].shape[0]
    cells = {}
    for lead, trace in by_key.items():
        for p, place in enumerate(places):
            for layer in range(n_layers):
                key = trace_key(place, layer, "weights")
                rows = trace.query_tokens(key)
                if place != "encoder self":
                    rows = decoder_row_labels(rows, trace.tgt_tokens[1:])
                for h in range(n_heads):
                    cells[(*lead, p, layer, h)] = (trace[key][h], rows, trace.key_tokens(key))
    controls = {
        **leading,
        "place": [PLACE_NAMES[p] for p in places],
        "layer": list(range(n_layers)),
        "head": list(range(n_heads)),
    }
    note = [
        f"rows: queries ({'English' if p == 'encoder self' else 'German input → word it produces'}); columns: keys"
        f" ({'German input' if p == 'decoder self' else 'English'})"
        for p in places
    ]
    shown = {k: v for k, v in controls.items() if k != "head" and not (hide_single and len(v) == 1)}
    description = (
        f"{title}: interactive view of {choices_text(**shown)}"
        f" × {n_heads} heads, switched in the browser (the figure below shows one view)."
    )
    return heatmap_view(
        cells,
        controls,
        title=title,
        legend="attention weight",
        description=description,
        panels="head",
        axes_note=("place", note),
        defaults=defaults,
        decimals=decimals,
        hide_single=hide_single,
    )


def checked_places(places) -> tuple:
    """`places` as a tuple; a ValueError unless it is a non-empty selection of core.places.PLACES.

    Used by attention_view and seed_attention_view (notebooks 04, 05, 09, 10).
    """
    places = tuple(places)
    if not places or any(p not in PLACES for p in places):
        raise ValueError(f"places must be some of {PLACES}, got {places}")
    return places


def attention_view(
    traces: dict,
    *,
    title: str = "Attention weights",
    places=PLACES,
    defaults: dict | None = None,
    hide_single: bool = False,
) -> ClientSideView:
    """The course's attention heatmap (views.heatmaps.plot_attention: query rows × key columns, word labels on
    both axes, one colour scale 0..1, weights written in the cells, one panel per head) for every sentence, place,
    layer and head of `traces` ({sentence label: Trace}), switched in the browser by four controls. `places`: the
    attention places the traces hold (default core.places.PLACES; a pretrained encoder's traces, notebook 10's,
    hold only ("encoder self",)). `defaults`: the view shown first, {control: option index} (heatmap_view's).
    `hide_single`: a control with one option (one sentence, or notebook 10's one place) gets no buttons.

    Used in notebooks 04 §2, 09 §1 and 10 §4.
    """
    traces, places = dict(traces), checked_places(places)
    if not traces:
        raise ValueError("attention_view needs at least one trace")
    by_key = {(s,): trace for s, trace in enumerate(traces.values())}
    return attention_heatmaps(
        {"controls": {"sentence": list(traces)}, "traces": by_key},
        places,
        title=title,
        defaults=defaults,
        decimals=DECIMALS,
        hide_single=hide_single,
    )
