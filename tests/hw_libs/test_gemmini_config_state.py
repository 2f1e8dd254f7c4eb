"""Gemmini's configuration has one state: the ``@config`` fields. The C
model's instruction templates read and write the same context-struct fields
that plain config reads and writes compile to, so a plain write (what
``configwrite_at``/``bind_config`` insert), a ``config_*`` instruction, an
inlined one and a branch on a field all agree between ``interpret()`` and
``compile()``. And two generated files that use Gemmini link into one
program (the model's instruction counters are defined once)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from exo_hl import DRAM, i8, proc, stride
from exo_hl.hw_libs.gemmini import (GEMM_SCRATCH, ConfigLoad, ConfigStore,
                                    config_count, config_ld, config_st,
                                    instr_count, ld_i8, reset_instr_count,
                                    st_i8)


def _both(p, **arrays):
    """Outputs of ``p`` under interpret() and compile() (fresh copies)."""
    outs = []
    for run in (p.interpret, p.compile()):
        args = {k: v.copy() for k, v in arrays.items()}
        run(**args)
        outs.append(args)
    return outs


def _tile(rows=20, cols=24, seed=0):
    return np.random.default_rng(seed).integers(
        -128, 128, (rows, cols)).astype(np.int8)


@proc
def plain_writes(A: i8[20, 24] @ DRAM, B: i8[20, 24] @ DRAM):
    t: i8[16, 16] @ GEMM_SCRATCH
    ConfigLoad.src_stride = stride(A, 0)
    ConfigStore.dst_stride = stride(B, 0)
    ConfigStore.act = False
    ld_i8(16, 16, A[2:18, 3:19], t)
    st_i8(16, 16, t, B[1:17, 5:21])


def test_plain_config_writes_configure_the_engines():
    """A plain write of ``ConfigLoad.src_stride`` followed by ``ld_i8``
    loaded with stride 0 in C (the model kept its own register)."""
    A = _tile()
    want = np.zeros_like(A)
    want[1:17, 5:21] = A[2:18, 3:19]
    (ri, rc) = _both(plain_writes, A=A, B=np.zeros_like(A))
    assert np.array_equal(ri["B"], want)
    assert np.array_equal(rc["B"], want)


@proc
def branch_on_field(A: i8[20, 24] @ DRAM, B: i8[20, 24] @ DRAM):
    config_ld(5)
    if ConfigLoad.src_stride == 5:
        B[0, 0] = A[0, 0]
    ConfigLoad.src_stride = 7
    config_st(ConfigLoad.src_stride + 1, False)
    if ConfigStore.dst_stride == 8:
        B[1, 1] = A[1, 1]


def test_config_instruction_writes_the_field_reads_see():
    """``config_ld(5)`` then ``if ConfigLoad.src_stride == 5``: the branch
    was taken in interpret() and not in compile()."""
    A = _tile(seed=2)
    ri, rc = _both(branch_on_field, A=A, B=np.zeros_like(A))
    assert ri["B"][0, 0] == A[0, 0] and ri["B"][1, 1] == A[1, 1]
    assert np.array_equal(ri["B"], rc["B"])
    f = branch_on_field.compile()
    f(A=A, B=np.zeros_like(A))
    assert f.get_config(ConfigLoad, "src_stride") == 7
    assert f.get_config(ConfigStore, "dst_stride") == 8


@proc
def with_instrs(A: i8[20, 24] @ DRAM, B: i8[20, 24] @ DRAM):
    t: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_st(stride(B, 0), False)
    ld_i8(16, 16, A[3:19, 1:17], t)
    st_i8(16, 16, t, B[0:16, 8:24])


def test_inlined_config_instruction_agrees():
    """``inline('config_ld(_)')`` was accepted, and the inlined program
    computed garbage in C."""
    p = with_instrs.inline('config_ld(_)').inline('config_st(_)')
    assert 'config_ld' not in str(p) and 'config_st' not in str(p)
    A = _tile(seed=3)
    want = np.zeros_like(A)
    want[0:16, 8:24] = A[3:19, 1:17]
    for q in (with_instrs, p):
        ri, rc = _both(q, A=A, B=np.zeros_like(A))
        assert np.array_equal(ri["B"], want) and np.array_equal(rc["B"], want)


def test_config_state_is_the_callables_context():
    """The engines' registers are the compiled callable's config state:
    set from Python, they configure the next call (no hidden copy)."""
    @proc
    def load_only(A: i8[20, 24] @ DRAM, B: i8[20, 24] @ DRAM):
        assert ConfigLoad.src_stride == stride(A, 0)
        assert ConfigStore.dst_stride == stride(B, 0)
        assert not ConfigStore.act
        t: i8[16, 16] @ GEMM_SCRATCH
        ld_i8(16, 16, A[0:16, 0:16], t)
        st_i8(16, 16, t, B[0:16, 0:16])

    f = load_only.compile()
    f.set_config(ConfigLoad, "src_stride", 24)
    f.set_config(ConfigStore, "dst_stride", 24)
    f.set_config(ConfigStore, "act", False)
    A = _tile(seed=4)
    B = np.zeros_like(A)
    reset_instr_count(f)
    f(A=A, B=B)
    assert np.array_equal(B[0:16, 0:16], A[0:16, 0:16])
    assert instr_count(f) == 2 and config_count(f) == 0


# ---------------------------------------------------------------------------
# item 14: two generated files link into one program

@proc
def gem_copy_a(A: i8[16, 16] @ DRAM, B: i8[16, 16] @ DRAM):
    t: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_st(stride(B, 0), False)
    ld_i8(16, 16, A, t)
    st_i8(16, 16, t, B)


@proc
def gem_copy_b(A: i8[16, 16] @ DRAM, B: i8[16, 16] @ DRAM):
    t: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_st(stride(B, 0), False)
    ld_i8(16, 16, A, t)
    st_i8(16, 16, t, B)


_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include "a.h"
#include "b.h"
extern _Atomic uint64_t gemmini_sim_instr_count;
extern _Atomic uint64_t gemmini_sim_config_count;
int main(void) {
    int8_t x[256], y[256], z[256];
    for (int i = 0; i < 256; i++) { x[i] = (int8_t)(i * 7 - 100); y[i] = 0; z[i] = 0; }
    a_Context ca = {0};
    b_Context cb = {0};
    gem_copy_a(&ca, x, y);
    gem_copy_b(&cb, y, z);
    for (int i = 0; i < 256; i++) if (z[i] != x[i]) { puts("bad copy"); return 1; }
    printf("%llu %llu\n", (unsigned long long)gemmini_sim_instr_count,
           (unsigned long long)gemmini_sim_config_count);
    return 0;
}
"""


def _cc():
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and subprocess.run(["sh", "-c", f"command -v {cc}"],
                                 capture_output=True).returncode == 0:
            return cc
    raise AssertionError("no C compiler")


def test_two_generated_files_link_into_one_program(tmp_path):
    """``gemmini_sim_instr_count``/``_config_count`` were defined (non-static)
    in every generated .c: two files did not link. Both files now share one
    counter (one simulated device)."""
    from exo_hl import compile_procs
    compile_procs([gem_copy_a], str(tmp_path), "a")
    compile_procs([gem_copy_b], str(tmp_path), "b")
    (tmp_path / "main.c").write_text(_MAIN)
    cc = _cc()
    exe = tmp_path / "prog"
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-O1", "-I", str(tmp_path), str(tmp_path / "a.c"),
                        str(tmp_path / "b.c"), str(tmp_path / "main.c"),
                        "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    # each procedure: 2 config writes + ld + st
    assert out.stdout.split() == ["8", "4"]
