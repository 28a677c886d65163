"""04, 06, 08, 09: interventions scored by exact match of the greedy translation.

    score_interventions(model, pairs, {"no head 0": {"*.x1": tracing.ablate_head(0)}})

An intervention is a `tracing.patch` dict {trace key or glob: fn}; the patch functions themselves
(uniform_attention, ablate_head, ...) live in `tracing`.
"""

from __future__ import annotations

import pandas as pd

from course_utils.core.data import Pair
from course_utils.core.model import Translator
from course_utils.inspect.tracing import patch
from course_utils.training.train import exact_matches


def accuracy(model: Translator, pairs: list[Pair], patches: dict | None = None) -> dict[str, float]:
    """Exact-match accuracy per split ('train', 'heldout') of greedy translations, with `patches` applied.

    One batched greedy decode of all pairs (same result as training.exact_match per split).
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
    """{name: patches} -> table of exact-match accuracy per split, one row per intervention."""
    rows = {name: accuracy(model, pairs, patches) for name, patches in interventions.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("intervention")
