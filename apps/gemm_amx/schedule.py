"""The int8 GEMM on AMX: the algorithm and its schedule, checked rewrites only.

``gemm_u8s8`` is the algorithm, ``C += A @ B`` with ``A`` unsigned bytes,
``B`` signed bytes and ``C`` i32 (wrap-around sums, as the hardware does).
``stages()`` turns it, one checked rewrite at a time, into a kernel made of
AMX tile instructions:

- ``A`` copied once per call into the tile layout
  (``Ap[io, ih, kt, r, c] = A[32*io + 16*ih + r, 64*kt + c]``: every A tile
  a contiguous 1 KB, the K steps of a row tile one after the other), as
  ``stage_mem`` of one step + ``divide_dim`` + ``expand_dim`` +
  ``rearrange_dim``, lifted out and split off (``fission_after``,
  ``remove_loop``);
- column blocks of ``NC`` outermost; each column block of ``B`` (all of K)
  is packed once into the VNNI layout the tile instruction reads, each
  16-column tile contiguous (``Bp[jt, kt, kq, j, kr] = B[64*kt + 4*kq + kr,
  16*jt + j]``: quads of K side by side), as ``stage_mem`` +
  ``divide_dim`` + ``rearrange_dim`` + ``expand_dim``;
- 32 x 32 blocks of ``C`` held in four tiles (tmm0..3) across all of K,
  two 16 x 64-byte tiles of ``A`` (tmm4, tmm5) and two VNNI tiles of the
  packed ``B`` (tmm6, tmm7) per 64-deep step: four ``tdpbusd`` per four
  tile loads, each load 16 consecutive cache lines;
- the tile configuration written just before the first tile load (sixteen
  ``configwrite_at`` + ``replace`` by ``ldtilecfg``), then hoisted out of
  every loop by the proofs of ``reorder_stmts``/``fission_after``/
  ``remove_loop``: one ``ldtilecfg`` per call;
- ``threads=True``: the copy of A and the column blocks as ``par`` loops.
  ``AmxConfig`` is per-thread state (``@config(thread_entry=...)``), so the
  C of each iteration loads the configuration of the loop's entry into its
  thread's tile unit.
"""
from __future__ import annotations

import functools

from apps.common.config_hoist import hoist_config
from exo_hl import (DRAM, bf16, f32, i8, i32, proc, seq,
                    size, stride, ui8)
from exo_hl.hw_libs import amx
from exo_hl.hw_libs import avx512 as X
from exo_hl.hw_libs.avx512 import lowp

#: column block: B is packed NC columns (all of K) at a time. 256, not
#: 128: every 32-row block of A (32 x K, from L2 or L3) is reused by NC / 32
#: blocks of C before the next column block streams all of A again, so at
#: 128 A came from L3 four times per 32 x 32 x K of work and the kernel
#: waited on it at K = 1024-2048; 256 halves that (the packed block, NC x K,
#: is 512 KB at K = 2048 int8, 1 MB bf16: in the 2 MB L2). 512 was no
#: faster than 256 at 1024-2048 and gives the two threads one block at 512
NC = 256


