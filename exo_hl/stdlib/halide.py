"""Halide's scheduling vocabulary as compositions: ``compute_at`` (with
recomputation), ``store_at`` (with storage folding), ``compute_root`` and
``inline_producer``.

Public API only: ``divide_with_recompute``, ``fuse_loop``, ``rewrite_expr``,
``sink_alloc``, ``resize_dim``, ``fission_after``, ``lift_alloc``,
``inline_assign``, ``inline_loop``, ``eliminate_dead_code``,
``delete_buffer`` — each checked by its primitive.
"""
from __future__ import annotations

import ast
import re

from exo_hl import SchedulingError

from ._util import (alloc_of, ancestors, at_path, check_target,
                    enclosing_loops, loop_cursor, mentions, sibling_path,
                    stmt_cursor, text)


def _const(cursor):
    try:
        return int(text(cursor))
    except ValueError:
        return None


def _target(p, target, what):
    """A statement cursor for ``target``: a bare name (``'i'``, ``'i
    #1'``) is a loop, as for ``find_loop``; any other pattern or a
    cursor is the statement it denotes."""
    check_target(p, target, what)
    if isinstance(target, str) and " " not in target.replace(" #", "#"):
        return p.find_loop(target)
    return stmt_cursor(p, target, what)


def _producer_loop(p, producer):
    """The producer's loop nest: ``producer`` names the loop, or a
    statement inside it (Exo passes the producer's assignment): then its
    outermost enclosing loop."""
    c = _target(p, producer, "a producer")
    if c.is_loop():
        return c
    loops = enclosing_loops(c)
    if not loops:
        raise SchedulingError(
            f"compute_at: the producer {producer!r} is not inside a loop")
    return loops[-1]


def _affine_coeff(expr: str, var: str):
    """The integer coefficient of ``var`` in the index expression ``expr``
    when ``expr`` is affine in it (checked at a few points, every other
    name set alike), else None."""
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None

    def ev(n, env):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            return env(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand, env)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left, env), ev(n.right, env)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
        raise ValueError(expr)

    try:
        coeffs = set()
        for other in (0, 1, 7):
            vals = [ev(tree, lambda x, v=v: v if x == var else other)
                    for v in (0, 1, 2)]
            coeffs.add(vals[1] - vals[0])
            coeffs.add(vals[2] - vals[1])
    except ValueError:
        return None
    return coeffs.pop() if len(coeffs) == 1 else None


def _written(prod):
    """The assignment (or reduction) a producer loop nest starts with."""
    a = prod
    while a.is_loop():
        a = a.body()[0]
    return a


def _read_stride(p, c, prod):
    """The block stride the consumer's reads ask for: the coefficient of
    the consumer's iteration variable in the index of every read of the
    produced buffer, along the dimension the producer's loop writes (a
    tiled read ``t[4 * io + ii + 1]`` gives 4). None when the reads do not
    agree on one positive constant."""
    w = _written(prod)
    if not w.is_write():
        return None     # a call, allocation, if, config write: no stride
    dims = [d for d, i in enumerate(w.idx()) if mentions(text(i), prod.name())]
    if len(dims) != 1:
        return None
    pat = f"{w.name()}[{', '.join('_' * len(w.idx()))}]"
    try:
        reads = c.find(pat, many=True)
    except SchedulingError:
        return None
    if any(len(r.args()) != len(w.idx()) for r in reads):
        return None     # a window of the buffer: no single index to read
    got = {_affine_coeff(text(r.args()[dims[0]]), c.name()) for r in reads}
    if len(got) != 1:
        return None
    k = got.pop()
    return k if k is not None and k > 0 else None


def _block_loop_name(p, pname):
    """``{pname}i`` when no loop has that name, else ``pname`` itself (the
    divided loop's own variable, which the division replaces)."""
    try:
        p.find_loop(f"{pname}i")
    except SchedulingError:
        return f"{pname}i"
    return pname


def _allocs_above(p, prod, c):
    """Move the allocations standing between the producer loop and the
    consumer loop above the producer (``reorder_stmts``), so that the two
    loops are adjacent for ``fuse_loop``."""
    while True:
        try:
            nxt = prod.next()
        except SchedulingError:
            return p, prod, c
        if nxt.path() == c.path() or not nxt.is_alloc():
            return p, prod, c
        where = prod.path()
        p = p.reorder_stmts(prod, nxt)
        prod = at_path(p, sibling_path(where, 1))   # swapped with nxt
        c = p.forward(c)


