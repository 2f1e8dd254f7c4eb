"""Forwarding is exact (docs/api.md §4): for every public scheduling method
and every kind of cursor (statement, block, gap, expression, argument), a
cursor forwarded through the rewrite denotes the image of what it denoted,
or raises ``InvalidCursorError``.

The image is found independently of the forwarding code: before the
rewrite, every statement, expression and argument of the procedure gets a
unique marker in its ``srcinfo`` (which never takes part in equality, and
which rewrites carry along with the nodes they keep or rebuild). A node's
images are the nodes of the result with its marker.

The regression tests below the property test are the defects of issue 33
(part A), each on the smallest program that showed it.
"""
from __future__ import annotations

import inspect
import itertools

import pytest

from exo_hl import DRAM, DRAM_STATIC, config, f32, instr, proc, seq, size
from exo_hl.api import Procedure
from exo_hl.hw_libs.avx2 import mm_prefetch_t0
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.paths import get_list, get_stmt, walk_with_paths
from exo_hl.core_ir.srcinfo import SrcInfo
from exo_hl.cursors import (ArgCursor, BlockCursor, ExprCursor, GapCursor,
                            InvalidCursorError, StmtCursor)

_TAG = "<forwarding-tag>"


# ----------------------------------------------------------------------
# tagging: a unique marker on every node a cursor can denote
def _tag(node, counter):
    changes = {}
    for f in node._fields:
        v = getattr(node, f)
        if isinstance(v, (IR.stmt, IR.expr, IR.w_access)):
            changes[f] = _tag(v, counter)
        elif (isinstance(v, tuple) and v and all(
                isinstance(x, (IR.stmt, IR.expr, IR.w_access)) for x in v)):
            changes[f] = tuple(_tag(x, counter) for x in v)
    changes["srcinfo"] = SrcInfo(_TAG, next(counter))
    return node.update(**changes)


def tagged(p):
    """``p`` (a root procedure) with every node marked."""
    counter = itertools.count(1)
    ir = p.ir()
    args = tuple(a.update(srcinfo=SrcInfo(_TAG, next(counter)))
                 for a in ir.args)
    body = tuple(_tag(s, counter) for s in ir.body)
    return Procedure(ir.update(args=args, body=body))


def mark(node):
    si = getattr(node, "srcinfo", None)
    return si.lineno if si is not None and si.filename == _TAG else None


def _marks_below(stmt):
    out = set()
    for _, s in walk_with_paths((stmt, )):
        out.add(mark(s))
    return out


# ----------------------------------------------------------------------
# every cursor into a procedure
def _lists(ir):
    yield (), "body", ir.body
    for path, s in walk_with_paths(ir.body):
        if isinstance(s, IR.For):
            yield path, "body", s.body
        elif isinstance(s, IR.If):
            yield path, "body", s.body
            if s.orelse:
                yield path, "orelse", s.orelse


def _expr_paths(node, prefix=()):
    for f in node._fields:
        v = getattr(node, f)
        if isinstance(v, (IR.expr, IR.w_access)):
            steps = [((f, None), v)]
        elif isinstance(v, tuple) and v and isinstance(
                v[0], (IR.expr, IR.w_access)):
            steps = [((f, i), x) for i, x in enumerate(v)]
        else:
            continue
        for step, x in steps:
            if isinstance(x, IR.expr):
                yield prefix + (step, )
            yield from _expr_paths(x, prefix + (step, ))


def all_cursors(p):
    ir = p.ir()
    for path, s in walk_with_paths(ir.body):
        yield StmtCursor(p, path)
        for ep in _expr_paths(s):
            yield ExprCursor(p, path, ep)
    for parent, field, lst in _lists(ir):
        n = len(lst)
        for i in range(n + 1):
            yield GapCursor(p, parent, field, i)
        for lo in range(n):
            for hi in range(lo + 1, min(n, lo + 4) + 1):
                yield BlockCursor(p, parent, field, lo, hi)
    for i in range(len(ir.args)):
        yield ArgCursor(p, i)


