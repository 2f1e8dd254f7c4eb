"""``inline_loop(loop)``: forward the values a producer loop nest assigns
into the reads of the statements that follow it (Halide's inlining of a
stage computed by a loop).

    for i in seq(lo, hi):            for i in seq(lo, hi):
        t[i + r] = e(i)                  t[i + r] = e(i)
    for j in seq(0, n):        ~>    for j in seq(0, n):
        y[j] = t[j] + t[j + 1]           y[j] = e(j - r) + e(j + 1 - r)

The loop stays (now a dead store when nothing else reads ``t``: remove it
with ``eliminate_dead_code``, then the buffer with ``delete_buffer``).

The nest is a loop directly containing loops down to one assignment
``t[idx] = e``; each index of ``t`` is ``x + r`` for its own loop ``x`` of
the nest (every loop used once, so each location is assigned by exactly
one iteration) with ``r``, the loop bounds and ``e`` free of the nest's
variables where needed (``r`` and the bounds) and of configuration state.
Checked, for the reads of ``t`` in the statements after the nest in its
block (every one of them is replaced, so the nest's values are dead
afterwards):

- ``t`` is an allocation of that block, before the nest, that nothing uses
  between the two; after the nest, ``t`` is only read (not written,
  reduced, windowed or passed to a call);
- ``e`` does not read ``t``, and none of the statements after the nest
  writes, windows or passes on any buffer ``e`` reads: ``e`` keeps its
  value. Window names count as the buffer they view, wherever they are
  bound (also before the nest): a write through ``w = x[...]``, or a call
  passed ``w``, touches ``x``, and ``e`` reading ``w`` reads ``x``;
- each read ``t[f]`` is proven to lie in the range the nest assigns
  (``lo_x + r <= f < hi_x + r`` in each dimension, in the read's
  context): it reads the value of iteration ``x = f - r``, which is ``e``
  with ``x`` replaced by ``f - r``;
- ``t``'s type holds that value exactly where it is read
  (``_precision.holder_problem``, as for ``inline_assign``).
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR, same_constant
from ..core_ir.paths import map_with_paths
from ..core_ir.simplify import affine_form, simplify_expr
from ..core_ir.traversal import map_node, subst, walk, walk_stmts
from ..effects import api as EA
from ..patterns import stmt_expr_fields
from . import _common as C
from ._buffer_uses import uses, window_roots
from ._expr_at import expr_text, reads_config
from ._precision import holder_problem, rejoin_type

OP = "inline_loop"


def inline_loop(proc, loop):
    path, s = C.resolve_loop(proc, loop, OP)

    def fail(msg, st=s):
        return C.scheduling_error(proc, st, f"{OP}: {msg}")

    ir = proc.ir()
    # locate: the nest and its one assignment
    loops = [s]
    while len(loops[-1].body) == 1 and isinstance(loops[-1].body[0], IR.For):
        loops.append(loops[-1].body[0])
    inner = loops[-1].body
    if len(inner) != 1 or not isinstance(inner[0], IR.Assign) \
            or not inner[0].idx:
        raise fail("expected a loop nest around one assignment "
                   "'t[i] = e' to a buffer")
    a = inner[0]
    t, e = a.name, a.rhs
    iters = {l.iter: l for l in loops}
    ranges = []          # per dimension: (loop var, lo + r, hi + r, r)
    for d, ix in enumerate(a.idx):
        terms, _ = affine_form(ix)
        xs = [v for v in terms if isinstance(v, IR.Read) and not v.idx
              and v.name in iters]
        names = {n.name for n in walk(ix) if isinstance(n, IR.Read)}
        if len(xs) != 1 or terms[xs[0]] != 1 or \
                len(names & set(iters)) != 1:
            raise fail(f"index {expr_text(ix)} of '{t.name}' must be one "
                       f"loop variable of the nest plus an offset")
        x = xs[0].name
        if any(r[0] == x for r in ranges):
            raise fail(f"loop '{x.name}' indexes two dimensions of "
                       f"'{t.name}'")
        lp = iters[x]
        r = B.sub(ix, xs[0])
        if any({n.name for n in walk(v) if isinstance(n, IR.Read)}
               & set(iters) for v in terms if v is not xs[0]):
            # e.g. i + i % 2: the offset moves with the loop variable
            raise fail(f"index {expr_text(ix)} of '{t.name}' must be one "
                       f"loop variable of the nest plus an offset that "
                       f"does not depend on the nest's loops")
        ranges.append((x, B.add(lp.lo, r), B.add(lp.hi, r), r))
    if len(ranges) != len(loops):
        raise fail(f"every loop of the nest must index its own dimension of "
                   f"'{t.name}' (each location assigned once)")
    for lp in loops:
        if {n.name for e2 in (lp.lo, lp.hi) for n in walk(e2)
                if isinstance(n, IR.Read)} & set(iters):
            raise fail("the nest's loop bounds depend on its own loops", lp)
    if any(reads_config(x) for x in (e, ) + tuple(a.idx)) or any(
            reads_config(x) for lp in loops for x in (lp.lo, lp.hi)):
        raise fail("the nest reads configuration state")
    if any(isinstance(n, IR.Read) and n.name == t for n in walk(e)):
        raise fail(f"'{expr_text(e)}' reads '{t.name}' itself", a)

    *parent, (field, k) = path
    parent = tuple(parent)
    block = C.get_list(ir, parent, field)
    at = [j for j in range(k) if isinstance(block[j], IR.Alloc)
          and block[j].name == t]
    if not at:
        raise fail(f"'{t.name}' must be allocated in the nest's block, "
                   f"before it")
    j0 = at[-1]
    if uses(block[j0 + 1:k], parent, field, j0 + 1, {t}):
        raise fail(f"'{t.name}' is used between its allocation and the nest")
    rest = block[k + 1:]
    for u in uses(rest, parent, field, k + 1, {t}):
        if u.kind != "read":
            raise fail(f"after the nest, '{t.name}' may only be read", u.stmt)
    # buffers are compared by their root: a window name (bound anywhere,
    # also before the nest) stands for the buffer it views, so a write
    # through ``w = x[...]`` is a write of ``x``, and a read of ``w`` in
    # ``e`` a read of ``x``; a call is refused whenever it is passed any
    # view of those buffers, so writes by callees through windows count too
    root = window_roots(ir)
    read_by_e = {root.get(n.name, n.name) for n in walk(e)
                 if isinstance(n, IR.Read)}
    for st in walk_stmts(rest):
        if isinstance(st, (IR.Assign, IR.Reduce)) and \
                root.get(st.name, st.name) in read_by_e:
            via = st.name if st.name not in root else root[st.name]
            what = f"'{via.name}'" if via is st.name else \
                f"'{st.name.name}' (a window of '{via.name}')"
            raise fail(f"{what}, which '{expr_text(e)}' reads, "
                       f"is written after the nest", st)
        if isinstance(st, (IR.Call, IR.WindowStmt)) and any(
                isinstance(n, (IR.Read, IR.WindowExpr)) and
                root.get(n.name, n.name) in read_by_e for n in walk(st)):
            raise fail(f"a buffer '{expr_text(e)}' reads is windowed or "
                       f"passed on after the nest", st)

    # check and build: every read of t after the nest becomes e(f - r)
    typ = T.basetype(a.type)
    count = [0]

    def value_at(p, rd):
        preds = []
        for (x, lo, hi, _), f in zip(ranges, rd.idx):
            preds += [B.cmp("<=", lo, f), B.cmp("<", f, hi)]
        if not EA.prove_at(ir, p, B.conj(preds)):
            raise fail(f"cannot prove {expr_text(rd)} lies in the range "
                       f"the nest assigns", C.get_stmt(ir, p))
        env = {x: simplify_expr(B.sub(f, r))
               for (x, _, _, r), f in zip(ranges, rd.idx)}
        count[0] += 1
        return map_node(subst(e, env), _simplify_idx)

    def fix_own(p, st):
        changes = {}
        for f, i, ex in stmt_expr_fields(st):
            if isinstance(st, IR.WindowStmt):
                continue
            new = map_node(ex, lambda n: value_at(p, n) if isinstance(
                n, IR.Read) and n.name == t else rejoin_type(n))
            if new is ex:
                continue
            if i is None:
                changes[f] = new
            else:
                lst = list(changes.get(f, getattr(st, f)))
                lst[i] = new
                changes[f] = tuple(lst)
        st2 = st.update(**changes) if changes else st
        if changes:
            why = _holder(e, typ, ranges, st, st2)
            if why:
                raise fail(f"'{t.name}' ({T.type_name(typ)}) does not hold "
                           f"the exact value of '{expr_text(e)}' where it is "
                           f"read: {why}", st)
        return st2

    def fix_all(p, st):
        return map_with_paths(p, st, fix_own)

    out = tuple(fix_all(parent + ((field, k + 1 + j), ), st)
                for j, st in enumerate(rest))
    if not count[0]:
        raise fail(f"no read of '{t.name}' follows the nest")
    new_ir = C.replace_block_at(ir, parent, field, k + 1, len(block), out)
    return proc._derive(new_ir, OP)


def _simplify_idx(n):
    if isinstance(n, (IR.Read, IR.WindowExpr)) and n.idx and \
            isinstance(n, IR.Read):
        return n.update(idx=tuple(simplify_expr(i) for i in n.idx))
    return None


def _holder(e, typ, ranges, old, new):
    """The precision problem of standing ``t`` for each value substituted
    into the statement ``new`` (``None`` when there is none): each
    occurrence is checked as ``inline_assign`` checks its one value."""
    seen = []
    for st in walk_stmts((new, )):
        for _, _, ex in stmt_expr_fields(st):
            for n in walk(ex):
                if n not in seen and _is_instance_of(n, e):
                    seen.append(n)
    for v in seen:
        why = holder_problem(v, typ, (new, ))
        if why:
            return why
    return None


def _is_instance_of(n, e) -> bool:
    """Whether ``n`` is ``e`` with (possibly) other index expressions: the
    same node kind, operator and buffer names (a cheap filter; the
    precision check itself is exact on each candidate)."""
    if type(n) is not type(e):
        return False
    if isinstance(e, IR.BinOp):
        return n.op == e.op and _is_instance_of(n.lhs, e.lhs) and \
            _is_instance_of(n.rhs, e.rhs)
    if isinstance(e, IR.Read):
        return n.name == e.name
    if isinstance(e, IR.Const):
        return same_constant(n.val, e.val)
    return True