def compute_at(p, producer, consumer_loop, width=None, with_prologue=False):
    """Compute the producer loop nest inside each iteration of
    ``consumer_loop``, recomputing the values neighbouring blocks share
    (Halide's ``compute_at``).

    ``producer`` is the loop that computes the consumed buffer, before the
    consumer, or a statement in it (its outermost loop is taken, as Exo
    passes the producer's assignment). Each iteration of ``consumer_loop``
    is a block whose stride comes from the consumer's reads: the
    coefficient of its iteration variable in the read indices (``t[4 * io
    + ii + k]`` in a tiled nest: 4). When the reads give none, a body
    starting with a constant-extent loop (``for ji in seq(0, s)``) gives
    ``s``, else the stride is 1. The producer is divided into overlapping
    blocks of that stride (``divide_with_recompute``), and fused into the
    consumer (``fuse_loop``, which proves every value the consumer reads
    was produced in the same block); allocations between the two loops
    move above the producer first (``reorder_stmts``). ``width``: the
    block's extent as a constant, proven equal to the extent
    ``divide_with_recompute`` produces (``rewrite_expr``). The block's loop is the producer's
    variable suffixed ``i``, or, when a loop has that name (a tiled nest's
    ``ii``), the producer's variable itself.

    ``with_prologue=True`` (Exo's option) slides along the inner consumer
    loop instead of recomputing: the producer's outer loop is computed at
    the loop enclosing ``consumer_loop``, and its inner loop is cut into a
    prologue (the values the first iteration reads beyond its own, computed
    before the loop) and one new value per iteration of ``consumer_loop``,
    fused into it (``cut_loop``, ``shift_loop``, ``fuse_loop``: each
    proven); a prologue of constant extent is unrolled.

    Example::

        p = blur1d.split('j', 4, 'jo', 'ji', tail='perfect')
        p = compute_at(p, 'i', 'jo', width=6)
        # for jo: for ii in seq(0, 6): t[4*jo+ii] = ...; for ji: y[...] = ...
    """
    if with_prologue:
        return _compute_at_with_prologue(p, producer, consumer_loop, width)
    c = loop_cursor(p, consumer_loop)
    prod = _producer_loop(p, producer)
    return _compute_at(p, prod, c, width)[0]


def _compute_at(p, prod, c, width):
    """``compute_at`` of the loop cursor ``prod`` into the loop cursor
    ``c``; the result and the path of the fused loop."""
    outer = c.name()
    stride = _read_stride(p, c, prod)
    if stride is None:
        body = list(c.body())
        stride = _const(body[0].hi()) if body and body[0].is_loop() else 1
        if stride is None or (body[0].is_loop()
                              and _const(body[0].lo()) != 0):
            stride = 1
    p, prod, c = _allocs_above(p, prod, c)
    pname = prod.name()
    inner = _block_loop_name(p, pname)
    # the divided producer stands where it stood, the fused loop too: found
    # by place and cursor, never by name (another pipeline may have a loop
    # of the consumer's name)
    where = prod.path()
    p = p.divide_with_recompute(prod, text(c.hi()), stride, [outer, inner])
    p = p.fuse_loop(at_path(p, where), p.forward(c))
    if width is not None:
        p = p.rewrite_expr(at_path(p, where).body()[0].hi(), str(width))
    return p, where


def _compute_at_with_prologue(p, producer, consumer_loop, width):
    op = "compute_at(with_prologue=True)"
    c = loop_cursor(p, consumer_loop)
    around = enclosing_loops(c)
    prod = _producer_loop(p, producer)
    if not around:
        raise SchedulingError(f"{op}: the consumer loop {c.name()!r} is "
                              f"not inside another loop")
    if not (prod.body() and prod.body()[0].is_loop()):
        raise SchedulingError(f"{op}: the producer {prod.name()!r} is not "
                              f"a nest of two loops")
    if _read_stride(p, c, prod.body()[0]) != 1:
        raise SchedulingError(f"{op}: the consumer does not read one new "
                              f"producer value per iteration of "
                              f"{c.name()!r}")
    lo_c = _const(c.lo())
    if lo_c is None or lo_c < 0:
        raise SchedulingError(f"{op}: the consumer loop {c.name()!r} must "
                              f"start at a constant")
    p, fused = _compute_at(p, prod, around[0], width)
    c = p.forward(c)
    blk = at_path(p, fused).body()[0]      # the producer's block loop
    where = blk.path()
    p = p.reorder(blk, blk.body()[0])
    px = at_path(p, where)                 # its inner loop, now outside
    c = p.forward(c)
    ext_c = f"({text(c.hi())}) - ({text(c.lo())})"
    p = p.cut_loop(px, f"({text(px.hi())}) - ({ext_c})")
    second = sibling_path(where, 1)        # the cut's second part
    p = p.shift_loop(at_path(p, second), lo_c)
    p = p.fuse_loop(at_path(p, second), p.forward(c))
    first = at_path(p, where)
    if _const(first.hi()) is not None and _const(first.lo()) is not None:
        p = p.unroll_loop(first)
    return p


