"""The model files shipped in course_utils/models/ are what the code produces: retrain each and compare.

Notebooks load these files (identical bits on every machine, instant). Retraining on any CPU must
reproduce them: same history, same translations, same snapshot tokens, and weights and snapshots equal
within `STORED_ATOL` / `STORED_RTOL` of core/precision.py (1e-8): float64 training on another kernel path differs by
~1e-11, while a real change (one epoch more, another seed, another learning rate) moves the weights by far
more, and the tests below show that each of those fails the same comparison. The exceptions, the chaotic
"saturated" kind and seed 1 of the "blog" kind, are explained at CHAOTIC_ATOL.

Tiers (CONTRIBUTING.md): `make test` retrains seed 0 of every kind on the default kernel path (~5 s each; "learned"
seed 0 is the session's `course` fixture); the slow tier retrains every shipped file, seeds 1-4 included, on the
second CPU kernel path (`make test-portable`, or `make test-slow-portable` as .ci/run does; the whole file is
`portable`; each retrain is a unit of its own on the xdist workers: SPREAD in tests/conftest.py), and the checks
that a real change fails (31 epochs, another learning rate) run there too. `make test-slow SLOW="slow or browser"` also runs the slow ones on
the default path.
"""

import pytest
import torch

from course_utils.core.data import load_pairs
from course_utils.core.errors import ConfigError
from course_utils.core.model import ModelConfig, translate_batch
from course_utils.core.precision import STORED_ATOL, STORED_RTOL, close_to_stored, max_difference
from course_utils.measures.attention_stats import mean_row_max, trace_pairs
from course_utils.training.train import TrainConfig, train
from course_utils.training.zoo import SEEDS, STANDARD_MODELS, course_model, load_seeds, load_standard_model

pytestmark = pytest.mark.portable  # float-sensitive: also run on the second CPU kernel path (make test-portable)

SHIPPED = [(name, seed) for name, (_, seeds) in STANDARD_MODELS.items() for seed in seeds]
FIRST = [(name, seeds[0]) for name, (_, seeds) in STANDARD_MODELS.items()]  # one retrain per kind: make test

# The saturated kind (PyTorch's default init, notebook 03's lesson) trains chaotically, in float64 too: a difference
# of 1e-16 grows about tenfold every five steps from step ~20 on. Measured between the AVX2 and the portable kernels
# (seed 1): 3e-13 in the weights after step 1, 6e-11 after 20, 2e-7 after 40, 1e-3 after 90; after 30 epochs up to
# 2.3e-3 in the weights and 5.6e-3 in the snapshots' attention weights (seeds 0-4). Its retrain is compared within
# CHAOTIC_ATOL, about ten times that, and exactly on what training decides: the exact-match history and every
# translation. Notebooks only read the shipped file, so their outputs do not move with the CPU.
# Seed 1 of the blog's 1-layer model has loss spikes between epochs 10 and 28 (Adam on a small model; loss 0.022 at
# epoch 15, back up to 0.067 at epoch 22), and there a kernel-path difference grows too: 6e-12 in the weights after
# 10 epochs, 9e-11 after 20, 4.9e-6 after 30 (AVX2 vs the portable kernels; the other four seeds stay below 7e-12).
# It is compared within 5e-4, a hundred times that, and exactly on its exact-match history and translations; one
# epoch more moves its weights by 4.9e-3, ten times the tolerance (tests/test_shipped_models.py).
# Their per-epoch losses are compared within CHAOTIC_LOSS_RTOL: the largest relative difference measured is 1.4e-4
# (saturated seed 3, epoch 28: 0.0024381 shipped vs 0.0024384 retrained on an AVX-512 CPU), ten times that is 1e-3.
# Seed 3 of the one-map blog model ("blog_tied", notebook 03's B13) ends with loss spikes too (final loss 0.064, the
# others 0.002-0.03): AVX2 vs the portable kernels differ by 1.46e-5 in its weights after 30 epochs, measured once;
# it gets the blog seed's 5e-4 (about 34 times that) and the same exact checks.
CHAOTIC_ATOL = {"saturated": 5e-2, ("blog", 1): 5e-4, ("blog_tied", 3): 5e-4}
CHAOTIC_LOSS_RTOL = 1e-3


