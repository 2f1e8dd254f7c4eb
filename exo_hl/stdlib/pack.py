"""Packing: copy a panel of a buffer into a contiguous buffer around the
block that uses it, as GEMM kernels do (``stage_mem`` and
``rearrange_dim``, both checked)."""
from __future__ import annotations

from exo_hl import SchedulingError

from ._util import alloc_of, fresh_name, stmt_cursor


def pack(p, buffer, block, layout="row", name=None, memory=None):
    """Stage the panel ``buffer`` (a window such as
    ``'B[0:K, 16 * jo:16 * jo + 16]'``) into a new contiguous buffer
    around ``block`` (a loop, statement or block): a copy-in before it
    (only if the block reads the panel), the block re-indexed into the
    packed buffer, a copy-out after it (only if the block writes it).
    ``name`` defaults to the buffer's name + ``'_pack'`` (``_1``, ``_2``...
    when the procedure already spells it: a second pack of ``B`` makes
    ``B_pack_1``); ``memory``, if given, is the packed buffer's memory
    (``set_memory``). The layout and memory apply to the allocation this
    call made, found at the block, never to another of the same name.

    ``layout``: ``'row'`` keeps the panel's dimension order;
    ``'transposed'`` reverses it (``rearrange_dim``): a ``K x 16`` panel
    is packed as ``16 x K``, each column of the panel contiguous.

    Example::

        @proc
        def gemm(M: size, K: size, A: f32[M, K], B: f32[K, 16],
                 C: f32[M, 16]):
            for i in seq(0, M):
                for j in seq(0, 16):
                    for k in seq(0, K):
                        C[i, j] += A[i, k] * B[k, j]

        p = pack(gemm, 'B[0:K, 0:16]', gemm.find_loop('i'), 'row')
        # B_pack: f32[K, 16]; for i0: for i1: B_pack[i0, i1] = B[i0, i1]; ...
        q = pack(gemm, 'B[0:K, 0:16]', gemm.find_loop('i'), 'transposed')
        # B_pack: f32[16, K]; ... B_pack[i1, i0] = B[i0, i1]; ... B_pack[j, k]
    """
    if layout not in ("row", "transposed"):
        raise SchedulingError(f"pack: unknown layout {layout!r}")
    if not isinstance(buffer, str) or "[" not in buffer:
        raise SchedulingError(f"pack: the panel must be a window string such "
                              f"as 'B[0:K, 0:16]', got {buffer!r}")
    if name is None:
        # a fresh name: a second pack of B must not name (and then find)
        # the first one's B_pack
        name = fresh_name(p, buffer[:buffer.index("[")].strip() + "_pack")
    anchor = _first_stmt(p, block)
    p = p.stage_mem(block, buffer, name)
    # the new allocation: the one of that name visible at the block
    alloc = alloc_of(p.forward(anchor), name)
    if alloc is None:
        raise SchedulingError(f"pack: stage_mem made no allocation "
                              f"{name!r} before the block")
    if layout == "transposed":
        rank = len(getattr(alloc.node().type, "hi", ()))
        if rank > 1:
            p = p.rearrange_dim(alloc, list(reversed(range(rank))))
            alloc = p.forward(alloc)
    if memory is not None:
        p = p.set_memory(alloc, memory)
    return p


def _first_stmt(p, block):
    """A cursor on the first statement of ``block`` (a pattern, a
    statement or block cursor, or a pair of them)."""
    if isinstance(block, tuple) and len(block) == 2:
        return _pair_first(p, *block)
    if isinstance(block, tuple) and block:
        block = block[0]
    if not isinstance(block, str) and callable(getattr(block, "first",
                                                       None)):
        return p.forward(block.first())
    return stmt_cursor(p, block, "a block")


def _pair_first(p, first, last):
    """The first statement of the block ``(first, last)`` as ``stage_mem``
    reads it: a pattern stands for any of its matches, and the block is
    the first pair in program order whose last statement is a sibling at
    or after its first. The first match of ``first`` alone (which may have
    no such sibling) put the anchor in another nest than the block staged,
    and the packed allocation was not found there."""
    def stmts(x):
        if isinstance(x, str):
            try:
                found = p.find(x, many=True)
            except SchedulingError:
                return []
            return [c for c in found if callable(getattr(c, "is_loop",
                                                         None))]
        return [stmt_cursor(p, x, "a block")]
    for a in stmts(first):
        for b in stmts(last):
            pa, pb = a.path(), b.path()
            if pa[:-1] == pb[:-1] and pa[-1][0] == pb[-1][0] \
                    and pb[-1][1] >= pa[-1][1]:
                return a
    return stmt_cursor(p, first, "a block")   # stage_mem says why not
