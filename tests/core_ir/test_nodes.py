"""IR node classes, symbols and the traversal helpers (docs/internals.md)."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, f32, proc, seq, size  # noqa: F401
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import alpha_equal, stmt_to_str
from exo_hl.core_ir.srcinfo import SrcInfo
from exo_hl.core_ir.syms import Sym
from exo_hl.core_ir.traversal import (children, free_vars, fresh_copy,
                                      map_node, subst, used_syms, walk,
                                      walk_stmts)


def idx(s):
    return IR.Read(s, (), type=IR.Index)


def c(v):
    return IR.Const(v, type=IR.Int)


# ---------------------------------------------------------------------------
# nodes


def test_nodes_are_immutable_and_update_copies():
    i = Sym("i")
    e = IR.BinOp("+", idx(i), c(1), type=IR.Index)
    with pytest.raises(AttributeError):
        e.op = "-"
    e2 = e.update(op="-")
    assert e.op == "+" and e2.op == "-" and e2.lhs is e.lhs
    with pytest.raises(TypeError):
        e.update(nonsense=1)
    with pytest.raises(TypeError):
        IR.BinOp("+", idx(i))  # missing rhs


def test_equality_and_hash_ignore_srcinfo():
    i = Sym("i")
    a = IR.Read(i, (), type=IR.Index, srcinfo=SrcInfo("a.py", 1))
    b = IR.Read(i, (), type=IR.Index, srcinfo=SrcInfo("b.py", 9))
    assert a == b and hash(a) == hash(b)
    assert a != IR.Read(Sym("i"), (), type=IR.Index)  # symbols by identity
    assert a != a.update(type=IR.Size)
    assert len({a, b}) == 1


def test_singletons_and_sequence_fields():
    assert type(IR.F32) is IR.F32_cls and IR.F32 == IR.F32_cls()
    assert isinstance(IR.F32, IR.type) and isinstance(IR.Seq, IR.loop_mode)
    assert IR.F32.update() is IR.F32
    t = IR.Tensor([c(4), c(5)], False, IR.F32)
    assert isinstance(t.hi, tuple) and len(t.hi) == 2
    f = IR.For(Sym("i"), c(0), c(4), [IR.Pass()], IR.Seq)
    assert isinstance(f.body, tuple)
    assert IR.If(IR.Const(True, type=IR.Bool), (IR.Pass(), )).orelse == ()
    assert IR.FnArg.__name__ == 'FnArg'


def test_syms_unique_and_copy():
    a, b = Sym("x"), Sym("x")
    assert a != b and a.name == b.name and a.id != b.id
    a2 = a.copy()
    assert a2 != a and a2.name == "x"
    assert str(a) == "x" and repr(a) == f"x_{a.id}"
    with pytest.raises(TypeError):
        Sym("")


# ---------------------------------------------------------------------------
# traversal


@proc
def nest(n: size, A: f32[n, n] @ DRAM, x: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f32[n] @ DRAM
        for j in seq(0, n):
            t[j] = A[i, j]
        if i < n - 1:
            x[i] += t[i + 1]


def test_children_walk_and_walk_stmts():
    loop = nest.ir().body[0]
    kids = list(children(loop))
    assert kids[0] == loop.lo and kids[1] == loop.hi
    assert kids[2:] == list(loop.body)
    assert not any(isinstance(k, (IR.type, IR.loop_mode)) for k in kids)
    kinds = [type(n).__name__ for n in walk(loop)]
    assert kinds[0] == "For" and kinds.count("For") == 2
    assert kinds.index("Alloc") < kinds.index("Assign") < kinds.index("If")
    stmts = [type(s).__name__ for s in walk_stmts(nest.ir().body)]
    assert stmts == ["For", "Alloc", "For", "Assign", "If", "Reduce"]


def test_call_callee_is_not_a_child():
    @proc
    def caller(n: size, A: f32[n, n] @ DRAM, x: f32[n] @ DRAM):
        nest(n, A, x)

    call = caller.ir().body[0]
    assert all(not isinstance(k, IR.Proc) for k in children(call))
    assert not any(isinstance(s, IR.For) for s in walk(call))


def test_map_node_shares_unchanged_subtrees():
    body = nest.ir().body
    same = map_node(body[0], lambda n: None)
    assert same is body[0]

    def plus_to_minus(n):
        if isinstance(n, IR.BinOp) and n.op == "+":
            return n.update(op="-")
        return None
    out = map_node(body[0], plus_to_minus)
    assert "x[i] += t[i - 1]" in stmt_to_str(out)
    assert out.body[1] is body[0].body[1]  # the j loop had no '+'


def test_subst_expression_and_rename():
    n, A, x = (a.name for a in nest.ir().args)
    loop = nest.ir().body[0]
    i = loop.iter
    k = Sym("k")
    body = subst(loop.body[2], {i: IR.BinOp("*", idx(k), c(2),
                                            type=IR.Index)})
    assert stmt_to_str(body) == ("if k * 2 < n - 1:\n"
                                 "    x[k * 2] += t[k * 2 + 1]")
    x2 = Sym("y")
    renamed = subst(loop.body[2], {x: x2})
    assert renamed.body[0].name is x2
    # sizes inside types are substituted too
    alloc = subst(loop.body[0], {n: c(8)})
    assert alloc.type.hi == (c(8), )


def test_free_vars_and_used_syms():
    p = nest.ir()
    n, A, x = (a.name for a in p.args)
    loop = p.body[0]
    assert free_vars(loop) == {n, A, x}
    assert free_vars(loop.body[1]) >= {loop.iter, A}
    inner = loop.body[1]
    assert inner.iter not in free_vars(inner)
    used = used_syms(p.body)
    assert {n, A, x, loop.iter, inner.iter} <= used


def test_fresh_copy_renames_bound_symbols_only():
    body = nest.ir().body
    copy = fresh_copy(body)
    assert alpha_equal(body, copy)
    assert copy != body
    assert copy[0].iter != body[0].iter
    assert copy[0].iter.name == body[0].iter.name
    n = nest.ir().args[0].name
    assert n in free_vars(copy[0])  # free symbols are kept


def test_alpha_equal_requires_bijection():
    i, j = Sym("i"), Sym("j")
    e1 = IR.BinOp("+", idx(i), idx(j), type=IR.Index)
    e2 = IR.BinOp("+", idx(j), idx(j), type=IR.Index)
    e3 = IR.BinOp("+", idx(Sym("a")), idx(Sym("b")), type=IR.Index)
    assert alpha_equal(e1, e3)
    assert not alpha_equal(e1, e2) and not alpha_equal(e2, e1)
    assert not alpha_equal(IR.Const(1, type=IR.Int),
                           IR.Const(True, type=IR.Int))
