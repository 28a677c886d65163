"""Notebook 10's measures of the pretrained encoder (MiniLM): where its heads look, and what each head is worth.

    heads = head_batch(model, sentences)             # every layer's attention over many sentences, as a BatchTrace
    masses = head_masses(cache, lengths, n_layers)   # per (layer, head): weight on previous, next, itself, [CLS], [SEP]
    paraphrase_cosines(model)                        # (12,) cosine of each PARAPHRASES pair's sentence embeddings
    pair_margins(model)                              # per pair: paraphrase cosine, unrelated cosine, their margin
    ablation_drops(model)                            # per (layer, head): the paraphrase margin without it, and noise
    intervention_margins(model, {name: patches})     # the same for any patches (a head in every layer, uniform, ...)
    reordered_cosines(model, sentences)              # each sentence vs its reversed and shuffled word order
    patched_shares(model, s1, s2, {word: pos}, keys) # share of the s1 -> s2 embedding change one patched row moves

The model is `core.pretrained`, its traces `inspect.pretrained`; the head grid is `views.heads.plot_head_grid`.
"""

from __future__ import annotations

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from course_utils.core.places import trace_key
from course_utils.core.pretrained import PLACE, MiniLM, mean_pool
from course_utils.measures.attention_stats import BatchTrace
from course_utils.trace.interventions import copy_row_from
from course_utils.trace.pretrained import record_sentences, trace_sentence
from course_utils.trace.tracing import patch

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


def head_batch(model: MiniLM, sentences) -> BatchTrace:
    """One padded pass of `sentences`, recording every layer's attention weights and masks, as the BatchTrace that
    head_difference and mean_row_max (notebooks 04, 09) read. An encoder has one side: its lengths stand for both
    sides, and there are no word roles.

    Used in notebook 10 §5.
    """
    cache, batch = record_sentences(model, list(sentences), ["*.weights", "*.mask"])
    weights = {k: v for k, v in cache.items() if k.endswith(".weights")}
    masks = {k: v for k, v in cache.items() if k.endswith(".mask")}
    return BatchTrace(list(sentences), weights, masks, batch.lengths, batch.lengths, [], [], model.cfg.n_layers)


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


BOOTSTRAP_RESAMPLES = 2000  # resamples of the pairs for every noise scale of notebook 10 (seeded: the same digits)


def bootstrap_spread(values: torch.Tensor, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> float:
    """The standard deviation of the mean of `values` (one per pair) over resamples of the pairs with replacement
    (a seeded generator: the same resamples every run). How much a mean over these few pairs could move if another
    set of pairs like them had been written.
    Used by pair_margins' callers, ablation_drops and intervention_margins (notebook 10 §7, the noise scale of F7)."""
    values = torch.as_tensor(values, dtype=torch.float64)
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, len(values), (resamples, len(values)), generator=g)
    return float(values[idx].mean(1).std())


def margins_from_embeddings(a: torch.Tensor, b: torch.Tensor) -> pd.DataFrame:
    """(n, d) unit embeddings of the first and second sentence of n pairs -> one row per pair: its paraphrase
    cosine, its unrelated cosine (the mean cosine of its two sentences with the other pairs' partners: a_i·b_j and
    a_j·b_i, j ≠ i) and the margin (paraphrase minus unrelated). A change that makes every sentence more alike
    raises both cosines and leaves the margin where it was.
    Used by pair_margins, ablation_drops and intervention_margins (notebook 10 §7)."""
    c = (a @ b.T).double()
    n = len(c)
    off = ~torch.eye(n, dtype=torch.bool)
    unrelated = ((c * off).sum(1) + (c * off).sum(0)) / (2 * (n - 1))
    para = c.diagonal()
    return pd.DataFrame(
        {"paraphrase": para.numpy(), "unrelated": unrelated.numpy(), "margin": (para - unrelated).numpy()}
    ).rename_axis("pair")


@torch.no_grad()
def pair_margins(model: MiniLM, pairs=PARAPHRASES, patches: dict | None = None) -> pd.DataFrame:
    """One row per pair (margins_from_embeddings), the sentence embeddings computed under `patches`
    ({trace key or glob: fn}, inspect.tracing.patch; none: the intact model).
    Taught in notebook 10 §7 (the paraphrase margin)."""
    with patch(model, patches or {}):
        e = model.embed([p[0] for p in pairs] + [p[1] for p in pairs])
    return margins_from_embeddings(e[: len(pairs)], e[len(pairs) :])


def _drop_row(base: pd.DataFrame, after: pd.DataFrame) -> dict:
    drop = torch.tensor((base["margin"] - after["margin"]).to_numpy())
    noise = bootstrap_spread(drop)
    return {
        "paraphrase cosine": float(after["paraphrase"].mean()),
        "unrelated cosine": float(after["unrelated"].mean()),
        "margin": float(after["margin"].mean()),
        "margin drop": float(drop.mean()),
        "noise": noise,
        "drop / noise": float(drop.mean()) / noise if noise > 0 else float("nan"),  # no spread: no noise scale
    }


