"""course_utils.pretrained: all-MiniLM-L6-v2 run by the course's own attention (notebook 10).

The weights are the pinned ones (sha256), the course's code gives the same hidden states as transformers'
BertModel and the same sentence embeddings as sentence_transformers (both cast to float64, within 1e-10),
offline, for a padded batch; tracing
works with the course's trace keys; bad input raises course errors.
"""

from __future__ import annotations

import os
import socket

import pytest
import torch

from course_utils.core.errors import (
    CourseInputError,
    EmptySentenceError,
    IncompatibleModelFileError,
    SentenceTooLongError,
)
from course_utils.core.places import VECTOR_KINDS, trace_key
from course_utils.core.pretrained import MODEL_SHA256, check_weights, file_sha256, load_minilm, model_dir
from course_utils.measures.pretrained import (
    HEAD_MEASURES,
    PARAPHRASES,
    ablation_drops,
    bootstrap_spread,
    head_batch,
    head_masses,
    intervention_margins,
    pair_margins,
    paraphrase_cosines,
    patched_shares,
    reordered_cosines,
    shuffled_words,
)
from course_utils.measures.weight_maps import head_bilinear
from course_utils.trace.pretrained import record_sentences, trace_sentence
from course_utils.trace.tracing import Trace

pytestmark = pytest.mark.portable  # float-sensitive: also run on the second CPU kernel path (make test-portable)

# Sentences of different lengths, so the batch is padded (3 to 13 tokens).
SENTENCES = [
    "we want to eat apple",
    "hi",
    "she would like to read the newspaper in the garden every evening",
    "apple eat can we",
]
TOL = 1e-10  # both sides in float64 (the course's MiniLM is; the references are cast): float32 would need 1e-5
# Measured when this test was written (torch 2.13.0, transformers 5.23.0, sentence-transformers 6.2.0, 1 thread):
# hidden states, real tokens: at most 3.8e-06 (output of layer 4); sentence embeddings: at most 1.9e-07.


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return load_minilm()


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test: loading must work on a machine without internet."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_weights_have_the_pinned_sha256():
    path = model_dir() / "model.safetensors"
    assert file_sha256(path) == MODEL_SHA256
    assert MODEL_SHA256 == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    assert check_weights() == path


def test_a_file_with_another_hash_is_refused_before_use(tmp_path):
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"not the model")
    with pytest.raises(IncompatibleModelFileError, match="sha256"):
        check_weights(bad)
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((model_dir() / name).read_bytes())
    with pytest.raises(IncompatibleModelFileError, match="sha256"):
        load_minilm(str(tmp_path))


def test_loading_opens_no_socket(no_network):
    fresh = load_minilm.__wrapped__()  # not the cached model: read the files again, network refused
    assert fresh.embed(["we eat bread"]).shape == (1, 384)


def test_offline_switches_are_set():
    for switch in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        assert os.environ[switch] == "1"


def test_model_shape_and_tokens(model, no_network):
    cfg = model.cfg
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_ff) == (6, 12, 384, 1536)
    batch = model.encode_text(SENTENCES)
    assert batch.tokens[0] == ["[CLS]", "we", "want", "to", "eat", "apple", "[SEP]"]
    assert batch.tokens[1] == ["[CLS]", "hi", "[SEP]"]
    assert batch.ids.shape == (4, max(len(t) for t in batch.tokens))
    assert batch.lengths.tolist() == [len(t) for t in batch.tokens]
    assert not batch.mask[1, 3:].any() and (batch.ids[1, 3:] == 0).all()  # padding


def test_hidden_states_equal_transformers_bertmodel(model, no_network):
    from transformers import BertModel

    ref = (
        BertModel.from_pretrained(
            str(model_dir()), use_kernels=False, attn_implementation="eager", local_files_only=True
        )
        .eval()
        .double()
    )
    assert next(model.parameters()).dtype == torch.float64  # the course's MiniLM computes in float64
    ours, batch = model.hidden_states(SENTENCES)
    with torch.no_grad():
        theirs = ref(
            input_ids=batch.ids,
            attention_mask=batch.mask.long(),
            token_type_ids=batch.token_types,
            output_hidden_states=True,
            output_attentions=True,
        )
    assert len(ours) == len(theirs.hidden_states) == 7  # embeddings, then layers 1-6
    errors = [float((a - b)[batch.mask].abs().max()) for a, b in zip(ours, theirs.hidden_states)]
    assert max(errors) <= TOL, errors
    cache, _ = record_sentences(model, batch, "*.weights")
    for layer, w in enumerate(theirs.attentions):  # the attention weights agree too (real queries)
        ours_w = cache[trace_key("encoder self", layer, "weights")]
        diff = (ours_w - w).abs().amax((1, 3))[batch.mask]
        assert float(diff.max()) <= TOL


