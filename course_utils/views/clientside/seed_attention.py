"""Notebook 05's attention widget, switched in the browser: attention_view with a training-seed control.

    seed_attention_view({seed: {sentence: trace}}, defaults={"sentence": 5, "place": 2, "layer": 1})   # 05 §5

Built by `views.clientside.attention.attention_heatmaps`, like attention_view.
"""

from __future__ import annotations

from course_utils.core.places import PLACES
from course_utils.views.clientside.attention import attention_heatmaps, checked_places
from course_utils.views.clientside.base import ClientSideView

# ---- notebook 05's attention heatmap per sentence AND training seed (attention_view with a seed control) ----


def seed_attention_view(
    traces: dict,
    *,
    title: str = "Attention weights",
    places=PLACES,
    defaults: dict | None = None,
    decimals: int = 2,
) -> ClientSideView:
    """attention_view with a seed control: `traces` is {seed: {sentence label: Trace}} (the same sentences for
    every seed), switched in the browser by five controls: sentence, seed, place, layer and head (panels, "all"
    first). `decimals`: the weights embedded (2 by default, the places the cells show: 5 seeds cost 5× the bytes).
    `defaults`: {control: option index} (heatmap_view's).

    Used in notebook 05 §5.
    """
    traces, places = {s: dict(t) for s, t in traces.items()}, checked_places(places)
    if not traces or not all(traces.values()):
        raise ValueError("seed_attention_view needs at least one seed with at least one trace")
    sentences = list(next(iter(traces.values())))
    if any(list(t) != sentences for t in traces.values()):
        raise ValueError("every seed needs the same sentences, in the same order")
    by_key = {
        (s, d): by_sentence[name] for d, by_sentence in enumerate(traces.values()) for s, name in enumerate(sentences)
    }
    by_key = dict(sorted(by_key.items(), key=lambda kv: (kv[0][1], kv[0][0])))  # seed by seed, as before
    return attention_heatmaps(
        {"controls": {"sentence": sentences, "seed": [str(s) for s in traces]}, "traces": by_key},
        places,
        title=title,
        defaults=defaults,
        decimals=decimals,
    )
