"""The generated C text: ABI shape, warnings, C++ header, backend errors."""
from __future__ import annotations

import re
import shutil

import pytest

from exo_hl import (DRAM, DRAM_STATIC, ExoTypeError, MemGenError, R,
                    compile_procs, f32, f64, index, par, proc, seq, size)
from exo_hl.codegen_c.emit import c_code_str

import cg_kernels as K
from cg_helpers import run


def test_all_kernels_compile_warning_free(tmp_path, warn_compile):
    compile_procs(K.ALL, tmp_path, "allk")
    warn_compile("allk")


def test_each_kernel_alone_compiles_warning_free(tmp_path, warn_compile):
    # alone, callees become static helpers: they too must be warning-free
    for p in (K.scale_rows_cols, K.scale_by_cfg, K.dbl_rows):
        compile_procs([p], tmp_path, p.name())
        warn_compile(p.name())


def test_header_abi(tmp_path):
    compile_procs([K.gemm, K.row_sums, K.scale_by_cfg], tmp_path, "abi")
    h = (tmp_path / "abi.h").read_text()
    assert "#ifndef ABI_H" in h and "#define ABI_H" in h
    assert "#include <stdint.h>" in h and "#include <stdbool.h>" in h
    assert 'extern "C" {' in h
    assert re.search(r"typedef struct abi_Context \{\s*float Cfg_scale;\s*"
                     r"int_fast32_t Cfg_count;\s*\} abi_Context;", h)
    flat = re.sub(r"\s+", " ", h)
    assert ("void gemm(abi_Context *ctxt, int_fast32_t M, int_fast32_t N, "
            "int_fast32_t K, const float *A, const float *B, float *C);") in flat
    assert ("void row_sums(abi_Context *ctxt, int_fast32_t m, int_fast32_t n, "
            "struct exo_win_2f32c W, float *out);") in flat
    assert re.search(r"struct exo_win_2f32c \{\s*const float \*data;\s*"
                     r"int_fast32_t strides\[2\];\s*\};", h)
    # set_scale is not public here: a static helper, absent from the header
    assert "set_scale" not in h
    c = (tmp_path / "abi.c").read_text()
    assert "static void set_scale(abi_Context *ctxt, const float *restrict s)" in c
    # its counter (Cfg.count + 1) may pass 32 bits: checked, so it returns
    # a status (docs/api.md, C ABI)
    assert c.index("static void set_scale") < c.index("int scale_by_cfg")


def test_empty_context_gets_dummy_member():
    text = c_code_str([K.gemm])
    assert re.search(r"typedef struct gemm_Context \{\s*char \w+;", text)


def test_header_compiles_as_cxx(tmp_path):
    compile_procs(K.ALL, tmp_path, "allk")
    # _Float16 is C-only in g++ 12; everything else must parse as C++
    (tmp_path / "use2.cpp").write_text('#define _Float16 short\n'
                                       '#include "allk.h"\n')
    cxx = [c for c in ("g++", "clang++") if shutil.which(c)]
    for cc in cxx:
        run([cc, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "use2.cpp"],
            tmp_path)
    compile_procs([K.gemm, K.row_sums, K.scale_by_cfg], tmp_path, "nof16")
    (tmp_path / "use3.cpp").write_text(
        '#include "nof16.h"\n#include "nof16.h"\n'
        "int main() { nof16_Context c{}; float A[1] = {1}, B[1] = {1}, "
        "C[1] = {0}; gemm(&c, 1, 1, 1, A, B, C); return 0; }\n")
    for cc in cxx:
        run([cc, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "use3.cpp"],
            tmp_path)


def test_readable_loops_and_indexing():
    text = c_code_str([K.gemm])
    assert "for (int_fast32_t i = 0; i < M; i++) {" in text
    assert "C[(ptrdiff_t)i * N + j] += A[(ptrdiff_t)i * K + k] * " \
           "B[(ptrdiff_t)k * N + j];" in text


