"""The naming rule (docs/api.md §4, issue 33 items 11 and 16): where a name
is visible it denotes one symbol, and no binding spells a global the
procedure uses, so printing, patterns and ``.text()`` agree.

Before, a callee's loop ``i`` inlined into a caller's loop ``i`` printed as
``for i_1`` while patterns saw ``i`` (``find_loop('i_1')`` failed) and the
statement's ``.text()`` was ``y[i, i] = x[i, i] * 2.0`` (the diagonal, as
source); ``bind_expr(e, 'sub')`` next to a call of ``sub`` printed
``sub_1``."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.core_ir.names import fresh_name, respell

_spec = importlib.util.spec_from_file_location(
    "_rewrites_conftest_names",
    pathlib.Path(__file__).parent / "rewrites" / "conftest.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
check_equiv = _mod.check_equiv


def assert_names_agree(p):
    """Every loop is found by its printed name, and every statement's and
    expression's ``.text()`` is what the printer prints for it."""
    from exo_hl.core_ir.printer import proc_to_raw_str
    # one line per statement (before the printer breaks long lines)
    printed = [ln.strip() for ln in proc_to_raw_str(p.ir()).splitlines()]
    for c in _all_stmts(p):
        first = c.text().splitlines()[0].strip()
        assert first in printed, (first, str(p))
        if c.is_loop():
            assert c.path() in [x.path() for x in
                                p.find_loop(c.name(), many=True)], c.name()
            assert f"for {c.name()} in" in first
        elif c.is_alloc():
            assert c.path() in [x.path() for x in
                                p.find(f"{c.name()} : _", many=True)]


def _all_stmts(p):
    out = []

    def go(block):
        for c in block:
            out.append(c)
            if c.is_loop():
                go(c.body())
            elif c.is_if():
                go(c.body())
                try:
                    go(c.orelse())
                except SchedulingError:
                    pass
    go(p.body())
    return out


