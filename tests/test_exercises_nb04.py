"""Notebook 04 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

from course_utils.attention import MultiHeadAttention
from course_utils.exercises import nb04


def test_head_shapes():
    # B = 3 sentences, T = 7 words, H = 16 heads of dh = 4
    assert nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 7), (3, 7, 64))
    assert nb04.check_head_shapes([3, 16, 7, 4], (3, 16, 7, 7), (3, 7, 64))  # lists are fine
    assert not nb04.check_head_shapes((3, 7, 16, 4), (3, 16, 7, 7), (3, 7, 64))  # forgot the transpose
    assert not nb04.check_head_shapes((3, 16, 7, 8), (3, 16, 7, 7), (3, 7, 64))  # dh of 8 heads (the table's)
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 7, 7), (3, 7, 64))  # scores without the head axis
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 4), (3, 7, 64))  # scores T x dh, not T x T
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 7), (3, 7, 4))  # concat of one head
    assert not nb04.check_head_shapes((2, 8, 5, 8), (2, 8, 5, 5), (2, 5, 64))  # the old B = 2, H = 8 case
    assert not nb04.check_head_shapes(None, (3, 16, 7, 7), (3, 7, 64))


def test_split_heads():
    def solution(x, n_heads):
        B, T, d = x.shape
        return x.view(B, T, n_heads, d // n_heads).transpose(1, 2)

    def straight_reshape(x, n_heads):  # right shape, positions mixed into heads
        B, T, d = x.shape
        return x.reshape(B, n_heads, T, d // n_heads)

    def no_transpose(x, n_heads):
        B, T, d = x.shape
        return x.view(B, T, n_heads, d // n_heads)

    def crashes(x, n_heads):
        raise RuntimeError("boom")

    assert nb04.check_split_heads(solution)
    for wrong in (straight_reshape, no_transpose, crashes, None):
        assert not nb04.check_split_heads(wrong)


def test_mha_parameters():
    n = 4 * (64 * 64 + 64)
    assert n == sum(p.numel() for p in MultiHeadAttention(64, 8).parameters())
    assert nb04.check_mha_parameters(n, False)
    assert not nb04.check_mha_parameters(n, True)  # heads add no parameters
    assert not nb04.check_mha_parameters(4 * 64 * 64, False)  # forgot the biases
    assert not nb04.check_mha_parameters(64 * 64 * 8, True)
    assert not nb04.check_mha_parameters("many", False)
    assert not nb04.check_mha_parameters(None, None)  # the notebook's unanswered state
