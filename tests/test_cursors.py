"""Cursors: navigation, blocks, forwarding along derivations, and the
shared rewrite helpers of ``rewrites/_common.py`` that build on them."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, SchedulingError, f32, proc, seq, size  # noqa: F401
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import stmt_to_str
from exo_hl.cursors import (ArgCursor, BlockCursor, ExprCursor, GapCursor,
                            InvalidCursorError, StmtCursor)
from exo_hl.rewrites import _common as C


@proc
def foo(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        x[i] = 1.0
        y[i] = x[i] + 2.0
        if i < 3:
            x[i] = 0.0
        else:
            y[i] = 0.0
    for j in seq(0, n):
        y[j] += x[j]


def first_line(c):
    return stmt_to_str(c.node()).splitlines()[0]


def test_statement_navigation():
    s = foo.find("y[_] = _")
    assert isinstance(s, StmtCursor)
    assert s.path() == (("body", 0), ("body", 1))
    assert s.proc() is foo
    assert first_line(s) == "y[i] = x[i] + 2.0"
    assert first_line(s.prev()) == "x[i] = 1.0"
    assert first_line(s.next()) == "if i < 3:"
    assert s.parent() == foo.find_loop("i")
    assert s.parent().is_loop() and not s.is_loop()
    assert s.name() == "y"
    assert foo.find_loop("i").name() == "i"
    with pytest.raises(SchedulingError, match="no previous statement"):
        s.prev().prev()
    with pytest.raises(SchedulingError, match="no parent"):
        foo.find_loop("i").parent()
    with pytest.raises(SchedulingError, match="no next"):
        foo.find_loop("j").next()
    # cursors are values
    assert s == foo.find("y[_] = _") and hash(s) == hash(foo.find("y[_] = _"))
    assert s != s.prev()
    with pytest.raises(AttributeError):
        s._path = ()


def test_blocks_body_orelse_expand():
    loop = foo.find_loop("i")
    body = loop.body()
    assert isinstance(body, BlockCursor) and len(body) == 3
    assert [first_line(c) for c in body] == \
        ["x[i] = 1.0", "y[i] = x[i] + 2.0", "if i < 3:"]
    assert body.parent() == loop
    iff = foo.find("if _: _")
    assert [first_line(c) for c in iff.orelse()] == ["y[i] = 0.0"]
    assert [first_line(c) for c in iff.body()] == ["x[i] = 0.0"]
    with pytest.raises(SchedulingError, match="has no body"):
        foo.find("x[_] = 1.0").body()
    mid = foo.find("y[_] = _")
    b = mid.expand(1, 0)
    assert b.range() == (0, 2) and b.first() == mid.prev() and b.last() == mid
    assert mid.expand(0, 1).range() == (1, 3)
    assert mid.expand(None, None) == body
    assert mid.expand(5, 5) == body  # clamped
    assert mid.as_block().expand(1, 1) == body
    assert len(foo.body()) == 2 and foo.body()[1] == foo.find_loop("j")
    with pytest.raises(SchedulingError, match="no parent"):
        foo.body().parent()
    gap = mid.after()
    assert isinstance(gap, GapCursor)
    assert gap.location() == ((("body", 0), ), "body", 2)
    assert mid.before().location()[2] == 1


def test_expression_and_arg_cursors():
    e = foo.find("x[i] + 2.0")
    assert isinstance(e, ExprCursor)
    assert e.stmt() == foo.find("y[_] = _")
    assert e.expr_path() == (("rhs", None), )
    lhs = foo.find("x[i]")
    assert lhs.parent() == e
    assert e.parent() == e.stmt()
    assert foo.find_loop("i").hi().node().name.name == "n"
    assert foo.find("if _: _").cond().node().op == "<"
    assert [c.node().name.name for c in foo.find("y[_] = _").idx()] == ["i"]
    args = foo.args()
    assert [a.name() for a in args] == ["n", "x", "y"]
    assert all(isinstance(a, ArgCursor) for a in args)
    assert args[1].is_tensor() and not args[0].is_tensor()
    assert foo.find("x") == args[1]


def test_find_within_a_statement():
    j = foo.find_loop("j")
    assert j.find("x[_]").stmt().path()[0] == ("body", 1)
    with pytest.raises(SchedulingError):
        j.find("if _: _")



def test_find_within_searches_the_subtree_only_with_the_same_matches():
    """A statement cursor's ``find`` walks only its own subtree; the
    matches (kinds, order, ``#k``, expressions, names, a name only an
    argument has) are those of the whole procedure under its path."""
    from exo_hl import patterns as P
    p = foo.split('i', 2, 'io', 'ii', tail='cut')
    pats = ["x[_]", "y[_] = _", "y[_] += _", "if _: _", "for _ in _: _",
            "ii", "io", "j", "x", "n", "i", "ii #1", "x[_] #1", "_ + _",
            "_ < _", "y[_] = _ #2"]
    ir = p.ir()
    for path, _ in P.stmt_paths(ir):
        c = StmtCursor(p, path)
        for pat in pats:
            for want in (None, "loop", "stmt", "expr", "buffer"):
                whole = [loc for loc in P.match(pat, ir, want)
                         if loc[0] != "arg" and loc[1][:len(path)] == path]
                part = [loc for loc in P.match(pat, ir, want, path)
                        if loc[0] != "arg"]
                assert part == whole, (pat, want, path)
            try:
                got = [x.path() for x in c.find(pat, many=True)]
            except SchedulingError:
                got = None
            sel = P.select(pat, [loc for loc in P.match(pat, ir)
                                 if loc[0] != "arg"
                                 and loc[1][:len(path)] == path])
            assert got == ([loc[1] for loc in sel] or None) \
                or all(loc[0] == "expr" for loc in sel), (pat, path)

def test_forward_through_rename_and_simplify():
    c = foo.find("y[_] = _")
    e = foo.find("x[i] + 2.0")
    p1 = foo.rename("bar")
    p2 = p1.simplify()
    c2 = p2.forward(c)
    assert c2.proc() is p2 and c2.path() == c.path()
    assert c2.node() == c.node()
    assert p2.forward(e).node() == e.node()
    assert p2.forward(foo.args()[2]).name() == "y"
    assert p2.forward(foo.body()) == p2.body()
    assert p1.forward(c) == p2.forward(c).proc().parent().forward(c)
    # a cursor of the same procedure forwards to itself
    assert p2.forward(c2) is c2


def test_forward_rejects_non_ancestors():
    other = foo.rename("other")
    c = other.find_loop("i")
    with pytest.raises(SchedulingError, match="nor one of its ancestors"):
        foo.forward(c)
    with pytest.raises(SchedulingError, match="nor one of its ancestors"):
        foo.rename("x").forward(c)


def test_forward_error_tells_same_named_procedures_apart():
    @proc
    def foo(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):  # noqa: F811
        for i in seq(0, n):
            x[i] = 1.0

    mine = globals()["foo"].split("i", 4, "io", "ii")
    theirs = foo.split("i", 2, "io", "ii", tail="cut").rename("foo")
    with pytest.raises(SchedulingError) as e:
        theirs.forward(mine.find_loop("io"))
    msg = str(e.value)
    here = __file__
    first_line = globals()["foo"].ir().srcinfo.lineno
    assert msg.startswith(
        f"forward(): the cursor belongs to procedure 'foo' (written at "
        f"{here}:{first_line}, then split) (a different procedure with the "
        f"same name), which is neither the receiver 'foo' (written at "
        f"{here}:{foo.ir().srcinfo.lineno}, then split, rename) nor one of "
        f"its ancestors")
    assert "forwarded from the receiver or a procedure it was derived " \
        "from" in msg


def test_forward_through_handbuilt_insert_and_wrap():
    # insert a statement at the top of loop i's body
    loop_path, loop = C.resolve_loop(foo, "i")
    new = IR.Pass(srcinfo=loop.srcinfo)
    ir1 = C.insert_stmts_at(foo.ir(), loop_path, "body", 0, [new])
    p1 = foo._derive(ir1, "insert_pass",
                     forward=C.forward_insert(loop_path, "body", 0, 1))
    c = foo.find("y[_] = _")
    assert p1.forward(c).path() == (("body", 0), ("body", 2))
    assert p1.forward(c).node() == c.node()
    assert p1.forward(foo.find_loop("j")) == p1.find_loop("j")
    # then wrap the two top-level loops in an `if`
    n = foo.ir().args[0].name
    cond = IR.BinOp(">", IR.Read(n, (), type=IR.Size),
                    IR.Const(0, type=IR.Int), type=IR.Bool)
    guard = IR.If(cond, ir1.body, (), srcinfo=loop.srcinfo)
    ir2 = C.replace_block_at(ir1, (), "body", 0, 2, [guard])
    p2 = p1._derive(ir2, "wrap", forward=C.forward_wrap((), "body", 0, 2))
    c2 = p2.forward(c)
    assert c2.path() == (("body", 0), ("body", 0), ("body", 2))
    assert c2.node() == c.node()
    assert p2.forward(foo.find("x[j]")).node() == foo.find("x[j]").node()
    assert p2.forward(foo.find_loop("i").body()).range() == (1, 4)
    # the gap after the first loop follows it into the if
    g = p2.forward(foo.find_loop("i").after())
    assert g.location() == ((("body", 0), ), "body", 1)


def test_forward_through_delete_and_unwrap():
    c_if = foo.find("if _: _")
    c_x = c_if.body()[0]
    c_y = foo.find("y[_] = _")
    # delete the `y[i] = ...` statement
    ir1 = C.replace_stmts_at(foo.ir(), c_y.path(), [])
    p1 = foo._derive(ir1, "delete", forward=C.forward_delete(
        c_y.path()[:-1], "body", 1, 2))
    with pytest.raises(SchedulingError, match="no longer denotes"):
        p1.forward(c_y)
    assert p1.forward(c_if).path() == (("body", 0), ("body", 1))
    # a block that lost a statement has no image (docs/api.md §4): it is
    # invalid rather than a smaller block
    with pytest.raises(SchedulingError, match="no longer denotes"):
        p1.forward(foo.find_loop("i").body())
    # unwrap the if, keeping its then-branch
    if_path = p1.forward(c_if).path()
    if_stmt = C.get_stmt(ir1, if_path)
    ir2 = C.replace_stmts_at(ir1, if_path, if_stmt.body)
    p2 = p1._derive(ir2, "unwrap", forward=C.forward_unwrap(
        if_path, len(if_stmt.body)))
    assert p2.forward(c_x).path() == (("body", 0), ("body", 1))
    assert p2.forward(c_x).node() == c_x.node()
    with pytest.raises(SchedulingError, match="no longer denotes"):
        p2.forward(c_if)
    with pytest.raises(SchedulingError):
        p2.forward(c_if.orelse()[0])
    # an expression cursor whose statement survived follows it
    e = foo.find("x[j]")
    assert p2.forward(e).node() == e.node()


def test_forward_replace_table_compose():
    fwd = C.forward_compose(
        C.forward_replace((("body", 0), ), 2),
        C.forward_table({(("body", 2), ): (("body", 5), )}))
    assert fwd((("body", 1), ("body", 0))) == (("body", 5), ("body", 0))
    with pytest.raises(InvalidCursorError):
        fwd((("body", 0), ("body", 0)))
    keep = C.forward_replace((("body", 0), ), 1, keep_inside=True)
    assert keep((("body", 0), ("body", 2))) == (("body", 0), ("body", 2))
    gone = C.forward_table({(("body", 0), ): None})
    with pytest.raises(InvalidCursorError):
        gone((("body", 0), ("orelse", 1)))
    # argument paths never move with statement edits
    assert fwd((("args", 1), )) == (("args", 1), )
    moved = C.forward_move((("body", 0), ("body", 1)), (("body", 3), ))
    assert moved((("body", 0), ("body", 1), ("orelse", 0))) == \
        (("body", 3), ("orelse", 0))


def test_resolve_helpers():
    path, s = C.resolve_stmt(foo, "y[_] = _", "op")
    assert isinstance(s, IR.Assign) and path == foo.find("y[_] = _").path()
    p1 = foo.rename("foo2")
    # a cursor of an ancestor is forwarded
    assert C.resolve_stmt(p1, foo.find("y[_] = _"))[0] == path
    with pytest.raises(SchedulingError, match="expected a loop"):
        C.resolve_loop(foo, foo.find("y[_] = _"), "split")
    assert C.resolve_loop(foo, "j")[1].iter.name == "j"
    blk = C.resolve_block(foo, (foo.find("x[_] = 1.0"), "y[_] = _"))
    assert (blk.lo, blk.hi, len(blk.stmts)) == (0, 2, 2)
    assert C.resolve_block(foo, foo.find_loop("i").body()).hi == 3
    with pytest.raises(SchedulingError, match="sibling"):
        C.resolve_block(foo, ("x[_] = 1.0", "y[_] += _"))
    with pytest.raises(SchedulingError, match="precede"):
        C.resolve_block(foo, ("y[_] = _", "x[_] = 1.0"))
    sp, ep, e = C.resolve_expr(foo, "x[i] + 2.0")
    assert e.op == "+" and sp == path
    with pytest.raises(SchedulingError, match="expected an expression"):
        C.resolve_expr(foo, foo.find_loop("i"))
    b = C.resolve_buffer(foo, "x")
    assert b.kind == "arg" and b.loc == 1 and b.sym.name == "x"
    with pytest.raises(SchedulingError, match="expected a buffer"):
        C.resolve_buffer(foo, foo.find_loop("i"))
    with pytest.raises(SchedulingError, match="not a valid"):
        C.check_identifier(foo, "for", "split")


def test_scheduling_error_message():
    path, s = C.resolve_stmt(foo, "y[_] = _")
    err = C.scheduling_error(foo, s, "reorder: cannot do it")
    msg = str(err)
    assert isinstance(err, SchedulingError)
    assert "in procedure 'foo'" in msg and "reorder: cannot do it" in msg
    assert "y[i] = x[i] + 2.0" in msg
    assert f"{__file__}:{s.srcinfo.lineno}" in msg
    # wrapping (as some rewrites do) keeps the text
    assert str(SchedulingError(err)) == msg


def test_replace_helpers_share_unchanged_subtrees():
    ir = foo.ir()
    path, s = C.resolve_stmt(foo, "y[_] = _")
    new = C.replace_stmts_at(ir, path, (IR.Pass(), IR.Pass()))
    assert len(new.body[0].body) == 4
    assert new.body[1] is ir.body[1]
    assert new.body[0].body[0] is ir.body[0].body[0]
    assert ir.body[0].body[1] == s  # the original is untouched
    env = C.ranges_at(ir, path)
    assert env[ir.body[0].iter] == (0, None)


@proc
def idx(n: size, x: f32[n + 1]):
    for i in seq(0, n):
        x[i + 1 - 1] = x[(i + 2) - 1]


def test_expression_cursor_into_rewritten_expression_is_invalid():
    e = idx.find("x[_] #0")            # the read x[(i + 2) - 1]
    inner = idx.find("_ + 2")          # the subexpression i + 2
    p = idx.simplify()
    # the statement's expressions were rewritten and simplify does not say
    # where each went: no image is known, so neither forwards
    for c in (e, inner):
        with pytest.raises(SchedulingError, match="no longer denotes"):
            p.forward(c)               # now x[i + 1]: no `_ + 2` left


def test_gap_cursors_as_statement_positions():
    # fission at a gap: after a statement, or before the next one
    y = foo.find("y[_] = _")
    a = foo.fission_after(y)
    assert str(foo.fission_after(y.after())) == str(a)
    assert str(foo.fission_after(foo.find("x[_] = 1.0").after())) == \
        str(foo.fission_after("x[_] = 1.0"))
    assert str(foo.fission_after(foo.find("if _: _").before())) == str(a)
    # a gap at the start of a block has nothing before it to split off
    with pytest.raises(SchedulingError, match="nothing precedes the gap"):
        foo.fission_after(foo.find("x[_] = 1.0").before())
    # a gap of an ancestor procedure is forwarded first
    q = foo.rename("foo2")
    assert str(q.fission_after(y.after())) == \
        str(q.fission_after("y[_] = _"))
    # the resolver itself
    s, before = C.resolve_position(foo, y.after())
    assert s.path() == y.path() and before is False
    s, before = C.resolve_position(foo, foo.find_loop("i").before())
    assert s.path() == (("body", 0), ) and before is True
    assert C.resolve_position(foo, "y[_] = _") == ("y[_] = _", False)


def test_text_is_the_printed_source():
    s = foo.find("y[_] = _")
    assert s.text() == "y[i] = x[i] + 2.0"
    # a compound statement: its whole body, indented as printed
    assert foo.find_loop("j").text() == "for j in seq(0, n):\n    y[j] += x[j]"
    assert foo.find("if _: _").text() == (
        "if i < 3:\n    x[i] = 0.0\nelse:\n    y[i] = 0.0")
    # a block: its statements one after the other
    assert foo.find_loop("i").body().text() == (
        "x[i] = 1.0\ny[i] = x[i] + 2.0\nif i < 3:\n    x[i] = 0.0\n"
        "else:\n    y[i] = 0.0")
    # expressions and arguments
    assert foo.find("x[_] + _").text() == "x[i] + 2.0"
    assert foo.find_loop("i").hi().text() == "n"
    assert [a.text() for a in foo.args()] == [
        "n: size", "x: f32[n] @ DRAM", "y: f32[n] @ DRAM"]
    # the text parses back as a pattern that finds the same statement
    assert foo.find(s.text()) == s


def test_expand_refuses_what_is_not_a_growth():
    # expand(-1, -1) shrank the block to its middle statement and
    # expand(0, 1.5) made a block with a fractional bound
    from exo_hl import SchedulingError
    b = _three.body()
    for lo, hi in ((-1, -1), (0, -1), (0, 1.5), (True, 0), ("1", 0)):
        with pytest.raises(SchedulingError, match="non-negative"):
            b.expand(lo, hi)
    assert len(_three.find('x[1] = _').expand(None, 0)) == 2


@proc
def _three(x: f32[4]):
    x[0] = 1.0
    x[1] = 2.0
    x[2] = 3.0


def test_next_and_prev_move_by_a_positive_count():
    # next(-1) was the previous statement, next(0) the statement itself
    s = _three.find('x[1] = _')
    assert s.next().name() == 'x' and s.next().path() == (("body", 2), )
    assert s.prev(1).path() == (("body", 0), )
    for bad in (-1, 0, 1.0, True):
        with pytest.raises(SchedulingError, match="positive int"):
            s.next(bad)
        with pytest.raises(SchedulingError, match="positive int"):
            s.prev(bad)