def test_sentence_embeddings_equal_sentence_transformers(model, no_network):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True).double()
    theirs = st.encode(SENTENCES, convert_to_tensor=True, batch_size=len(SENTENCES))
    ours = model.embed(SENTENCES)
    assert ours.shape == (4, 384)
    assert ours.dtype == torch.float64 and torch.allclose(
        ours.norm(dim=1), torch.ones(4, dtype=torch.float64), atol=1e-12
    )
    assert float((ours - theirs.cpu()).abs().max()) <= TOL
    # one at a time (no padding) gives the same vectors as the padded batch
    alone = torch.cat([model.embed([s]) for s in SENTENCES])
    assert float((alone - ours).abs().max()) <= TOL


def test_course_attention_runs_the_layers(model):
    layer = model.layers[0]
    assert type(layer.self_attn).__name__ == "MultiHeadAttention"
    assert layer.self_attn.__module__ == "course_utils.core.attention"


def test_tracing_uses_the_course_keys_and_kinds(model):
    trace = trace_sentence(model, "we want to eat apple")
    assert isinstance(trace, Trace)
    T = len(trace.src_tokens)
    assert trace.src_tokens[0] == "[CLS]" and trace.src_tokens[-1] == "[SEP]" and T == 7
    assert trace["encoder.embed"].shape == (T, 384)
    for layer in range(6):
        for kind in VECTOR_KINDS:
            key = trace_key("encoder self", layer, kind)
            assert key in trace.keys(), key
            assert trace.vectors(key).shape == (T, 384)
            assert trace.tokens(key) == trace.src_tokens
        w = trace[trace_key("encoder self", layer, "weights")]
        assert w.shape == (12, T, T) and torch.allclose(w.sum(-1), torch.ones(12, T), atol=1e-5)
    assert not any(k.startswith("decoder") for k in trace.keys())
    hidden, _ = model.hidden_states(["we want to eat apple"])
    assert torch.equal(trace[trace_key("encoder self", 5, "layer_out")], hidden[6][0])


def test_head_ablation_through_tracing_patch_changes_the_embedding(model):
    from course_utils.trace.interventions import ablate_head
    from course_utils.trace.tracing import patch

    base = model.embed(SENTENCES)
    with patch(model, {"encoder.0.self.x1": ablate_head(3)}):
        ablated = model.embed(SENTENCES)
    assert float((base - ablated).abs().max()) > 1e-3
    assert torch.equal(model.embed(SENTENCES), base)  # the patch is gone after the block


def head_masses_by_hand(model, sentences) -> dict[tuple[int, int], dict[str, float]]:
    """{(layer, head): {measure: mean weight}} from each sentence traced alone (no padding at all), the weights
    read one by one: previous w[i, i-1] (i >= 1), next w[i, i+1] (i < T-1), itself w[i, i], [CLS] w[i, 0],
    [SEP] w[i, T-1], each averaged over every such query of every sentence."""
    sums: dict = {}
    for s in sentences:
        trace = trace_sentence(model, s)
        T = len(trace.src_tokens)
        for layer in range(model.cfg.n_layers):
            w = trace[trace_key("encoder self", layer, "weights")].double()
            for h in range(w.shape[0]):
                cells = {
                    "previous": [(i, i - 1) for i in range(1, T)],
                    "next": [(i, i + 1) for i in range(T - 1)],
                    "itself": [(i, i) for i in range(T)],
                    "[CLS]": [(i, 0) for i in range(T)],
                    "[SEP]": [(i, T - 1) for i in range(T)],
                }
                for m, ij in cells.items():
                    total, n = sums.setdefault((layer, h, m), [0.0, 0])
                    sums[(layer, h, m)] = [total + sum(float(w[h, i, j]) for i, j in ij), n + len(ij)]
    out: dict = {}
    for (layer, h, m), (total, n) in sums.items():
        out.setdefault((layer, h), {})[m] = total / n
    return out


def check_head_masses(table, by_hand) -> None:
    """head_masses of the padded batch equals the by-hand means of the unpadded sentences, for all 72 heads."""
    assert list(table.columns) == list(HEAD_MEASURES) and len(table) == len(by_hand) == 72
    worst = max(abs(table.loc[key, m] - v) for key, row in by_hand.items() for m, v in row.items())
    assert worst < 1e-9, f"head_masses differs from the weights by {worst:.3g}"


def check_one_previous_token_head(table) -> None:
    """Notebook 10's finding on these four sentences: head (0, 2) is a pure previous-token head (0.9996 of its
    weight on the token before; the runner-up head 0.50), and no head mainly attends to itself (at most 0.25)."""
    previous = table["previous"]
    assert previous.idxmax() == (0, 2) and previous.max() > 0.99, previous.idxmax()
    assert previous.drop((0, 2)).max() < 0.6
    assert table["itself"].max() < 0.3


