"""Bad input gets a clear course error (all of them ValueErrors) instead of a deep traceback."""

from __future__ import annotations

import pytest
import torch

from course_utils.core.attention import MultiHeadAttention, masked_softmax, scaled_dot_product_attention
from course_utils.core.data import encode_source, encode_target, load_pairs, load_probes
from course_utils.core.errors import (
    ConfigError,
    CourseInputError,
    EmptySentenceError,
    SentenceTooLongError,
    ShapeError,
    SpecialTokenError,
    UnknownWordError,
)
from course_utils.core.model import ModelConfig, translate, translate_batch
from course_utils.trace.tracing import run_with_trace

# ---------------------------------------------------------------- sentences


def test_unknown_word_names_it_and_suggests_close_words(untrained):
    with pytest.raises(UnknownWordError) as err:
        translate(untrained, "i eat aple")
    e = err.value
    msg = str(e)
    assert isinstance(e, ValueError) and isinstance(e, CourseInputError)
    assert "'aple'" in msg and "English" in msg
    assert "apple" in e.suggestions and "apple" in msg.split("Known words")[0]  # suggested, not just listed
    assert e.word == "aple"
    assert not msg.startswith('"')  # not quoted like a plain KeyError


def test_unknown_word_without_close_words(untrained):
    with pytest.raises(ValueError, match="'xyzzyq'") as err:
        translate(untrained, "we eat xyzzyq")
    assert err.value.suggestions == [] and "Did you mean" not in str(err.value)


def test_unknown_word_is_also_a_key_error(untrained):
    with pytest.raises(KeyError):
        translate(untrained, "we eat pizza")


def test_unknown_german_word_in_target(untrained):
    with pytest.raises(UnknownWordError, match="German.*'brod'.*brot"):
        run_with_trace(untrained, "we eat bread", target="wir essen brod")


def test_unknown_word_is_found_in_a_batch(untrained):
    with pytest.raises(UnknownWordError, match="'aple'"):
        translate_batch(untrained, ["we eat bread", "i eat aple"])


@pytest.mark.parametrize("sentence", ["", "   ", "\t\n", []])
def test_empty_sentence(untrained, sentence):
    with pytest.raises(EmptySentenceError) as err:
        translate(untrained, sentence)
    assert isinstance(err.value, ValueError) and "empty" in str(err.value)


def test_sentence_too_long(untrained):
    max_len = untrained.cfg.max_len
    words = ["we", "eat", "bread"] * max_len
    ok = words[:max_len]
    assert isinstance(translate(untrained, " ".join(ok)), list)  # exactly max_len words: fine
    with pytest.raises(SentenceTooLongError) as err:
        translate(untrained, " ".join(words[: max_len + 1]))
    msg = str(err.value)
    assert isinstance(err.value, ValueError) and str(max_len + 1) in msg and str(max_len) in msg
    with pytest.raises(SentenceTooLongError):
        encode_source(untrained.src_vocab, words[: max_len + 1], max_len)


def test_target_too_long(untrained):
    max_len = untrained.cfg.max_len
    assert len(encode_target(untrained.tgt_vocab, ["brot"] * (max_len - 1), max_len)) == max_len + 1  # <bos> .. <eos>
    with pytest.raises(SentenceTooLongError):
        encode_target(untrained.tgt_vocab, ["brot"] * max_len, max_len)


def test_unknown_probe_set():
    with pytest.raises(ValueError, match="unknown probe set 'wordorder'") as err:
        load_probes("wordorder")
    assert "word_order" in str(err.value)  # the valid names are listed


def test_unknown_split():
    with pytest.raises(ValueError, match="split"):
        load_pairs("test")


# ---------------------------------------------------------------- configurations


@pytest.mark.parametrize("d_model, n_heads", [(64, 3), (10, 4), (8, 0), (8, -2)])
def test_d_model_not_divisible_by_n_heads(d_model, n_heads):
    with pytest.raises(ConfigError, match=rf"d_model \({d_model}\).*n_heads \({n_heads}\)"):
        MultiHeadAttention(d_model, n_heads)
    with pytest.raises(ConfigError, match=rf"d_model \({d_model}\).*n_heads \({n_heads}\)"):
        ModelConfig(d_model=d_model, n_heads=n_heads)


def test_mha_error_suggests_valid_head_counts():
    with pytest.raises(ConfigError) as err:
        MultiHeadAttention(12, 5)
    suggested = [int(x) for x in str(err.value).split("[")[1].split("]")[0].split(",")]
    assert suggested and all(12 % h == 0 for h in suggested)


