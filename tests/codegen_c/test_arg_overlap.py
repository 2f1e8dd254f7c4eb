"""Argument overlap (docs/semantics.md): a written window whose indices
name one element twice (``as_strided(base, (n, 2), (4, 4))``) is refused
by interpret() and compile() alike, as two overlapping arguments one of
which is written are; every rewrite and the race proof assume distinct
indices are distinct locations. Random layouts are checked against the
addresses their elements have."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from exo_hl import f32, proc, seq, size
from exo_hl.core_ir.array_layout import self_overlaps as _self_overlaps


@proc
def write2(n: size, y: [f32][n, 2], x: f32[n, 2]):
    for i in seq(0, n):
        for j in seq(0, 2):
            y[i, j] = x[i, j]


@proc
def read2(n: size, y: f32[n, 2], x: [f32][n, 2]):
    for i in seq(0, n):
        for j in seq(0, 2):
            y[i, j] = x[i, j]


def _runs(p):
    return [p.interpret, p.compile()]


def test_written_self_overlapping_window_is_refused():
    """``y[i, 1]`` and ``y[i + 1, 0]`` are one element: accepted before,
    and a fission_after of the copy then gave other values than the
    original."""
    base = np.zeros(16, np.float32)
    y = as_strided(base, (6, 2), (4, 4))
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    for run in _runs(write2):
        with pytest.raises(ValueError, match="two of its indices name one "
                                             "element"):
            run(6, y, x)
    assert not base.any()


def test_read_only_self_overlapping_window_is_accepted():
    """Reading one element through two indices is harmless (a sliding
    window view, as im2col makes)."""
    base = np.arange(16, dtype=np.float32)
    x = as_strided(base, (6, 2), (4, 4))
    for run in _runs(read2):
        y = np.zeros((6, 2), np.float32)
        run(6, y, x)
        assert np.array_equal(y, x)


def test_a_written_window_over_a_read_argument_is_refused():
    """(the existing rule for two arguments, kept: one of them written)"""
    big = np.zeros(32, np.float32)
    x = big[0:12].reshape(6, 2)
    y = big[2:14].reshape(6, 2)[:, :]
    for run in _runs(write2):
        with pytest.raises(ValueError, match="overlap in memory"):
            run(6, y, x)
        run(6, big[16:28].reshape(6, 2), x)     # apart: accepted


def _brute(shape, strides, itemsize):
    offs = [sum(i * s for i, s in zip(idx, strides))
            for idx in itertools.product(*(range(d) for d in shape))]
    offs.sort()
    return any(b - a < itemsize for a, b in zip(offs, offs[1:]))


@pytest.mark.parametrize("seed", range(3))
def test_random_layouts_are_judged_by_their_addresses(seed):
    """Random shapes (1-3 dimensions) and strides (multiples of the element
    size, some nested, some interleaved, some overlapping): refused exactly
    when two indices give overlapping bytes."""
    rng = random.Random(seed)
    base = np.zeros(4096, np.float32)
    both = [0, 0]
    for _ in range(300):
        nd = rng.randint(1, 3)
        shape = tuple(rng.randint(1, 5) for _ in range(nd))
        strides = tuple(4 * rng.randint(1, 12) for _ in range(nd))
        v = as_strided(base, shape, strides)
        want = _brute(shape, strides, 4)
        assert _self_overlaps(v) == want, (shape, strides)
        both[want] += 1
    assert min(both) > 20, both


@pytest.mark.parametrize("seed", range(2))
def test_random_overlapping_windows_refused_by_both_runners(seed):
    """The refusal is the same in interpret() and compile()."""
    rng = random.Random(seed)
    runs = _runs(write2)
    for _ in range(40):
        n = rng.randint(1, 5)
        s0, s1 = 4 * rng.randint(1, 4), 4 * rng.randint(1, 4)
        base = np.zeros(64, np.float32)
        y = as_strided(base, (n, 2), (s0, s1))
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        bad = _brute((n, 2), (s0, s1), 4)
        for run in runs:
            if bad:
                with pytest.raises(ValueError):
                    run(n, y, x)
            else:
                run(n, y, x)
                assert np.array_equal(y, x)