def test_floor_div_mod_helpers_only_for_possibly_negative():
    text = c_code_str([K.tiled_copy])
    assert "exo_floor_mod(ii - 1, 4)" in text
    assert "(4 * io + ii) / 2" in text        # provably non-negative
    assert "EXO_ASSUME(n % 4 == 0);" in text
    assert "__builtin_unreachable" in text


def test_casts_inserted_on_write():
    text = c_code_str([K.casts])
    assert "t = a[i];" in text           # every i8 value is an i32 value
    assert "c[i] = (double)b[i];" in text
    assert "d[i] = (float)(c[i] * 0.5);" in text
    assert "e[i] = a[i];" in text
    assert "h[i] = (_Float16)d[i];" in text
    # may overflow: wraps (docs/semantics.md), computed without UB
    assert "b[i] = exo_mul_i32(t, 3);" in text


def test_instr_template_interpolated():
    text = c_code_str([K.dbl_rows])
    assert "exo_test_dbl(&B[i * 8], &A[i * 8], 8);" in text
    assert text.count("static inline void exo_test_dbl") == 1
    assert "2.0f * src" not in text and "void dbl(" not in text


def test_instr_window_placeholder(tmp_path, warn_compile):
    from exo_hl import instr

    @instr("{dst}.data[0] = {src}.data[{src}.strides[0]]; /* n={n} */")
    def pick(n: size, dst: [f32][n], src: [f32][n]):
        assert n >= 2
        dst[0] = src[1]

    @proc
    def use_pick(m: size, A: f32[4, 4], B: f32[4, 4]):
        assert m == 4
        pick(m - 1, A[0, 0:3], B[1:4, 2])

    text = c_code_str([use_pick])
    assert "(struct exo_win_1f32){ &A[0], { 1 } }.data[0] = " in text
    assert "/* n=(m - 1) */" in text       # control args are parenthesized
    assert "{ &B[6], { 4 } }" in text           # column window: stride 4
    compile_procs([use_pick], tmp_path, "usepick")
    warn_compile("usepick")


def test_control_self_comparison_is_its_value(tmp_path, warn_compile):
    """A control value compared with itself compiled to the comparison,
    which gcc's -Wall (-Wtautological-compare) warns about; its value is
    known (integers have no NaN), so the C has the constant."""
    import numpy as np

    @proc
    def selfcmp(n: size, o: index, y: f32[2]):
        assert o < n
        if o + 2 - o == o + 2 - o:
            y[0] = 1.0
        if o + 2 - o < o + 2 - o:
            y[1] = 1.0

    text = c_code_str([selfcmp])
    assert "if (true)" in text and "if (false)" in text
    compile_procs([selfcmp], tmp_path, "selfcmp")
    warn_compile("selfcmp")
    ys = [np.zeros(2, np.float32) for _ in range(2)]
    selfcmp.interpret(n=3, o=1, y=ys[0])
    selfcmp.compile()(3, 1, ys[1])
    assert ys[0].tolist() == ys[1].tolist() == [1.0, 0.0]


def test_par_loop_guarded_pragma(tmp_path, warn_compile):
    @proc
    def par_add(n: size, x: f32[n]):
        for i in par(0, n):
            x[i] += 1.0

    text = c_code_str([par_add])
    # outlined (codegen_c/outline.py): a region only with several threads
    assert "#ifdef _OPENMP\n    if (omp_get_max_threads() > 1) {\n" \
        "#pragma omp parallel\n        par_add_par(" in text
    assert "int_fast32_t i_begin = exo_hl_share(0, n, thread, threads);" in text
    compile_procs([par_add], tmp_path, "par_add")
    warn_compile("par_add")
    run(["gcc", "-fopenmp", "-Wall", "-Wextra", "-Werror", "-c", "par_add.c"],
        tmp_path)


class NOREAD(DRAM):
    @classmethod
    def can_read(cls):
        return False


