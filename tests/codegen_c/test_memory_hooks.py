"""Memory hooks receive structured arguments: C text that also says its
constant value, so hardware libraries never parse C back."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, DRAM_STATIC, MemGenError, f32, proc, seq, size
from exo_hl.core_ir.memory import CExpr, const_value

SEEN = []


class SPY(DRAM):
    """DRAM that records what its hooks are given."""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        SEEN.append(("alloc", new_name, list(shape)))
        return super().alloc(new_name, prim_type, shape, srcinfo)

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo):
        SEEN.append(("window", baseptr, list(indices), list(strides)))
        return super().window(basetyp, baseptr, indices, strides, srcinfo)


@proc
def rows(n: size, x: f32[n, 8], y: f32[n, 8]):
    for r in seq(0, n):
        t: f32[n, 8] @ SPY
        for j in seq(0, 8):
            t[r, j] = x[r, j]
        y[r, 3] = t[r, 3] * 2.0


def test_alloc_gets_sizes_with_their_values():
    SEEN.clear()
    rows.c_code_str()
    (_, name, shape), = [e for e in SEEN if e[0] == "alloc"]
    assert all(isinstance(s, CExpr) for s in shape)
    assert shape[1] == "8" and shape[1].value == 8
    assert shape[0].value is None and "n" in shape[0]


def test_window_gets_indices_and_strides_with_their_values():
    SEEN.clear()
    rows.c_code_str()
    wins = [e for e in SEEN if e[0] == "window"]
    assert wins
    for _, base, idx, strides in wins:
        assert all(isinstance(v, CExpr) for v in idx + strides)
        assert strides[1].value == 1 and strides[0].value == 8
    consts = [i.value for _, _, idx, _ in wins for i in idx]
    assert 3 in consts                 # t[r, 3]: the constant column
    assert None in consts              # r and j are run-time values


def test_the_generated_code_is_unchanged_by_the_types():
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    y = np.zeros((2, 8), np.float32)
    rows.compile()(2, x, y)
    assert np.array_equal(y[:, 3], 2 * x[:, 3])


class TEXTONLY(DRAM_STATIC):
    """Written as before: treats every argument as plain C text."""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        dims = "".join(f"[{s.strip()}]" for s in shape)
        return f"{prim_type} {new_name}{dims};"

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo):
        return f"{baseptr}[{' + '.join(f'({i}) * ({s})' for i, s in zip(indices, strides))}]"


def test_memories_that_only_paste_text_still_work():
    @proc
    def copy4(x: f32[4], y: f32[4]):
        t: f32[4] @ TEXTONLY
        for i in seq(0, 4):
            t[i] = x[i]
        for i in seq(0, 4):
            y[i] = t[i]
    code = copy4.c_code_str()
    assert "float t[4];" in code
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    copy4.compile()(x, y)
    assert np.array_equal(x, y)


def test_const_value():
    assert const_value(CExpr("n / 4")) is None
    assert const_value(CExpr.constant(12)) == 12
    assert const_value(7) == 7
    assert const_value(" ((32)) ") == 32
    assert const_value("n") is None and const_value(True) is None


def test_register_memories_read_values_not_text():
    """A register memory refuses a run-time size and accepts constants
    however the compiler spells them."""
    from exo_hl.hw_libs.avx2 import AVX2
    assert AVX2.alloc("v", "float", [CExpr("2 * 1", 2), CExpr.constant(8)],
                      "here") == "__m256 v[2];"
    with pytest.raises(MemGenError, match="constant sizes"):
        AVX2.alloc("v", "float", [CExpr("n"), CExpr.constant(8)], "here")


@proc
def big_static(x: f32[4]):
    t: f32[262145] @ DRAM_STATIC
    for i in seq(0, 4):
        t[i] = x[i]
        x[i] = t[i] + 1.0


@proc
def largest_static(x: f32[4]):
    t: f32[262144] @ DRAM_STATIC
    for i in seq(0, 4):
        t[i] = x[i]
        x[i] = t[i] + 1.0


def test_dram_static_arrays_are_at_most_a_mebibyte():
    """f32[4000000] @ DRAM_STATIC (16 MB on the stack) was accepted and the
    compiled call killed the process; past 1 MiB it is a MemGenError."""
    with pytest.raises(MemGenError, match="1048580 bytes of stack"):
        big_static.c_code_str()
    x = np.zeros(4, np.float32)
    largest_static.compile()(x)
    assert (x == 1).all()