# ----------------------------------------------------------------------
# the image, by markers
def _head(s):
    if isinstance(s, (IR.For, IR.If)):
        return s.update(body=(IR.Pass(), ), **(
            {"orelse": ()} if isinstance(s, IR.If) else {}))
    return s


def _owner_mark(ir, parent):
    return "proc" if not parent else mark(get_stmt(ir, parent))


def _holds(stmt, m):
    """``stmt`` is the node marked ``m`` or encloses it."""
    return m in _marks_below(stmt)


def check_image(old, new, c, c2):
    """None when ``c2`` (of ``new``) denotes the image of ``c`` (of
    ``old``), else a description of what went wrong."""
    if type(c2) is not type(c):
        return f"became a {type(c2).__name__}"
    if isinstance(c, (StmtCursor, ArgCursor)):
        a, b = c.node(), c2.node()
        if mark(a) != mark(b) or type(a) is not type(b):
            return f"denotes {c2!r}, not the image of {c!r}"
        return None
    if isinstance(c, ExprCursor):
        if mark(c.node()) == mark(c2.node()):
            return None
        # structural identity: the statement's image (by marker) has the
        # same expressions as the statement (a rewrite may rebuild equal
        # nodes without their markers), and the expression the same path
        s, s2 = c.stmt().node(), c2.stmt().node()
        if (mark(s) == mark(s2) and _head(s) == _head(s2)
                and c.expr_path() == c2.expr_path()):
            return None
        return f"denotes {c2!r}, not the image of {c!r}"
    if isinstance(c, BlockCursor):
        ma = sorted(map(str, map(mark, c.nodes())))
        mb = sorted(map(str, map(mark, c2.nodes())))
        if ma != mb:
            return f"block {c!r} became {c2!r}"
        return None
    # gaps: the neighbours of the new gap are (or enclose) the images of
    # the old one's neighbours; a gap at an end of its list stays at that
    # end of the image of the list
    P, f, i = c.location()
    Q, g, j = c2.location()
    L = get_list(old.ir(), P, f)
    L2 = get_list(new.ir(), Q, g)
    bad = f"gap {c!r} became {c2!r}"
    if i > 0:
        if j == 0 or not _holds(L2[j - 1], mark(L[i - 1])):
            return bad
    elif j != 0:
        return bad
    if i < len(L):
        if j == len(L2) or not _holds(L2[j], mark(L[i])):
            return bad
    elif j != len(L2):
        return bad
    if (i == 0 or i == len(L)) and (
            _owner_mark(old.ir(), P) != _owner_mark(new.ir(), Q)
            or (P and f != g)):
        return bad
    # at an end of its list, a neighbour's image may sit in a new `if`
    # (add_guard), not in a new loop: that loop's iterations are not the
    # gap's (split: the start of i's body is not the start of io's)
    if i == 0 or i == len(L):
        for k_old, k_new in ((i - 1, j - 1), (i, j)):
            if 0 <= k_old < len(L) and 0 <= k_new < len(L2) and \
                    mark(L2[k_new]) != mark(L[k_old]) and \
                    isinstance(L2[k_new], IR.For):
                return bad + " (a neighbour's image is in a new loop)"
    return None


def _stepwise(chain, c):
    """``c`` forwarded one rewrite at a time along ``chain`` (procedures,
    each derived from the one before), each step checked against the
    markers of that step: (the last cursor, None), or (None, what went
    wrong), or (None, None) when a step has no image."""
    for a, b in zip(chain, chain[1:]):
        try:
            c2 = b.forward(c)
        except InvalidCursorError:
            return None, None
        err = check_image(a, b, c, c2)
        if err:
            return None, f"step {a.name()} -> its rewrite: {err}"
        c = c2
    return c, None


