"""Notebook 03 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import math

import torch

from course_utils.exercises import nb03


def test_divisor_accepts_sqrt_d_and_rejects_typical_mistakes(capsys):
    assert nb03.check_divisor_256(math.sqrt(256))
    assert nb03.check_divisor_256(16)
    for wrong in (1.0, 256, 8, 0, -16, "sixteen"):
        assert not nb03.check_divisor_256(wrong), wrong
    assert "❌" in capsys.readouterr().out


def test_apple_attends_to_eat():
    W_Q2 = torch.tensor([[0.0, 0.0], [2.0, 0.0]])
    W_K2 = torch.tensor([[2.0, 0.0], [0.0, 0.0]])
    assert nb03.check_apple_attends_to_eat(W_Q2, W_K2)
    assert nb03.toy_weights(W_Q2, W_K2)[3, 2] > 0.5


def test_apple_rejects_the_notebooks_eat_to_apple_matrices_and_zeros():
    W_Q = torch.tensor([[0.0, 2.0], [0.0, 0.0]])
    W_K = torch.tensor([[0.0, 0.0], [0.0, 2.0]])
    assert not nb03.check_apple_attends_to_eat(W_Q, W_K)  # eat -> apple, but apple's own row prefers apple
    assert not nb03.check_apple_attends_to_eat(torch.zeros(2, 2), torch.zeros(2, 2))  # uniform
    assert not nb03.check_apple_attends_to_eat(torch.zeros(3, 3), torch.zeros(3, 3))  # wrong shape: message, no error


def test_window_mask():
    ones = torch.ones(4, 4, dtype=torch.bool)
    assert nb03.check_window_mask(ones.tril() & ones.triu(-1))
    assert not nb03.check_window_mask(ones.tril())  # full causal mask
    assert not nb03.check_window_mask(~(ones.tril() & ones.triu(-1)))  # opposite convention
    assert not nb03.check_window_mask((ones.tril() & ones.triu(-1)).int())  # not bool
    assert not nb03.check_window_mask(ones.triu() & ones.tril(1))  # window to the right: looks ahead
    assert not nb03.check_window_mask(torch.ones(3, 3, dtype=torch.bool))
