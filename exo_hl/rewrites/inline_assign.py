"""``inline_assign(assign)``: forward the value of an assignment into the
reads that follow it, then drop the write when it is dead.

    x[i] = e                 (x[i] = e: dropped when dead)
    y[j] = x[i] * 2.0   ~>   y[j] = e * 2.0

The reads replaced are those of the following statements of the same
block whose indices are proven equal to the assignment's, as long as both
the location and ``e`` keep their values: a following statement ends the
region when it may write ``x[i]`` or anything ``e`` reads (effect analysis:
it must commute with ``tmp = x[i]`` and with ``tmp = e``); when that
statement is itself an assignment or reduction, its own right-hand side
and indices are still rewritten (they are evaluated before it writes).
``e`` must not read what the assignment writes (``x = x + 1``), the
assignment's indices may not read configuration state, and ``x``'s type
must hold ``e``'s exact value where the reads are
(``_precision.holder_problem``, as for ``bind_expr``). A call argument
that is ``x`` itself (a scalar passed by reference) is left as it is.

The assignment is dropped when it is dead after the rewrite, as Exo's
``inline_assign`` drops it: ``x`` is an allocation (not an argument: the
caller sees arguments) and no use of ``x`` left in its lifetime may read an
element the assignment writes, in any iteration (effect analysis: a
read or reduction at indices proven different in every pair of iterations;
a scalar read, a window or a call argument of ``x`` may read it). So with
``t[0] = a; t[1] = b; y = t[0] + t[1]``, inlining ``t[1] = b`` drops it
while ``t[0]`` is still read, and ``t[0] = a`` can be inlined next.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.paths import map_with_paths, walk_with_paths
from ..core_ir.syms import Sym
from ..core_ir.traversal import map_node
from ..effects import api as EA
from ..patterns import stmt_expr_fields
from . import _common as C
from ._buffer_uses import aliases, uses
from ._expr_at import expr_text, reads_config
from ._precision import holder_problem, rejoin_type

OP = "inline_assign"


def inline_assign(proc, assign):
    path, s = C.resolve_stmt(proc, assign, OP)

    def fail(msg, st=s):
        return C.scheduling_error(proc, st, f"{OP}: {msg}")

    if not isinstance(s, IR.Assign):
        raise fail("expected an assignment 'x = e' or 'x[i] = e'")
    ir = proc.ir()
    x, idx, e = s.name, tuple(s.idx), s.rhs
    if any(reads_config(i) for i in idx):
        raise fail("its indices read configuration state")
    *parent, (field, k) = path
    parent = tuple(parent)
    block = C.get_list(ir, parent, field)
    si = s.srcinfo
    probe_e = IR.Assign(Sym("tmp"), e.type, (), e, srcinfo=si)
    read_x = IR.Read(x, idx, type=T.basetype(s.type), srcinfo=si)
    probe_x = IR.Assign(Sym("tmp"), read_x.type, (), read_x, srcinfo=si)
    if not EA.commutes((s, ), (probe_e, ), EA.context(ir, path)):
        raise fail(f"'{expr_text(e)}' reads the location the assignment "
                   f"writes, so its value changes")

    proven = {}

    def same(p, other_idx):
        key = (p, other_idx)
        if key not in proven:
            pred = None
            for a, b in zip(other_idx, idx):
                eq = IR.BinOp("==", a, b, type=IR.Bool)
                pred = eq if pred is None else IR.BinOp("and", pred, eq,
                                                        type=IR.Bool)
            proven[key] = (len(other_idx) == len(idx)) and (
                pred is None or bool(EA.prove_at(ir, p, pred)))
        return proven[key]

    count = [0]

    def fix_expr(p, ex):
        def fn(n):
            if isinstance(n, IR.Read) and n.name == x and (
                    n.idx or T.is_real_scalar(n.type)) and same(p, tuple(n.idx)):
                count[0] += 1
                return e
            return rejoin_type(n)
        return map_node(ex, fn)

    def fix_own(p, st):
        changes = {}
        for f, i, ex in stmt_expr_fields(st):
            if isinstance(st, IR.WindowStmt) or _by_reference(st, ex, x):
                continue
            new = fix_expr(p, ex)
            if new is ex:
                continue
            if i is None:
                changes[f] = new
            else:
                lst = list(changes.get(f, getattr(st, f)))
                lst[i] = new
                changes[f] = tuple(lst)
        return st.update(**changes) if changes else st

    def fix_all(p, st):
        return map_with_paths(p, st, fix_own)

    out = []
    for j in range(k + 1, len(block)):
        sib = block[j]
        sp = parent + ((field, j), )
        ctx = EA.context(ir, sp)
        if EA.commutes((probe_x, ), (sib, ), ctx) and \
                EA.commutes((probe_e, ), (sib, ), ctx):
            out.append(fix_all(sp, sib))
            continue
        if isinstance(sib, (IR.Assign, IR.Reduce)):
            out.append(fix_own(sp, sib))
        break
    if not count[0]:
        raise fail(f"no following read of {expr_text(read_x)} can be "
                   f"replaced (none proven to read this location while it "
                   f"and '{expr_text(e)}' keep their values)")
    why = holder_problem(e, T.basetype(s.type), out)
    if why:
        raise fail(f"'{x.name}' ({T.type_name(T.basetype(s.type))}) does not "
                   f"hold the exact value of '{expr_text(e)}' where it is "
                   f"read: {why}")
    new_ir = C.replace_block_at(ir, parent, field, k + 1, k + 1 + len(out),
                                tuple(out))
    fwd = None
    if _dead(new_ir, path, x, idx):
        new_ir = C.replace_stmts_at(new_ir, path, ())
        if not C.get_list(new_ir, parent, field):
            new_ir = C.replace_block_at(new_ir, parent, field, 0, 0,
                                        (IR.Pass(srcinfo=si), ))
            fwd = C.forward_replace(path, 1)
        else:
            fwd = C.forward_delete(parent, field, k, k + 1)
    return proc._derive(new_ir, OP, forward=fwd)


def _by_reference(st, ex, x) -> bool:
    """Whether ``ex`` is ``x`` passed whole to a call: a data scalar (or
    buffer) argument is a reference, not a value, so it stays ``x`` (the
    call reads the assignment's value there; the assignment is then kept:
    ``_dead``)."""
    return isinstance(st, IR.Call) and isinstance(ex, IR.Read) and \
        ex.name == x and not ex.idx


def _dead(ir, path, x, idx) -> bool:
    """Whether the assignment at ``path`` (of ``x[idx]``) is a dead store
    in ``ir``: ``x`` is an allocation (the caller sees arguments), and no
    use of ``x`` left in its lifetime may read an element the assignment
    writes, in any iteration (``EA.never_same_location``). Other elements
    may still be read: after ``t[1] = e`` is inlined, ``t[0]`` is."""
    alloc = next((p for p, s in walk_with_paths(ir.body, (), "body", 0)
                  if isinstance(s, IR.Alloc) and s.name == x), None)
    if alloc is None:
        return False
    *parent, (field, k) = alloc
    names = aliases(ir, x)
    block = C.get_list(ir, tuple(parent), field)
    for u in uses(block[k + 1:], tuple(parent), field, k + 1, names):
        if u.kind in ("write", "stride"):
            continue
        if u.kind == "reduce" and u.node.name == x:
            at = u.node.idx
        elif u.kind == "read" and u.node.name == x and u.node.idx:
            at = u.node.idx
        else:
            return False  # a scalar read, a window, a call: may read it
        if not EA.never_same_location(ir, alloc, (path, idx), (u.path, at)):
            return False
    return True
