"""Checkers for notebook 10 (a real pretrained transformer: all-MiniLM-L6-v2)."""

from __future__ import annotations

import torch

from course_utils.exercises import calls_to, feedback, is_course_helper, not_answered

# Exercise 2: a previous-token detector, then the model's previous-token head

UNANSWERED_DETECTOR = "write the body of previous_token_mass (it still raises NotImplementedError), then re-run."


def _reference(w: torch.Tensor) -> torch.Tensor:
    """(H, T, T) -> (H,): mean over queries 1..T-1 of the weight on the key just before the query."""
    return w.diagonal(-1, dim1=-2, dim2=-1).mean(-1)


def _mistakes(w: torch.Tensor) -> dict[str, torch.Tensor]:
    """What the typical mistakes compute on the same weights."""
    T = w.shape[-1]
    i = torch.arange(T)
    return {
        "wrap": w[:, i, (i - 1) % T].mean(-1),  # query 0 kept: its "previous" wraps round to the last key
        "next": w.diagonal(1, dim1=-2, dim2=-1).mean(-1),  # the key after the query
        "sum": w.diagonal(-1, dim1=-2, dim2=-1).sum(-1),  # summed, not averaged
        "all queries": w.diagonal(-1, dim1=-2, dim2=-1).sum(-1) / T,  # divided by T, not T - 1
    }


HINTS = {
    "wrap": "query 0 ([CLS]) has no previous token: with index i − 1 it wraps round to the last key ([SEP]). "
    "Use queries 1..T−1 only.",
    "next": "that is the weight on the NEXT token (w[h, i, i + 1], or w[h, i − 1, i] with rows and columns swapped). "
    "Rows are queries and columns keys: query i's weight on the key before it is w[h, i, i − 1].",
    "sum": "the weights are summed over the queries; take their mean, so sentences of any length compare.",
    "all queries": "divided by T: only T − 1 queries have a previous token, so average over those.",
}


def _test_weights(seed: int, H: int = 3, T: int = 6) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(H, T, T, generator=g, dtype=torch.float64), dim=-1)


def _as_tensor(x) -> torch.Tensor | None:
    try:
        return torch.as_tensor(x, dtype=torch.float64).reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return None


def check_previous_token_mass(fn) -> bool:
    """fn(w) with w (H, T, T) -> (H,) the mean weight each head's queries 1..T-1 put on the key just before them.
    Used in notebook 10 (an exercise)."""
    if fn is None:
        return not_answered(UNANSWERED_DETECTOR)
    if not callable(fn):
        return feedback(False, "", f"previous_token_mass must be a function of w (H, T, T), not {type(fn).__name__}.")
    helpers = [fn.__name__] if is_course_helper(fn) else calls_to(fn, is_course_helper)
    if helpers:
        return feedback(False, "", f"your detector is or calls {helpers[0]}, a course helper: index the weights "
                        "yourself, w[h, i, i − 1] for the queries i = 1 … T − 1.")  # fmt: skip
    for seed in range(3):
        w = _test_weights(seed)
        try:
            got = fn(w.clone())
        except NotImplementedError:
            return not_answered(UNANSWERED_DETECTOR)
        except Exception as e:  # the learner's code: show its error as a hint, not a traceback
            return feedback(False, "", f"previous_token_mass raised {type(e).__name__}: {e}")
        got = _as_tensor(got)
        if got is None or got.numel() != w.shape[0]:
            shape = None if got is None else tuple(got.shape)
            return feedback(False, "", f"return one number per head, shape ({w.shape[0]},); got {shape}.")
        if torch.allclose(got, _reference(w), atol=1e-6):
            continue
        for name, value in _mistakes(w).items():
            if torch.allclose(got, value, atol=1e-6):
                return feedback(False, "", HINTS[name])
        return feedback(False, "", "not the mean weight on the previous key: for each head h, average "
                        "w[h, i, i − 1] over the queries i = 1 … T − 1.")  # fmt: skip
    return feedback(True, "previous_token_mass is right: one number per head, the mean weight on the key before.", "")


