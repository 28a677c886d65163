"""Checkers for notebook 10 (a real pretrained transformer: all-MiniLM-L6-v2)."""

from __future__ import annotations

import torch

from course_utils.exercises.framework import Exercise, Mistake, check_choice


def _diagonal(w: torch.Tensor, offset: int) -> torch.Tensor:
    return w.diagonal(offset, dim1=-2, dim2=-1)


def _weights(seed: int, H: int = 3, T: int = 6) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(H, T, T, generator=g, dtype=torch.float64), dim=-1)


# Exercise 2: a previous-token detector (H, T, T) -> (H,), then the model's previous-token head
PREVIOUS = Exercise(
    name="previous_token_mass",
    success="previous_token_mass is right: one number per head, the mean weight on the key before.",
    reference=lambda w: _diagonal(w, -1).mean(-1),
    cases=[(f"random weights {s}", (_weights(s),)) for s in range(3)],
    mistakes=(
        Mistake("query 0 has no previous key: i − 1 wraps round.", lambda w: _diagonal(w.roll(1, -1), 0).mean(-1)),
        Mistake("that is the NEXT token's weight; take w[h, i, i − 1].", lambda w: _diagonal(w, 1).mean(-1)),
        Mistake("the weights are summed over the queries; take their mean.", lambda w: _diagonal(w, -1).sum(-1)),
        Mistake("divided by T; T − 1 queries have a previous key.", lambda w: _diagonal(w, -1).sum(-1) / w.shape[-1]),
    ),
    otherwise="not the mean weight on the previous key: average w[h, i, i − 1] over the queries i = 1 … T − 1.",
    returns="one number per head, shape (H,)",
    forbid=("course_utils",),
    forbid_hint="a course helper; index the weights yourself, w[h, i, i − 1] for the queries i = 1 … T − 1.",
)


def _previous_token_head(model) -> tuple[int, int]:
    from course_utils.measures.pretrained import PARAPHRASES, head_masses
    from course_utils.trace.pretrained import record_sentences

    cache, batch = record_sentences(model, [s for pair in PARAPHRASES for s in pair], "*.weights")
    layer, head = head_masses(cache, batch.lengths, model.cfg.n_layers)["previous"].idxmax()
    return int(layer), int(head)


def check_previous_token_head(fn, answer, model=None) -> bool:
    """Exercise 2: `fn` passes PREVIOUS, then `answer` = (layer, head) of the previous-token head. Used in notebook 10."""
    from course_utils.core.pretrained import load_minilm

    line = PREVIOUS.judge(fn)
    if line:
        print(line)
        return False
    right = _previous_token_head(model or load_minilm())
    return Exercise(
        todo="detector done; now run it on every layer and set my_previous_token_head = (layer, head), then re-run.",
        success=f"layer {right[0]}, head {right[1]} is the previous-token head.",
        reference=right,
        mistakes=(
            Mistake("layers are numbered from 0, as in the trace keys.", (right[0] + 1, right[1])),
            Mistake("layers run 0..5 and heads 0..11.", when=lambda got: not (0 <= got[0] < 6 and 0 <= got[1] < 12)),
        ),
        otherwise="not the head with the largest previous-token mass: compare every (layer, head) of your detector.",
        returns="a pair (layer, head) of whole numbers",
    ).check(answer)


def check_eat_layer_prediction(prediction, distances) -> bool:
    """Prediction: does "layer 0" or "layer 5" (or 0 / 5) separate eat more (`distances`: measured)? Used in notebook 10."""
    if isinstance(prediction, int | str) and not isinstance(prediction, bool) and str(prediction).strip().isdigit():
        prediction = f"layer {str(prediction).strip()}"
    right = 0 if distances[0] > distances[5] else 5
    said = f"measured: layer 0 at {distances[0]:.2f}, layer 5 at {distances[5]:.2f}: "
    hints = {
        "layer 0": said + "context keeps entering layer after layer, and the last layer separates most.",
        "layer 5": said + "the first layer already separates most; later layers pull the two back together.",
    }
    return check_choice(
        prediction,
        f"layer {right}",
        hints,
        todo="set my_prediction to 'layer 0' or 'layer 5' above, then re-run.",
        success=f"layer {right}: {distances[right]:.2f} apart vs {distances[5 - right]:.2f} in layer {5 - right}.",
    )
