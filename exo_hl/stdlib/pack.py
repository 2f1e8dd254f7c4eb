"""Packing: copy a panel of a buffer into a contiguous buffer around the
block that uses it, as GEMM kernels do (``stage_mem`` and
``rearrange_dim``, both checked)."""
from __future__ import annotations

from exo_hl import SchedulingError


def pack(p, buffer, block, layout="row", name=None, memory=None):
    """Stage the panel ``buffer`` (a window such as
    ``'B[0:K, 16 * jo:16 * jo + 16]'``) into a new contiguous buffer
    around ``block`` (a loop, statement or block): a copy-in before it
    (only if the block reads the panel), the block re-indexed into the
    packed buffer, a copy-out after it (only if the block writes it).
    ``name`` defaults to the buffer's name + ``'_pack'``; ``memory``, if
    given, is the packed buffer's memory (``set_memory``).

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
        name = buffer[:buffer.index("[")].strip() + "_pack"
    p = p.stage_mem(block, buffer, name)
    if layout == "transposed":
        rank = len(getattr(p.find(f"{name} : _").node().type, "hi", ()))
        if rank > 1:
            p = p.rearrange_dim(f"{name} : _", list(reversed(range(rank))))
    if memory is not None:
        p = p.set_memory(name, memory)
    return p
