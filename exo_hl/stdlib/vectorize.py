"""Instruction selection: vectorize a loop, replace every match of a set of
instructions.

Public API only: ``split``, ``cut_loop``, ``eliminate_dead_code``,
``stage_mem``, ``set_memory``, ``rewrite_expr`` and ``replace``, each
checked by its primitive.
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


def _windows(p, inner, width, loop=None):
    """The distinct windows ``buf[..., lo:lo+width]`` of the accesses in the
    body of loop ``inner`` (the cursor ``loop`` if given) whose last index
    is ``e + inner`` (``e`` free of ``inner``) and whose other indices do
    not name ``inner``. A body that is one ``if`` (the tail's guard) is
    looked into."""
    lc = loop if loop is not None else loop_cursor(p, inner)
    stmts = list(lc.body())
    if len(stmts) == 1 and stmts[0].is_if() and not _has_else(stmts[0]):
        stmts = list(stmts[0].body())
    accesses = []
    for s in stmts:
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


def _has_else(if_cursor) -> bool:
    """Whether the ``if`` statement has an ``else`` branch."""
    return "\nelse:" in text(if_cursor)


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
    vector loop), ``'mask'`` (the remainder runs as one more vector
    iteration on masked instructions). With ``'mask'`` the loop is split
    with a guard, cut after the whole blocks (``cut_loop``; their guard is
    proven true and dropped, ``eliminate_dead_code``), and in the last,
    partial block each window is staged past the end of its buffer
    (``stage_mem``'s guarded copies), the guard rewritten to ``ii < m``
    (``rewrite_expr``, proven equal), so that masked instructions whose
    specifications test ``i < m`` match: a masked load
    (``mm256_maskload_ps``), the ``mm256_prefix_*`` arithmetic and store
    (AVX2; ``mm512_maskz_loadu_ps`` and ``mm512_prefix_*`` for AVX-512).

    The inner body must be plain assignments whose vector accesses vary
    with the loop in their last index only, and every staged loop must
    match one of ``instrs`` (else ``SchedulingError`` names the first loop
    left unmatched).

    Example::

        from exo_hl.hw_libs.avx2 import AVX2, INSTRS
        p = vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='cut')
        p = vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='mask')
        # ... for io in seq(n / 8, (n + 7) / 8): mm256_maskload_ps(...);
        #     mm256_prefix_fmadd_bcst_ps(...); mm256_prefix_store_ps(...)
    """
    if tail not in ("perfect", "cut", "mask"):
        raise SchedulingError(f"vectorize: unknown tail {tail!r}")
    c = loop_cursor(p, loop)
    i = c.name()
    o, inner = f"{i}o", f"{i}i"
    if tail != "mask":
        p = p.split(i, width, o, inner, tail=tail)
        p, staged = _stage(p, loop_cursor(p, inner), inner, width, memory,
                           "_vec")
        return _select(p, instrs, staged)
    lo, hi = text(c.lo()), text(c.hi())
    trips = hi if lo == "0" else f"({hi}) - ({lo})"
    p = p.split(i, width, o, inner, tail="guard")
    if not p.find_loop(inner).body()[0].is_if():
        # split proved the trip count a multiple of the width (a literal or
        # the preconditions): no partial block, nothing to mask
        p, staged = _stage(p, p.find_loop(inner), inner, width, memory,
                           "_vec")
        return _select(p, instrs, staged)
    p = p.cut_loop(p.find_loop(o), f"({trips}) / {width}")
    whole, part = p.find(f"for {o} in _: _", many=True)[:2]
    p = p.eliminate_dead_code(_guard_of(whole.body()[0]))
    p, staged = _stage(p, p.forward(whole).body()[0], inner, width, memory,
                       "_vec")
    part = p.forward(part)
    try:   # no partial block (the trip count is a multiple of the width)
        return _select(p.eliminate_dead_code(part), instrs, staged)
    except SchedulingError:
        pass
    p, staged_tail = _stage(p, _inner_of(part, inner), inner, width, memory,
                            "_tail")
    part = p.forward(part)
    m = _mask_bound(part, inner)
    guard = _guard_of(_inner_of(part, inner))
    p = p.rewrite_expr(guard.find("_ < _"), f"{inner} < {m}")
    return _select(p, instrs, staged + staged_tail)


def _guard_of(inner_loop):
    """The ``if`` that is the whole body of the loop ``inner_loop``."""
    body = list(inner_loop.body())
    if len(body) != 1 or not body[0].is_if():
        raise SchedulingError(
            f"vectorize: expected the guarded body of loop "
            f"{inner_loop.name()!r}, found: {text(inner_loop)}")
    return body[0]


def _inner_of(outer, inner):
    """The loop over ``inner`` directly in the body of ``outer``."""
    for s in outer.body():
        if s.is_loop() and s.name() == inner:
            return s
    raise SchedulingError(f"vectorize: no loop {inner!r} in "
                          f"'for {outer.name()}'")


def _mask_bound(part, inner):
    """The bound ``m`` of the guarded copies in the tail block (``i0 <
    m``): the number of lanes inside the buffers."""
    for s in part.body():
        if s.is_loop() and s.name() != inner:
            try:
                return text(s.find("_ < _").rhs())
            except SchedulingError:
                continue
    raise SchedulingError("vectorize: tail='mask' found no guarded copy "
                          "in the last block (nothing to vectorize)")


def _stage(p, inner_loop, inner, width, memory, suffix):
    """Stage every vector window of the loop ``inner_loop`` (over
    ``inner``) into a buffer in ``memory``; the new names."""
    staged = []
    for win in _windows(p, inner, width, inner_loop):
        base = win[:win.index('[')]
        name = f"{base}{suffix}"
        while mentions(str(p), name):
            name += "_"
        p = p.stage_mem(p.forward(inner_loop), win, name)
        p = p.set_memory(name, memory)
        staged.append(name)
    return p, staged


def _select(p, instrs, staged):
    """``replace_all``, then refuse a loop left touching a staged buffer."""
    p = replace_all(p, instrs)
    for lp in all_loops(p):
        body = " ".join(text(b) for b in lp.body()
                        if not (b.is_call() or b.is_alloc() or b.is_loop()))
        if any(mentions(body, name) for name in staged):
            raise SchedulingError(
                f"vectorize: no instruction of the library matches the loop "
                f"'for {lp.name()}': {body}")
    return p