@pytest.mark.parametrize("bad", ["rotary", "Learned", "", None])
def test_unknown_pos_encoding(bad):
    with pytest.raises(ConfigError, match="pos_encoding") as err:
        ModelConfig(pos_encoding=bad)
    assert isinstance(err.value, ValueError)
    assert all(k in str(err.value) for k in ("learned", "sinusoidal", "none"))


@pytest.mark.parametrize("kwargs", [dict(n_layers=0), dict(max_len=1)])
def test_other_bad_configs(kwargs):
    with pytest.raises(ConfigError):
        ModelConfig(**kwargs)


# ---------------------------------------------------------------- shapes and masks


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape, words",
    [
        ((2, 3, 4), (2, 5, 6), (2, 5, 6), "same feature size"),  # q and k feature sizes differ
        ((2, 3, 4), (2, 5, 4), (2, 6, 4), "one row per key"),  # Tk of k and v differ
        ((2, 3, 4), (3, 5, 4), (3, 5, 4), "batch/head dims"),  # batch sizes differ
        ((2, 2, 3, 4), (2, 3, 5, 4), (2, 3, 5, 4), "batch/head dims"),  # head counts differ
        ((4,), (5, 4), (5, 4), "at least 2 dims"),
    ],
)
def test_sdpa_shape_errors(q_shape, k_shape, v_shape, words):
    q, k, v = torch.randn(q_shape), torch.randn(k_shape), torch.randn(v_shape)
    with pytest.raises(ShapeError, match=words) as err:
        scaled_dot_product_attention(q, k, v)
    assert isinstance(err.value, ValueError)
    assert str(tuple(q_shape)) in str(err.value) or str(tuple(k_shape)) in str(err.value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8])
def test_non_bool_mask(dtype):
    q = torch.randn(3, 4)
    with pytest.raises(ShapeError, match="bool"):
        scaled_dot_product_attention(q, q, q, torch.ones(3, 3, dtype=dtype))
    with pytest.raises(ShapeError, match="bool"):
        MultiHeadAttention(4, 2)(q[None], q[None], q[None], torch.ones(3, 3, dtype=dtype))


def test_mask_that_does_not_broadcast():
    q = torch.randn(2, 3, 4)
    with pytest.raises(ShapeError, match="broadcast"):
        scaled_dot_product_attention(q, q, q, torch.ones(2, 4, 3, dtype=torch.bool))
    with pytest.raises(ShapeError, match="broadcast"):
        masked_softmax(torch.randn(3, 3), torch.ones(4, dtype=torch.bool))


@pytest.mark.parametrize(
    "query, key, value, words",
    [
        ((2, 3, 8), (2, 5, 6), (2, 5, 6), "d_model=8"),  # feature size of key/value
        ((2, 3, 6), (2, 5, 8), (2, 5, 8), "d_model=8"),  # feature size of query
        ((2, 3, 8), (2, 5, 8), (2, 4, 8), "same \\(B, Tk\\)"),  # Tk mismatch
        ((2, 3, 8), (3, 5, 8), (3, 5, 8), "same B"),  # batch mismatch
        ((3, 8), (5, 8), (5, 8), "\\(B, T, d_model\\)"),  # no batch dim
    ],
)
def test_mha_shape_errors(query, key, value, words):
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ShapeError, match=words):
        mha(torch.randn(query), torch.randn(key), torch.randn(value))


# ---- input edges a learner meets when typing into translate ----


def test_translate_none_is_a_type_error(untrained):
    with pytest.raises(TypeError, match="must be a string"):
        translate(untrained, None)
    with pytest.raises(TypeError, match="must hold words"):
        translate(untrained, ["we", 3])


@pytest.mark.parametrize("sentence", ["<pad> <bos>", "we eat <eos>"])
def test_special_tokens_are_not_words(untrained, sentence):
    with pytest.raises(SpecialTokenError, match="special token"):
        translate(untrained, sentence)


def test_sentence_punctuation_is_stripped_as_typed(shipped_model):
    assert translate(shipped_model, "We want to eat apple.") == translate(shipped_model, "we want to eat apple")
    assert translate(shipped_model, "we eat bread!") == translate(shipped_model, ["we", "eat", "bread"])
    with pytest.raises(EmptySentenceError):
        translate(shipped_model, " ... ")
