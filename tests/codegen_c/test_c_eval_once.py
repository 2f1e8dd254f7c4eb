"""The C backend evaluates each control expression where the IR does, once.

A C ``for`` re-tests its condition before every iteration and C accesses
recompute strides from the sizes of a buffer at every access, whereas the
IR evaluates a loop bound once at loop entry and a buffer's sizes once where
it is declared. When such an expression reads a config field that is
written later, C must use the value it had then: the backend stores it in a
local first. Each test runs the generated C under ASan/UBSan and compares
with the interpreter (the semantics).
"""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from exo_hl import config, f32, index, instr, par, proc, seq, size
from exo_hl.core_ir.interpret import ConfigState

from cg_helpers import WARN_FLAGS, run, sanitized_run


@config
class Cfg:
    n: size
    k: index


def _interpret(p, args):
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    p.interpret(**out, config_state=ConfigState())
    return out


def _agree(tmp_path, p, args):
    want = _interpret(p, args)
    got = sanitized_run(tmp_path, p, args)
    for name, vals in got.items():
        np.testing.assert_array_equal(np.array(vals, dtype=want[name].dtype),
                                      want[name].ravel(), err_msg=name)
    return p.c_code_str()


@proc
def bound_rewritten_by_body(A: f32[2]):
    Cfg.n = 2
    for x in seq(0, Cfg.n):
        Cfg.n = 100
        A[x] = 1.0


def test_loop_bound_read_once(tmp_path):
    code = _agree(tmp_path, bound_rewritten_by_body,
                  {"A": np.zeros(2, np.float32)})
    # the bound lives in a local set before the loop
    assert re.search(r"int_fast32_t (\w+) = ctxt->Cfg_n;\n\s*for "
                     r"\(int_fast32_t x = 0; x < \1; x\+\+\)", code), code


@proc
def bound_rewritten_by_callee_helper(A: f32[8]):
    Cfg.n = 8


@proc
def bound_rewritten_by_callee(A: f32[8]):
    Cfg.n = 3
    for x in seq(0, Cfg.n):
        bound_rewritten_by_callee_helper(A)
        A[x] += 1.0


def test_loop_bound_read_once_callee_writes(tmp_path):
    _agree(tmp_path, bound_rewritten_by_callee,
           {"A": np.zeros(8, np.float32)})


@proc
def nested_bounds(A: f32[4, 4]):
    Cfg.n = 2
    for i in seq(0, Cfg.n):
        Cfg.n = 3
        for j in seq(0, Cfg.n):
            Cfg.n = 4
            A[i, j] += 1.0


def test_nested_bounds(tmp_path):
    _agree(tmp_path, nested_bounds, {"A": np.zeros((4, 4), np.float32)})


@proc
def invariant_bounds(n: size, A: f32[n]):
    for i in seq(0, n):
        A[i] = 2.0
    for i in seq(0, n / 2 + 1):
        A[i] += 1.0


def test_invariant_bounds_stay_inline():
    """Bounds that read no config state cannot change: no extra locals."""
    code = invariant_bounds.c_code_str()
    assert "for (int_fast32_t i = 0; i < n; i++)" in code
    assert "i < n / 2 + 1" in code
    assert "_hi" not in code


@proc
def par_bound(A: f32[8]):
    Cfg.n = 5
    for x in par(0, Cfg.n):
        A[x] = 3.0


def test_par_loop_bound_is_a_local_before_the_pragma(tmp_path):
    code = _agree(tmp_path, par_bound, {"A": np.zeros(8, np.float32)})
    # the outlined loop (codegen_c/outline.py) reads the bound once, into
    # a local, and splits the iterations up to it
    assert re.search(r"int_fast32_t (\w+) = ctxt->Cfg_n;\n"
                     r"\s*int_fast32_t x_begin = exo_hl_share\(0, \1, thread, "
                     r"threads\);\n\s*int_fast32_t x_end = exo_hl_share\(0, "
                     r"\1, thread \+ 1, threads\);\n\s*for "
                     r"\(int_fast32_t x = x_begin; x < x_end; x\+\+\)",
                     code), code
    if shutil.which("gcc"):
        from exo_hl import compile_procs
        compile_procs([par_bound], tmp_path, "pb")
        run(["gcc", *WARN_FLAGS, "-fopenmp", "-c", "pb.c"], tmp_path)


@proc
def alloc_size_then_changed(A: f32[2, 3]):
    Cfg.n = 3
    t: f32[2, Cfg.n]
    Cfg.n = 1
    for i in seq(0, 2):
        for j in seq(0, 3):
            t[i, j] = 1.0 + A[i, j]
    for i in seq(0, 2):
        for j in seq(0, 3):
            A[i, j] = t[i, j] * 2.0


def test_allocation_sizes_read_once(tmp_path):
    """Strides of a buffer use its sizes as they were at the allocation."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    _agree(tmp_path, alloc_size_then_changed, {"A": a})


@proc
def arg_size_then_changed(A: f32[2, Cfg.n]):
    assert Cfg.n == 3
    Cfg.n = 1
    for i in seq(0, 2):
        for j in seq(0, 3):
            A[i, j] = 1.0


def test_argument_sizes_read_once(tmp_path):
    from exo_hl import compile_procs
    compile_procs([arg_size_then_changed], tmp_path, "asz")
    (tmp_path / "main.c").write_text(r"""
#include <stdio.h>
#include <stdlib.h>
#include "asz.h"
int main(void) {
    asz_Context ctx = {0};
    ctx.Cfg_n = 3;
    float *A = calloc(6, sizeof(float));
    arg_size_then_changed(&ctx, A);
    for (int k = 0; k < 6; k++) printf("%g ", A[k]);
    free(A);
    return 0;
}
""")
    from cg_helpers import SAN_FLAGS
    run(["gcc", *SAN_FLAGS, "-o", "prog", "main.c", "asz.c"], tmp_path)
    assert run(["./prog"], tmp_path).split() == ["1"] * 6
    st = ConfigState()
    st[Cfg.n] = 3
    A = np.zeros((2, 3), np.float32)
    arg_size_then_changed.interpret(A, config_state=st)
    assert (A == 1).all()


@instr("{dst_data} = 1.0f; ctxt->Cfg_k = 0; {dst_data} += 1.0f;")
def set_then_move(k: index, dst: [f32][1]):
    Cfg.k = 0
    dst[0] = 2.0


@proc
def instr_args_read_what_instr_writes(A: f32[8]):
    Cfg.k = 5
    set_then_move(Cfg.k, A[Cfg.k:Cfg.k + 1])


def test_instr_placeholders_evaluated_once(tmp_path):
    """A template may mention a placeholder after its own config writes;
    the argument is still the value before the call."""
    code = _agree(tmp_path, instr_args_read_what_instr_writes,
                  {"A": np.zeros(8, np.float32)})
    m = re.search(r"int_fast32_t (\w+) = ctxt->Cfg_k;\n\s*A\[\1\] = 1.0f; "
                  r"ctxt->Cfg_k = 0; A\[\1\] \+= 1.0f;", code)
    assert m, code


@pytest.mark.parametrize("case", ["loop", "alloc"])
def test_hoisted_locals_compile_warning_free(tmp_path, warn_compile, case):
    from exo_hl import compile_procs
    p = {"loop": nested_bounds, "alloc": alloc_size_then_changed}[case]
    compile_procs([p], tmp_path, "k")
    warn_compile("k")
