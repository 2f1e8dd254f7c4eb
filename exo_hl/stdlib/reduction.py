"""Vectorize a reduction with one partial sum per lane in a register:
one row at a time (``vectorize_reduction``), or several rows of a
row loop side by side (``vectorize_reduction_rows``).

Public API only, through the steps ``vectorize`` uses (staging each
operand window, selecting instructions); kept apart from it so that each
module stays one composition.
"""
from __future__ import annotations

from exo_hl import DRAM_STATIC, SchedulingError

from ._util import (Run, at_path, fresh_name, loop_cursor, mentions,
                    sibling_path, text)
from .vectorize import (_instr_list, _select, _stage, _staged_alloc,
                        _windows)


def _accumulation(c, who):
    """The one statement ``s += e`` of loop ``c`` (``s`` not varying with
    the loop), or ``SchedulingError`` naming ``who``."""
    body = list(c.body())
    if len(body) != 1 or not body[0].is_write() or any(
            mentions(text(i), c.name()) for i in body[0].idx()):
        raise SchedulingError(
            f"{who}: the body of loop {c.name()!r} must be "
            f"one accumulation 's += e' into a location that does not vary "
            f"with {c.name()!r}, found: {text(c)}")
    return body[0]


def _lane_sums(p, c, width, who):
    """``for j: s += e`` at cursor ``c`` → ``acc: f32[width]; for ji: acc[ji]
    = 0; for jo: for ji: acc[ji] += e; for ji: s += acc[ji]`` (each step
    checked), ``acc`` in the memory it had; the result, ``acc``'s name,
    the path of its allocation (the other three follow it)."""
    target = _accumulation(c, who)
    idx = ", ".join(text(i) for i in target.idx())
    loc = f"{target.name()}[{idx}]" if idx else target.name()
    i = c.name()
    o, inner = f"{i}o", f"{i}i"
    where = c.path()

    def nxt(k):
        return sibling_path(where, k)
    p = p.split(c, width, o, inner, tail="perfect")
    p = p.reorder(at_path(p, where), at_path(p, where).body()[0])
    acc = fresh_name(p, "acc")
    p = p.stage_mem(at_path(p, where).body()[0], loc, acc, accum=True)
    p = p.expand_dim(at_path(p, where).find(f"{acc} : _"), width, inner)
    p = p.lift_alloc(at_path(p, where).find(f"{acc} : _"))
    # now: acc alloc at where; the lane loop at where + 1
    p = p.fission_after(at_path(p, nxt(1)).find(f"{acc}[_] = _"))
    p = p.fission_after(at_path(p, nxt(2)).body()[0])
    p = p.reorder(at_path(p, nxt(2)), at_path(p, nxt(2)).body()[0])
    return p, acc, where


def vectorize_reduction(p, loop, width, memory, instrs):
    """Vectorize the reduction ``for j: s += e`` (``s`` does not vary with
    ``j``; a dot product, a matvec's row) with ``width`` partial sums in a
    register: split ``j`` (``tail='perfect'``: the trip count must be
    proven divisible), give each lane its own sum (``reorder``,
    ``stage_mem(accum=True)``, ``expand_dim``, ``lift_alloc``,
    ``fission_after``), keep them in ``memory``, load each operand per
    register and select ``instrs`` (zeroing, loads, an FMA or add), then
    store the lanes to a stack buffer and add them into ``s`` in lane
    order. Every step is a checked primitive; what changes is the order
    of the additions, which the semantics allows for ``+=`` into one
    location (docs/semantics.md, Reductions: floats may differ in the
    last bits, as between two BLAS blockings).

    >>> p = vectorize_reduction(matvec, 'j', 16, AVX512, INSTRS)
    """
    instrs = _instr_list(instrs)
    c = loop_cursor(p, loop)
    before = _count_siblings(p, c.path())
    p, acc, where = _lane_sums(p, c, width, "vectorize_reduction")

    def nxt(k):
        return sibling_path(where, k)
    inner = f"{c.name()}i"
    p = p.set_memory(at_path(p, where), memory)
    p, staged, _ = _stage(p, at_path(p, nxt(2)).body()[0], inner, width,
                          memory, "_vec", skip=(acc,))
    total = fresh_name(p, f"{acc}_lanes")
    p = p.stage_mem(at_path(p, nxt(3)), f"{acc}[0:{width}]", total)
    p = p.set_memory(at_path(p, nxt(3)), DRAM_STATIC)
    # instructions are selected in the statements that replaced the loop,
    # nowhere else: the loop's parent (or the whole procedure, for a loop
    # at the top) selected in the user's other loops too, and for a loop in
    # an else branch searched the if's body, so the loop was left staged
    # but unselected, unchecked
    n = _count_siblings(p, where) - before + 1
    return _select(p, instrs, staged + [acc], [Run(where, n)])


