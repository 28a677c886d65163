"""Notebook 04 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

from course_utils.attention import MultiHeadAttention
from course_utils.exercises import nb04


def test_head_shapes():
    assert nb04.check_head_shapes((2, 8, 5, 8), (2, 8, 5, 5), (2, 5, 64))
    assert not nb04.check_head_shapes((2, 5, 8, 8), (2, 8, 5, 5), (2, 5, 64))  # forgot the transpose
    assert not nb04.check_head_shapes((2, 8, 5, 8), (2, 5, 5), (2, 5, 64))  # scores without the head axis
    assert not nb04.check_head_shapes((2, 8, 5, 8), (2, 8, 5, 5), (2, 5, 8))  # concat of one head
    assert not nb04.check_head_shapes(None, (2, 8, 5, 5), (2, 5, 64))


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
