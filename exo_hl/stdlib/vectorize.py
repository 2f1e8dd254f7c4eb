"""Instruction selection: vectorize a loop, replace every match of a set of
instructions.

Public API only: ``split``, ``cut_loop``, ``eliminate_dead_code``,
``stage_mem``, ``set_memory``, ``rewrite_expr`` and ``replace``, each
checked by its primitive.
"""
from __future__ import annotations

from exo_hl import Procedure, SchedulingError

from ._mask import guard_of as _guard_of
from ._mask import mask_bounds as _mask_bounds
from ._vectorize_why import body_kind, masked_refusal, nearest
from ._vectorize_why import diagnose as _diagnose
from ._util import data_leaves as _data_leaves
from ._util import (Run, at_path, fresh_name, loop_cursor, mentions,
                    sibling_path, subst_var, text)


def replace_all(p, instrs):
    """Replace every loop and statement that one of ``instrs`` (a list, or
    one instruction as in Exo) matches by a call to it, outer statements
    first (a loop before the statements in it), until nothing more
    matches: loops of vector arithmetic, and single statements such as
    Gemmini's config writes (``ConfigLoad.src_stride = s`` ->
    ``config_ld(s)``). Each replacement is ``replace``'s unification and
    checks; a statement no instruction matches stays as it is. ``instrs``
    must be procedures (``@instr``s): anything else, a name given as a
    string included, is a ``SchedulingError``.

    Example::

        from exo_hl.hw_libs.avx2 import INSTRS
        p = replace_all(p, INSTRS)
    """
    return _replace_within(p, _instr_list(instrs), None)


def _instr_list(instrs):
    """``instrs`` as a list of procedures, or ``SchedulingError``."""
    if isinstance(instrs, Procedure):
        return [instrs]
    if isinstance(instrs, (str, bytes)) or not isinstance(
            instrs, (list, tuple, set, frozenset)):
        raise SchedulingError(
            f"replace_all: expected an instruction or a list of "
            f"instructions (procedures, e.g. a library's INSTRS), got "
            f"{instrs!r}")
    out = list(instrs)
    for ins in out:
        if not isinstance(ins, Procedure):
            hint = (" (instructions are passed as the procedures, not by "
                    "name)" if isinstance(ins, str) else "")
            raise SchedulingError(f"replace_all: {ins!r} is not an "
                                  f"instruction procedure{hint}")
    return out


def _statements(block, out):
    """The statements of ``block`` and of the blocks in them, pre-order."""
    for s in block:
        out.append(s)
        if s.is_loop():
            _statements(s.body(), out)
        elif s.is_if():
            _statements(s.body(), out)
            if _has_else(s):
                _statements(s.orelse(), out)
    return out


def _candidates(p, roots):
    """The statements ``replace`` may try: all of ``p``'s, or (``roots``:
    paths) those inside the statements at those paths, not the roots (a
    ``Run`` root: its statements and those inside them)."""
    if roots is None:
        stmts = _statements(p.body(), [])
    else:
        stmts = []
        for r in roots:
            _statements(at_path(p, r.path).expand(0, r.n - 1)
                        if isinstance(r, Run) else at_path(p, r).body(), stmts)
    return [s for s in stmts if not (s.is_alloc() or s.is_call()
                                     or s.is_if())]