def store_at(p, buffer, loop=None, fold=False, dim=0, size=None, offset=0):
    """Place ``buffer``'s storage at ``loop`` (Halide's ``store_at``):
    sink its allocation into the loop (``sink_alloc``, proven that no
    iteration reads a value an earlier one left), then, when ``size`` is
    given, give dimension ``dim`` the extent ``size`` with indices shifted
    by ``-offset`` (``resize_dim``). ``loop=None`` keeps the allocation
    where it is (store at root). ``fold=True`` makes that dimension a
    circular buffer of ``size`` (Halide's storage folding), proven by the
    reuse distance.

    Example::

        p = store_at(blur, 't', None, fold=True, dim=0, size=3)
        # t: f32[3, W], indexed t[(r + 2) % 3, c]: a sliding window
    """
    lc = loop_cursor(p, loop) if loop is not None else None
    a = _buffer_alloc(p, buffer, lc)
    _check_dim(a, dim, size, offset)
    if lc is not None:
        # sink by cursor until the loop (by cursor) encloses the allocation
        while not _inside(a, lc):
            try:
                nxt = a.next()
            except SchedulingError:
                nxt = None
            if nxt is None or not (nxt.path() == lc.path()
                                   or _inside(lc, nxt)):
                raise SchedulingError(
                    f"store_at: the loop {lc.name()!r} is not inside the "
                    f"statement that follows the allocation of "
                    f"{a.name()!r}; only sinking into that one is possible")
            p = p.sink_alloc(a)
            # forwarded: into an if, the allocation may head the else
            # branch (the then-branch's first statement is not it)
            a, lc = p.forward(a), p.forward(lc)
    if size is not None:
        p = p.resize_dim(a, dim, size, offset, fold=fold)
    elif fold:
        raise SchedulingError("store_at: fold=True needs the fold size")
    return p


def _inside(c, outer) -> bool:
    """Whether the statement cursor ``c`` is (strictly) inside ``outer``."""
    n = len(outer.path())
    return len(c.path()) > n and c.path()[:n] == outer.path()


def _buffer_alloc(p, buffer, at=None):
    """The allocation ``buffer`` denotes: a cursor, a pattern (``'t : _'``,
    ``'t #1'``), or a bare name; given the loop ``at``, a bare name is
    the allocation visible in its body (the one its code uses), else the
    first of that name."""
    if isinstance(buffer, str) and buffer.isidentifier():
        if at is not None:
            # already stored at the loop, or visible from it
            a = next((s for s in at.body()
                      if s.is_alloc() and s.name() == buffer), None) \
                or alloc_of(at, buffer)
            if a is not None:
                return a
            raise SchedulingError(
                f"{p.name()}: no allocation of {buffer!r} encloses "
                f"{at.name()!r} or comes before it")
        buffer = f"{buffer} : _"
    m = _NAME_K.match(buffer) if isinstance(buffer, str) else None
    if m:
        return _kth_buffer(p, buffer, m.group(1), int(m.group(2)))
    check_target(p, buffer, "an allocation")
    a = p.find(buffer) if isinstance(buffer, str) else p.forward(buffer)
    if not (callable(getattr(a, "is_alloc", None)) and a.is_alloc()):
        raise SchedulingError(f"{p.name()}: {buffer!r} is not an "
                              f"allocation")
    return a


_NAME_K = re.compile(r"^\s*([A-Za-z_]\w*)\s*#\s*([0-9]+)\s*$")


