"""What to do when ``replace`` finds no match: hints in the user's terms.

Unification says *where* the instruction's body and the user's code part
(``its statement 'dst[i] += a[i] * b[i]': the access 'dst[i]' cannot be
matched with 'y[i]'``); these helpers say *why* in scheduling terms and
what to do next:

- an access of the user's loop that does not vary with the loop while the
  instruction's access does (``y[i]`` inside ``for j``): a reduction into
  one element, or one value used in every lane (a broadcast);
- an operand in the wrong memory (a DRAM array where the instruction takes
  a register): stage it into the instruction's memory first.

``progress`` ranks failed instructions by how far they got, so that a
caller trying many (``stdlib.vectorize``) can name the nearest one.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import walk

#: ``SchedulingError.replace_progress`` stages, after unification's count
UNIFIED = 10 ** 6          # the body matched; the arguments did not fit
ARGS_FIT = 2 * 10 ** 6     # the arguments fit; a check in context failed


def _e(e) -> str:
    try:
        return expr_to_str(e)
    except Exception:  # noqa: BLE001 - a message must not fail
        return repr(e)


def _acc(name, idx) -> str:
    return name.name + (f"[{', '.join(_e(i) for i in idx)}]" if idx else "")


def _accesses(stmts, out):
    """(kind, sym, idx) of every buffer access in ``stmts``, in order:
    a statement's write first, then the reads of its right-hand side."""
    for s in stmts:
        if isinstance(s, (IR.Assign, IR.Reduce)):
            kind = "reduce" if isinstance(s, IR.Reduce) else "write"
            out.append((kind, s.name, tuple(s.idx)))
            out.extend(("read", n.name, tuple(n.idx)) for n in walk(s.rhs)
                       if isinstance(n, IR.Read) and not _is_ctrl(n))
        elif isinstance(s, IR.For):
            _accesses(s.body, out)
        elif isinstance(s, IR.If):
            _accesses(s.body, out)
            _accesses(s.orelse, out)
    return out


def _is_ctrl(n) -> bool:
    from ..core_ir import types as T
    return T.is_control(n.type)


def _mentions(idx, sym) -> bool:
    return any(isinstance(n, IR.Read) and n.name is sym
               for e in idx for n in walk(e))


def invariant_hint(sub_ir, block) -> str | None:
    """When the user's loop reads or writes an element that does not vary
    with the loop where the instruction's corresponding access does, say
    so and what to do; None otherwise."""
    if len(block) != 1 or len(sub_ir.body) != 1:
        return None
    k, c = block[0], sub_ir.body[0]
    if not (isinstance(k, IR.For) and isinstance(c, IR.For)):
        return None
    kacc = _accesses(k.body, [])
    cacc = _accesses(c.body, [])
    pairs = list(zip(cacc, kacc)) if len(cacc) == len(kacc) else [
        (None, a) for a in kacc]
    for ca, ka in pairs:
        kind, sym, idx = ka
        if _mentions(idx, k.iter):
            continue
        if ca is not None and not _mentions(ca[2], c.iter):
            continue            # the instruction's access is invariant too
        if ca is None and not all(_mentions(a[2], c.iter) for a in cacc):
            continue
        mine = (f" (the instruction's '{_acc(ca[1], ca[2])}' does)"
                if ca is not None else "")
        it = k.iter.name
        if kind in ("reduce", "write"):
            return (f"'{_acc(sym, idx)}' does not vary with loop '{it}'"
                    f"{mine}: every iteration of '{it}' updates the same "
                    "element, so the loop is a reduction, not lane-wise "
                    "work. Vectorize it with stdlib.vectorize_reduction (a "
                    "register of partial sums, then one horizontal sum), or "
                    "reorder the loops so that the vectorized loop indexes "
                    f"'{sym.name}'")
        return (f"'{_acc(sym, idx)}' does not vary with loop '{it}'{mine}: "
                "the same value is used in every lane. Broadcast it into a "
                "register first (bind_expr, expand_dim, set_memory, then "
                "the library's set1 instruction; stdlib.vectorize does "
                "this), or use an instruction that takes a scalar operand")
    return None


def memory_hint(sub_ir, param, arg, arg_mem, block) -> str | None:
    """When ``arg`` (the inferred argument for ``param``) lives in another
    memory than the instruction takes, what to do; None otherwise."""
    want = getattr(param, "mem", None)
    if want is None or arg_mem is None or want is arg_mem:
        return None
    try:
        if issubclass(arg_mem, want):
            return None
    except TypeError:
        return None
    name = getattr(arg, "name", None)
    buf = name.name if name is not None else _e(arg)
    where = (f"p.find_loop('{block[0].iter.name}')"
             if len(block) == 1 and isinstance(block[0], IR.For)
             else "<the block>")
    return (f"'{buf}' is in {arg_mem.__name__} but '{sub_ir.name}' takes "
            f"its '{param.name.name}' in {want.__name__}: stage the operand "
            f"into {want.__name__} first, e.g. p = p.stage_mem({where}, "
            f"'{_e(arg)}', '{buf}_reg') then p = p.set_memory('{buf}_reg', "
            f"{want.__name__}) (stdlib.vectorize stages every access so)")