def previous_token_head(model=None, sentences=None) -> tuple[int, int]:
    """(layer, head) with the largest mean previous-token weight over `sentences` (default: the paraphrase set).
    Used in notebook 10 (an exercise)."""
    from course_utils.core.pretrained import load_minilm
    from course_utils.measures.pretrained import PARAPHRASES, head_masses
    from course_utils.trace.pretrained import record_sentences

    model = model or load_minilm()
    sentences = sentences or [s for pair in PARAPHRASES for s in pair]
    cache, batch = record_sentences(model, sentences, "*.weights")
    table = head_masses(cache, batch.lengths, model.cfg.n_layers)
    layer, head = table["previous"].idxmax()
    return int(layer), int(head)


def _pair_of_ints(answer) -> tuple[int, int] | None:
    """(layer, head) from a pair of integers (a tuple, a list, numpy integers); None for anything else."""
    import numbers

    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__len__") or len(answer) != 2:
        return None
    if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in answer):
        return None
    return int(answer[0]), int(answer[1])


def check_previous_token_head(fn, answer, model=None) -> bool:
    """Exercise 2: the learner's detector is right, and `answer` = (layer, head) of the previous-token head.
    Used in notebook 10 §4 (its exercise)."""
    pair = _pair_of_ints(answer)
    if answer is not None and pair is None:  # said first, in one line, before the detector is run
        return feedback(False, "", f"answer with a pair (layer, head) of integers; got {answer!r}.")
    if not check_previous_token_mass(fn):
        return False
    if answer is None:
        return not_answered("detector done; now run it on every layer and set my_previous_token_head = "
                            "(layer, head), then re-run.")  # fmt: skip
    layer, head = pair
    right = previous_token_head(model)
    if (layer, head) == right:
        return feedback(True, f"layer {layer}, head {head} is the previous-token head.", "")
    if (layer - 1, head) == right:
        return feedback(False, "", "layers are numbered from 0 (the first layer is layer 0), as in the trace keys.")
    if not (0 <= layer < 6 and 0 <= head < 12):
        return feedback(False, "", "layers run 0..5 and heads 0..11.")
    return feedback(False, "", f"layer {layer}, head {head} is not the head with the largest previous-token mass: "
                    "compare every (layer, head) of your detector's output over several sentences.")  # fmt: skip


# Exercise 1: predict before you look — which layer's output separates eat (apple vs bread) more?


def _layer(prediction) -> int | None:
    if isinstance(prediction, bool):
        return None
    if isinstance(prediction, int):
        return prediction
    if isinstance(prediction, str):
        digits = prediction.lower().replace("layer", "").strip()
        return int(digits) if digits.isdigit() else None
    return None


def check_eat_layer_prediction(prediction, distances) -> bool:
    """`prediction`: "layer 0" or "layer 5" (or 0 / 5); `distances`: {layer: relative distance of eat's
    layer output between the apple and the bread sentence}, as measured in the notebook.
    Used in notebook 10 §3 (its exercise)."""
    if prediction is None:
        return not_answered("set my_prediction to 'layer 0' or 'layer 5' above, then re-run.")
    layer = _layer(prediction)
    if layer not in (0, 5):
        return feedback(False, "", f"answer 'layer 0' or 'layer 5' (the first or the last layer); got {prediction!r}.")
    right = 0 if distances[0] > distances[5] else 5
    other = 5 - right
    if layer == right:
        return feedback(
            True,
            f"layer {right}: {distances[right]:.2f} apart vs {distances[other]:.2f} in layer {other}.",
            "",
        )
    return feedback(
        False,
        "",
        f"the table shows layer {layer} at {distances[layer]:.2f} and layer {other} at {distances[other]:.2f}: "
        + (
            "context keeps entering layer after layer, and the last layer separates most."
            if right == 5
            else "the first layer already separates most; later layers pull the two back together."
        ),
    )