@proc
def row(n: size, x: [f32][n], y: [f32][n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0


@proc
def caller(m: size, n: size, x: f32[m, n], y: f32[m, n]):
    for i in seq(0, m):
        row(n, x[i, 0:n], y[i, 0:n])


def test_inlined_loop_is_named_as_printed():
    p = caller.inline("row(_)")
    assert "for i_1 in seq(0, n):" in str(p)
    inner = p.find_loop("i_1")
    assert inner.parent().name() == "i"
    assert inner.body()[0].text() == "y[i, i_1] = x[i, i_1] * 2.0"
    assert_names_agree(p)
    check_equiv(caller, p, [{"m": 3, "n": 5}])


def test_text_of_an_inlined_statement_reparses_to_it():
    # the text a composition builds code from must mean the same access
    p = caller.inline("row(_)")
    s = p.find_loop("i_1").body()[0]
    q = p.bind_expr(s.find("x[_]"), "xv")
    assert "xv = x[i, i_1]" in str(q)
    check_equiv(caller, q, [{"m": 2, "n": 4}])


@proc
def sub(x: f32[1]):
    x[0] = 1.0


@proc
def calls_sub(x: f32[1], y: f32[1]):
    y[0] = x[0] * 2.0
    sub(x)


def test_bind_expr_refuses_the_name_of_a_called_procedure():
    with pytest.raises(SchedulingError, match="'sub' names something"):
        calls_sub.bind_expr("x[0] * 2.0", "sub")
    q = calls_sub.bind_expr("x[0] * 2.0", "sub2")
    assert "sub2 = x[0] * 2.0" in str(q)
    assert_names_agree(q)


@proc
def loops_and_sub(n: size, x: f32[n], y: f32[1]):
    for i in seq(0, n):
        x[i] = 2.0
    sub(y)


def test_new_names_of_other_rewrites_refuse_globals_too():
    with pytest.raises(SchedulingError):
        loops_and_sub.split("i", 2, "sub", "ii", tail="cut")
    with pytest.raises(SchedulingError):
        loops_and_sub.stage_mem("i", "x[0:n]", "sub")
    with pytest.raises(SchedulingError):
        loops_and_sub.split("i", 2, "io", "seq", tail="cut")


@proc
def shadows(n: size, x: f32[n]):
    for i in seq(0, n):
        for i in seq(0, n):
            x[i] = 1.0


@proc
def alloc_shadows_arg(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x: f32
        x = y[i]
        y[i] = x * 2.0


def test_source_that_shadows_is_respelled_when_parsed():
    assert "for i_1 in seq(0, n):" in str(shadows)
    assert shadows.find_loop("i_1").body()[0].text() == "x[i_1] = 1.0"
    assert_names_agree(shadows)
    assert alloc_shadows_arg.find("x_1 : _").is_alloc()
    assert alloc_shadows_arg.find("x : _").name() == "x"   # the argument
    assert_names_agree(alloc_shadows_arg)


def test_respell_leaves_unambiguous_code_alone():
    ir = caller.ir()
    assert respell(ir) is ir
    two = caller.inline("row(_)")
    assert respell(two.ir()) is two.ir()


def test_fresh_name():
    assert fresh_name("t", {"x"}) == "t"
    assert fresh_name("t", {"t", "t_1", "t_3"}) == "t_2"


@proc
def inner3(n: size, x: [f32][n, n]):
    for i in seq(0, n):
        for j in seq(0, n):
            x[i, j] = x[j, i] + 1.0


@proc
def outer3(n: size, x: f32[n, n, n]):
    for j in seq(0, n):
        for i in seq(0, n):
            inner3(n, x[i, 0:n, 0:n])
        inner3(n, x[j, 0:n, 0:n])


def test_schedules_keep_names_agreeing():
    """A few schedules that bring names into scopes where they are taken
    (inline twice, unroll, lift): names keep agreeing after each step."""
    p = outer3
    for _ in range(2):
        p = p.inline("inner3(_)")
        assert_names_agree(p)
    assert "inner3" not in str(p)
    # the first inlined nest binds i and j inside the caller's j and i
    assert p.find_loop("i_1").body()[0].name() == "j_1"
    check_equiv(outer3, p, [{"n": 3}])


@proc
def addrow(n: size, x: [f32][n], y: [f32][n], z: [f32][n]):
    for i in seq(0, n):
        z[i] = x[i] + y[i]


@proc
def caller8(m: size, n: size, x: f32[m, n], y: f32[m, n], z: f32[m, n]):
    assert n % 8 == 0
    for i in seq(0, m):
        addrow(n, x[i, 0:n], y[i, 0:n], z[i, 0:n])


def test_vectorize_an_inlined_loop_builds_the_right_windows():
    # vectorize writes its windows from accesses' .text(): with the old
    # 'y[i, i]' text it would have staged the diagonal
    from exo_hl.hw_libs.avx2 import AVX2, INSTRS
    from exo_hl.stdlib import vectorize
    p = caller8.inline("addrow(_)")
    q = vectorize(p, "i_1", 8, AVX2, INSTRS)
    assert "x[i, 8 * i_1o:8 * i_1o + 8]" in str(q), str(q)
    check_equiv(caller8, q, [{"m": 3, "n": 16}])


def test_globals_used_covers_what_the_printer_reserves():
    from exo_hl.core_ir.names import globals_used
    from exo_hl.core_ir.printer import _names_in
    from exo_hl.hw_libs.avx2 import INSTRS as AVX
    from exo_hl.hw_libs.gemmini import INSTRS as GEM
    for p in (caller, calls_sub, loops_and_sub, outer3, *AVX, *GEM):
        assert globals_used(p.ir()) >= _names_in(p.ir())[0], p.name()


def test_expression_globals_are_what_a_walk_finds():
    """``names._expr_globals`` (a recursion over expression kinds) finds
    what a walk of every node finds, on every expression of procedures
    with config reads, externs, strides and windows."""
    from exo_hl.core_ir import names as NM
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.traversal import walk
    from exo_hl.hw_libs.avx2 import INSTRS as AVX
    from exo_hl.hw_libs.gemmini import INSTRS as GEM
    seen = set()
    count = 0
    for p in (caller, calls_sub, loops_and_sub, outer3, *AVX, *GEM):
        ir = p.ir()
        for node in walk(ir):
            if isinstance(node, IR.expr):
                ref = set()
                NM._walk_globals(node, ref)
                assert NM._expr_globals(node) == frozenset(ref)
                seen |= ref
                count += 1
    assert count > 100 and "stride" in seen and len(seen) > 1


@proc
def cal2(n: size, x: [f32][n, n], y: [f32][n, n]):
    for j in seq(0, n):
        for i in seq(0, n):
            t: f32
            t = x[j, i] * 2.0
            y[i, j] = t + 1.0


@proc
def top2(n: size, x: f32[n, n, n], y: f32[n, n, n]):
    for i in seq(0, n):
        for j in seq(0, n):
            t: f32
            t = x[i, j, 0]
            y[i, j, 0] = t
        cal2(n, x[i, 0:n, 0:n], y[i, 0:n, 0:n])
    for t in seq(0, n):
        cal2(n, x[t, 0:n, 0:n], y[t, 0:n, 0:n])


def _random_step(p, rng):
    """One rewrite that binds names (inline, split, unroll, bind_expr,
    lift_alloc, fission_after) at a random place."""
    loops = _all_stmts(p)
    kind = rng.choice(["inline", "split", "unroll", "bind", "lift",
                       "fission"])
    pick = loops[rng.integers(len(loops))]
    names = ["i", "j", "t", "x", "t_1", "i_1", "cal2", "seq", "w"]
    if kind == "inline":
        return p.inline("cal2(_)")
    if kind == "split" and pick.is_loop():
        return p.split(pick, 2, rng.choice(names), rng.choice(names),
                       tail="cut")
    if kind == "unroll" and pick.is_loop():
        return p.unroll_loop(pick, 2)
    if kind == "bind" and pick.is_write():
        return p.bind_expr(pick.rhs(), rng.choice(names))
    if kind == "lift" and pick.is_alloc():
        return p.lift_alloc(pick)
    if kind == "fission" and pick.is_write():
        return p.fission_after(pick)
    return p


def test_random_schedules_keep_names_agreeing():
    """Random rewrites that bind names, over code whose callee reuses the
    caller's names: every procedure reached keeps printing, patterns and
    ``.text()`` in agreement, and a refused step is a SchedulingError."""
    import numpy as np
    rng = np.random.default_rng(7)
    reached = 0
    for trial in range(5):
        p = top2
        for _ in range(5):
            try:
                q = _random_step(p, rng)
            except SchedulingError:
                continue
            if q is not p:
                assert_names_agree(q)
                reached += 1
            p = q
        check_equiv(top2, p, [{"n": 2}], compiled=False)
    assert reached >= 8


def _respell_reference(proc_ir):
    """``names.respell`` as it was written first: a scope dict copied for
    each nested block."""
    from exo_hl.core_ir.names import fresh_name, globals_used
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.printer import _names_in
    from exo_hl.core_ir.syms import Sym
    from exo_hl.core_ir.traversal import subst
    reserved = globals_used(proc_ir)
    taken, decided, env = None, {}, {}

    def bind(sym, scope):
        nonlocal taken
        nm = decided.get(sym)
        if nm is None:
            nm = sym.name
            other = scope.get(nm)
            if (other is not None and other is not sym) or nm in reserved:
                if taken is None:
                    taken = set(reserved) | _names_in(proc_ir)[1]
                nm = fresh_name(sym.name, taken)
                env[sym] = Sym(nm)
            if taken is not None:
                taken.add(nm)
            decided[sym] = nm
        scope[nm] = sym

    def block(stmts, scope):
        for s in stmts:
            if type(s) is IR.If:
                block(s.body, dict(scope))
                block(s.orelse, dict(scope))
            elif type(s) is IR.For:
                inner = dict(scope)
                bind(s.iter, inner)
                block(s.body, inner)
            elif type(s) in (IR.Alloc, IR.WindowStmt):
                bind(s.name, scope)
    block(proc_ir.body, {a.name.name: a.name for a in proc_ir.args})
    return [(k, v.name) for k, v in env.items()]


def test_respell_with_one_undone_scope_renames_as_with_copies():
    """Random renamings of the binders of a few procedures to a handful
    of spellings (loops and allocations in loops, branches and siblings,
    a callee's name): ``respell`` renames the same symbols to the same
    spellings as the scope-copying version."""
    import random
    from exo_hl.core_ir.names import respell
    from exo_hl.core_ir.traversal import bound_syms, subst
    from exo_hl.core_ir.syms import Sym
    rng = random.Random(3)
    bases = [caller.inline("row(_)").ir(), outer3.ir(), shadows.ir(),
             alloc_shadows_arg.ir(), loops_and_sub.ir()]
    renamed = 0
    for _ in range(120):
        ir = rng.choice(bases)
        syms = bound_syms(ir.body)
        env = {s: Sym(rng.choice(["i", "j", "x", "n", "sub", s.name]))
               for s in syms}
        body = tuple(subst(s, env) for s in ir.body)
        new = ir.update(body=body)
        want = _respell_reference(new)
        out = respell(new)
        back = {}
        for a, b in zip(bound_syms(new.body), bound_syms(out.body)):
            if a is not b:
                back[a] = b.name
        assert sorted((k.name, id(k), v) for k, v in back.items()) == \
            sorted((k.name, id(k), v) for k, v in want), (want, back)
        renamed += bool(want)
    assert renamed > 20