@proc
def gemm_u8s8(M: size, N: size, K: size, A: ui8[M, K] @ DRAM,
              B: i8[K, N] @ DRAM, C: i32[M, N] @ DRAM):
    assert M % 32 == 0
    assert N % 256 == 0
    assert K % 64 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def gemm_u8s8_mtail(M: size, N: size, K: size, A: ui8[M, K] @ DRAM,
                    B: i8[K, N] @ DRAM, C: i32[M, N] @ DRAM):
    assert N % 256 == 0
    assert K % 64 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def gemm_u8s8_ntail(M: size, N: size, K: size, A: ui8[M, K] @ DRAM,
                    B: i8[K, N] @ DRAM, C: i32[M, N] @ DRAM):
    assert N % 32 == 0
    assert K % 64 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def gemm_bf16_ntail(M: size, N: size, K: size, A: bf16[M, K] @ DRAM,
                    B: bf16[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert N % 32 == 0
    assert K % 32 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for kt in seq(0, K / 32):
                even: f32
                odd: f32
                even = 0.0
                odd = 0.0
                for kp in seq(0, 16):
                    even += A[i, 32 * kt + 2 * kp] * B[32 * kt + 2 * kp, j]
                    odd += (A[i, 32 * kt + 2 * kp + 1] *
                            B[32 * kt + 2 * kp + 1, j])
                C[i, j] += even + odd


@functools.lru_cache(maxsize=2)
def _window_gemm_bf16(nc):
    """The bf16 algorithm on windows, as ``_window_gemm``, sized by its
    number of 32-deep steps ``KT`` (K = 32 * KT): ``replace`` infers a
    callee's sizes from its loop bounds and window shapes, and a loop
    ``seq(0, K / 32)`` uses K non-affinely (refused)."""
    @proc
    def gemm_bf16_w(M: size, N: size, KT: size,
                    A: [bf16][M, 32 * KT] @ DRAM,
                    B: [bf16][32 * KT, N] @ DRAM, C: [f32][M, N] @ DRAM):
        assert N % nc == 0
        assert stride(A, 1) == 1
        assert stride(B, 1) == 1
        assert stride(C, 1) == 1
        for i in seq(0, M):
            for j in seq(0, N):
                for kt in seq(0, KT):
                    even: f32
                    odd: f32
                    even = 0.0
                    odd = 0.0
                    for kp in seq(0, 16):
                        even += (A[i, 32 * kt + 2 * kp] *
                                 B[32 * kt + 2 * kp, j])
                        odd += (A[i, 32 * kt + 2 * kp + 1] *
                                B[32 * kt + 2 * kp + 1, j])
                    C[i, j] += even + odd
    return gemm_bf16_w.rename(f"gemm_bf16_w{nc}")


@functools.lru_cache(maxsize=2)
def _window_gemm(nc):
    """The int8 algorithm on windows (a block of columns of the caller's B
    and C: ``replace`` passes a window, never a dense buffer of another
    extent), N a multiple of ``nc``; rows contiguous, as the tile loads
    and the packing instructions need."""
    @proc
    def gemm_u8s8_w(M: size, N: size, K: size, A: [ui8][M, K] @ DRAM,
                    B: [i8][K, N] @ DRAM, C: [i32][M, N] @ DRAM):
        assert N % nc == 0
        assert K % 64 == 0
        assert stride(A, 1) == 1
        assert stride(B, 1) == 1
        assert stride(C, 1) == 1
        for i in seq(0, M):
            for j in seq(0, N):
                for k in seq(0, K):
                    C[i, j] += A[i, k] * B[k, j]
    return gemm_u8s8_w.rename(f"gemm_u8s8_w{nc}")


@proc
def gemm_bf16(M: size, N: size, K: size, A: bf16[M, K] @ DRAM,
              B: bf16[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 32 == 0
    assert N % 256 == 0
    assert K % 32 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for kt in seq(0, K / 32):
                even: f32
                odd: f32
                even = 0.0
                odd = 0.0
                for kp in seq(0, 16):
                    even += A[i, 32 * kt + 2 * kp] * B[32 * kt + 2 * kp, j]
                    odd += (A[i, 32 * kt + 2 * kp + 1] *
                            B[32 * kt + 2 * kp + 1, j])
                C[i, j] += even + odd


@proc
def gemm_bf16_mtail(M: size, N: size, K: size, A: bf16[M, K] @ DRAM,
                    B: bf16[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert N % 256 == 0
    assert K % 32 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for kt in seq(0, K / 32):
                even: f32
                odd: f32
                even = 0.0
                odd = 0.0
                for kp in seq(0, 16):
                    even += A[i, 32 * kt + 2 * kp] * B[32 * kt + 2 * kp, j]
                    odd += (A[i, 32 * kt + 2 * kp + 1] *
                            B[32 * kt + 2 * kp + 1, j])
                C[i, j] += even + odd


class Kind:
    """What the two GEMMs differ in: element types, the K group of the
    VNNI layout (4 bytes, 2 bf16), the K step of one tile (64 bytes of a
    row of A) and the tile instruction."""

    def __init__(self, a, b, c, group, dp, pack, name):
        self.a, self.b, self.c, self.group, self.dp, self.name = (
            a, b, c, group, dp, name)
        self.pack = pack
        self.kstep = 16 * group


INT8 = Kind('ui8', 'i8', 'i32', 4, amx.tdpbusd, lowp.pack_vnni_epi8,
            'gemm_u8s8_amx')
BF16 = Kind('bf16', 'bf16', 'f32', 2, amx.tdpbf16ps, lowp.pack_vnni_bf16,
            'gemm_bf16_amx')


#: tile registers: C blocks, A tiles, B tiles
C_TILES = ((0, 1), (2, 3))      # [ih][jh]
A_TILES = (4, 5)                # [ih]
B_TILES = (6, 7)                # [jh]
FULL = (16, 64)                 # every tile: 16 rows x 64 bytes


def stages(p=gemm_u8s8, threads=False):
    """[(description, procedure)] for every step of the schedule of
    ``gemm_u8s8`` or ``gemm_bf16`` (the algorithm ``p`` picks the kind);
    ``threads``: the column blocks (and the copy of A) as par loops. The
    steps up to the hoisted configuration are shared (and cached).
    ``gemm_u8s8_mtail``/``gemm_bf16_mtail`` (any M): ``_mtail_stages``;
    ``gemm_u8s8_ntail``/``gemm_bf16_ntail`` (any M, N % 32):
    ``_ntail_stages``."""
    if p is gemm_u8s8_mtail:
        return list(_mtail_stages(threads))
    if p is gemm_bf16_mtail:
        return list(_mtail_stages(threads, NC, gemm_bf16_mtail))
    if p is gemm_u8s8_ntail:
        return list(_ntail_stages(threads))
    if p is gemm_bf16_ntail:
        return list(_ntail_stages(threads, gemm_bf16_ntail))
    out = list(_common_stages(p))
    p = out[-1][1]
    if not threads:
        # one packing buffer for all column blocks (a fresh 256 KB block
        # per column block is a fresh mmap, its pages faulted in again)
        return out + [("one packing buffer for all column blocks",
                       p.lift_alloc('Bp'))]
    # 6. the column blocks in parallel: each packs its own block of B and
    #    writes its own columns of C. AmxConfig is per-thread state
    #    (@config(thread_entry=...)): each iteration loads the
    #    configuration of the loop's entry into its thread's tile unit, so
    #    the one ldtilecfg of the schedule configures every thread
    p = p.parallelize(p.find_loop('io'))
    return out + [("column blocks (and the copy of A) in parallel",
                   p.parallelize(p.find_loop('jc')))]


@functools.lru_cache(maxsize=4)
def _common_stages(p):
    kind = BF16 if p is gemm_bf16 else INT8
    g, ks = kind.group, kind.kstep
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    # 1. loops: column blocks of NC outermost, 32 x 32 blocks of C as four
    #    16 x 16 tiles (ih, jh unrolled), 64-deep steps of K inside
    p = p.split('j', NC, 'jc', 'jj', tail='perfect')
    p = p.reorder('i', 'jc')
    p = p.split('i', 32, 'io', 'ib', tail='perfect')
    p = p.split('ib', 16, 'ih', 'ii', tail='perfect')
    p = p.split('jj', 32, 'jo', 'jb', tail='perfect')
    p = p.split('jb', 16, 'jh', 'ji', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.reorder('ih', 'jo')
    p = p.reorder('ii', 'jh')
    if kind is INT8:   # the bf16 algorithm has its K steps already
        p = p.split('k', 64, 'kt', 'kb', tail='perfect')
        p = p.split('kb', 4, 'kq', 'kr', tail='perfect')
    for loop in ('ji', 'ii', 'jh', 'ih'):
        p = p.reorder(loop, 'kt')
    p = p.unroll('jh')
    p = step("column blocks, 32 x 32 blocks of C in four 16 x 16 tiles, "
             f"{ks}-deep steps", p.unroll('ih'))

    # 1b. A copied once per call into the tile layout: staged per step of a
    #     32-row block (rows divided into the two 16-row tiles), a slot per
    #     step and per row block (expand_dim), rearranged so that
    #     Ap[io, ih, kt] is one contiguous 1 KB tile and the steps of a row
    #     tile follow each other (a tile load reads 16 consecutive lines
    #     instead of 16 rows K apart -- with K a power of two, in two L1
    #     sets -- and the K loop streams), lifted out and split off
    #     (fission), the copy not depending on jc, jo (remove_loop)
    body = p.find_loop('kt').body()
    p = p.stage_mem(body, f'A[32*io:32*io+32, {ks}*kt:{ks}*kt+{ks}]', 'Ap')
    p = p.divide_dim('Ap', 0, 16)
    p = p.expand_dim('Ap', f'K / {ks}', 'kt')
    p = p.expand_dim('Ap', 'M / 32', 'io')
    p = p.rearrange_dim('Ap', [0, 2, 1, 3, 4])
    p = p.lift_alloc('Ap', n_lifts=4)
    p = p.fission_after(p.find_loop('i0'), n_lifts=4)
    p = p.remove_loop(p.find_loop('jc'))
    p = p.remove_loop(p.find_loop('jo'))
    p = p.split('i0', 16, 'ar', 'ac', tail='perfect')
    p = step("A copied into the tile layout", p.simplify())

    # 2. pack the column block of B into the VNNI layout (quads of K side
    #    by side): staged per 64-deep step, one slot per step (expand_dim),
    #    lifted to the column block and split off (fission); the packing
    #    does not depend on io, jo (remove_loop)
    p = _stage_b(p, kind, p.find_loop('kt #1'))
    p = p.fission_after(p.find_loop('i0'), n_lifts=3)
    p = p.remove_loop(p.find_loop('io #1'))
    p = p.remove_loop(p.find_loop('jo'))
    p = step("B packed per column block in the VNNI layout",
             _pack_b(p, kind, 'i2'))

    # 3. stage the tiles: four of C around the k steps, two of A and two of
    #    packed B per step
    p = step("C, A and B tiles staged", _stage_tiles(p, kind))

    # 4. tiles into tile registers; the configuration right before the
    #    first tile load; each copy and compute nest becomes its instruction
    #    (whose preconditions on AmxConfig are now provable)
    p = _tiles_in_registers(p)
    p = step("tiles in tile registers", amx.configure_tiles(
        p, p.find('c00 : _'), {t: FULL for t in range(amx.N_TILES)}))
    p = step("tile loads, stores and tile dot products",
             _tile_instructions(p, kind))

    # 5. the configuration out of jo, io and kc: once per call
    p = step("ldtilecfg hoisted out of every loop",
             hoist_config(p, 'ldtilecfg(_)', 3))

    return tuple(out)


@functools.lru_cache(maxsize=8)
def _mtail_stages(threads, nc=NC, p=None):
    """The int8 GEMM for any M (``gemm_u8s8_mtail``): the full 32-row
    blocks on AMX as in ``_common_stages``, the last M % 32 rows on
    AVX-512 VNNI (``vpdpbusd``) reading the same packed B, inside the same
    column block. The order of the steps differs from the other schedule
    so that the packing of B is staged while the partial block is still a
    guarded iteration of the row-block loop (its reads of B become reads
    of Bp), and only then is that loop cut:

    1. split i by 32 with a guard (``tail='guard'``), the guard sunk to the
       innermost body (``lift_scope``), the loops as in ``_common_stages``;
    2. B packed per column block (``_stage_b``, ``_pack_b``);
    3. the row-block loop cut at M / 32 (``cut_loop``): the full blocks'
       guards are proven true (``eliminate_dead_code``);
    4. A copied into the tile layout for the full blocks ((M + 31) / 32
       slots: an allocation must be positive), moved ahead of the packing
       (``reorder_stmts``) and out of the column blocks (``fission_after``,
       ``remove_loop``);
    5. the tiles as in ``_common_stages``, the configuration written once
       before the column blocks (``configure_tiles`` there: the full-block
       loop may run zero times, so it cannot be hoisted out of it by
       ``remove_loop``);
    6. the tail: one row at a time (guarded), its NC columns in 16 zmm
       accumulators over all of K (``stage_mem`` of the C row,
       ``divide_dim``, ``set_memory``), ``mm512_dpbusd_bcst_epi32`` on the
       packed B (its [16, 4] blocks are the VNNI layout of vpdpbusd).

    For bf16 (``gemm_bf16_mtail`` or its window form) step 6 is
    ``_bf16_tail_rows`` (AVX-512F, the algorithm's order).

    ``nc`` is the column block (a multiple of 32) and ``p`` the algorithm
    (default ``gemm_u8s8_mtail``): ``_ntail_stages`` schedules the window
    algorithms of ``_window_gemm`` with blocks of 256 and 32."""
    p = gemm_u8s8_mtail if p is None else p
    kind = BF16 if p.name().startswith('gemm_bf16') else INT8
    g, ks = kind.group, kind.kstep
    # the number of K steps: the bf16 window algorithm has it as a size
    steps = 'KT' if p.name().startswith('gemm_bf16_w') else f'K / {ks}'
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    p = p.split('j', nc, 'jc', 'jj', tail='perfect')
    p = p.reorder('i', 'jc')
    p = p.split('i', 32, 'io', 'ib', tail='guard')
    p = p.lift_scope(p.find_loop('jj'))
    p = p.lift_scope(p.find_loop('kt' if kind is BF16 else 'k'))
    p = p.split('ib', 16, 'ih', 'ii', tail='perfect')
    p = p.split('jj', 32, 'jo', 'jb', tail='perfect')
    p = p.split('jb', 16, 'jh', 'ji', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.reorder('ih', 'jo')
    p = p.reorder('ii', 'jh')
    if kind is INT8:   # the bf16 algorithm has its K steps already
        p = p.split('k', 64, 'kt', 'kb', tail='perfect')
        p = p.split('kb', 4, 'kq', 'kr', tail='perfect')
    for loop in ('ji', 'ii', 'jh', 'ih'):
        p = p.reorder(loop, 'kt')
    p = step("column blocks, 32-row blocks (the last guarded), 16 x 16 "
             f"tiles, {ks}-deep steps", p)

    p = _stage_b(p, kind, p.find_loop('kt'), nc, steps)
    p = p.fission_after(p.find_loop('i0'), n_lifts=3)
    p = p.remove_loop(p.find_loop('io'))
    p = p.remove_loop(p.find_loop('jo'))
    p = step("B packed per column block in the VNNI layout",
             _pack_b(p, kind, 'i1'))

    p = p.cut_loop(p.find_loop('io'), 'M / 32')
    p = p.eliminate_dead_code(p.find('if _: _'))
    p = p.unroll('jh')
    p = step("the full 32-row blocks cut from the partial one",
             p.unroll('ih'))

    p = p.stage_mem(p.find_loop('kt #1').body(),
                    f'A[32*io:32*io+32, {ks}*kt:{ks}*kt+{ks}]', 'Ap')
    p = p.divide_dim('Ap', 0, 16)
    p = p.expand_dim('Ap', steps, 'kt')
    p = p.expand_dim('Ap', '(M + 31) / 32', 'io')
    p = p.rearrange_dim('Ap', [0, 2, 1, 3, 4])
    p = p.lift_alloc('Ap', n_lifts=4)
    p = p.fission_after(p.find_loop('i0'), n_lifts=3)
    p = p.remove_loop(p.find_loop('jo'))
    jcb = list(p.find_loop('jc').body())     # Bp, packing, copy of A, ...
    p = p.reorder_stmts(jcb[1], jcb[2])
    if threads:   # a slot of Bp per column block: the blocks in parallel
        p = p.expand_dim('Bp', f'N / {nc}', 'jc')
    p = p.lift_alloc('Bp')
    p = p.fission_after(list(p.find_loop('jc').body())[0])
    p = p.remove_loop(p.find_loop('jc'))
    p = p.split('i0', 16, 'ar', 'ac', tail='perfect')
    p = step("A copied into the tile layout (full blocks)", p.simplify())

    p = _tiles_in_registers(_stage_tiles(p, kind, 'jc, ' if threads else '',
                                         nc))
    p = amx.configure_tiles(p, p.find_loop('jc'),
                            {t: FULL for t in range(amx.N_TILES)})
    p = step("full blocks: tiles, one ldtilecfg before the column blocks",
             _tile_instructions(p, kind))

    if kind is BF16:
        p = step("the last M % 32 rows on AVX-512F in the algorithm's "
                 "order, from the packed B", _bf16_tail_rows(p, nc))
    else:
        p = step("the last M % 32 rows on AVX-512 VNNI, from the packed B",
                 _u8s8_tail_rows(p, nc))
    if not threads:
        return tuple(out)
    # the copy of A and the column blocks in parallel (each packs into
    # its own slot of Bp: expand_dim above)
    p = p.parallelize(p.find_loop('io'))
    p = step("column blocks (and the copy of A) in parallel",
             p.parallelize(p.find_loop('jc')))
    return tuple(out)


def _u8s8_tail_rows(p, nc):
    """The int8 tail rows (step 6 of ``_mtail_stages``): one guarded row
    at a time, its ``nc`` columns in zmm accumulators over all of K,
    ``vpdpbusd`` on the packed B."""
    # the tail rows: io, ih, ii, (guard), kt, kq, jo, jh, ji, kr
    for a, b in (('jh', 'ii'), ('kt', 'ih'), ('jo', 'ih'), ('kt', 'ii'),
                 ('jo', 'ii'), ('ji', 'kq'), ('jh', 'kq'), ('jo', 'kt'),
                 ('jo', 'kq')):
        p = p.reorder(a, b)
    for _ in range(6):                       # kr, ji, jh, jo, kq, kt
        p = p.lift_scope(p.find('if _: _'))
    p = p.stage_mem(p.find_loop('kt #3'),
                    f'C[32*io+16*ih+ii, {nc}*jc:{nc}*jc+{nc}]', 'Ct')
    p = p.divide_dim('Ct', 0, 16)
    p = p.set_memory('Ct', X.AVX512)
    p = p.split('i0', 16, 'tlo', 'tli', tail='perfect')
    p = p.split('i0', 16, 'tso', 'tsi', tail='perfect')
    p = p.replace(p.find_loop('tli'), X.mm512_loadu_epi32)
    p = p.replace(p.find_loop('tsi'), X.mm512_storeu_epi32)
    p = p.replace(p.find_loop('ji'), X.mm512_dpbusd_bcst_epi32)
    for loop in ('jh', 'jo #1', 'tlo', 'tso'):
        p = p.unroll(loop)
    return p


def _bf16_tail_rows(p, nc):
    """The bf16 tail rows (step 6 of ``_mtail_stages``) in the algorithm's
    order: one guarded row at a time, its ``nc`` columns staged in zmm
    registers over all of K; per 32-deep step and 16 columns, the even and
    the odd sums as two zmm (``expand_dim`` over the columns, the column
    loop split around each statement and moved inside the pair loop),
    each term a broadcast element of A times the even or odd elements of
    16 packed pairs of B (a multiply and an add), then ``C += even +
    odd``. ``vdpbf16ps`` would sum each pair into one accumulator, not the
    algorithm's order."""
    for a, b in (('jh', 'ii'), ('kt', 'ih'), ('jo', 'ih'), ('kt', 'ii'),
                 ('jo', 'ii'), ('jo', 'kt')):
        p = p.reorder(a, b)
    for _ in range(4):                       # ji, jh, jo, kt
        p = p.lift_scope(p.find('if _: _'))
    for buf in ('even', 'odd', 'eo'):
        if buf == 'eo':
            p = p.bind_expr(p.find('even[ji] + odd[ji]'), 'eo')
        p = p.expand_dim(buf, 16, 'ji')
        p = p.lift_alloc(buf)
    for s in ('even[ji] = 0.0', 'odd[ji] = 0.0', 'eo[ji] = _'):
        p = p.fission_after(p.find(s))
    p = p.fission_after(p.find_loop('kp'))
    p = p.reorder('ji', 'kp')
    p = p.fission_after(p.find('even[ji] += _'))
    p = p.stage_mem(p.find_loop('kt #3'),
                    f'C[32*io+16*ih+ii, {nc}*jc:{nc}*jc+{nc}]', 'Ct')
    p = p.divide_dim('Ct', 0, 16)
    for buf in ('Ct', 'even', 'odd', 'eo'):
        p = p.set_memory(buf, X.AVX512)
    p = p.split('i0', 16, 'tlo', 'tli', tail='perfect')
    p = p.split('i0', 16, 'tso', 'tsi', tail='perfect')
    p = p.replace(p.find_loop('tli'), X.mm512_loadu_ps)
    p = p.replace(p.find_loop('tsi'), X.mm512_storeu_ps)
    for ins in (X.mm512_setzero_ps, X.mm512_setzero_ps,
                X.mm512_mul_add_bf16_even_bcst_ps,
                X.mm512_mul_add_bf16_odd_bcst_ps, X.mm512_add3_ps,
                X.mm512_add_ps):
        p = p.replace(p.find_loop('ji'), ins)
    for loop in ('jh', 'jo #1', 'tlo', 'tso'):
        p = p.unroll(loop)
    return p


#: column block of the N tail: N % 256 columns in blocks of 32 (one
#: 32-column pair of tiles per block)
NC_TAIL = 32


@functools.lru_cache(maxsize=4)
def _ntail_stages(threads, p=None):
    """The int8 GEMM for any M and N % 32 == 0 (``gemm_u8s8_ntail``): the
    columns cut at 256 * (N / 256) (``cut_loop``) and the row loop split
    with them (``fission_after``, ``shift_loop`` of the tail to 0); each
    part guarded by its being non-empty (``add_guard``, the other branch
    proven empty by ``eliminate_dead_code``: a size argument must be
    positive); each part replaced by a call of the algorithm on windows
    (``replace``: the full column blocks, then the last N % 256 columns),
    and each call swapped for that algorithm scheduled (``call_eqv``):
    ``_mtail_stages`` with column blocks of 256 and of 32. Both calls copy
    A into the tile layout and write the tile configuration (the tail's
    copy of A costs about M * K bytes against its M * (N % 256) * K
    products). ``p = gemm_bf16_ntail``: the same on the bf16 window
    algorithm of ``_window_gemm_bf16``."""
    p = gemm_u8s8_ntail if p is None else p
    window = _window_gemm_bf16 if p is gemm_bf16_ntail else _window_gemm
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    p = p.cut_loop(p.find_loop('j'), f'{NC} * (N / {NC})')
    p = p.fission_after(p.find_loop('j'))
    p = step("the columns cut at the last full column block",
             p.shift_loop(p.find_loop('j #1'), 0))
    p = p.add_guard(p.find_loop('i'), f'N / {NC} > 0')
    p = p.add_guard(p.find_loop('i #2'), f'N % {NC} > 0')
    for loop in ('j #3', 'j #1'):            # the else branches: no work
        p = p.eliminate_dead_code(p.find_loop(loop))
    for loop in ('i #3', 'i #1'):
        p = p.eliminate_dead_code(p.find_loop(loop))
    p = step("each part guarded by its being non-empty", p)
    full, tail = window(NC), window(NC_TAIL)
    p = p.replace(p.find_loop('i'), full)
    p = step("each part a call of the algorithm on windows",
             p.replace(p.find_loop('i'), tail))
    sfx = "_amx_par" if threads else "_amx"
    kfull = _mtail_stages(threads, NC, full)[-1][1].rename(
        full.name() + sfx)
    ktail = _mtail_stages(threads, NC_TAIL, tail)[-1][1].rename(
        tail.name() + sfx)
    p = p.call_eqv(p.find(f'{full.name()}(_)'), kfull)
    p = step("the calls swapped for the scheduled kernels (column blocks "
             f"of {NC} and {NC_TAIL})",
             p.call_eqv(p.find(f'{tail.name()}(_)'), ktail))
    return tuple(out)


def _stage_b(p, kind, kt, nc=NC, steps=None):
    """Stage the column block of B read by one step of the loop ``kt`` in
    the VNNI layout (``Bp[jt, kt, kq, j, kr]``), a slot per step, the
    buffer lifted to the column block."""
    g, ks = kind.group, kind.kstep
    p = p.stage_mem(kt.body(),
                    f'B[{ks}*kt:{ks}*kt+{ks}, {nc}*jc:{nc}*jc+{nc}]', 'Bp')
    p = p.divide_dim('Bp', 0, g)
    p = p.rearrange_dim('Bp', [0, 2, 1])
    # each 16-column tile of the step contiguous (1 KB), and the steps of
    # one tile column one after the other: a tile load reads 16
    # consecutive lines, the K loop one sequential stream per tile column
    p = p.divide_dim('Bp', 1, 16)
    p = p.rearrange_dim('Bp', [1, 0, 2, 3])
    p = p.expand_dim('Bp', steps or f'K / {ks}', 'kt')
    p = p.rearrange_dim('Bp', [1, 0, 2, 3, 4])
    return p.lift_alloc('Bp', n_lifts=3)


def _pack_b(p, kind, cols):
    """The packing nest (split off, its loops ``i0`` over the step's rows
    and ``cols`` over its columns) by the packing instruction."""
    p = p.split('i0', kind.group, 'pq', 'pr', tail='perfect')
    p = p.reorder('pr', cols)
    # 16 columns x g rows at a time by the AVX-512 library's transposing
    # copy (SSE2 unpacks; its body is exactly this permutation)
    p = p.split(cols, 16, 'i1o', 'i1i', tail='perfect')
    p = p.simplify()
    p = p.replace(p.find_loop('i1i'), kind.pack)
    return p.simplify()


def _stage_tiles(p, kind, slot='', nc=NC):
    """Four C tiles around the k steps of the compute (the third ``kt``
    loop: after the copy of A and the packing of B), two tiles of A and
    two of packed B per step (``slot``: the index of Bp's column-block
    slot and a comma, when it has one)."""
    g, ks = kind.group, kind.kstep
    for ih in range(2):
        for jh in range(2):
            p = p.stage_mem(
                p.find_loop('kt #2'),
                f'C[32*io+{16 * ih}:32*io+{16 * ih + 16}, '
                f'{nc}*jc+32*jo+{16 * jh}:{nc}*jc+32*jo+{16 * jh + 16}]',
                f'c{ih}{jh}')
    for ih in range(2):
        p = p.stage_mem(
            p.find_loop('kt #2').body(),
            f'Ap[io, {ih}, kt, 0:16, 0:{ks}]',
            f'a{ih}')
    for jh in range(2):
        p = p.stage_mem(
            p.find_loop('kt #2').body(),
            f'Bp[{slot}2*jo+{jh}, kt, 0:16, 0:16, 0:{g}]',
            f'b{jh}')
    return p


def _tiles_in_registers(p):
    for ih in range(2):
        p = p.set_memory(f'a{ih}', amx.TILES[A_TILES[ih]])
        p = p.set_memory(f'b{ih}', amx.TILES[B_TILES[ih]])
        for jh in range(2):
            p = p.set_memory(f'c{ih}{jh}', amx.TILES[C_TILES[ih][jh]])
    return p


#: the B tiles loaded by ``tileloaddt1`` (the no-reuse hint): B streams
#: from the packed column block in L2, and without the hint its lines push
#: the reused 32 x K row block of A out of L1 (apps/gemm_amx/README.md,
#: "tileloaddt1 for B"; measured 1.1-1.25x at 1024 in the C harness)
STREAM_B = True


def _tile_instructions(p, kind):
    """Each tile copy and the compute nests by their tile instructions
    (the configuration is in place: their preconditions are provable)."""
    g = kind.group
    for ih in range(2):
        for jh in range(2):
            t = C_TILES[ih][jh]
            p = p.replace(_copy_into(p, f'c{ih}{jh}'),
                          amx.tile_load(t, kind.c, (16, 16)))
            p = p.replace(_copy_from(p, f'c{ih}{jh}'),
                          amx.tile_store(t, kind.c, (16, 16)))
        p = p.replace(_copy_into(p, f'a{ih}'),
                      amx.tile_load(A_TILES[ih], kind.a, (16, 16 * g)))
        p = p.replace(_copy_into(p, f'b{ih}'),
                      amx.tile_load(B_TILES[ih], kind.b, (16, 16, g),
                                    stream=STREAM_B))
    for ih in range(2):
        for jh in range(2):
            p = p.replace(p.find_loop('ii'),
                          kind.dp(C_TILES[ih][jh], A_TILES[ih],
                                  B_TILES[jh]))
    return p


def _copy_into(p, buf):
    """The loop nest right after the allocation of ``buf`` (its copy-in)."""
    return p.find(f'{buf} : _').next()


def _copy_from(p, buf):
    """The copy-out nest of ``buf`` (``C[...] = buf[...]`` in two loops)."""
    return p.find(f'C[_] = {buf}[_]').parent().parent()


def schedule(p=gemm_u8s8, threads=False):
    """The fully scheduled kernel (``gemm_u8s8_amx``, ``gemm_bf16_amx``,
    or the tail kernels ``gemm_{u8s8,bf16}_{m,n}tail_amx``; with
    ``threads``, ``..._amx_par``: column blocks in parallel)."""
    kind = BF16 if p is gemm_bf16 else INT8
    name = ("gemm_u8s8_mtail_amx" if p is gemm_u8s8_mtail else
            "gemm_bf16_mtail_amx" if p is gemm_bf16_mtail else
            "gemm_u8s8_ntail_amx" if p is gemm_u8s8_ntail else
            "gemm_bf16_ntail_amx" if p is gemm_bf16_ntail else kind.name)
    return stages(p, threads)[-1][1].rename(
        name + ("_par" if threads else ""))
