"""Notebook 10's measures of the pretrained encoder (MiniLM): where its heads look, and what each head is worth.

    masses = head_masses(cache, lengths, n_layers)   # per (layer, head): weight on previous, next, itself, [CLS], [SEP]
    paraphrase_cosines(model)                        # (12,) cosine of each PARAPHRASES pair's sentence embeddings
    ablation_drops(model)                            # per (layer, head): the mean paraphrase cosine without it

The model is `core.pretrained`, its traces `inspect.pretrained`; the head grid is `views.heads.plot_head_grid`.
"""

from __future__ import annotations

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from course_utils.core.places import trace_key
from course_utils.core.pretrained import PLACE, MiniLM, mean_pool
from course_utils.inspect.interventions import ablate_head
from course_utils.inspect.tracing import patch

# A small paraphrase set written for this course: pairs that say the same thing in other words.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("we want to eat apple", "we would like to eat an apple"),
    ("she drinks water", "she is drinking some water"),
    ("he reads a book", "he is reading a book"),
    ("they eat bread", "they are eating bread"),
    ("i would like to drink milk", "i want to drink milk"),
    ("the cat sleeps on the sofa", "the cat is asleep on the couch"),
    ("it is raining outside", "outside it is raining"),
    ("the train leaves at noon", "the train departs at midday"),
    ("he bought a new car", "he purchased a new car"),
    ("the shop is closed today", "today the store is closed"),
    ("we can eat apple", "we are able to eat apple"),
    ("she reads the newspaper", "she is reading the paper"),
)


# ------------------------------------------------------------------------------------------- heads

HEAD_MEASURES = ("previous", "next", "itself", "[CLS]", "[SEP]")


def head_masses(weights: dict[str, torch.Tensor], lengths: torch.Tensor, n_layers: int) -> pd.DataFrame:
    """Per (layer, head): the mean attention weight each real query puts on the previous token, the next token,
    itself, [CLS] (position 0) and [SEP] (the last real position), over every sentence of a batch.

    Taught in notebook 10 §4.
    """
    rows = []
    for layer in range(n_layers):
        w = weights[trace_key(PLACE, layer, "weights")].double()  # (B, H, T, T)
        sums = {m: torch.zeros(w.shape[1], dtype=torch.float64) for m in HEAD_MEASURES}
        counts = dict.fromkeys(HEAD_MEASURES, 0)
        for b, n in enumerate(int(x) for x in lengths):
            a, i = w[b, :, :n, :n], torch.arange(n)
            for m, rows_, cols in (
                ("previous", i[1:], i[1:] - 1),
                ("next", i[:-1], i[:-1] + 1),
                ("itself", i, i),
                ("[CLS]", i, torch.zeros_like(i)),
                ("[SEP]", i, torch.full_like(i, n - 1)),
            ):
                sums[m] += a[:, rows_, cols].sum(-1)
                counts[m] += len(rows_)
        for h in range(w.shape[1]):
            rows.append({"layer": layer, "head": h, **{m: float(sums[m][h] / counts[m]) for m in HEAD_MEASURES}})
    return pd.DataFrame(rows).set_index(["layer", "head"])


# ------------------------------------------------------------------------------------------- head ablation


@torch.no_grad()
def paraphrase_cosines(model: MiniLM, pairs=PARAPHRASES) -> torch.Tensor:
    """(n,) cosine between the two sentence embeddings of each pair (unit vectors: their dot product).

    Taught in notebook 10 §7; used in 10 §5.
    """
    a, b = model.embed([p[0] for p in pairs]), model.embed([p[1] for p in pairs])
    return (a * b).sum(1).double()


@torch.no_grad()
def ablation_drops(model: MiniLM, pairs=PARAPHRASES) -> pd.DataFrame:
    """Zero one head at a time (inspect.interventions.ablate_head on "encoder.{layer}.self.x1") and score the
    paraphrase pairs: one row per (layer, head) with the mean paraphrase cosine and its drop from the intact model.

    The same as `with patch(model, {key: ablate_head(h)}): paraphrase_cosines(model, pairs)` for every head, but
    each run starts from the intact input of the ablated layer (the layers before it are not changed).

    Taught in notebook 10 §7.
    """

    n = len(pairs)
    states, batch = model.hidden_states([p[0] for p in pairs] + [p[1] for p in pairs])
    key_mask = batch.mask[:, None, None, :]
    base = float(paraphrase_cosines(model, pairs).mean())
    rows = []
    for layer in range(model.cfg.n_layers):
        for head in range(model.cfg.n_heads):
            with patch(model, {trace_key(PLACE, layer, "x1"): ablate_head(head)}):
                x = states[layer]
                for block in model.layers[layer:]:
                    x = block(x, key_mask)
            e = mean_pool(x, batch.mask)
            cos = float((e[:n] * e[n:]).sum(1).double().mean())
            rows.append({"layer": layer, "head": head, "paraphrase cosine": cos, "drop": base - cos})
    return pd.DataFrame(rows).set_index(["layer", "head"])