def test_head_masses_equal_the_weights_and_find_the_previous_token_head(model):
    cache, batch = record_sentences(model, SENTENCES, "*.weights")
    table = head_masses(cache, batch.lengths, model.cfg.n_layers)
    check_head_masses(table, head_masses_by_hand(model, SENTENCES))
    check_one_previous_token_head(table)


def test_head_batch_is_the_recording_as_a_batch_trace(model):
    """head_batch holds what record_sentences records, both sides' lengths the sentences' real lengths, so notebook
    10 §5's head_difference and mean_row_max read MiniLM's heads as they read the course model's."""
    from course_utils.measures.attention_stats import head_difference, mean_row_max

    heads = head_batch(model, SENTENCES)
    cache, batch = record_sentences(model, SENTENCES, ["*.weights", "*.mask"])
    assert heads.weights.keys() == {k for k in cache if k.endswith(".weights")} and heads.n_layers == 6
    assert all(torch.equal(heads.weights[k], cache[k]) for k in heads.weights)
    assert all(torch.equal(heads.masks[k], cache[k]) for k in heads.masks) and len(heads.masks) == 6
    assert torch.equal(heads.src_len, batch.lengths) and torch.equal(heads.tgt_len, batch.lengths)
    w = cache[trace_key("encoder self", 0, "weights")].double()
    n = int(batch.lengths[0])
    by_hand = w[0, :, :n, :n].amax(-1).mean()  # one sentence: the row max averaged over heads and real queries
    assert abs(mean_row_max(head_batch(model, SENTENCES[:1]), "encoder self", 0) - float(by_hand)) < 1e-12
    assert 0 < head_difference(heads, "encoder self", 0) < 1


def test_the_head_mass_checks_reject_wrong_masses(model):
    """Broken copies: head_masses fed the padded length for every sentence (padding counted as real queries), and
    a table with "previous" and "next" swapped (the next-token direction: at most 0.57, head (1, 8))."""
    cache, batch = record_sentences(model, SENTENCES, "*.weights")
    padded = head_masses(cache, torch.full_like(batch.lengths, batch.ids.shape[1]), model.cfg.n_layers)
    with pytest.raises(AssertionError, match="differs from the weights"):
        check_head_masses(padded, head_masses_by_hand(model, SENTENCES))
    swapped = head_masses(cache, batch.lengths, model.cfg.n_layers).rename(
        columns={"previous": "next", "next": "previous"}
    )
    with pytest.raises(AssertionError):
        check_one_previous_token_head(swapped)


def test_head_bilinear_gives_the_head_scores(model):
    trace = trace_sentence(model, "we want to eat apple", ["encoder.0.self.q_input", "*.scores"])
    x = trace["encoder.0.self.q_input"].double()
    attn = model.layers[0].self_attn
    M = head_bilinear(model, 0, 2)
    dh = attn.d_head
    bq, bk = attn.w_q.bias[2 * dh : 3 * dh].double(), attn.w_k.bias[2 * dh : 3 * dh].double()
    wq, wk = attn.w_q.weight[2 * dh : 3 * dh].double(), attn.w_k.weight[2 * dh : 3 * dh].double()
    scores = (x @ M @ x.T + (x @ wq.T @ bk)[:, None] + (bq @ wk @ x.T)[None, :] + bq @ bk) / dh**0.5
    assert torch.allclose(scores, trace["encoder.0.self.scores"][2], atol=1e-10)
    assert int(torch.linalg.matrix_rank(M)) == dh


@pytest.mark.parametrize(
    "bad, error",
    [
        ("", EmptySentenceError),
        ("   ", EmptySentenceError),
        (None, CourseInputError),
        ([], EmptySentenceError),
        (["fine", 3], CourseInputError),
        (" ".join(["word"] * 300), SentenceTooLongError),
    ],
)
def test_bad_input_raises_course_errors(model, bad, error):
    with pytest.raises(error) as info:
        model.embed(bad)
    assert isinstance(info.value, CourseInputError) and str(info.value)
    with pytest.raises(CourseInputError):
        trace_sentence(model, bad)


def margins_by_hand(model, pairs, patches=None):
    """Mean paraphrase cosine, mean unrelated cosine (every a_i·b_j and a_j·b_i, i != j, counted once per pair
    member) and the margin, each embedding computed alone under `patches`."""
    from course_utils.trace.tracing import patch

    with patch(model, patches or {}):
        a = [model.embed([p[0]])[0] for p in pairs]
        b = [model.embed([p[1]])[0] for p in pairs]
    n = len(pairs)
    para = [float(a[i] @ b[i]) for i in range(n)]
    unrel = [sum(float(a[i] @ b[j]) + float(a[j] @ b[i]) for j in range(n) if j != i) / (2 * (n - 1)) for i in range(n)]
    return sum(para) / n, sum(unrel) / n, sum(p - u for p, u in zip(para, unrel)) / n