def test_memgen_error_for_unreadable_memory():
    @proc
    def bad_read(x: f32[4] @ NOREAD, y: f32[4]):
        for i in seq(0, 4):
            y[i] = x[i]

    with pytest.raises(MemGenError) as ei:
        c_code_str([bad_read])
    msg = str(ei.value)
    assert "NOREAD" in msg and "bad_read" in msg
    assert re.search(r"test_c_text\.py:\d+", msg)


def test_precision_mismatch_is_an_error():
    @proc
    def mixed(x: f32[4], y: f64[4], z: f64[4]):
        for i in seq(0, 4):
            z[i] = x[i] + y[i]

    with pytest.raises(ExoTypeError) as ei:
        c_code_str([mixed])
    assert "mixed precisions" in str(ei.value) and "f32" in str(ei.value)
    assert "test_c_text.py" in str(ei.value)


def test_generic_R_parameter_needs_matching_precision_in_c():
    """The interpreter runs an R callee at each caller's precision; C has
    one float body, so an f64 argument is refused (not reinterpreted)."""
    @proc
    def scale2(n: size, x: [R][n] @ DRAM):
        for i in seq(0, n):
            x[i] = x[i] * 3.0

    @proc
    def on_f32(z: f32[2] @ DRAM):
        scale2(2, z)

    @proc
    def on_f64(x: f64[2] @ DRAM):
        scale2(2, x)

    assert "scale2(ctxt, 2," in c_code_str([on_f32])
    with pytest.raises(ExoTypeError) as ei:
        c_code_str([on_f64])
    msg = str(ei.value)
    assert "'x' of 'scale2' is f64" in msg and "float" in msg
    assert re.search(r"test_c_text\.py:\d+", msg)


def test_restrict_dropped_when_a_call_site_aliases(tmp_path, warn_compile):
    @proc
    def add_into(n: size, x: [f32][n], y: [f32][n], z: f32[n]):
        for i in seq(0, n):
            z[i] += x[i] + y[i]

    @proc
    def self_add(n: size, a: f32[n], b: f32[n]):
        add_into(n, a[0:n], a[0:n], b)

    @proc
    def add_vec(n: size, x: f32[n], z: f32[n]):
        for i in seq(0, n):
            z[i] += x[i]

    # a call that passes one buffer to a parameter the callee writes and to
    # another parameter is rejected by the frontend, so restrict stays sound
    with pytest.raises(ExoTypeError, match="would all view buffer 'a'"):
        @proc
        def double_into(n: size, a: f32[n]):
            add_vec(n, a, a)

    text = c_code_str([self_add])
    assert "float *restrict z" in text            # never aliased


def test_dram_static_needs_constant_sizes():
    @proc
    def dyn_static(n: size, x: f32[n]):
        t: f32[n] @ DRAM_STATIC
        for i in seq(0, n):
            t[i] = x[i]
        for i in seq(0, n):
            x[i] = t[i]

    with pytest.raises(MemGenError, match="DRAM_STATIC"):
        c_code_str([dyn_static])


def test_c_keywords_as_names(tmp_path, warn_compile):
    """Arguments and locals spelled like C keywords are renamed in C; a public
    procedure whose name is a C keyword is refused with a clear message."""
    import numpy as np

    @proc
    def double(n: size, x: f32[n], char: f32[n]):
        for auto in seq(0, n):
            static: f32
            static = x[auto]
            char[auto] = static * 2.0

    with pytest.raises(MemGenError, match="'double' cannot be exported") as ei:
        c_code_str([double])
    assert "test_c_text.py:" in str(ei.value)
    dbl = double.rename("dbl")
    text = c_code_str([dbl])
    assert "float *restrict char_1" in text and "auto_1 < n" in text
    compile_procs([dbl], tmp_path, "kw")
    warn_compile("kw")
    x = np.arange(5, dtype=np.float32)
    y = np.zeros(5, dtype=np.float32)
    dbl.compile()(5, x, y)
    assert (y == 2 * x).all()