def chaotic_atol(name, seed):
    """The tolerance of a chaotic retrain (by kind, or by kind and seed), or None for the ordinary STORED_ATOL."""
    return CHAOTIC_ATOL.get(name, CHAOTIC_ATOL.get((name, seed)))


def check_reproduces_shipped_model(name, seed, request):
    """Retrain (name, seed) and compare it with its file in course_utils/models/ (see tests/test_shipped_models.py)."""
    shipped = load_standard_model(name, seed)
    # learned seed 0 is the session's `course` fixture (trained once per test process), the others train here
    fresh = request.getfixturevalue("course") if (name, seed) == ("learned", 0) else course_model(name, seed)
    assert shipped.model.cfg == fresh.model.cfg
    assert shipped.train_config == fresh.train_config and shipped.train_config.seed == seed
    assert shipped.model.src_vocab.itos == fresh.model.src_vocab.itos
    assert shipped.model.tgt_vocab.itos == fresh.model.tgt_vocab.itos
    a, b = shipped.model.state_dict(), fresh.model.state_dict()
    assert all(t.dtype == torch.float64 for t in a.values()), "shipped weights are float64"
    atol = chaotic_atol(name, seed)
    chaotic = atol is not None
    if chaotic:
        assert max_difference(a, b) <= atol
    else:
        assert_weights_match(a, b)
    for h1, h2 in zip(shipped.history, fresh.history, strict=True):
        assert h1["epoch"] == h2["epoch"] and h1["train_exact"] == h2["train_exact"]
        assert h1["loss"] == pytest.approx(
            h2["loss"], rel=CHAOTIC_LOSS_RTOL if chaotic else STORED_RTOL, abs=STORED_ATOL
        )
    sentences = [p.english for p in load_pairs()]
    assert translate_batch(shipped.model, sentences) == translate_batch(fresh.model, sentences)
    assert shipped.snapshots.keys() == fresh.snapshots.keys()
    for epoch, snap in shipped.snapshots.items():
        assert snap.keys() == fresh.snapshots[epoch].keys()
        for sentence, trace in snap.items():
            other = fresh.snapshots[epoch][sentence]
            assert (trace.src_tokens, trace.tgt_tokens) == (other.src_tokens, other.tgt_tokens)
            if chaotic:  # the attention weights, which is what notebook 03 reads of these snapshots
                weights = [k for k in trace.keys() if k.endswith(".weights")]
                assert max(max_difference(trace[k], other[k]) for k in weights) <= atol
            else:
                assert close_to_stored(trace.tensors, other.tensors), (epoch, sentence)


def assert_weights_match(shipped: dict, fresh: dict) -> None:
    """The retrain check: every weight within STORED_ATOL / STORED_RTOL of the shipped one."""
    assert shipped.keys() == fresh.keys()
    bad = [k for k in shipped if not close_to_stored(shipped[k], fresh[k])]
    assert not bad, f"{len(bad)} weights differ, largest difference {max_difference(shipped, fresh):.3g}: {bad[:3]}"


def retrain_cases():
    """Every shipped (kind, seed); all but each kind's first seed in the slow tier."""
    return [
        pytest.param(name, seed, id=f"{name}-seed{seed}", marks=[] if (name, seed) in FIRST else [pytest.mark.slow])
        for name, seed in SHIPPED
    ]


@pytest.mark.parametrize(("name", "seed"), retrain_cases())
def test_code_reproduces_shipped_model(name, seed, request):
    check_reproduces_shipped_model(name, seed, request)


def test_every_shipped_model_is_retrained_and_each_kind_in_make_test():
    params = retrain_cases()
    assert sorted(tuple(p.values) for p in params) == sorted(SHIPPED) and len(set(SHIPPED)) == len(SHIPPED)
    fast = {tuple(p.values) for p in params if not any(m.name == "slow" for m in p.marks)}
    assert fast == set(FIRST) and {name for name, _ in fast} == set(STANDARD_MODELS)