def test_pair_margins_equal_the_sentences_embedded_alone(model):
    pairs = PARAPHRASES[:4]
    table = pair_margins(model, pairs)
    para, unrel, margin = margins_by_hand(model, pairs)
    assert abs(table["paraphrase"].mean() - para) < 1e-9 and abs(table["unrelated"].mean() - unrel) < 1e-9
    assert abs(table["margin"].mean() - margin) < 1e-9
    assert torch.allclose(torch.tensor(table["paraphrase"].to_numpy()), paraphrase_cosines(model, pairs), atol=1e-12)


def test_ablation_drops_equal_the_plain_patched_run(model):
    from course_utils.trace.interventions import ablate_head

    pairs = PARAPHRASES[:3]
    table = ablation_drops(model, pairs)
    assert table.shape == (72, 6)
    base = margins_by_hand(model, pairs)
    for layer, head in [(0, 2), (3, 7), (5, 11)]:
        para, unrel, margin = margins_by_hand(model, pairs, {f"encoder.{layer}.self.x1": ablate_head(head)})
        row = table.loc[(layer, head)]
        assert abs(row["paraphrase cosine"] - para) < 1e-9 and abs(row["unrelated cosine"] - unrel) < 1e-9
        assert abs(row["margin drop"] - (base[2] - margin)) < 1e-9
        assert abs(row["drop / noise"] * row["noise"] - row["margin drop"]) < 1e-12


def test_intervention_margins_equal_the_plain_patched_run(model):
    from course_utils.trace.interventions import ablate_head, uniform_attention
    from course_utils.trace.pretrained import ablate_heads

    pairs = PARAPHRASES[:3]
    interventions = {
        "head 3 everywhere": {"encoder.*.self.x1": ablate_head(3)},
        "heads 3 and 5 everywhere": {"encoder.*.self.x1": ablate_heads([3, 5])},
        "uniform": {"encoder.*.self.weights": uniform_attention},
        "nothing": {},
    }
    table = intervention_margins(model, interventions, pairs)
    for name, patches in interventions.items():
        assert abs(table.loc[name, "margin"] - margins_by_hand(model, pairs, patches)[2]) < 1e-9
    assert abs(table.loc["nothing", "margin drop"]) < 1e-12
    assert table.loc["heads 3 and 5 everywhere", "margin"] != table.loc["head 3 everywhere", "margin"]
    with pytest.raises(IndexError):
        ablate_heads([12])(torch.zeros(1, 12, 2, 32))


def test_bootstrap_spread_is_seeded_and_scales_like_a_standard_error():
    values = torch.arange(12, dtype=torch.float64)
    assert bootstrap_spread(values) == bootstrap_spread(values)  # the same resamples every call
    assert bootstrap_spread(torch.full((12,), 0.3, dtype=torch.float64)) < 1e-15  # no spread: none
    se = float(values.std(unbiased=False)) / 12**0.5  # the bootstrap spread of a mean is about its standard error
    assert abs(bootstrap_spread(values) - se) < 0.1 * se


def test_reordered_cosines_and_shuffles(model):
    g = torch.Generator().manual_seed(0)
    for s in ["we can eat apple", "he bought a new car"]:
        shuffled = shuffled_words(s, g)
        assert shuffled != s and sorted(shuffled.split()) == sorted(s.split())
    assert shuffled_words("hi", g) == "hi"
    table = reordered_cosines(model, ["we can eat apple", "he bought a new car"])
    assert table.loc["we can eat apple", "reversed"] == "apple eat can we"
    e = model.embed(["we can eat apple", "apple eat can we"]).double()
    assert abs(table.loc["we can eat apple", "cos reversed"] - float(e[0] @ e[1])) < 1e-12


def test_patched_shares_are_zero_for_an_unchanged_row_and_one_for_the_only_difference(model):
    shares = patched_shares(
        model,
        "we want to eat apple",
        "we want to eat bread",
        {"eat": 4, "apple": 5},
        ["encoder.embed", "encoder.2.layer_out"],
    )
    assert abs(shares.loc["eat", "encoder.embed"]) < 1e-12  # the same token at the same position: no change
    assert abs(shares.loc["apple", "encoder.embed"] - 1) < 1e-9  # the only differing input: the other sentence
    assert 0 < shares.loc["eat", "encoder.2.layer_out"] < shares.loc["apple", "encoder.2.layer_out"]
