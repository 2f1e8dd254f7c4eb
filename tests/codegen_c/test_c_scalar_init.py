"""A local data scalar starts at zero (docs/semantics.md): a read before
any write gives 0 in the interpreter and in C, and the C reads no
uninitialised local (-Wuninitialized / -Wmaybe-uninitialized)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM, DRAM_STATIC, MemGenError, compile_procs, f32, f64,
                    i8, i32, instr, proc, seq, size)
from exo_hl.codegen_c.emit import c_code_str

from cg_helpers import c_compilers, run


@proc
def read_first(n: size, x: f32[2], k: i8[1], d: f64[1]):
    t: f32
    x[0] = t
    u: f32
    for i in seq(0, n - 1):
        u = 5.0
    x[1] = u
    c: i8
    c += k[0]
    k[0] = c
    e: f64
    d[0] = e + 1.0


def test_scalar_read_before_write_is_zero(tmp_path, warn_compile):
    compile_procs([read_first], tmp_path, "rf")
    warn_compile("rf")   # -Wall -Wextra -Werror -O2, gcc and clang
    src = (tmp_path / "rf.c").read_text()
    assert "    t = 0;" in src
    for run in (read_first.interpret, read_first.compile()):
        x = np.full(2, 7, np.float32)
        k = np.array([3], np.int8)
        d = np.zeros(1, np.float64)
        run(1, x, k, d)
        assert list(x) == [0.0, 0.0] and k[0] == 3 and d[0] == 1.0
        x = np.full(2, 7, np.float32)
        run(3, x, k, d)
        assert list(x) == [0.0, 5.0] and k[0] == 3


class NOREAD(DRAM):
    @classmethod
    def can_read(cls):
        return False


def test_scalar_in_unreadable_memory_must_be_set_before_it_is_read():
    # a local scalar starts at zero (docs/semantics.md); C sets it only in a
    # memory it can write, so in NOREAD an instruction reading it first
    # would read an uninitialised C variable where interpret() reads 0
    @instr("{dst_data} = {src};")
    def rd(dst: [f32][1] @ DRAM, src: f32 @ NOREAD):
        dst[0] = src

    @instr("{dst} = {src_data};")
    def ld(dst: f32 @ NOREAD, src: [f32][1] @ DRAM):
        dst = src[0]

    @proc
    def reads_zero(n: size, y: f32[n]):
        for i in seq(0, n):
            t: f32 @ NOREAD
            rd(y[i:i + 1], t)

    with pytest.raises(MemGenError, match="(?s)'t' is a local scalar.*"
                       "NOREAD is not writable from C.*rd\\(y"):
        c_code_str([reads_zero])

    @proc
    def loads_first(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32 @ NOREAD
            ld(t, x[i:i + 1])
            rd(y[i:i + 1], t)

    text = c_code_str([loads_first])
    assert "t = x[i];" in text and "y[i] = t;" in text
    x = np.arange(3, dtype=np.float32) + 1
    for run in (loads_first.interpret, loads_first.compile()):
        y = np.zeros(3, np.float32)
        run(3, x, y)
        assert list(y) == [1.0, 2.0, 3.0]


@proc
def stack_read_first(n: size, y: i32[4], z: f32[4]):
    a: i32[16] @ DRAM_STATIC
    if n > 2:
        y[0] = a[3]
    else:
        a[3] = 5
    y[1] = a[3]
    b: f32[8] @ DRAM_STATIC
    for i in seq(0, 8):
        b[i] = 2.0
    z[0] = b[1]


def test_stack_array_read_before_write_is_zeroed(tmp_path, warn_compile):
    """A DRAM_STATIC array the program may read before writing (a bug of
    the program, docs/semantics.md) is declared zeroed: gcc -O1 reported
    'may be used uninitialized' under -Werror. One written first is not
    zeroed (no cost for kernels that fill their tiles)."""
    compile_procs([stack_read_first], tmp_path, "srf")
    warn_compile("srf")
    src = (tmp_path / "srf.c").read_text()
    assert "int32_t a[16] = {0};" in src
    assert "float b[8];" in src
    for cc in c_compilers():
        run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
             "-O1", "-c", "srf.c", "-o", f"srf1_{cc}.o"], tmp_path)
    for run_p in (stack_read_first.interpret, stack_read_first.compile()):
        y = np.full(4, 7, np.int32)
        z = np.zeros(4, np.float32)
        run_p(3, y, z)
        assert list(y[:2]) == [0, 0] and z[0] == 2.0
        y = np.full(4, 7, np.int32)
        run_p(1, y, z)
        assert list(y[:2]) == [7, 5]