@torch.no_grad()
def ablation_drops(model: MiniLM, pairs=PARAPHRASES) -> pd.DataFrame:
    """Zero one head at a time (inspect.interventions.ablate_head on "encoder.{layer}.self.x1") and score the
    pairs: one row per (layer, head) with the mean paraphrase and unrelated cosines, the mean margin, its drop
    from the intact model ("margin drop", positive = worse), the bootstrap spread of that drop over the pairs
    ("noise", bootstrap_spread of the per-pair drops) and the drop in units of it.

    The same as `pair_margins(model, pairs, {key: ablate_head(h)})` for every head, but faster: each run starts
    from the intact input of the ablated layer (the layers before it are not changed), and the 12 heads of a layer
    run as one batch of 12 copies of the sentences, copy h with head h zeroed (half the time of 72 separate runs).

    Taught in notebook 10 §7.
    """

    n, n_heads = len(pairs), model.cfg.n_heads
    states, batch = model.hidden_states([p[0] for p in pairs] + [p[1] for p in pairs])
    size = 2 * n  # one copy of the sentences
    key_mask = batch.mask[:, None, None, :].repeat(n_heads, 1, 1, 1)
    mask = batch.mask.repeat(n_heads, 1)
    base = pair_margins(model, pairs)

    def zero_head_of_each_copy(x1: torch.Tensor, name: str = "") -> torch.Tensor:
        x1 = x1.clone()
        for head in range(n_heads):
            x1[head * size : (head + 1) * size, head] = 0.0  # copy `head` of the sentences: that head removed
        return x1

    rows = []
    for layer in range(model.cfg.n_layers):
        with patch(model, {trace_key(PLACE, layer, "x1"): zero_head_of_each_copy}):
            x = states[layer].repeat(n_heads, 1, 1)
            for block in model.layers[layer:]:
                x = block(x, key_mask)
        e = mean_pool(x, mask)
        for head in range(n_heads):
            copy = e[head * size : (head + 1) * size]
            rows.append({"layer": layer, "head": head, **_drop_row(base, margins_from_embeddings(copy[:n], copy[n:]))})
    return pd.DataFrame(rows).set_index(["layer", "head"])


@torch.no_grad()
def intervention_margins(model: MiniLM, interventions: dict[str, dict], pairs=PARAPHRASES) -> pd.DataFrame:
    """{name: patches} -> one row per intervention with the columns of ablation_drops (each a full forward pass
    under its patches, e.g. one head index removed in every layer, or uniform attention everywhere).
    Taught in notebook 10 §7 (the like-for-like reading of F7 and uniform attention)."""
    base = pair_margins(model, pairs)
    rows = {name: _drop_row(base, pair_margins(model, pairs, patches)) for name, patches in interventions.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("intervention")


# ------------------------------------------------------------------------------------------- word order


def shuffled_words(sentence: str, generator: torch.Generator) -> str:
    """The sentence's words in a random order other than the original (the generator decides; a one-word
    sentence is returned as it is). Used by reordered_cosines (notebook 10 §5)."""
    words = sentence.split()
    if len(set(words)) < 2:
        return sentence
    while True:
        order = torch.randperm(len(words), generator=generator).tolist()
        shuffled = " ".join(words[i] for i in order)
        if shuffled != sentence:
            return shuffled


@torch.no_grad()
def reordered_cosines(model: MiniLM, sentences, seed: int = 0) -> pd.DataFrame:
    """Per sentence: the cosine of its sentence embedding with that of its words reversed, and with its words in
    one random other order (shuffled_words, a generator seeded with `seed`).
    Taught in notebook 10 §5 (claim B8 over many sentences)."""
    g = torch.Generator().manual_seed(seed)
    sentences = list(sentences)
    reversed_ = [" ".join(s.split()[::-1]) for s in sentences]
    shuffled = [shuffled_words(s, g) for s in sentences]
    e = model.embed(sentences + reversed_ + shuffled).double()
    n = len(sentences)
    return pd.DataFrame(
        {
            "reversed": reversed_,
            "cos reversed": (e[:n] * e[n : 2 * n]).sum(1).numpy(),
            "shuffled": shuffled,
            "cos shuffled": (e[:n] * e[2 * n :]).sum(1).numpy(),
        },
        index=pd.Index(sentences, name="sentence"),
    )


# ------------------------------------------------------------------------------------------- activation patching


@torch.no_grad()
def patched_shares(model: MiniLM, sentence: str, other: str, positions: dict[str, int], keys) -> pd.DataFrame:
    """Activation patching on the sentence embedding: run `sentence` with one row (a word's position) of one hooked
    tensor replaced by the same row from a run of `other` (inspect.interventions.copy_row_from), and measure the
    share of the way from sentence's embedding e to other's that this moves it: (e_patched − e)·(e_other − e) /
    ‖e_other − e‖² (0: no move in that direction; 1: all the way). One row per word of `positions` ({word: its
    token position}), one column per trace key of `keys`. Both sentences must have the same number of tokens.
    Taught in notebook 10 §3 (is eat's context-dependent vector used?)."""
    keys = list(keys)
    source = trace_sentence(model, other, keys)
    e, e_other = model.embed([sentence, other]).double()
    d = e_other - e
    table = {}
    for word, position in positions.items():
        for key in keys:
            with patch(model, {key: copy_row_from(source, position)}):
                moved = model.embed([sentence]).double()[0] - e
            table.setdefault(key, {})[word] = float(moved @ d / (d @ d))
    return pd.DataFrame(table).rename_axis("patched word")