def forwarding_failures(old, new, chain=None):
    """Descriptions of the cursors of ``old`` that ``new.forward`` maps to
    something other than their image.

    ``chain`` (``old``, the procedures in between, ``new``): for several
    rewrites the image by marker is too strict, because a later rewrite
    may drop a marker an earlier one kept (``mult_loops`` merges the loop
    a gap's neighbour was moved into by ``reorder``; ``unroll_loop``
    removes the loop ``lift_if`` moved inside; ``simplify`` rebuilds an
    expression ``commute_expr`` moved to another path). Forwarding through
    several rewrites is by definition the image of the image, so a cursor
    whose marker check fails is still right when it is the cursor that
    single-step forwarding gives, every step checked by its markers.
    """
    out = []
    for c in all_cursors(old):
        try:
            c2 = new.forward(c)
        except InvalidCursorError:
            if chain is not None:
                last, err = _stepwise(chain, c)
                if last is not None:
                    out.append(f"{c!r} invalid, but each step forwards it "
                               f"to {last!r}")
            continue
        err = check_image(old, new, c, c2)
        if err and chain is not None:
            last, err2 = _stepwise(chain, c)
            if last is not None and last == c2:
                continue
            err += f" (step by step: {err2 or last!r})"
        if err:
            out.append(err)
    return out


# ----------------------------------------------------------------------
# a rewrite of each kind, on small procedures with code around the target
@config
class Cfg:
    s: f32


@instr("for (int k = 0; k < 4; k++) (&{dst_data})[k] = (&{src_data})[k];")
def copy4(dst: [f32][4] @ DRAM, src: [f32][4] @ DRAM):
    for i in seq(0, 4):
        dst[i] = src[i]


@proc
def nest(n: size, x: f32[n, 8], y: f32[n, 8], z: f32[8]):
    z[0] = 1.0
    for i in seq(0, n):
        for j in seq(0, 8):
            x[i, j] = y[i, j] * 2.0 + x[i, j]
        z[1] = y[i, 0]
    z[2] = 3.0


@proc
def flat(n: size, x: f32[n], y: f32[n], z: f32[4]):
    assert n > 4
    z[0] = 1.0
    for i in seq(0, n):
        x[i] = 1.0
        y[i] = x[i] * y[i]
        z[1] = 2.0
    z[2] = 3.0


@proc
def two(n: size, x: f32[n], y: f32[n], z: f32[4]):
    assert n > 4
    z[0] = 1.0
    for i in seq(0, n):
        x[i] = 1.0 + y[i]
    for i in seq(0, n):
        y[i] = 2.0 * y[i]
    z[1] = 2.0


@proc
def stmts(x: f32[8], y: f32[8]):
    x[0] = 1.0
    y[0] = 2.0 + x[7]
    x[1] = 3.0
    for j in seq(0, 4):
        x[j + 2] = 1.0
    y[1] = x[0] * y[0]


@proc
def tmp(n: size, x: f32[n], y: f32[n]):
    y[0] = 0.0
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        u: f32
        u = 0.0
        y[i] = t + 1.0
    y[0] = 1.0