def _replace_within(p, instrs, roots):
    """``replace_all`` restricted to the statements inside ``roots`` (paths
    of statements that keep their place), or everywhere for None."""
    changed = True
    while changed:
        changed, k = False, 0
        while True:
            stmts = _candidates(p, roots)
            if k >= len(stmts):
                break
            for ins in instrs:
                try:
                    p = p.replace(stmts[k], ins)
                except SchedulingError:
                    continue
                changed = True
                break
            else:
                k += 1
            # a replaced statement is a call now (not a candidate): the
            # scan goes on after it; once done, again until nothing matches
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
    try:
        return len(if_cursor.orelse()) > 0
    except SchedulingError:       # an empty else branch
        return False


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
    buffer in ``memory``, then ``replace_all`` with ``instrs`` inside the
    loop it split (and its masked last block), nowhere else. ``loop`` is a
    pattern (``'i #1'``) or a cursor; every later step finds what the
    previous one built by its place or by cursor, never by name.

    ``tail``: ``'perfect'`` (the trip count is proven divisible by
    ``width``), ``'cut'`` (the remainder stays a scalar loop after the
    vector loop), ``'mask'`` (the remainder runs as one more vector
    iteration on masked instructions). With ``'mask'`` the loop is split
    with a guard, cut after the whole blocks (``cut_loop``; their guard is
    proven true and dropped, ``eliminate_dead_code``), and in the last,
    partial block each window is staged past the end of its buffer
    (``stage_mem``'s guarded copies), the guard rewritten to ``ii < m``
    (``rewrite_expr``, proven equal; ``m`` is the copies' bound, or, when
    the buffers are longer than the loop and no copy needs a guard, the
    lanes the loop runs: plain loads and stores then), so that masked
    instructions whose specifications test ``i < m`` match: a masked load
    (``mm256_maskload_ps``), the ``mm256_prefix_*`` arithmetic and store
    (AVX2; ``mm512_maskz_loadu_ps`` and ``mm512_prefix_*`` for AVX-512).
    The masked block handles lane-wise bodies only: for a literal, a
    loop-invariant operand, a stencil or a reduction ``tail='mask'``
    refuses, naming the kind and what to use (``tail='cut'``,
    ``vectorize_reduction``); with the trip count proven a multiple of
    ``width`` it is ``tail='perfect'``.

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
    instrs = _instr_list(instrs)
    c = loop_cursor(p, loop)
    i = c.name()
    _refuse_nested_loop(c, i)
    o, inner = f"{i}o", f"{i}i"
    # each step finds what the previous one built by its place (the split
    # loop stands where the loop stood, the cut's second part after it)
    # or by cursor, never by name: another nest may have the same names
    where = c.path()
    if tail != "mask":
        p0 = p
        p = p.split(c, width, o, inner, tail=tail)
        try:
            q, staged, _ = _stage(p, at_path(p, where).body()[0], inner,
                                  width, memory, "_vec")
            return _select(q, instrs, staged, [where])
        except SchedulingError as e:
            first = e
        try:
            p1, w1 = _bind_literals(p0, where)
            p1 = p1.split(at_path(p1, w1), width, o, inner, tail=tail)
        except SchedulingError:
            p1, w1 = p, where
        # again with literals and loop-invariant reads broadcast into
        # registers (set1), then with every access in a register of its
        # own and one operation per statement
        for every in (False, True):
            try:
                q, w, regs = _in_registers(p1, w1, inner, width, memory,
                                           every)
                if not regs:
                    continue
                body = at_path(q, w).body()
                q, staged, _ = _stage(q, body[len(body) - 1], inner, width,
                                      memory, "_vec", skip=regs)
                return _select(q, instrs, staged + regs, [w])
            except SchedulingError as e:
                # the last attempt's reason: it staged each access, so it
                # names a loop the library lacks, not a window it built
                first = e
                continue
        raise _diagnose(p, at_path(p, where).body()[0], inner, first)
    lo, hi = text(c.lo()), text(c.hi())
    trips = hi if lo == "0" else f"({hi}) - ({lo})"
    p0, p = p, p.split(c, width, o, inner, tail="guard")
    if not at_path(p, where).body()[0].body()[0].is_if():
        # split proved the trip count a multiple of the width (a literal or
        # the preconditions): no partial block, nothing to mask
        return vectorize(p0, c, width, memory, instrs, tail="perfect")
    try:
        return _masked(p, where, inner, width, memory, instrs, trips)
    except SchedulingError as e:
        kind = body_kind(c, i)
        if kind is None:
            raise
        raise SchedulingError(masked_refusal(kind, i, width)) from e


def _refuse_nested_loop(c, i):
    """``vectorize`` works on an innermost loop: a loop in the body of
    ``c`` (over ``i``) is refused up front, saying what to do instead."""
    for s in c.body():
        if s.is_loop():
            j = s.name()
            raise SchedulingError(
                f"vectorize: the body of loop {i!r} holds the loop {j!r} "
                f"({text(s).splitlines()[0].strip()}); vectorize works on an "
                f"innermost loop of assignments. Vectorize {j!r} instead "
                f"(vectorize_reduction if it sums into a location that does "
                f"not vary with {j!r}), or move {i!r} inside it first "
                f"(p.reorder({i!r}, {j!r}))")


def _masked(p, where, inner, width, memory, instrs, trips):
    """``vectorize(tail='mask')`` after the guarded split: whole blocks
    on plain instructions, the partial last block on masked ones."""
    p = p.cut_loop(at_path(p, where), f"({trips}) / {width}")
    nxt = sibling_path(where, 1)
    p = p.eliminate_dead_code(_guard_of(at_path(p, where).body()[0]))
    p, staged, _ = _stage(p, at_path(p, where).body()[0], inner, width,
                          memory, "_vec")
    try:   # no partial block (the trip count is a multiple of the width)
        return _select(p.eliminate_dead_code(at_path(p, nxt)), instrs,
                       staged, [where])
    except SchedulingError:
        pass
    p, staged_tail, inner_loop = _stage(p, at_path(p, nxt).body()[0], inner,
                                        width, memory, "_tail")
    guard = _guard_of(inner_loop).find("_ < _")
    for m in _mask_bounds(at_path(p, nxt), inner_loop, inner):
        try:
            q = p.rewrite_expr(guard, f"{inner} < {m}")
        except SchedulingError as e:
            why = e
            continue
        return _select(q, instrs, staged + staged_tail, [where, nxt])
    raise why


def _bind_literals(p, where):
    """Bind every literal in the body of the loop at path ``where`` to a
    scalar assigned at the top (``bind_const``; before the loop is split,
    while it provably runs at least once). The procedure and the loop's
    path.

    The loop is followed through each binding by the statement that held
    the literal (forwarded: its image is exact), never by arithmetic on
    ``where``: the hoist may move other statements out of the loops around
    it (a loop-invariant ``z[0] = 1.0`` before the loop), and the path the
    loop had, shifted by the statements added at the top, then named
    another loop of the same block, which was vectorized instead."""
    from .scalars import bind_const
    while True:
        loop = at_path(p, where)
        lits, user = [], None
        for b in loop.body():
            if b.is_write():
                found = [x for x in _data_leaves(b.rhs(), [])
                         if type(x.node()).__name__ == "Const"]
                if found and user is None:
                    user = b
                lits += found
        if not lits:
            return p, where
        name, n_body = loop.name(), len(loop.body())
        p = bind_const(p, lits[0], fresh_name(p, "c"))
        moved = p.forward(user).parent()
        if not (moved.is_loop() and moved.name() == name
                and len(moved.body()) == n_body):
            raise SchedulingError(      # pragma: no cover - a safety net
                f"vectorize: after binding a literal, the loop {name!r} "
                f"is no longer the one that holds its statements")
        where = moved.path()


def _in_registers(p, where, inner, width, memory, every_access):
    """Put operands of the loop over ``inner`` (the only statement of the
    loop at path ``where``; its body one assignment) into registers of
    ``width`` lanes, each filled by a loop of its own before it:

    - a read that does not vary with ``inner`` (a scalar, ``a[k]``) gets a
      register ``{x}_bcst`` (``bind_expr``, ``expand_dim``, ``lift_alloc``,
      ``fission_after``), its fill loop left for ``set1`` or a broadcast;
    - with ``every_access``, also each read that varies with ``inner``
      (``{x}_ld``: one register per access, so ``x[i]``, ``x[i + 1]``
      and ``x[i + 2]`` of a stencil are three loads), and each operation
      inside the right-hand side (``t``: three-address form, one
      instruction per operation).

    Returns the procedure, the path of the loop split at ``where`` and
    the registers' names."""

    def inner_loop():
        body = at_path(p, where).body()
        return body[len(body) - 1]

    def stmt():
        return inner_loop().body()[0]
    body = list(inner_loop().body())
    if len(body) != 1 or not body[0].is_write():
        return p, where, []
    names = []

    def to_register(p, e, base):
        nm = fresh_name(p, base)
        # an f32 register, proven to hold the value (bind_expr refuses
        # an f64 or integer operand, which an f32 copy would change)
        try:
            p = p.bind_expr(e, nm, precision="f32")
        except SchedulingError as why:
            raise SchedulingError(
                f"vectorize: '{text(e)}' cannot be put in an f32 register "
                f"without changing what the loop computes ("
                f"{str(why).splitlines()[0].split('bind_expr: ')[-1]})"
            ) from None
        p = p.expand_dim(p.find(f"{nm} : _"), width, inner)
        p = p.lift_alloc(p.find(f"{nm} : _"))
        p = p.fission_after(p.find(f"{nm}[_] = _"))
        names.append(nm)
        return p.set_memory(p.find(f"{nm} : _"), memory)

    while True:
        todo = [x for x in _data_leaves(stmt().rhs(), [])
                if type(x.node()).__name__ == "Read"
                and x.name() not in names
                and (every_access or not any(mentions(text(i), inner)
                                             for i in x.args()))]
        if not todo:
            break
        x = todo[0]
        varies = any(mentions(text(i), inner) for i in x.args())
        p = to_register(p, x, f"{x.name()}_{'ld' if varies else 'bcst'}")
    while every_access:          # operations inside the right-hand side
        inner_ops = [a for a in _operations(stmt().rhs())
                     if a.expr_path() != stmt().rhs().expr_path()]
        if not inner_ops:
            break
        p = to_register(p, inner_ops[0], "t")
    return p, where, names


def _operations(e):
    """The operations of ``e`` whose operands are not operations,
    innermost first (the next to bind in three-address form)."""
    kind = type(e.node()).__name__
    if kind not in ("BinOp", "USub", "Extern"):
        return []
    below = [o for a in e.args() for o in _operations(a)]
    return below or [e]


def _stage(p, inner_loop, inner, width, memory, suffix, skip=()):
    """Stage every vector window of the loop ``inner_loop`` (over
    ``inner``) into a buffer in ``memory``; the new names, and the loop in
    the result. Windows are written from the accesses' ``.text()``, which
    means the same accesses where the block stands (names are unambiguous
    where visible, docs/api.md §4)."""
    staged = []
    for win in _windows(p, inner, width, inner_loop):
        base = win[:win.index('[')]
        if base in skip:            # already a register (a broadcast)
            continue
        name = f"{base}{suffix}"
        while mentions(str(p), name):
            name += "_"
        p = p.stage_mem(p.forward(inner_loop), win, name)
        inner_loop = p.forward(inner_loop)
        alloc = _staged_alloc(inner_loop, name)
        p = p.set_memory(alloc, memory)
        inner_loop = p.forward(inner_loop)
        staged.append(name)
    return p, staged, inner_loop


def _staged_alloc(loop, name):
    """The allocation ``stage_mem`` put before ``loop``."""
    k = 1
    while True:
        s = loop.prev(k)
        if s.is_alloc() and s.name() == name:
            return s
        k += 1


def _select(p, instrs, staged, roots):
    """``replace_all`` inside the statements at the paths ``roots`` (the
    vectorized loop and, with a masked tail, its last block), then refuse
    a loop there left touching a staged buffer."""
    p = _replace_within(p, instrs, roots)
    for lp in _candidates(p, roots):
        if not lp.is_loop():
            continue
        body = " ".join(text(b) for b in lp.body()
                        if not (b.is_call() or b.is_alloc() or b.is_loop()))
        if any(mentions(body, name) for name in staged):
            raise SchedulingError(
                f"vectorize: no instruction of the library matches the loop "
                f"'for {lp.name()}': {body}{nearest(p, lp, instrs)}")
    return p