def _kth_buffer(p, pattern, name, k):
    """``'t #k'``: the k-th buffer (allocation or window) named ``t``, as
    the primitives count buffers (``resize_dim('t #k', ...)``); ``p.find``
    counts the loops named ``t`` too, so a loop ``t`` of another nest
    made ``store_at`` resize another allocation than ``resize_dim``."""
    try:
        found = [c for c in p.find(name, many=True)
                 if callable(getattr(c, "is_loop", None))
                 and not c.is_loop()]
    except SchedulingError:
        found = []
    if k >= len(found):
        raise SchedulingError(
            f"{p.name()}: no buffer matches {pattern!r} ({len(found)} "
            f"buffer(s) named {name!r})")
    a = found[k]
    if not a.is_alloc():
        raise SchedulingError(f"{p.name()}: {pattern!r} is not an "
                              f"allocation")
    return a


def _check_dim(a, dim, size, offset):
    """``dim`` (and ``offset``) are checked even when no ``size`` uses them:
    a wrong argument is a mistake to report, not to ignore."""
    rank = len(getattr(a.node().type, "hi", ()))
    ok = isinstance(dim, int) and not isinstance(dim, bool) and \
        (0 <= dim < rank or (dim == 0 and size is None))
    if not ok:
        raise SchedulingError(
            f"store_at: dim must be a dimension index of '{a.name()}' "
            f"(0..{rank - 1}), got {dim!r}")
    if size is None and not (isinstance(offset, int) and offset == 0):
        raise SchedulingError("store_at: an offset needs the size it "
                              "applies to")


def compute_root(p, producer):
    """Compute the producer statement (or nest) fully before the rest of
    the loops enclosing it (Halide's ``compute_root``): fission every level
    around it after it, up to its outermost loop (``fission_after``,
    proven; an enclosing ``if`` is a level, as for ``fission_after``), and
    lift the producer's storage out of those levels with it when it is
    allocated inside (``lift_alloc``).

    Example::

        p = compute_root(p, 't[_] = _')    # undoes a fused producer
    """
    c = stmt_cursor(p, producer, "a producer")
    # the levels fission_after splits: every enclosing loop and if (an if
    # is a level to it) up to the outermost loop
    around = ancestors(c)
    loops = [k for k, s in enumerate(around) if s.is_loop()]
    if not loops:
        return p
    levels = around[:loops[-1] + 1]
    depth = len(levels)
    # lift the storage of what it writes (an `if` or a nest producing a
    # scalar in each branch too) out of the levels it is inside, counted
    # alike; an allocation inside the producer goes with it
    for buf in _written_names(c):
        a = alloc_of(c, buf)
        if a is None:
            continue
        n = len([s for s in ancestors(a)
                 if s.path() in {x.path() for x in levels}])
        if n:
            p = p.lift_alloc(a, n_lifts=n)
            c = p.forward(c)
            levels = [p.forward(x) for x in levels]
    return p.fission_after(c, n_lifts=depth)


def _written_names(c):
    """The names the statement ``c`` assigns or reduces into, in order."""
    if c.is_write():
        return [c.name()]
    names = []
    for pattern in ("_ = _", "_ += _"):
        try:
            found = c.find(pattern, many=True)
        except SchedulingError:
            found = []
        names += [w.name() for w in found if w.name() not in names]
    return names


def inline_producer(p, producer):
    """Inline a producer into the reads that follow it and drop it
    (Halide's default, ``inline``).

    - an assignment ``t = e`` (or ``t[i] = e``): ``inline_assign`` proves
      the value is still the one read;
    - a loop nest ``for i: t[i + r] = e(i)`` (a stage computed by a loop):
      ``inline_loop`` proves each following read ``t[f]`` lies in what the
      nest assigns and reads ``e(f - r)``; the nest, now a dead store, goes
      by ``eliminate_dead_code``.

    ``delete_buffer`` then removes the storage when nothing uses it any
    more.

    Example::

        p = inline_producer(p, 't = _')
        p = inline_producer(blur1d, 'i')      # the loop computing t
    """
    c = _target(p, producer, "a producer")
    if c.is_loop():
        a = c
        while a.is_loop():
            a = a.body()[0]
        alloc = alloc_of(c, a.name()) if a.is_write() else None
        p = p.inline_loop(c)
        p = p.eliminate_dead_code(p.forward(c))
    else:
        alloc = alloc_of(c, c.name()) if c.is_write() else None
        p = p.inline_assign(c)
    if alloc is not None:
        try:
            p = p.delete_buffer(p.forward(alloc))
        except SchedulingError:
            pass
    return p