@proc
def buf(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        t: f32[4]
        for j in seq(0, 4):
            t[j] = x[i, j] + 1.0
        for j in seq(0, 4):
            y[i, j] = t[j] * 2.0


@proc
def buf2(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        t: f32[2, 4]
        for j in seq(0, 4):
            t[0, j] = x[i, j]
            t[1, j] = x[i, j] + 1.0
        for j in seq(0, 4):
            y[i, j] = t[0, j] * t[1, j]


@proc
def guarded(n: size, x: f32[n], y: f32[n]):
    x[0] = 1.0
    for i in seq(0, n):
        if n > 4:
            y[i] = x[i] + 1.0
        else:
            y[i] = 0.0
    y[0] = 2.0
    if n > 100:
        x[1] = 2.0


@proc
def sub(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 2.0 * x[i]


@proc
def caller(n: size, x: f32[n], y: f32[4]):
    y[0] = 1.0
    sub(n, x)
    y[1] = x[0] + 2.0


@proc
def copies(x: f32[4], y: f32[4], z: f32[4]):
    z[0] = 1.0
    for i in seq(0, 4):
        y[i] = x[i]
    z[1] = 2.0


@proc
def blur(n: size, x: f32[4 * n + 2], y: f32[4 * n]):
    b: f32[4 * n + 1]
    for i in seq(0, 4 * n + 1):
        b[i] = x[i] + x[i + 1]
    for i in seq(0, 4 * n):
        y[i] = b[i] + b[i + 1]


@proc
def two_tmps(x: f32[4], y: f32[4]):
    a: f32[4]
    for i in seq(0, 4):
        a[i] = x[i] * 2.0
    for i in seq(0, 4):
        y[i] = a[i]
    b: f32[4]
    for i in seq(0, 4):
        b[i] = x[i] + 1.0
    for i in seq(0, 4):
        y[i] += b[i]


@proc
def sinkable(x: f32[4], y: f32[4]):
    y[0] = 1.0
    b: f32[4]
    for i in seq(0, 4):
        b[i] = x[i] * 2.0
        y[i] = b[i]
    y[1] = 2.0


@proc
def grid(x: f32[4, 8], y: f32[4, 8]):
    y[0, 0] = 1.0
    for i in seq(0, 4):
        for j in seq(0, 8):
            x[i, j] = y[i, j]
    y[0, 1] = 2.0


@proc
def writes(x: f32[4], y: f32[4]):
    x[0] = 1.0
    y[0] = x[1]
    y[0] += x[2]
    x[3] = 4.0


@proc
def scoped(n: size, x: f32[n, 4]):
    x[0, 0] = 1.0
    for i in seq(0, n):
        if n > 2:
            for j in seq(0, 4):
                x[i, j] = 2.0
    x[0, 1] = 3.0


@proc
def dead(x: f32[4], y: f32[4]):
    x[0] = 1.0
    for i in seq(0, 4):
        if 1 > 2:
            y[i] = 0.0
    x[1] = 2.0


@proc
def unused(x: f32[4]):
    x[0] = 1.0
    for i in seq(0, 4):
        t: f32
    x[1] = 2.0


@proc
def passes(n: size, x: f32[n]):
    x[0] = 1.0
    for i in seq(0, n):
        pass
        x[i] = 2.0
    pass


@proc
def idem(x: f32[4]):
    x[0] = 1.0
    for k in seq(0, 4):
        x[1] = 2.0
        x[2] = x[0]
    x[3] = 4.0


sub_fast = sub.split("i", 4, "io", "ii")

CASES = {
    "split": (nest, lambda p: p.split("j", 4, "jo", "ji", tail="perfect")),
    "reorder": (grid, lambda p: p.reorder("i", "j")),
    "unroll": (stmts, lambda p: p.unroll("j")),
    "inline": (caller, lambda p: p.inline("sub(_)")),
    "set_memory": (tmp, lambda p: p.set_memory("t", DRAM_STATIC)),
    "set_precision": (flat, lambda p: p.set_precision("x", "f64")),
    "call_eqv": (caller, lambda p: p.call_eqv("sub(_)", sub_fast)),
    "bind_expr": (flat, lambda p: p.bind_expr("x[i] * y[i]", "xy")),
    "stage_mem": (nest, lambda p: p.stage_mem(p.find_loop("j"),
                                              "x[i, 0:8]", "xs")),
    "bind_config": (flat, lambda p: p.bind_config("x[i] * y[i]", Cfg, "s")),
    "lift_alloc": (tmp, lambda p: p.lift_alloc("t : _")),
    "fission_after": (flat, lambda p: p.fission_after("x[_] = 1.0")),
    "reorder_stmts": (stmts, lambda p: p.reorder_stmts("y[0] = _")),
    "configwrite_at": (flat, lambda p: p.configwrite_at(
        "y[_] = _", Cfg, "s", "2.0")),
    "replace": (copies, lambda p: p.replace("i", copy4)),
    "add_guard": (stmts, lambda p: p.add_guard("x[1] = _", "1 < 2")),
    "insert_noop_call": (stmts, lambda p: p.insert_noop_call(
        p.find("x[1] = _").before(), mm_prefetch_t0, ["y[2:3]"])),
    "fuse_loop": (two, lambda p: p.fuse_loop("i", "i #1")),
    "lift_if": (scoped, lambda p: p.lift_if("if _: _")),
    "partition_loop": (flat, lambda p: p.partition_loop("i", 2)),
    "remove_loop": (idem, lambda p: p.remove_loop("k")),
    "parallelize": (grid, lambda p: p.parallelize("i")),
    "rename": (nest, lambda p: p.rename("nest2")),
    "simplify": (stmts, lambda p: p.simplify()),
    "partial_eval": (flat, lambda p: p.partial_eval(n=8)),
    "make_instr": (sub, lambda p: p.make_instr("/* {x_data} */")),
    "expand_dim": (tmp, lambda p: p.expand_dim("t", "n", "i")),
    "divide_dim": (buf, lambda p: p.divide_dim("t", 0, 2)),
    "rearrange_dim": (buf2, lambda p: p.rearrange_dim("t : _", [1, 0])),
    "unroll_buffer": (buf2, lambda p: p.unroll_buffer("t", 0)),
    "delete_pass": (passes, lambda p: p.delete_pass()),
    "shift_loop": (flat, lambda p: p.shift_loop("i", 1)),
    "cut_loop": (flat, lambda p: p.cut_loop("i", 2)),
    "unroll_loop": (grid, lambda p: p.unroll_loop("j", 4)),
    "lift_scope": (scoped, lambda p: p.lift_scope("j")),
    "specialize": (stmts, lambda p: p.specialize("x[1] = _", "1 < 2")),
    "join_loops": (two, lambda p: p.cut_loop("i", 2)
                   .join_loops("i", "i #1")),
    "mult_loops": (grid, lambda p: p.mult_loops("i", "j", "ij")),
    "divide_with_recompute": (blur, lambda p: p.divide_with_recompute(
        "i #1", "n", 4, ["io", "ii"])),
    "sink_alloc": (sinkable, lambda p: p.sink_alloc("b : _")),
    "delete_buffer": (unused, lambda p: p.delete_buffer("t : _")),
    "eliminate_dead_code": (dead, lambda p: p.eliminate_dead_code(
        "if _: _")),
    "inline_assign": (tmp, lambda p: p.inline_assign("t = _")),
    "inline_loop": (blur, lambda p: p.inline_loop("i")),
    "commute_expr": (flat, lambda p: p.commute_expr("x[i] * y[i]")),
    "merge_writes": (writes, lambda p: p.merge_writes(
        ("y[_] = _", "y[_] += _"))),
    "rewrite_expr": (flat, lambda p: p.rewrite_expr(
        p.find_loop("i").hi(), "n + 0")),
    "reuse_buffer": (two_tmps, lambda p: p.reuse_buffer("b", "a")),
    "resize_dim": (buf, lambda p: p.resize_dim("t", 0, 4, 0)),
    "divide_loop": (nest, lambda p: p.divide_loop("j", 4, ["jo", "ji"],
                                                  perfect=True)),
    "reorder_loops": (grid, lambda p: p.reorder_loops("i j")),
    "fission": (flat, lambda p: p.fission(p.find("x[_] = 1.0").after())),
    "autofission": (flat, lambda p: p.autofission(
        p.find("x[_] = 1.0").after())),
    "autolift_alloc": (tmp, lambda p: p.autolift_alloc("t : _")),
    "fuse": (two, lambda p: p.fuse("i", "i #1")),
    "parallelize_loop": (grid, lambda p: p.parallelize_loop("i")),
    "write_config": (flat, lambda p: p.write_config(
        p.find("y[_] = _").before(), Cfg, "s", "2.0")),
}


@proc
def sub2(n: size, x: f32[n]):
    x[0] = 0.0
    for i in seq(0, n):
        x[i] = 2.0 * x[i]


@proc
def caller2(n: size, x: f32[n], y: f32[4]):
    y[0] = 1.0
    sub2(n, x)
    y[1] = x[0] + 2.0


@proc
def deep(n: size, x: f32[n, 4, 4], y: f32[n, 4, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            for k in seq(0, 4):
                x[i, j, k] = 0.0
                y[i, j, k] = x[i, j, k] + 1.0


@proc
def wrap_sub(n: size, x: f32[n]):
    sub(n, x)


@proc
def caller3(n: size, x: f32[n], y: f32[4]):
    y[0] = 1.0
    wrap_sub(n, x)
    y[1] = 2.0


@proc
def once(x: f32[4, 4]):
    x[0, 0] = 1.0
    for j in seq(0, 1):
        for k in seq(0, 4):
            x[j, k] = 2.0
    x[0, 1] = 3.0


@proc
def branches(n: size, x: f32[n], y: f32[n], z: f32[4]):
    z[0] = 1.0
    if n > 4:
        for i in seq(0, n):
            x[i] = 1.0
    else:
        for j in seq(0, n):
            y[j] = 2.0
            x[j] = y[j]
    z[1] = 2.0


@proc
def dead_else(x: f32[4], y: f32[4]):
    x[0] = 1.0
    if 1 > 2:
        y[0] = 0.0
    else:
        y[1] = 1.0
        y[2] = x[0]
    x[1] = 2.0


# variants: the same rewrites with other options (name:variant)
CASES.update({
    "split:guard": (nest, lambda p: p.split("j", 3, "jo", "ji")),
    "split:cut": (nest, lambda p: p.split("j", 3, "jo", "ji", tail="cut")),
    "split:cut_body": (flat, lambda p: p.split("i", 4, "io", "ii",
                                               tail="cut")),
    "specialize:block": (stmts, lambda p: p.specialize(
        p.find("y[0] = _").expand(1, 1), ["1 < 2", "2 < 3"])),
    "fission_after:two_levels": (deep, lambda p: p.fission_after(
        "x[_] = 0.0", n_lifts=2)),
    "unroll_loop:whole": (grid, lambda p: p.unroll_loop("j")),
    "inline:two_statements": (caller2, lambda p: p.inline("sub2(_)")),
    "lift_if:else": (guarded, lambda p: p.lift_if("if n > 4: _")),
    "reorder_stmts:block": (stmts, lambda p: p.reorder_stmts(
        p.find("x[0] = _").expand(0, 1))),
    "lift_alloc:second": (tmp, lambda p: p.lift_alloc("u : _")),
    "bind_expr:cse": (nest, lambda p: p.bind_expr("y[i, j]", "yv",
                                                  cse=True)),
    "eliminate_dead_code:if_else": (dead_else, lambda p:
                                    p.eliminate_dead_code("if _: _")),
    "unroll:nested": (deep, lambda p: p.unroll("k")),
    "reorder:three": (deep, lambda p: p.reorder("j", "k")),
    # one statement replaced by one of the same kind that is not its image
    "inline:call_of_a_call": (caller3, lambda p: p.inline("wrap_sub(_)")),
    "unroll:one_iteration": (once, lambda p: p.unroll("j")),
    # the else branch's loop merges into the lifted one
    "lift_scope:loops_in_both_branches": (branches, lambda p: p.lift_scope(
        "i")),
})


def _scheduling_methods():
    """The public methods of Procedure that call a rewrite."""
    out = set()
    for name, fn in vars(Procedure).items():
        if name.startswith("_") or not callable(fn):
            continue
        fn = inspect.unwrap(fn)
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError):
            continue
        if "rewrites." in src:
            out.add(name)
    return out


def test_the_corpus_covers_every_scheduling_method():
    assert _scheduling_methods() - {"is_eq"} <= {
        name.split(":")[0] for name in CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forwarding_denotes_the_image_or_is_invalid(name):
    base, rewrite = CASES[name]
    old = tagged(base)
    new = rewrite(old)
    failures = forwarding_failures(old, new)
    assert not failures, "\n".join(failures[:10])


# ----------------------------------------------------------------------
# regressions (issue 33, part A): each denoted another node before
def _invalid(p, c):
    with pytest.raises(InvalidCursorError, match="no longer denotes"):
        p.forward(c)


@proc
def mul(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * y[i]


def test_expression_cursor_follows_commute_expr():
    e = mul.find("x[_]")
    p = mul.commute_expr("_ * _")
    assert p.forward(e).node() == e.node()          # x[i], now the rhs
    assert p.forward(e).expr_path() == (("rhs", None), ("rhs", None))
    q = p.bind_expr(e, "xv")
    assert "xv = x[i]" in str(q) and "y[i] = y[i] * xv" in str(q)


@proc
def st(n: size, x: f32[n, 8], y: f32[n, 8]):
    for i in seq(0, n):
        for j in seq(0, 8):
            y[i, j] = x[i, j]


@proc
def perm(x: f32[4, 4], y: f32[4, 4]):
    t: f32[4, 4]
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    for i in seq(0, 4):
        for j in seq(0, 4):
            y[i, j] = t[i, j]
    y[0, 0] = x[1, 1]


@proc
def simp(n: size, x: f32[2 * n, n], y: f32[n, n]):
    for i in seq(0, n):
        for j in seq(0, n):
            y[i, j] = x[j + (i - j + j), j]


@proc
def expd(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        t: f32[4]
        for j in seq(0, 4):
            t[j] = x[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j]


def test_expression_cursor_is_invalid_where_its_statement_was_rewritten():
    # stage_mem: the i of x[i, j] was forwarded to the j of xs[j]
    i_of_x = st.find("x[_]").args()[0]
    _invalid(st.stage_mem(st.find_loop("j"), "x[i, 0:8]", "xs"), i_of_x)
    # rearrange_dim: the i of t[i, j] was forwarded to the j of t[j, i]
    i_of_t = perm.find("t[_] = _").idx()[0]
    _invalid(perm.rearrange_dim("t : _", [1, 0]), i_of_t)
    # simplify: the j of x[j + (i - j + j), j] was forwarded to the i of
    # x[i + j, j]
    j_of_x = simp.find("x[_]").args()[0].lhs()
    assert j_of_x.name() == "j"
    _invalid(simp.simplify(), j_of_x)
    # expand_dim: the j of t[j] was forwarded to the i of t[i, j]
    j_of_t = expd.find("t[_] = _").idx()[0]
    _invalid(expd.expand_dim("t", "n", "i"), j_of_t)
    # an expression of a statement the rewrite left alone still forwards
    q = perm.rearrange_dim("t : _", [1, 0])
    x11 = perm.find("x[1, 1]")
    assert q.forward(x11).node() == x11.node()
    _invalid(q, perm.find("t[_]"))


@proc
def unr(x: f32[4], y: f32[4]):
    for j in seq(0, 4):
        x[j] = 1.0
    y[0] = 2.0


@proc
def rs(x: f32[4], y: f32[4]):
    x[0] = 1.0
    y[0] = 2.0
    x[1] = 3.0


def test_block_cursor_is_all_images_or_invalid():
    # unroll: the block (loop j; y[0] = 2.0) became just y[0] = 2.0
    _invalid(unr.unroll("j"), unr.find_loop("j").expand(0, 1))
    # reorder_stmts: the block (x[0] = 1.0; y[0] = 2.0) took in x[1] = 3.0
    blk = rs.find("x[0] = _").expand(0, 1)
    p = rs.reorder_stmts("y[0] = _")
    _invalid(p, blk)
    with pytest.raises(InvalidCursorError):
        p.specialize(blk, "1 < 2")
    # a block whose statements were reordered among themselves is still
    # that block
    both = rs.find("y[0] = _").expand(0, 1)
    assert p.forward(both).range() == (1, 3)


@proc
def pe(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = y[i]
        pass


def test_argument_cursor_follows_its_symbol():
    x = pe.args()[1]
    p = pe.partial_eval(n=8)
    assert p.forward(x).name() == "x"
    _invalid(p, pe.args()[0])                     # n is gone
    q = p.set_precision(x, "f64")
    assert "x: f64[8]" in str(q) and "y: f32[8]" in str(q)
    # delete_pass keeps every argument
    d = pe.delete_pass()
    assert [d.forward(a).name() for a in pe.args()] == ["n", "x", "y"]
    # ... and the statements it did not remove (it used to drop them all)
    w = pe.find("x[_] = _")
    assert d.forward(w).node() == w.node()
    _invalid(d, pe.find_loop("i").body())       # lost its pass


@config
class Cg:
    v: f32


@proc
def gp(x: f32[4]):
    x[0] = 1.0
    x[1] = 2.0


def test_gap_cursor_stays_between_its_neighbours():
    gap = gp.find("x[0] = _").after()
    for p in (gp.add_guard("x[1] = _", "1 < 2"),
              gp.specialize("x[1] = _", "1 < 2")):
        g = p.forward(gap)
        assert g.location() == ((), "body", 1)       # not inside the if
        for q in (p.configwrite_at(gap, Cg, "v", "2.0"),
                  p.write_config(gap, Cg, "v", "2.0")):
            assert str(q).splitlines()[1:4] == ["    x[0] = 1.0",
                                                "    Cg.v = 2.0",
                                                "    if 1 < 2:"]
    # a gap at the end of a list whose last statement got wrapped stays at
    # the end of that list, outside the wrapper
    end = gp.find("x[1] = _").after()
    assert gp.add_guard("x[1] = _", "1 < 2").forward(end).location() == \
        ((), "body", 2)


@proc
def one_dead(x: f32[4]):
    x[0] = 1.0
    for i in seq(0, 4):
        if i > 10:
            x[i] = 2.0


@proc
def one_unused(x: f32[4]):
    for i in seq(0, 4):
        t: f32
    x[0] = 1.0


def test_deleted_statement_does_not_forward_to_pass():
    dead = one_dead.find("if _: _")
    p = one_dead.eliminate_dead_code(dead)
    assert "pass" in str(p)
    _invalid(p, dead)
    with pytest.raises(InvalidCursorError):
        p.add_guard(dead, "1 < 2")
    t = one_unused.find("t : _")
    q = one_unused.delete_buffer(t)
    assert "pass" in str(q)
    _invalid(q, t)


@proc
def two_writes(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
        y[i] = 2.0


@pytest.mark.parametrize("tail", ["guard", "cut", "perfect"])
def test_gap_at_an_end_of_a_split_body_is_never_before_ii(tail):
    # the start of i's body (once per i) once became the start of io's
    # body, before `for ii` (once per block of 4): a write_config there ran
    # once per block. It is the start of ii's body (or its guard's) now,
    # which runs once per i (tests/rewrites/test_split_body_gaps.py); the
    # gap between the two writes stays inside ii
    p = tagged(two_writes)
    q = p.split('i', 4, 'io', 'ii', tail=tail) if tail != "perfect" else \
        p.split('i', 1, 'io', 'ii', tail=tail)
    body = p.find_loop('i').body()
    io = q.find_loop('io').path()
    for gap in (body.before(), body.after()):
        assert q.forward(gap).location()[0] != io
        assert len(q.forward(gap).location()[0]) > len(io)
    assert forwarding_failures(p, q) == []
    mid = q.forward(p.find('x[_] = _').after())
    assert mid.location()[1:] == ("body", 1)
    assert len(mid.location()[0]) > 1


@proc
def branch_allocs(N: size, x: f32[N], y: f32[N]):
    t: f32[N]
    if N > 2:
        u: f32[N]
        for i in seq(0, N):
            u[i] = x[i]
            y[i] = u[i]
    else:
        for i in seq(0, N):
            t[i] = x[i] + 1.0
            y[i] = t[i]


def test_sink_alloc_into_the_else_branch_forwards_there():
    # t is used in the else branch only, so sink_alloc puts it there; its
    # cursor was forwarded to the head of the then-branch, the allocation
    # u: set_precision(t_cursor, 'f64') changed u's precision
    p = tagged(branch_allocs)
    q = p.sink_alloc(p.find("t : _"))
    assert forwarding_failures(p, q) == []
    assert q.forward(p.find("t : _")).path() == (("body", 0), ("orelse", 0))
    r = q.set_precision(p.find("t : _"), "f64")
    assert "t: f64[N]" in str(r) and "u: f32[N]" in str(r), str(r)
