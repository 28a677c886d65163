"""Checkers for notebook 06 (epoch-by-epoch clustering of Q, K, V and the attention output)."""

from __future__ import annotations

import numpy as np

from ..clustering import PAIR, pairwise_spread, relative_distance, word_vector
from . import feedback


def check_pairwise_spread(fn) -> bool:
    """Exercise 1: fn(X (N, dim)) -> pairwise spread = mean pairwise Euclidean distance / mean vector length."""
    if fn is None or not callable(fn):
        return feedback(False, "", "define my_pairwise_spread(X) and pass the function itself.")
    rng = np.random.default_rng(6)
    cases = {
        "random vectors": rng.normal(size=(12, 8)),
        "vectors around one point": 5 + 0.1 * rng.normal(size=(7, 4)),
        "two vectors": np.array([[1.0, 0.0], [0.0, 1.0]]),
    }
    for name, X in cases.items():
        try:
            got = float(fn(X))
        except Exception as exc:  # the learner's code may raise anything
            return feedback(False, "", f"my_pairwise_spread raised {type(exc).__name__}: {exc} (on {name}).")
        want = pairwise_spread(X)
        if not np.isfinite(got) or abs(got - want) > 1e-6 * max(1.0, want):
            hint = (
                "count each pair once and leave out a vector's distance to itself."
                if abs(got - want * (len(X) - 1) / len(X)) < 1e-6 * max(1.0, want)
                else "divide the mean pairwise distance by the mean length of the vectors (np.linalg.norm(X, axis=1).mean())."
            )
            return feedback(False, "", f"on {name} you get {got:.4f}, expected {want:.4f}: {hint}")
    got2 = float(fn(3.0 * cases["random vectors"]))
    if abs(got2 - pairwise_spread(cases["random vectors"])) > 1e-6:
        return feedback(False, "", "scaling all vectors by 3 should not change the pairwise spread.")
    return feedback(
        True, "your pairwise spread matches clustering.pairwise_spread (two orthogonal unit vectors: √2 ≈ 1.414).", ""
    )


def _x1_shift(snapshots, word: str, epoch: int = 30) -> float:
    key = "encoder.1.self.x1"
    a, b = (word_vector(snapshots[epoch][s], key, word) for s in PAIR)
    return relative_distance(a, b)


def check_most_changed_word(word) -> bool:
    """Exercise 2: of the words both sentences share, whose encoder layer-1 x1 moves most (epoch 30)?"""
    from ..training import load_standard_model

    snaps = load_standard_model().snapshots
    shared = [w for w in PAIR[0].split() if w in PAIR[1].split()]
    shifts = {w: _x1_shift(snaps, w) for w in shared}
    want = max(shifts, key=shifts.get)
    if word not in shared:
        return feedback(False, "", f"choose one of the words both sentences share: {', '.join(shared)}.")
    if word == want:
        return feedback(
            True,
            f"'{want}' moves most ({shifts[want]:.2f} of its length); 'eat' moves "
            f"{shifts['eat']:.2f} and 'to' only {shifts['to']:.2f}.",
            "",
        )
    return feedback(
        False,
        "",
        f"'{word}' moves {shifts[word]:.2f} of its length; compute the relative distance for "
        "every shared word and take the largest.",
    )


def object_log_odds(model, position: int | None, hook: str = "encoder.1.layer_out") -> float:
    """log p(einen) - log p(brot) after 'wir wollen' for 'we want to eat apple', with the row `position` at `hook`
    replaced by the same row of the 'we want to eat bread' run (None: no patch)."""
    from ..clustering import copy_row_from, next_word_log_probs
    from ..data import load_probes
    from ..tracing import run_with_trace

    refs = load_probes("context_pair")
    patches = {} if position is None else {hook: copy_row_from(run_with_trace(model, PAIR[1]), position)}
    lp = next_word_log_probs(model, PAIR[0], refs[PAIR[0]], patches)
    de = model.tgt_vocab.stoi
    return float(lp[2, de["einen"]] - lp[2, de["brot"]])


def check_object_position(word) -> bool:
    """Exercise 3: on seed 0, which English word's encoder output, patched from the bread run, lowers the
    log-odds einen : brot most?"""
    from ..training import load_standard_model

    model = load_standard_model().model.eval()
    words = PAIR[0].split()
    if word not in words:
        return feedback(False, "", f"answer with a word of '{PAIR[0]}': {', '.join(words)}.")
    effect = {w: object_log_odds(model, pos) for pos, w in enumerate(words)}
    want = min(effect, key=effect.get)
    clean = object_log_odds(model, None)
    if word == want:
        return feedback(
            True,
            f"patching '{want}' alone takes the log-odds from {clean:.2f} to {effect[want]:.2f}: the decoder reads "
            f"the object there; 'eat' only to {effect['eat']:.2f}.",
            "",
        )
    return feedback(
        False,
        "",
        f"patching '{word}' takes the log-odds from {clean:.2f} to {effect[word]:.2f}; patch every position in "
        "turn and take the one with the lowest log-odds.",
    )
