"""The frontend builds the IR that docs/internals.md specifies.

Procedures are defined inside the test functions, which also exercises name
resolution in enclosing function scopes.
"""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl
from exo_hl import (DRAM, DRAM_STATIC, Procedure, R, config, extern,
                    f32, f64, i8, i32, index, instr, par, proc, seq, size,
                    stride)
from exo_hl.core_ir.config import Config
from exo_hl.core_ir.extern import BUILTIN_EXTERNS, Extern
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.syms import Sym
from exo_hl.frontend.decorators import parse_proc_source, parse_procs_source
from exo_hl.frontend.typecheck import check_calls

FnArg = IR.FnArg


def _read_of(e, sym):
    return isinstance(e, IR.Read) and e.name is sym and e.idx == ()


def test_gemm_from_api_md():
    @proc
    def gemm(M: size, N: size, K: size,
             A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
        assert M % 4 == 0
        for i in seq(0, M):
            for j in seq(0, N):
                for k in seq(0, K):
                    C[i, j] += A[i, k] * B[k, j]

    assert isinstance(gemm, Procedure)
    ir = gemm.ir()
    assert isinstance(ir, IR.Proc) and ir.name == "gemm" and ir.instr is None
    M, N, K, A, B, C = ir.args
    assert all(isinstance(a, FnArg) for a in ir.args)
    assert [a.name.name for a in ir.args] == ["M", "N", "K", "A", "B", "C"]
    assert M.type is IR.Size and M.mem is None
    assert isinstance(A.type, IR.Tensor) and A.type.type is IR.F32
    assert not A.type.is_window and A.mem is DRAM
    assert _read_of(A.type.hi[0], M.name) and _read_of(A.type.hi[1], K.name)
    assert A.type.hi[0].type is IR.Size
    (pred, ) = ir.preds
    assert pred.op == "==" and pred.type is IR.Bool
    assert pred.lhs.op == "%" and pred.lhs.type is IR.Index
    assert pred.lhs.rhs == IR.Const(4, type=IR.Int)
    (li, ) = ir.body
    assert isinstance(li, IR.For) and li.mode is IR.Seq
    assert li.lo == IR.Const(0, type=IR.Int) and _read_of(li.hi, M.name)
    lk = li.body[0].body[0]
    (red, ) = lk.body
    assert isinstance(red, IR.Reduce) and red.name is C.name
    assert red.type is IR.F32
    assert _read_of(red.idx[0], li.iter) and red.idx[0].type is IR.Index
    assert red.rhs.op == "*" and red.rhs.type is IR.F32
    assert red.rhs.lhs.name is A.name and red.rhs.lhs.type is IR.F32
    # source locations point into this file
    assert red.srcinfo.filename.endswith("test_parse.py")
    assert "C[i, j] += A[i, k] * B[k, j]" in red.srcinfo.line_text


def test_dotted_names_and_defaults():
    @proc
    def foo(n: exo_hl.size, x: exo_hl.f32[n + 1, 4], y: [R][n]):
        pass

    n, x, y = foo.ir().args
    assert n.type is IR.Size
    assert x.mem is DRAM and y.mem is DRAM
    hi0 = x.type.hi[0]
    assert hi0.op == "+" and _read_of(hi0.lhs, n.name)
    assert x.type.hi[1] == IR.Const(4, type=IR.Int)
    assert y.type.is_window and y.type.type is IR.Num
    assert isinstance(foo.ir().body[0], IR.Pass)


def test_control_types_by_name():
    @proc
    def foo(a: int, b: bool, c: index, d: stride, e: size, s: f64):
        assert b and a > 0 and d == 1
        pass

    types = [a.type for a in foo.ir().args]
    assert types == [IR.Int, IR.Bool, IR.Index, IR.Stride, IR.Size, IR.F64]
    assert foo.ir().args[5].mem is DRAM  # data scalar: passed by pointer
    (p, ) = foo.ir().preds
    assert p.op == "and" and p.lhs.op == "and"  # left-folded


def test_allocations_scalars_and_literals():
    @proc
    def foo(n: size, x: f32, A: f32[n]):
        t: f32[16, 16] @ DRAM_STATIC
        s: f32
        s = 0
        s += x * 2.5
        x = -s
        t[0, 1] = A[0] + 1
        A[n - 1] = s

    b = foo.ir().body
    x = foo.ir().args[1].name
    assert isinstance(b[0], IR.Alloc) and b[0].mem is DRAM_STATIC
    assert b[0].type == IR.Tensor((IR.Const(16, type=IR.Int), ) * 2, False,
                                  IR.F32)
    assert isinstance(b[1], IR.Alloc) and b[1].type is IR.F32
    assert b[1].mem is DRAM
    s = b[1].name
    # integer literal in data context becomes an R (Num) float literal
    assert isinstance(b[2], IR.Assign) and b[2].name is s and b[2].idx == ()
    assert b[2].rhs.val == 0.0 and type(b[2].rhs.val) is float
    assert b[2].rhs.type is IR.Num
    assert isinstance(b[3], IR.Reduce) and b[3].idx == ()
    assert b[3].rhs.rhs == IR.Const(2.5, type=IR.Num)
    assert b[3].rhs.type is IR.F32
    assert isinstance(b[4], IR.Assign) and b[4].name is x
    assert isinstance(b[4].rhs, IR.USub) and b[4].rhs.type is IR.F32
    assert b[5].rhs.rhs.type is IR.Num and b[5].rhs.type is IR.F32
    assert b[6].idx[0].op == "-"


def test_loops_if_elif_else_par():
    @proc
    def foo(n: size, A: f32[n]):
        for i in par(0, n):
            if i < 2:
                A[i] = 0.0
            elif i == n - 1 or i >= n / 2:
                A[i] = 1.0
            else:
                pass

    (loop, ) = foo.ir().body
    assert loop.mode is IR.Par
    s = loop.body[0]
    assert isinstance(s, IR.If) and s.cond.op == "<"
    (inner, ) = s.orelse
    assert isinstance(inner, IR.If) and inner.cond.op == "or"
    assert inner.cond.rhs.rhs.op == "/"
    assert isinstance(inner.orelse[0], IR.Pass)


def test_not_equal_and_chained_compare():
    @proc
    def foo(n: size, m: size):
        assert 0 < n <= m
        assert n != 3
        pass

    p1, p2 = foo.ir().preds
    assert p1.op == "and" and p1.lhs.op == "<" and p1.rhs.op == "<="
    assert isinstance(p2, IR.Not) and p2.arg.op == "=="


def test_calls_windows_and_memories():
    class SCRATCH(DRAM):
        pass

    @proc
    def inner(n: size, src: [f32][n, 4], dst: f32[n, 4] @ DRAM, s: f32):
        for i in seq(0, n):
            for j in seq(0, 4):
                dst[i, j] = src[i, j] + s

    @proc
    def outer2(A: f32[8, 16], B: f32[2, 4] @ DRAM_STATIC):
        s: f32
        s = 1.0
        inner(2, A[0:2, 4:8], B, s)
        row = A[3, 0:16]
        w = A[0:8, :]
        inner(2, w[1:3, 12:16], B, s)
        row[2] = w[0, 1]

    A, B = [a.name for a in outer2.ir().args]
    body = outer2.ir().body
    call = body[2]
    assert isinstance(call, IR.Call) and call.f is inner.ir()
    c_n, c_win, c_whole, c_s = call.args
    assert c_n == IR.Const(2, type=IR.Int)
    assert isinstance(c_win, IR.WindowExpr) and c_win.name is A
    wt = c_win.type
    assert isinstance(wt, IR.WindowType) and wt.src_buf is A
    assert wt.src_type == outer2.ir().args[0].type
    assert wt.as_tensor.is_window and wt.as_tensor.type is IR.F32
    assert [h.val for h in wt.as_tensor.hi] == [2, 4]
    assert all(isinstance(a, IR.Interval) for a in c_win.idx)
    # whole buffer: Read(buf, ()) carrying the tensor type
    assert isinstance(c_whole, IR.Read) and c_whole.name is B
    assert c_whole.idx == () and c_whole.type == outer2.ir().args[1].type
    assert isinstance(c_s, IR.Read) and c_s.type is IR.F32
    row = body[3]
    assert isinstance(row, IR.WindowStmt)
    assert isinstance(row.rhs.idx[0], IR.Point)
    assert len(row.rhs.type.as_tensor.hi) == 1
    w = body[4]
    assert w.rhs.idx[1].hi == IR.Const(16, type=IR.Int)  # ':' = whole dim
    call2 = body[5]
    win = call2.args[1]
    assert win.name is w.name and win.type.src_type == w.rhs.type
    wr = body[6]
    assert isinstance(wr, IR.Assign) and wr.name is row.name
    assert len(wr.idx) == 1 and wr.rhs.name is w.name
    # DRAM_STATIC passes where DRAM is expected, SCRATCH is a subclass too
    check_calls(outer2.ir())


def test_window_extent_is_hi_minus_lo():
    @proc
    def foo(n: size, A: f32[n, n]):
        for i in seq(0, n - 1):
            w = A[i:n, 1:i + 1]

    w = foo.ir().body[0].body[0]
    h0, h1 = w.rhs.type.as_tensor.hi
    # extents are hi - lo in normal form: n - i, and (i + 1) - 1 == i
    assert h0.op == "-" and h0.type is IR.Index
    assert isinstance(h1, IR.Read) and h1.name.name == "i"


def test_config_and_stride():
    @config
    class Cfg:
        st: stride
        scale: f32
        on: bool
        k: int

    assert isinstance(Cfg, Config) and Cfg.name() == "Cfg"
    assert Cfg.fields() == (("st", IR.Stride), ("scale", IR.F32),
                            ("on", IR.Bool), ("k", IR.Int))

    @proc
    def foo(n: size, A: [f32][n, 8]):
        assert stride(A, 1) == 1
        Cfg.st = stride(A, 0)
        Cfg.scale = A[0, 0]
        Cfg.on = n > 2
        if Cfg.on:
            A[0, 0] = Cfg.scale * 2.0
        Cfg.k = Cfg.k + 1

    ir = foo.ir()
    (p, ) = ir.preds
    assert isinstance(p.lhs, IR.StrideExpr) and p.lhs.dim == 1
    assert p.lhs.type is IR.Stride
    b = ir.body
    assert isinstance(b[0], IR.WriteConfig) and b[0].config is Cfg
    assert b[0].field == "st" and isinstance(b[0].rhs, IR.StrideExpr)
    assert b[1].rhs.type is IR.F32
    assert isinstance(b[3].cond, IR.ReadConfig) and b[3].cond.type is IR.Bool
    assert b[3].body[0].rhs.lhs.type is IR.F32
    assert b[4].rhs.lhs.field == "k"


@pytest.mark.no_c_audit("the template calls a fictional foo() from <foo.h>")
def test_instr():
    @instr("foo({x_data}, {n});", c_global="#include <foo.h>")
    def foo_instr(n: size, x: [f32][n]):
        for i in seq(0, n):
            x[i] = 0.0

    assert foo_instr.is_instr()
    assert foo_instr.ir().instr == IR.Instr("foo({x_data}, {n});",
                                            "#include <foo.h>")

    @proc
    def user(A: f32[8]):
        foo_instr(4, A[2:6])

    assert user.ir().body[0].f.instr is not None


def test_builtin_and_user_externs():
    @extern("mymax({0}, {b})", c_global="float mymax(float a, float b);")
    def mymax(a, b):
        return max(a, b)

    assert isinstance(mymax, Extern) and mymax.name() == "mymax"
    assert mymax.compile(["x", "y"], "float") == "mymax(x, y)"
    assert mymax.interpret([1.0, 3.0]) == 3.0

    @proc
    def foo(x: f32[4], y: f64):
        x[0] = relu(x[1]) + sqrt(x[2])
        x[1] = select(x[0], 0, x[2], x[3])
        x[2] = mymax(x[3], -1)
        y = fmax(y, 2.0)

    b = foo.ir().body
    assert b[0].rhs.lhs.f is BUILTIN_EXTERNS["relu"]
    assert b[0].rhs.lhs.type is IR.F32
    sel = b[1].rhs
    assert sel.f is BUILTIN_EXTERNS["select"]
    assert sel.args[1] == IR.Const(0.0, type=IR.Num)
    assert b[2].rhs.f is mymax and b[2].rhs.args[1].val == -1.0
    assert b[3].rhs.type is IR.F64


def test_user_extern_typecheck_hook():
    @extern(lambda args, t: f"to_i32({args[0]})",
            typecheck=lambda ts: i32,
            c_global="int to_i32(float a);")
    def to_i32(a):
        return np.int32(a)

    @proc
    def foo(x: f32, y: i32):
        y = to_i32(x)

    assert foo.ir().body[0].rhs.type is IR.I32
    assert to_i32.compile(["v"], "int32_t") == "to_i32(v)"


def test_control_arithmetic_types():
    @proc
    def foo(n: size, A: f32[4 * n]):
        for i in seq(0, n):
            for j in seq(0, 4):
                A[4 * i + j] = A[(i * 4 + j) % 4]
                A[-j + 3] = A[(i + n) / 2]

    b = foo.ir().body[0].body[0].body
    idx = b[0].idx[0]
    assert idx.op == "+" and idx.type is IR.Index
    assert idx.lhs.op == "*" and idx.lhs.lhs == IR.Const(4, type=IR.Int)
    assert b[0].rhs.idx[0].op == "%"
    neg = b[1].idx[0].lhs
    assert isinstance(neg, IR.USub) and neg.type is IR.Index
    assert b[1].rhs.idx[0].op == "/"
    # a negative literal is a constant, not USub
    @proc
    def bar(A: f32[4]):
        A[3 + -1] = -2.0

    s = bar.ir().body[0]
    assert s.idx[0].rhs == IR.Const(-1, type=IR.Int)
    assert s.rhs == IR.Const(-2.0, type=IR.Num)


def test_scopes_closure_and_locals():
    MyMem = type("MyMem", (DRAM, ), {})

    def make():
        @proc
        def callee(x: f32[4] @ MyMem):  # MyMem: an enclosing local
            x[0] = 1.0
        return callee

    callee = make()

    @proc
    def caller(y: f32[4] @ MyMem):
        callee(y)

    assert callee.ir().args[0].mem is MyMem
    assert caller.ir().body[0].f is callee.ir()


def test_docstring_and_no_body():
    @proc
    def foo(n: size):
        """A docstring is ignored."""
        assert n > 1

    assert foo.ir().preds and isinstance(foo.ir().body[0], IR.Pass)


def test_unique_symbols_and_shadowing():
    @proc
    def foo(A: f32[4]):
        for i in seq(0, 2):
            A[i] = 0.0
        for i in seq(2, 4):
            A[i] = 1.0

    l1, l2 = foo.ir().body
    assert isinstance(l1.iter, Sym) and l1.iter is not l2.iter
    assert l1.body[0].idx[0].name is l1.iter
    assert l2.body[0].idx[0].name is l2.iter


def test_parse_proc_source_roundtrip_scope():
    class SCR(DRAM):
        pass

    @config
    class CfgX:
        v: f32

    @proc
    def callee(n: size, x: [f32][n] @ SCR):
        x[0] = CfgX.v

    text = '''
def top(A: f32[8] @ SCR):
    CfgX.v = 2.0
    callee(4, A[0:4])

@instr("ld({dst_data});")
def ld(dst: [f32][4] @ SCR):
    for i in seq(0, 4):
        dst[i] = 0.0
'''
    scope = {"f32": f32, "size": size, "seq": seq, "SCR": SCR,
             "CfgX": CfgX, "callee": callee}
    top = parse_proc_source(text, scope, filename="printed.py")
    assert top.name() == "top"
    assert top.ir().args[0].mem is SCR
    assert top.ir().body[0].config is CfgX
    assert top.ir().body[1].f is callee.ir()
    assert top.ir().srcinfo.filename == "printed.py"
    top2, ld = parse_procs_source(text, scope)
    assert ld.ir().instr == IR.Instr("ld({dst_data});", "")
    # reparsing the same text twice gives structurally equal IR modulo syms
    assert len(top2.ir().body) == len(top.ir().body)


def test_parse_float_literal_in_call_of_scalar_param():
    @proc
    def callee(x: f32):
        x = 1.0

    @proc
    def caller(a: f32):
        t: f32
        callee(t)
        callee(a)

    c1, c2 = caller.ir().body[1:]
    assert isinstance(c1.args[0], IR.Read) and c1.args[0].idx == ()
    assert c2.args[0].name is caller.ir().args[0].name


def test_static_checks_hook_is_called(monkeypatch):
    import sys
    import types as pytypes
    seen = []
    fake = pytypes.ModuleType("exo_hl.effects.bounds")
    fake.check_proc = lambda p: seen.append(p.name)
    monkeypatch.setitem(sys.modules, "exo_hl.effects.bounds", fake)

    @proc
    def hooked(n: size):
        pass

    assert seen == ["hooked"]


def test_dotted_config_and_memory_through_namespace():
    import types as pytypes

    class VREG(DRAM):
        pass

    @config
    class VCfg:
        n: int

    hw = pytypes.SimpleNamespace(VREG=VREG, VCfg=VCfg)

    @proc
    def foo(A: f32[8] @ hw.VREG):
        hw.VCfg.n = 3
        for i in seq(0, hw.VCfg.n + 1):
            A[i] = 0.0

    ir = foo.ir()
    assert ir.args[0].mem is VREG
    assert ir.body[0].config is VCfg and ir.body[0].rhs.val == 3
    hi = ir.body[1].hi
    assert isinstance(hi.lhs, IR.ReadConfig) and hi.lhs.type is IR.Int


def test_parse_source_has_surface_names_by_default():
    text = '''
def k(n: size, A: [f32][n, 4] @ DRAM):
    assert stride(A, 1) == 1
    for i in par(0, n):
        A[i, 0] = relu(A[i, 1])
'''
    p = parse_proc_source(text, {})
    loop = p.ir().body[0]
    assert loop.mode is IR.Par
    assert loop.body[0].rhs.f is BUILTIN_EXTERNS["relu"]


def test_check_calls_rechecks_changed_memory():
    """``check_calls`` is what a set_memory/set_precision rewrite reuses."""
    from exo_hl.errors import ExoTypeError

    class SCR(DRAM):
        pass

    @proc
    def callee(x: [f32][4] @ DRAM):
        x[0] = 0.0

    @proc
    def caller():
        t: f32[4]
        callee(t[0:4])

    ir = caller.ir()
    check_calls(ir)
    moved = ir.update(body=(ir.body[0].update(mem=SCR), ir.body[1]))
    check_calls(moved)  # SCR is a subclass of DRAM: still fine
    alloc = ir.body[0]
    wrong = ir.update(body=(alloc.update(type=alloc.type.update(type=IR.F64)),
                            ir.body[1]))
    # the call's argument type is stale after a precision change: the rewrite
    # must rebuild it; check_calls then sees the new element type
    arg = ir.body[1].args[0]
    new_arg = arg.update(type=arg.type.update(
        as_tensor=arg.type.as_tensor.update(type=IR.F64)))
    wrong = wrong.update(body=(wrong.body[0],
                               ir.body[1].update(args=(new_arg, ))))
    with pytest.raises(ExoTypeError, match="element type"):
        check_calls(wrong)


def test_all_element_types_and_alloc_with_value():
    from exo_hl import f16, i16, ui8, ui16

    @proc
    def foo(a: f16[2], b: f32[2], c: f64[2], d: i8[2], e: ui8[2],
            f: i16[2], g: ui16[2], h: i32[2], r: R[2]):
        t: f64 = 1.5
        c[0] = t

    elems = [a.type.type for a in foo.ir().args]
    assert elems == [IR.F16, IR.F32, IR.F64, IR.I8, IR.UI8, IR.I16, IR.UI16,
                     IR.I32, IR.Num]
    alloc, init, _ = foo.ir().body
    assert isinstance(alloc, IR.Alloc) and alloc.type is IR.F64
    assert isinstance(init, IR.Assign) and init.name is alloc.name
    assert init.rhs == IR.Const(1.5, type=IR.Num)


def test_window_args_passed_whole_and_window_names():
    @proc
    def callee(n: size, x: [f32][n]):
        x[0] = 0.0

    @proc
    def mid(n: size, y: [f32][n], A: f32[4, n]):
        callee(n, y)          # a window parameter passed on whole
        callee(n, A[1, :])    # a point + interval window
        r = A[2, 0:n]
        callee(n, r)          # a window name

    b = mid.ir().body
    y = mid.ir().args[1]
    assert isinstance(b[0].args[1], IR.Read) and b[0].args[1].type == y.type
    w = b[1].args[1]
    assert isinstance(w.idx[0], IR.Point) and isinstance(w.idx[1], IR.Interval)
    assert len(w.type.as_tensor.hi) == 1
    r = b[2]
    arg = b[3].args[1]
    assert isinstance(arg, IR.Read) and arg.name is r.name
    assert arg.type == r.rhs.type and isinstance(arg.type, IR.WindowType)


# Python constants of the defining scope are literals (module level here)
TILE = 16
HALF = np.int32(8)
SCALE = 0.5
DIM = 1


def test_python_int_constants_resolve_as_literals(assert_roundtrip):
    inner = 4

    @proc
    def tiled(n: size, x: f32[n, TILE], y: f32[n, TILE]):
        assert n % TILE == 0
        assert stride(x, DIM) == 1
        for i in seq(0, n):
            t: f32[TILE] @ DRAM_STATIC
            for j in seq(0, TILE):
                t[j] = x[i, j] * SCALE + TILE
            for j in seq(0, HALF):
                y[i, j + inner] = t[j + HALF - inner] + inner

    p = tiled.ir()
    c16 = IR.Const(16, type=IR.Int)
    assert p.args[1].type.hi == (IR.Read(p.args[0].name, (), type=IR.Size),
                                 c16)
    assert p.preds[0].lhs.rhs == c16
    assert p.preds[1].lhs == IR.StrideExpr(p.args[1].name, 1,
                                           type=IR.Stride)
    loop = p.body[0]
    alloc, fill, half = loop.body
    assert alloc.type.hi == (c16, )
    assert fill.hi == c16 and half.hi == IR.Const(8, type=IR.Int)
    # in data context: literals of type R
    rhs = fill.body[0].rhs
    assert rhs.rhs == IR.Const(16.0, type=IR.Num)
    assert rhs.lhs.rhs == IR.Const(0.5, type=IR.Num)
    assert str(tiled).splitlines()[0] == \
        "def tiled(n: size, x: f32[n, 16] @ DRAM, y: f32[n, 16] @ DRAM):"
    assert_roundtrip(tiled)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros((16, 16), np.float32)
    tiled.interpret(16, x, y)
    np.testing.assert_array_equal(y[:, 4:12], x[:, 4:12] * 0.5 + 20)


def test_non_numeric_scope_values_are_still_rejected():
    name = "not a number"
    with pytest.raises(exo_hl.ExoTypeError, match="'name' \\(str\\) cannot "
                       "be used as a value"):
        @proc
        def bad(x: f32[4]):
            x[0] = name
