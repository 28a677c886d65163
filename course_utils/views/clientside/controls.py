"""The controls of a browser view: one Vega-Lite param per choice, bound to radio buttons or a select.

    control_params({"sentence": ["we eat", "they read"], "head": [0, 1]}, {"head": 1})

The spec filters its embedded rows (`tsv`) by the params' values, in the browser, with no kernel.
"""

from __future__ import annotations

import altair as alt


def control_params(controls: dict, defaults: dict | None = None, *, panels: str | None = None, captions=None) -> list:
    """One Vega-Lite param per control ({name: option labels}), its value the option's index, bound to radio
    buttons (up to 4 options) or a select. `defaults`: {name: index} shown first (default 0; an unknown name or
    index is refused). `panels`: the control drawn as panels gets a first option "all" (value -1), its default.
    `captions`: {name: what the control is called next to it} (default: its name).

    Used by pair_view, word_qkv_view, scaling_view and heatmap_view (notebooks 01-05, 07, 09, 10).
    """
    defaults, captions = dict(defaults or {}), dict(captions or {})
    if set(defaults) - set(controls):
        raise ValueError(f"defaults name no control: {sorted(set(defaults) - set(controls))}")
    params = []
    for name, opts in controls.items():
        labels = [str(x) for x in opts]
        options = list(range(len(labels)))
        if name == panels:
            labels, options = ["all", *labels], [-1, *options]
        value = defaults.get(name, options[0])
        if value not in options:
            raise ValueError(f"default {value} is no option of {name}: {options}")
        binding = alt.binding_radio if len(labels) <= 4 else alt.binding_select
        caption = captions.get(name, name) + " "
        params.append(alt.param(name=name, value=value, bind=binding(options=options, labels=labels, name=caption)))
    return params
