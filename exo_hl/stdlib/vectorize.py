"""Instruction selection: vectorize a loop, replace every match of a set of
instructions.

Public API only: ``split``, ``stage_mem``, ``set_memory`` and ``replace``,
each checked by its primitive.
"""
from __future__ import annotations

from exo_hl import Procedure, SchedulingError

from ._util import all_loops, loop_cursor, mentions, subst_var, text


def replace_all(p, instrs):
    """Replace every loop (and statement) that one of ``instrs`` (a list, or
    one instruction as in Exo) matches by a call to it, innermost statements
    last, until nothing more matches.
    Each replacement is ``replace``'s unification and checks; a statement
    no instruction matches stays as it is.

    Example::

        from exo_hl.hw_libs.avx2 import INSTRS
        p = replace_all(p, INSTRS)
    """
    instrs = [instrs] if isinstance(instrs, Procedure) else list(instrs)
    changed = True
    while changed:
        changed = False
        for k in range(len(all_loops(p))):
            loops = all_loops(p)
            if k >= len(loops):
                break
            for ins in instrs:
                try:
                    p = p.replace(loops[k], ins)
                except SchedulingError:
                    continue
                changed = True
                break
            if changed:
                break
    return p


def _windows(p, inner, width):
    """The distinct windows ``buf[..., lo:lo+width]`` of the accesses in the
    body of loop ``inner`` whose last index is ``e + inner`` (``e`` free of
    ``inner``) and whose other indices do not name ``inner``."""
    lc = loop_cursor(p, inner)
    accesses = []
    for s in lc.body():
        if s.is_loop() or s.is_if() or s.is_call() or s.is_alloc():
            raise SchedulingError(
                f"vectorize: the body of loop {inner!r} must be plain "
                f"assignments, found: {text(s)}")
        accesses.append((s.name(), [text(e) for e in s.idx()]))
        try:
            reads = s.find("_[_]", many=True)
        except SchedulingError:
            reads = []
        for r in reads:
            accesses.append((r.name(), _idx_of(r)))
    out = []
    for name, idx in accesses:
        if not idx or not mentions(idx[-1], inner):
            if any(mentions(e, inner) for e in idx):
                raise SchedulingError(
                    f"vectorize: {name}[{', '.join(idx)}] varies with "
                    f"{inner!r} in a dimension other than the last")
            continue
        if any(mentions(e, inner) for e in idx[:-1]):
            raise SchedulingError(
                f"vectorize: {name}[{', '.join(idx)}] varies with "
                f"{inner!r} in a dimension other than the last")
        lo = subst_var(idx[-1], inner, "0")
        w = ", ".join(idx[:-1] + [f"{lo}:{lo} + {width}"])
        win = f"{name}[{w}]"
        if win not in out:
            out.append(win)
    return out


def _idx_of(expr_cursor):
    """The index texts of a read ``buf[i, j]`` (from its source text)."""
    t = text(expr_cursor)
    inside = t[t.index("[") + 1:t.rindex("]")]
    parts, depth, cur = [], 0, ""
    for ch in inside:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch in "(["
        depth -= ch in ")]"
        cur += ch
    return parts + [cur.strip()]


def vectorize(p, loop, width, memory, instrs, tail="perfect"):
    """Vectorize ``loop`` by ``width`` lanes: split it (``{i}o``/``{i}i``),
    stage each vector access of the inner loop into a ``width``-element
    buffer in ``memory``, then ``replace_all`` with ``instrs``.

    ``tail``: ``'perfect'`` (the trip count is proven divisible by
    ``width``), ``'cut'`` (the remainder stays a scalar loop after the
    vector loop). ``'mask'`` raises ``SchedulingError``: a masked load's
    specification (zero lanes past the tail) does not match what staging a
    partial window produces, so ``replace`` cannot select it; write the
    masked tail by hand with ``mm256_maskload_ps``/``mm256_maskstore_ps``.

    The inner body must be plain assignments whose vector accesses vary
    with the loop in their last index only, and every staged loop must
    match one of ``instrs`` (else ``SchedulingError`` names the first loop
    left unmatched).

    Example::

        from exo_hl.hw_libs.avx2 import AVX2, INSTRS
        p = vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='cut')
    """
    if tail not in ("perfect", "cut", "mask"):
        raise SchedulingError(f"vectorize: unknown tail {tail!r}")
    if tail == "mask":
        raise SchedulingError(
            "vectorize: tail='mask' is not available: no masked instruction "
            "matches a staged partial window through replace; use "
            "tail='cut' or 'perfect'")
    i = loop_cursor(p, loop).name()
    o, inner = f"{i}o", f"{i}i"
    p = p.split(i, width, o, inner, tail=tail)
    staged = []
    for win in _windows(p, inner, width):
        name = f"{win[:win.index('[')]}_vec"
        while name in str(p):
            name += "_"
        p = p.stage_mem(p.find_loop(inner), win, name)
        p = p.set_memory(name, memory)
        staged.append(name)
    p = replace_all(p, instrs)
    for lp in all_loops(p):
        body = " ".join(text(b) for b in lp.body()
                        if not (b.is_call() or b.is_alloc() or b.is_loop()
                                or b.is_if()))
        if any(mentions(body, name) for name in staged):
            raise SchedulingError(
                f"vectorize: no instruction of the library matches the loop "
                f"'for {lp.name()}': {body}")
    return p