def vectorize_reduction_rows(p, rows_loop, rows, loop, width, memory,
                             instrs):
    """``vectorize_reduction`` of the loop ``loop`` for ``rows`` iterations
    of the loop ``rows_loop`` around it at once: ``for i: for j: s += e``
    (a matvec's rows) becomes, for each block of ``rows`` rows, ``rows``
    registers of partial sums filled in one pass over ``j``: each step of
    ``j`` loads an operand that does not vary with ``i`` (``x[j]``) once
    for all the rows, and issues ``rows`` independent FMAs (one dependency
    chain per row, so they overlap). The rows the blocks leave (``m %
    rows`` of them) run as ``vectorize_reduction`` one row at a time.

    Steps, each a checked primitive: ``split`` the rows loop
    (``tail='cut'``; no rest loop when the trip count is proven a multiple
    of ``rows``), give each lane of each row its own sum (as
    ``vectorize_reduction``), ``expand_dim`` the sums over the rows,
    ``lift_alloc`` them out of the rows loop, ``fission_after`` around the
    pass over ``j`` and ``reorder`` the rows loop into it (refused when a
    row reads what an earlier row of the block writes), ``stage_mem`` each
    operand window — around the rows loop when it does not vary with the
    rows, per row otherwise — select ``instrs``, then ``unroll`` the rows
    loops and ``unroll_buffer`` the sums (one register each). ``j``'s trip
    count must be proven a multiple of ``width``.

    >>> p = vectorize_reduction_rows(gemv, 'i', 4, 'j', 16, AVX512, INSTRS)
    """
    who = "vectorize_reduction_rows"
    instrs = _instr_list(instrs)
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
        raise SchedulingError(f"{who}: rows must be a positive int, got "
                              f"{rows!r}")
    r = loop_cursor(p, rows_loop)
    body = list(r.body())
    # a pattern for ``loop`` is looked up inside ``rows_loop``: given
    # ``'i #1'``, ``'j'`` is the second nest's ``j``, not the first's
    if isinstance(loop, str):
        try:
            c = r.find(loop)
        except SchedulingError:
            raise SchedulingError(
                f"{who}: no loop {loop!r} inside loop {r.name()!r} (the "
                f"reduction loop must be the one statement of the rows "
                f"loop), found: {text(r)}") from None
    else:
        c = loop_cursor(p, loop)
    if not (callable(getattr(c, "is_loop", None)) and c.is_loop()):
        raise SchedulingError(f"{who}: {loop!r} is not a loop in "
                              f"{r.name()!r}")
    if len(body) != 1 or not body[0].is_loop() or \
            body[0].path() != c.path():
        raise SchedulingError(
            f"{who}: the body of loop {r.name()!r} must be exactly the "
            f"loop {c.name()!r}, found: {text(r)}")
    _accumulation(c, who)
    where = r.path()
    before = _count_siblings(p, where)
    i = r.name()
    io, ii = f"{i}o", f"{i}i"
    p = p.split(r, rows, io, ii, tail="cut")
    # the blocks: for io: for ii: for j: s += e
    rows_path = at_path(p, where).body()[0].path()      # for ii
    p, acc, a_path = _lane_sums(p, at_path(p, rows_path).body()[0], width,
                                who)
    # for ii: acc; zero; for jo: for ji: acc += e; for ji: s += acc
    p = p.expand_dim(at_path(p, a_path), rows, ii)
    p = p.lift_alloc(at_path(p, a_path))
    # acc at rows_path; for ii: zero; pass; sum  at rows_path + 1
    loop_ii = sibling_path(rows_path, 1)
    try:
        p = p.fission_after(at_path(p, loop_ii).body()[0])
        p = p.fission_after(at_path(p, sibling_path(loop_ii, 1)).body()[0])
    except SchedulingError as e:
        raise SchedulingError(
            f"{who}: the {rows} rows of a block cannot share one pass over "
            f"{c.name()!r}: a row reads what an earlier row of the block "
            f"writes (the block would read every row's operands before it "
            f"adds any row's sum). {e}") from None
    pass_path = sibling_path(loop_ii, 1)          # for ii: for jo: ...
    p = p.reorder(at_path(p, pass_path))          # for jo: for ii: for ji
    p = p.set_memory(at_path(p, rows_path), memory)
    inner = f"{c.name()}i"
    staged = []
    lanes = at_path(p, pass_path).body()[0].body()[0]     # for ji
    for win in _windows(p, inner, width, lanes):
        base = win[:win.index('[')]
        if base == acc:
            continue
        # x[j] serves every row: loaded once, around the rows loop
        around = lanes if mentions(win, ii) else lanes.parent()
        name = fresh_name(p, f"{base}_vec")
        p = p.stage_mem(around, win, name)
        p = p.set_memory(_staged_alloc(p.forward(around), name), memory)
        lanes = p.forward(lanes)
        staged.append(name)
    total = fresh_name(p, f"{acc}_lanes")
    sums = sibling_path(pass_path, 1)             # for ii: for ji: s += acc
    p = p.stage_mem(at_path(p, sums).body()[0], f"{acc}[{ii}, 0:{width}]",
                    total)
    p = p.set_memory(at_path(p, sums).body()[0], DRAM_STATIC)
    p = _select(p, instrs, staged + [acc], [where])
    # one copy per row, so that each row's sums are a register of their own
    p = p.unroll(at_path(p, sums))
    p = p.unroll(at_path(p, pass_path).body()[-1])
    p = p.unroll(at_path(p, loop_ii))
    p = p.unroll_buffer(at_path(p, rows_path), 0)
    if _count_siblings(p, where) > before:  # the rest rows, one at a time
        p = vectorize_reduction(p, at_path(p, sibling_path(where, 1))
                                .body()[0], width, memory, instrs)
    return p


def _count_siblings(p, path):
    """How many statements the block holding the statement at ``path`` has
    (a ``split(tail='cut')`` adds its rest loop there)."""
    *parent, (field, _) = path
    if not parent:
        return len(list(p.body()))
    holder = at_path(p, tuple(parent))
    return len(list(holder.body() if field == "body" else holder.orelse()))