def test_extern_with_own_type_rule_may_mix_precisions(tmp_path, warn_compile):
    """An extern whose user type rule takes (i32, f32) -> i32 compiles: its
    arguments are separate expressions, its result an i32 leaf."""
    import numpy as np
    from exo_hl import extern, i32

    @extern("mix({0}, {1})", typecheck=lambda ts: i32,
            c_global="static inline int32_t mix(int32_t a, float b) "
                     "{ return a * (int32_t)b; }\n")
    def mix(a, b):
        return int(a) * int(b)

    @proc
    def use_mix(s: f32, X: i32[4]):
        for i in seq(0, 4):
            X[i] = mix(X[i], s)

    text = c_code_str([use_mix])
    assert "mix(X[i], *s)" in text
    compile_procs([use_mix], tmp_path, "mix")
    warn_compile("mix")
    X = np.arange(4, dtype=np.int32)
    Y = X.copy()
    s = np.array([3.0], dtype=np.float32)
    use_mix.compile()(s, X)
    use_mix.interpret(s=s, X=Y)
    assert (X == np.arange(4) * 3).all() and (Y == X).all()


@proc
def floor_in_precondition(k: int, x: f32[4]):
    assert k / 4 >= 2 and k % 4 == 1
    x[0] = 1.0


def test_floor_helpers_in_preconditions_compile_warning_free(
        tmp_path, warn_compile):
    # the helpers are side-effect free: clang's __builtin_assume accepts them
    text = c_code_str([floor_in_precondition])
    assert "EXO_ASSUME(exo_floor_div(k, 4) >= 2" in text
    compile_procs([floor_in_precondition], tmp_path, "floorpre")
    warn_compile("floorpre")


def test_large_procedure_emits_in_linear_work(monkeypatch, tmp_path,
                                              warn_compile):
    """10,000 statements, 5,000 buffers all named 't' that are written but
    never read: choosing their C names and deciding which need a
    ``(void)`` must not rescan the rest of the procedure per buffer."""
    from exo_hl.codegen_c import emit, proc_emit
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.syms import Sym

    n = 5000
    x = Sym("x")
    xt = IR.Tensor((IR.Const(n, type=IR.Int), ), False, IR.F32)
    body = []
    for k in range(n):
        t = Sym("t")
        body.append(IR.Alloc(t, IR.F32, DRAM_STATIC))
        body.append(IR.Assign(t, IR.F32, (), IR.Read(x, (IR.Const(
            k, type=IR.Int), ), type=IR.F32)))
    big = IR.Proc("big", (IR.FnArg(x, xt, DRAM, None), ), (), tuple(body),
                  None, None)

    visits = {"nodes": 0, "probes": 0}
    real_walk = proc_emit.walk

    def counting_walk(node):
        for n_ in real_walk(node):
            visits["nodes"] += 1
            yield n_

    class CountingSet(set):
        def __contains__(self, item):
            visits["probes"] += 1
            return super().__contains__(item)

    real_init = emit._ProcEmitter.__init__

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        self.in_use = CountingSet(self.in_use)

    monkeypatch.setattr(proc_emit, "walk", counting_walk)
    monkeypatch.setattr(emit._ProcEmitter, "__init__", init)
    header, source = emit.generate([big], "big")
    lines = source.splitlines()
    assert f"    float t_{n - 1};" in lines
    assert lines[-5:] == [f"    float t_{n - 1};", f"    t_{n - 1} = 0;",
                          f"    (void)t_{n - 1};",
                          f"    t_{n - 1} = x[{n - 1}];", "}"]
    assert source.count("(void)t") == n
    assert visits["nodes"] <= 20 * n
    assert visits["probes"] <= 3 * n
    (tmp_path / "big.h").write_text(header)
    (tmp_path / "big.c").write_text(source)
    warn_compile("big")
