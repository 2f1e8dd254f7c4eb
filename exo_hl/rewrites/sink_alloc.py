"""``sink_alloc(alloc)``: move an allocation into the loop or if that
directly follows it (the inverse of ``lift_alloc``).

    t: T                      for i in seq(lo, hi):
    for i in seq(lo, hi):  ~>     t: T
        s                         s

Into an ``if``, each branch that uses the buffer gets its own allocation.

A fresh allocation holds no values (Exo's semantics, see ``lift_alloc``), so
the rewrite is right exactly when nothing observes the buffer's contents
across the boundary it now has:

- the buffer is not used after the loop/if (it would be out of scope);
- into a loop, its sizes read no configuration field the loop body may
  write (they are evaluated in every iteration);
- for a loop, no iteration reads a value an earlier iteration left in the
  buffer. Proven per read: each read (a ``+=`` into it counts as a read) in
  an iteration must read a location the same iteration has already
  assigned: either an earlier top-level statement of the body overwrites
  the whole buffer (a scalar assignment, or a loop nest assigning every
  element), or an earlier top-level assignment ``t[e] = ...`` (not under an
  ``if``, its indices reading no configuration state) writes a location
  proven equal to the one read, or an earlier top-level loop nest assigns
  a whole window of the buffer that the location read is proven to lie in
  (``_window_cover.written_windows``: the nest's loops run, and the
  window's bounds keep their values through the iteration). The same
  holds inside the body: a read in a nested block may follow, in that
  block, an assignment or loop nest that assigns its location (it ran
  earlier in the same iteration). This is
  per-iteration definedness: what ``compute_at`` leaves (each tile
  computes the part of the buffer it reads) can then be stored per tile. Passing the buffer to a call or taking a
  window of it needs the whole-buffer overwrite. Anything else is refused.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..core_ir.traversal import subst, used_syms
from ..effects.api import prove_at
from . import _common as C
from ..core_ir.paths import walk_with_paths
from ._buffer_uses import stmt_uses
from ._expr_at import expr_text, reads_config
from ._window_cover import inside_window, written_windows

OP = "sink_alloc"


def sink_alloc(proc, alloc):
    path, s = C.resolve_stmt(proc, alloc, OP)

    def fail(msg, st=s):
        return C.scheduling_error(proc, st, f"{OP}: {msg}")

    if not isinstance(s, IR.Alloc):
        raise fail("expected an allocation statement")
    ir = proc.ir()
    *parent, (field, k) = path
    parent = tuple(parent)
    block = C.get_list(ir, parent, field)
    if k + 1 >= len(block) or not isinstance(block[k + 1], (IR.For, IR.If)):
        raise fail("the allocation must be directly followed by the loop or "
                   "if to move it into")
    scope = block[k + 1]
    if s.name in used_syms(tuple(block[k + 2:])):
        raise fail(f"'{s.name.name}' is used after the "
                   f"{'loop' if isinstance(scope, IR.For) else 'if'}, where "
                   f"it would be out of scope", block[k + 2])
    scope_path = parent + ((field, k + 1), )
    si = s.srcinfo
    if isinstance(scope, IR.For):
        # the sizes are evaluated at every iteration, after the earlier
        # ones (an if evaluates only its condition before its branch)
        C.check_moved(proc, OP, [C.Moved(
            "allocation sizes", s, tuple(T.shape(s.type)), scope.body,
            f"the sizes of '{s.name.name}' (evaluated in every iteration "
            f"once sunk)", f"the body of the loop '{scope.iter.name}'")])
        _check_no_carried_values(proc, scope_path, scope, s, fail)
        new_scope = scope.update(body=(s, ) + tuple(scope.body))
        shift = {"body": 1}
    else:
        in_body = s.name in used_syms(tuple(scope.body))
        in_else = s.name in used_syms(tuple(scope.orelse))
        body, orelse, shift = scope.body, scope.orelse, {}
        if in_body or not in_else:
            body, shift["body"] = (s, ) + tuple(body), 1
        if in_else:
            fresh = Sym(s.name.name)
            orelse = (s.update(name=fresh, srcinfo=si), ) + tuple(
                subst(x, {s.name: fresh}) for x in orelse)
            shift["orelse"] = 1
        new_scope = scope.update(body=body, orelse=orelse)
    new_ir = C.replace_block_at(ir, parent, field, k, k + 2, (new_scope, ))
    return proc._derive(new_ir, OP, forward=_forward(path, scope_path, shift))


def _forward(alloc_path, scope_path, shift):
    new_scope = tuple(alloc_path)
    n = len(scope_path)
    *parent, (field, k) = alloc_path
    parent = tuple(parent)
    after = C.forward_delete(parent, field, k, k + 1)

    # the allocation's image heads the branch it went to: the body of a
    # loop, the body of an if when that uses it (or neither does), else
    # the else branch; the then-branch's first statement (another
    # allocation, say) is not its image
    home = "body" if "body" in shift else "orelse"

    def fwd(p):
        if p == tuple(alloc_path):
            return new_scope + ((home, 0), )
        if p[:n] == tuple(scope_path):
            rest = p[n:]
            if rest:
                f, i = rest[0]
                rest = ((f, i + shift.get(f, 0)), ) + rest[1:]
            return new_scope + rest
        return after(p)
    return fwd


def _check_no_carried_values(proc, loop_path, loop, alloc, fail):
    """Each iteration reads only what it has assigned itself (see the
    module docstring)."""
    buf = alloc.name
    scalar = not isinstance(alloc.type, IR.Tensor)
    whole = False       # an earlier top-level statement overwrote it all
    defs = []           # indices of earlier top-level plain assignments
    wins = []           # windows earlier top-level loop nests assign
    for k, top in enumerate(loop.body):
        tpath = tuple(loop_path) + (("body", k), )
        for p, st in walk_with_paths((top, ), tuple(loop_path), "body", k):
            for u in stmt_uses(p, st, {buf}):
                if whole or u.kind in ("write", "stride"):
                    continue
                if u.kind in ("read", "reduce"):
                    idx = tuple(u.node.idx)
                    if any(_same_loc(proc, p, idx, d) for d in defs) or any(
                            inside_window(proc, p, idx, w) for w in wins) \
                            or _inner_cover(proc, loop_path, p, buf, idx):
                        continue
                    what = (f"reads {expr_text(u.node)}" if u.kind == "read"
                            else f"reduces into {buf.name}[...]")
                else:
                    what = (f"passes '{buf.name}' on" if u.kind == "whole"
                            else f"takes the window {expr_text(u.node)}")
                raise fail(
                    f"in loop '{loop.iter.name}', this statement {what}, "
                    f"which may hold a value from an earlier iteration; "
                    f"each iteration must assign what it reads before "
                    f"the buffer can be private to an iteration", st)
        if isinstance(top, IR.Assign) and top.name == buf:
            if scalar or not top.idx:
                whole = True
            elif not any(reads_config(e) for e in top.idx):
                defs.append(tuple(top.idx))
        elif not whole and not scalar and _overwrites_all(
                proc, tpath, top, loop.body, alloc):
            whole = True
        elif not whole and not scalar and isinstance(top, IR.For):
            wins += written_windows(proc, tpath, top, loop.body, buf)


def _inner_cover(proc, loop_path, path, buf, idx) -> bool:
    """The read ``buf[idx]`` at ``path`` follows, in a block nested in the
    loop's body (so in the same iteration of the loop), a statement of
    that block that assigns its location: a plain assignment proven to
    write it, or a loop nest assigning a window it is proven to lie in."""
    ir = proc.ir()
    for d in range(len(loop_path) + 2, len(path) + 1):
        *parent, (field, k) = path[:d]
        block = C.get_list(ir, tuple(parent), field)
        for j in range(k):
            sp = tuple(parent) + ((field, j), )
            st = block[j]
            if isinstance(st, IR.Assign) and st.name == buf and st.idx \
                    and not any(reads_config(e) for e in st.idx) \
                    and not C.bounds_depend_on(st.idx, block) \
                    and _same_loc(proc, path, idx, tuple(st.idx)):
                return True
            if isinstance(st, IR.For) and any(
                    inside_window(proc, path, idx, w)
                    for w in written_windows(proc, sp, st, block, buf)):
                return True
    return False


def _same_loc(proc, path, idx, d) -> bool:
    if len(idx) != len(d):
        return False
    if not idx:
        return True
    pred = None
    for a, b in zip(idx, d):
        eq = IR.BinOp("==", a, b, type=IR.Bool)
        pred = eq if pred is None else IR.BinOp("and", pred, eq, type=IR.Bool)
    return bool(prove_at(proc, path, pred))


def _overwrites_all(proc, path, stmt, block, alloc) -> bool:
    from ._window_cover import Slice, Window, overwrites_window
    shape = T.shape(alloc.type)
    zero = IR.Const(0, type=IR.Int)
    w = Window(alloc.name, alloc.type, [Slice(zero, h) for h in shape])
    return overwrites_window(proc, path, stmt, block, w)