def _trained(**changes) -> dict:
    config = TrainConfig(**{"snapshot_epochs": (), **changes})
    return train(ModelConfig(), config, probes={}, log=None).model.state_dict()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param("one epoch more", marks=pytest.mark.slow),  # a 31-epoch training: the slow tier
        "another seed",
        pytest.param("another learning rate", marks=pytest.mark.slow),  # a 30-epoch training: the slow tier
    ],
)
def test_a_real_change_fails_the_retrain_check(change):
    """The retrain tolerance is not so wide that it lets a different model through: each change moves some
    weight by more than 1e3 times the tolerance and fails assert_weights_match against the shipped model, which the
    unchanged retrain passes (test_code_reproduces_shipped_model[learned-seed0], the same check on the same file)."""
    shipped = load_standard_model("learned", 0).model.state_dict()
    other = {
        "one epoch more": lambda: _trained(epochs=31),
        "another seed": lambda: load_standard_model("learned", 1).model.state_dict(),
        "another learning rate": lambda: _trained(lr=4.4e-3),
    }[change]()
    assert max_difference(shipped, other) > 1e3 * STORED_ATOL
    with pytest.raises(AssertionError, match="weights differ"):  # the changed one does not pass
        assert_weights_match(shipped, other)


@pytest.mark.slow  # a 31-epoch training
def test_one_epoch_more_fails_the_chaotic_blog_seeds_wider_check():
    """Seed 1 of the blog model is compared within a wider tolerance (CHAOTIC_ATOL); one epoch more still fails it."""
    shipped = load_standard_model("blog", 1)
    config = TrainConfig(seed=1, epochs=31, snapshot_epochs=())
    longer = train(shipped.model.cfg, config, probes={}, log=None).model.state_dict()
    assert max_difference(shipped.model.state_dict(), longer) > 5 * chaotic_atol("blog", 1)


def test_seeds_differ():
    """Five seeds are five different models, not five copies."""
    seeds = load_seeds("learned")
    assert tuple(seeds) == SEEDS
    w = [r.model.src_embed.tok.weight for r in seeds.values()]
    assert all(not torch.allclose(w[0], x) for x in w[1:])


@pytest.mark.parametrize("name", ["learned", "blog", "one_head", "saturated"])
def test_every_seed_translates_training_pairs_exactly(name):
    pairs = load_pairs("train")
    for seed, result in load_seeds(name).items():
        got = translate_batch(result.model, [p.english for p in pairs])
        assert got == [p.german.split() for p in pairs], f"{name} seed {seed}"
        assert result.history[-1]["train_exact"] == 1.0


def test_standard_model_has_soft_first_layer_attention_on_every_seed():
    """The blog's (Xavier) init: layer-0 self-attention mixes (mean row maximum < 0.92 encoder,
    < 0.97 decoder rows that may see >= 3 positions); PyTorch's default init saturates it (> 0.99)."""
    pairs = load_pairs("train")
    for seed, result in load_seeds("learned").items():
        batch = trace_pairs(result.model, pairs)
        assert mean_row_max(batch, "encoder self", 0) < 0.92, seed
        assert mean_row_max(batch, "decoder self", 0, min_keys=3) < 0.97, seed
    for seed, result in load_seeds("saturated").items():
        batch = trace_pairs(result.model, pairs)
        assert mean_row_max(batch, "encoder self", 0) > 0.99, seed
        assert mean_row_max(batch, "decoder self", 0, min_keys=3) > 0.99, seed


def test_unknown_standard_model_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown standard model 'rotary'; choose one of"):
        load_standard_model("rotary")
    with pytest.raises(ConfigError, match=r"shipped for seeds \(0,\); got seed 3"):
        load_standard_model("none", 3)


def test_missing_model_file_says_it_does_not_exist(tmp_path):
    from course_utils.training.files import load_course_model

    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_course_model(tmp_path / "nope.pt")


@pytest.mark.parametrize(("name", "seed"), [("learned", 3), ("blog", 2)])
def test_the_untrained_baseline_is_where_training_starts(name, seed):
    """untrained_standard_model is the shipped model's own starting point: training it for 0 epochs gives the same
    weights; it is not the trained model."""
    from course_utils.training.zoo import STANDARD_MODELS, untrained_standard_model

    untrained = untrained_standard_model(name, seed)
    cfg = STANDARD_MODELS[name][0]
    start = train(cfg, TrainConfig(seed=seed, epochs=0, snapshot_epochs=()), probes={}, log=None).model
    assert not untrained.training
    assert all(torch.equal(a, b) for a, b in zip(untrained.state_dict().values(), start.state_dict().values()))
    assert max_difference(untrained.state_dict(), load_standard_model(name, seed).model.state_dict()) > 0.1
