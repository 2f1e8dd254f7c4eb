"""Loop compositions: tiling, unroll-and-jam, repetition, outer parallelism.

Each function only calls ``Procedure`` methods, so each step is checked by
the primitive it uses; a refused step raises ``SchedulingError``.
"""
from __future__ import annotations

from exo_hl import SchedulingError

from ._util import at_path, loop_cursor, loop_pair


def tile(p, i, j, ti, tj, tail="guard"):
    """Tile the perfect nest ``for i: for j`` into ``ti x tj`` blocks:
    ``for io: for jo: for ii: for ji`` (loops named by suffixing ``o``/``i``).

    ``tail`` is passed to both splits (``'guard'``, ``'cut'``,
    ``'perfect'``); with ``'cut'`` the remainder loops stay untiled.
    ``j`` must be directly inside ``i``; as patterns, the first such
    pair is taken (``'j'`` is the ``j`` inside ``i``, not the first ``j``
    of the procedure), as for the primitives' pairs.

    Example::

        p = tile(gemm, 'i', 'j', 4, 8, tail='perfect')
        # for io: for jo: for ii: for ji: for k: ...
    """
    # 'i #1' names one; j is the loop directly inside i (a 'j' of another
    # nest is not the nest's second loop)
    ic, jc = loop_pair(p, i, j, "tile")
    i, j = ic.name(), jc.name()
    # every step addresses what the previous one built by cursor or by
    # its place, never by name: another nest may use the same names
    p = p.split(ic, ti, f"{i}o", f"{i}i", tail=tail)
    jc = p.forward(jc)
    where = jc.path()
    p = p.split(jc, tj, f"{j}o", f"{j}i", tail=tail)
    jo = at_path(p, where)             # the outer loop stands where j stood
    if jo.parent().is_if():          # tail='guard': move i's guard inward
        guard = jo.parent().path()
        p = p.lift_scope(jo)
        jo = at_path(p, guard)         # the loop stands where the if stood
    elif len(list(jo.parent().body())) > 1:
        # tail='cut': j's remainder follows jo in the loop over ii; split
        # it off (jo stays first in the first part)
        where = jo.path()
        p = p.fission_after(jo)
        jo = at_path(p, where)
    return p.reorder(jo.parent())


def repeat(op):
    """``repeat(op)(p, *args)`` applies ``op`` until it raises
    ``SchedulingError`` (or stops changing the procedure) and returns the
    last procedure it produced (``p`` itself if the first call fails).

    Example::

        p = repeat(lambda p: p.lift_alloc('t : _'))(p)   # as far as it goes
    """
    def apply(p, *args, **kwargs):
        while True:
            try:
                q = op(p, *args, **kwargs)
            except SchedulingError:
                return p
            if str(q) == str(p):
                return q
            p = q
    apply.__doc__ = f"Apply {getattr(op, '__name__', 'op')} until it fails."
    return apply


def unroll_and_jam(p, loop, factor):
    """Unroll ``loop`` by ``factor`` and jam the copies into the loop it
    directly contains: ``for i: for j: s`` → ``for io: for j: s[i:=f*io];
    ...; s[i:=f*io+f-1]``. The split is ``'perfect'`` (the trip count must
    be provably divisible by ``factor``); the jam is ``reorder``'s check.

    Example::

        p = unroll_and_jam(gemm, 'i', 4)     # 4 rows of C per j iteration
    """
    c = loop_cursor(p, loop)
    i = c.name()
    body = list(c.body())
    if len(body) != 1 or not body[0].is_loop():
        raise SchedulingError(
            f"unroll_and_jam: loop {i!r} must directly contain exactly one "
            f"loop")
    # each step is addressed by cursor, not by name: another loop named
    # i (or io, ii, j) elsewhere in p must not be the one transformed
    where = c.path()
    p = p.split(c, factor, f"{i}o", f"{i}i", tail="perfect")
    outer = at_path(p, where)                       # for io: for ii: ...
    p = p.reorder(outer.body()[0])
    return p.unroll(at_path(p, where).body()[0].body()[0])


def parallel_outer(p, loop):
    """Move ``loop`` outward through the perfect nest around it as far as
    ``reorder`` allows, then run it in parallel (``parallelize`` proves the
    iterations race-free).

    Example::

        p = parallel_outer(gemm, 'i')         # for i in par(0, M): ...
    """
    c = loop_cursor(p, loop)
    while True:
        try:
            outer = c.parent()
        except SchedulingError:
            break
        if not outer.is_loop():
            break
        where = outer.path()
        try:
            p = p.reorder(outer, c)
        except SchedulingError:
            break
        c = at_path(p, where)          # the loop now stands outside
    return p.parallelize(c)
