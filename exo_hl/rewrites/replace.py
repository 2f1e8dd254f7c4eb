"""``replace(block, sub_proc)``: replace a block by an equivalent call.

The call's arguments are inferred by unification (``exo_hl.unify``, paper
§3.3.4): the body of ``sub_proc`` must match the block exactly up to renaming
of bound symbols and integer identities, with the parameters as unknowns.
When ``sub_proc`` is an ``@instr`` this is instruction selection.

Checks, after unification found the arguments:
- no symbol the block binds is used after it (it disappears into the call);
- every argument fits its parameter: element type, dimensions and memory
  (a buffer passed where ``SCRATCH`` is expected must live in ``SCRATCH``
  or a subclass), via the frontend's call rules; and, for a procedure
  (not an instruction), the C element type of an ``R`` parameter (C has
  one body per callee, with ``R`` as ``float``: an ``i8`` or ``f64``
  buffer there would be refused by ``compile()``);
- size arguments are provably positive at the call;
- the callee's preconditions (config state included, through PreValG),
  the inferred windows' bounds and argument shapes hold in context: the
  bounds checker re-runs on the rewritten procedure.
The rewrite is a full equivalence: the call's body *is* the block.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import simplify as S
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.traversal import used_syms
from ..core_ir.windows import retype_window_names
from ..effects.recheck import check_rewritten
from ..errors import BoundsError, ExoTypeError, SchedulingError
from ..effects import api as EA
from ..core_ir.typerules import (buffer_memories, c_precision_problem,
                                  call_arg_problem)
from ..unify import UnifyError, unify
from ..provenance import derive
from . import _common as C
from . import _replace_hints as H


def replace(proc, block, sub_proc):
    b = C.resolve_block(proc, block, "replace")
    first = b.stmts[0]

    def err(msg, st=first, progress=0):
        e = C.scheduling_error(proc, st, "replace: " + msg)
        # for callers that try many instructions (stdlib.vectorize): how
        # far this one got, and the reason without the location
        e.replace_progress, e.replace_reason = progress, msg
        return e

    sub_ir = _sub_ir(sub_proc)
    if sub_ir is None:
        raise err(f"expected a procedure to call, got {sub_proc!r}")
    pir = proc.ir()
    if sub_ir is pir:
        raise err("a procedure cannot call itself")

    # symbols the block binds must not be used after it
    siblings = C.get_list(pir, b.parent, b.field)
    bound = {s.name for s in b.stmts if isinstance(s, (IR.Alloc,
                                                       IR.WindowStmt))}
    later = used_syms(tuple(siblings[b.hi:]))
    for n in sorted(bound & later, key=lambda s: s.id):
        raise err(f"'{n.name}' is bound in the block and used after it, so "
                  "the block cannot become a call")

    scope = _scope_types(pir, b)
    try:
        u = unify(sub_ir, b.stmts, scope)
    except UnifyError as e:
        why = e.first
        hint = H.invariant_hint(sub_ir, b.stmts)
        raise err(f"'{sub_ir.name}' does not match this code: {why}"
                  + (f"\n  {hint}" if hint else ""),
                  progress=e.progress) from None

    path0 = b.paths()[0]
    env = S.env_at(pir, path0)
    # the readings of the match in order (usually one): the first that
    # passes every check below is the call
    first_err = None
    for cand in (u, ) + u.alternatives:
        try:
            new_ir = _checked_call(proc, pir, b, sub_ir, cand, env, path0,
                                   err)
            break
        except SchedulingError as e:
            first_err = first_err or e
    else:
        raise first_err

    return derive(proc, new_ir, "replace", forward=C.forward_replace_block(
        b.parent, b.field, b.lo, b.hi, 1))


def _checked_call(proc, pir, b, sub_ir, u, env, path0, err):
    """The procedure with the block replaced by the call of reading ``u``,
    after every check; raises ``err(...)`` (a SchedulingError)."""
    first = b.stmts[0]
    si = first.srcinfo
    args = u.args(si, norm=lambda e: S.simplify_expr(e, env))
    call = IR.Call(sub_ir, args, srcinfo=si)

    # arguments fit the parameters (types, dimensions, memories)
    mems = buffer_memories(pir)
    for fa, a in zip(sub_ir.args, args):
        am = mems.get(a.name) if isinstance(a, (IR.Read, IR.WindowExpr)) \
            and not T.is_control(a.type) else None
        why = call_arg_problem(fa, a, am)
        if why:
            hint = H.memory_hint(sub_ir, fa, a, am, b.stmts)
            raise err(f"'{sub_ir.name}' matches this code, but not its "
                      f"operands: {why}" + (f"\n  {hint}" if hint else ""),
                      progress=H.UNIFIED)

    # C has one body per callee, with R as float: a call binding an R
    # parameter to other data interprets, but compile() refuses it
    for fa, a in zip(sub_ir.args, args):
        why = None if sub_ir.instr is not None else \
            c_precision_problem(sub_ir, fa, a)
        if why:
            raise err(f"'{sub_ir.name}' matches this code, but C cannot "
                      f"call it so: {why}", progress=H.UNIFIED)

    new_ir = C.replace_block_at(pir, b.parent, b.field, b.lo, b.hi, (call, ))

    # sizes positive, preconditions / bounds / shapes in context (the
    # sizes asked at once first, then one by one to name the one that
    # fails)
    sizes = [(fa, a, B.cmp(">=", a, B.const(1, si), si))
             for fa, a in zip(sub_ir.args, args) if fa.type is IR.Size]
    if sizes:
        ctx = EA.context(new_ir, path0)
        if not EA.prove(B.conj([p for _, _, p in sizes], si), ctx):
            for fa, a, pred in sizes:
                if not EA.prove(pred, ctx):
                    raise err(f"cannot prove the inferred size argument "
                              f"'{fa.name.name}' = {_e(a)} "
                              "is positive at the call", progress=H.ARGS_FIT)
    # (against the procedure it came from when that one passed the checks:
    # only what the new call can affect is proven again, not the whole
    # procedure, which made selecting the instructions of a big kernel
    # quadratic)
    parent = pir if proc._checked else None
    try:
        check_rewritten(retype_window_names(new_ir, parent), parent)
    except (BoundsError, ExoTypeError) as e:  # ExoTypeError: aliasing args
        raise err(f"the inferred call {_e_call(call)} is not valid here: "
                  f"{_first_line(e)}", progress=H.ARGS_FIT) from None

    return new_ir


def _sub_ir(sub_proc):
    if isinstance(sub_proc, IR.Proc):
        return sub_proc
    ir = getattr(sub_proc, "ir", None)
    if callable(ir):
        r = ir()
        return r if isinstance(r, IR.Proc) else None
    return None


def _scope_types(pir, b) -> dict:
    """Types of the caller symbols visible at the block: arguments, loop
    iterators, and allocations/windows earlier in each enclosing block."""
    out = {a.name: a.type for a in pir.args}

    def add(stmts):
        for s in stmts:
            if isinstance(s, IR.Alloc):
                out[s.name] = s.type
            elif isinstance(s, IR.WindowStmt):
                out[s.name] = s.rhs.type

    node = pir
    steps = tuple(b.parent) + ((b.field, b.lo), )
    for field, i in steps:
        lst = getattr(node, field)
        add(lst[:i])
        node = lst[i]
        if isinstance(node, IR.For) and (field, i) != steps[-1]:
            out[node.iter] = IR.Index
    return out


def _e(e):
    from ..core_ir.printer import expr_to_str
    try:
        return expr_to_str(e)
    except Exception:
        return repr(e)


def _e_call(call):
    return f"{call.f.name}({', '.join(_e(a) for a in call.args)})"


def _first_line(e):
    msg = str(e)
    # drop the location prefix of the bounds checker; keep its reason
    head = msg.splitlines()[0] if msg else msg
    if "': " in head:
        head = head.split("': ", 1)[1]
    return head
