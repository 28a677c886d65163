"""04, 06, 08, 09: interventions scored by exact match of the greedy translation.

    accuracy(model, pairs)                                                     # {"train": 1.0, "heldout": 1.0}
    accuracy(model, pairs, {"*.x1": ablate_head(0)})                           # the same with head 0 zeroed
    score_interventions(model, pairs, {"no head 0": {"*.x1": ablate_head(0)}})  # one row per intervention

An intervention is an `inspect.tracing.patch` dict {trace key or glob: fn}; the patch functions themselves
(uniform_attention, ablate_head, ...) live in `inspect.interventions`. Exact match is `training.train`'s.
"""

from __future__ import annotations

import pandas as pd

from course_utils.core.data import Pair
from course_utils.core.model import Translator
from course_utils.trace.tracing import patch
from course_utils.training.train import exact_matches


def accuracy(model: Translator, pairs: list[Pair], patches: dict | None = None) -> dict[str, float]:
    """Exact-match accuracy per split ('train', 'heldout') of greedy translations, with `patches` applied.

    One batched greedy decode of all pairs (same result as training.train.exact_match per split).

    Taught in notebook 05 §3 (exact match); used in 04 §6 and 09 §4.
    """
    with patch(model, patches or {}):
        matches = exact_matches(model, pairs)
    result = {}
    for split in ("train", "heldout"):
        hits = [m for m, p in zip(matches, pairs) if p.split == split]
        if hits:
            result[split] = sum(hits) / len(hits)
    return result


def score_interventions(model: Translator, pairs: list[Pair], interventions: dict[str, dict]) -> pd.DataFrame:
    """{name: patches} -> table of exact-match accuracy per split, one row per intervention.

    Used in notebooks 06 §3, 08 (A number for "scatter") and 09 §4.
    """
    rows = {name: accuracy(model, pairs, patches) for name, patches in interventions.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("intervention")
