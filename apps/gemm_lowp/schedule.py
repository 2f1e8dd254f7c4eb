"""The schedule: a naive bf16 or int8 GEMM -> an AVX-512 BF16/VNNI kernel.

Two algorithms (``C += A @ B``, row-major):

* ``gemm_u8s8``: A u8, B s8, C s32 (wrapping), the operand types of
  ``vpdpbusd`` and of MKL's ``cblas_gemm_s8u8s32``;
* ``gemm_bf16``: A, B bf16, C f32. Its k loop is written in the order
  ``vdpbf16ps`` sums: pairs of k in ascending order, the odd element of a
  pair first (``k = 2 kp + 1 - t``). That is the *stated order of the
  sums*: the kernel gives exactly what ``interpret()`` gives on this
  procedure (products of bf16 are exact in f32; the instruction fuses and
  flushes denormals, which only matters where a product over/underflows
  or a denormal appears, hw_libs/avx512/lowp.py).

Both need M % MC == 0, N % NR == 0 and K % KC == 0 (asserted): the kernel
has no tails (the benchmark's sizes are multiples; a general kernel would
add tails as apps/sgemm does).

The schedule, every step a checked rewrite (``stages`` returns them):

1. split i by MR, j by NR then by 16 (a register), k by KC then by the
   instruction's group (4 bytes, or pairs of bf16);
2. reorder to ``jo, ko, io, kq, ii, jb, ji, t``: an NR-column panel of B
   and a KC block of k outside, the MR x NR tile of C inside;
3. **pack B into the VNNI layout**: stage the KC x NR block of B
   (``stage_mem``), ``divide_dim`` its k dimension into (k / g, g) and its
   columns into (NR / 16, 16), and ``rearrange_dim`` to ``[k / g, NR / 16,
   16, g]``: the g values of k of one column are adjacent, 16 columns make
   one 64-byte register. ``expand_dim`` gives it a slot per k block and
   per panel, ``lift_alloc`` + ``fission_after`` + ``remove_loop`` pack
   all of B once, before the row blocks (MC rows, whose A stays in L2
   while they run over every panel), and ``reorder`` puts the k blocks
   inside the row tiles, so a C tile stays in registers over all of K (C
   is loaded and stored once);
4. stage the C tile (``stage_mem``), split its last dimension into
   registers (``divide_dim``), put it in ``AVX512`` registers;
5. replace: the C tile's loads and stores by register moves, the ``ji``
   loop (16 columns x g) by the broadcast dot product
   (``mm512_dpbusd_bcst_epi32`` / ``mm512_dpbf16_bcst_ps``, A's group of
   g broadcast, B's 16 x g from the packed panel);
6. unroll the tile (rows and registers) so the accumulators stay in
   registers; ``Tile.prefetch = d``: ``cut_loop`` the k loop at KC / g - d
   and ``insert_noop_call`` a ``prefetcht0`` of the packed panel's row d
   steps ahead (``mm_prefetch_t0_epi8`` / ``_bf16``, one per 64 bytes;
   the bounds proof is why the loop is cut); ``Tile.pack_a``: each row
   block of A copied into the tile order once, ahead of its panels
   (``_pack_a``; off by default: no gain measured, README); optionally
   ``parallelize`` the packing's panel loop ``jo``
   (each iteration writes its own packed panel) and the row-block loop
   ``im`` (each writes its own rows of C, all read the packed B), or,
   with ``Tile.par_cols``, the compute's panel loop moved outside the row
   blocks and split like the packing's (each thread computes the panels
   it packed; A is read once per panel: with ``pack_a`` it would be
   copied once per panel too).

**L2 blocking** (``tile_for``, a model from the machine's reported L2):
``Tile.nc`` splits the packing's and the compute's panel loops by
``nc / nr``, moves the compute's block loop ``jc`` outside the row blocks
and fuses it with the packing's, so each packed K x nc block of B (at most
half the L2) is read by every row block from L2 instead of all of the
packed B streaming from L3 per row block; ``Tile.tiles_out`` then puts the
row tiles outside the panels (``reorder``): a tile's MR x K bytes of A
stay in L1 while it runs over the block's panels.

Options measured side by side (README, issue 36): ``Tile.pack_k`` (int8
default) reorders the packing's panel loop inside its k loops, so the
packing reads the rows of B in order (2x faster alone at 1024-2048) and
the threads split it by k blocks; ``Tile.unroll_k`` splits and unrolls the
micro-kernel's k step loop; ``Tile.c_accum`` (int8) stages the C tile with
``accum=True`` (zeroed registers, added to C after the k loop).

``choose_kernel(kind, features, shape=(M, N, K))`` is the runtime-dispatch
hook: the best kernel for a set of CPU features, with ``tile_for``'s L2
blocking for that shape (AMX kernels are added ahead of these by the AMX
library's schedule).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from exo_hl import SchedulingError, bf16, f32, i8, i32, proc, seq, size, ui8
from exo_hl.hw_libs import avx512 as X


@dataclass(frozen=True)
class Tile:
    mr: int = 8      # rows of the C tile
    nr: int = 32     # columns of the C tile (a multiple of 16)
    kc: int = 256    # k block (elements)
    mc: int = 64     # row block: its A rows (mc x K) stay in L2 while it
                     # runs over every panel of B (a multiple of mr)
    prefetch: int = 0  # prefetch the packed panel this many k steps
                       # ahead (0: none; < kc / group)
    pack_a: bool = False  # copy each row block of A into the tile order
                          # (a row tile's k step: MR x g contiguous bytes)
    par_cols: bool = False  # threads: split the panels of B (each thread
                            # computes the panels it packed, all rows)
                            # instead of the row blocks
    nc: int = 0   # column blocks of B (a multiple of nr; 0: none): B is
                  # packed and used one K x nc block at a time, so the
                  # block read by every row block stays in L2 (nc_for)
    tiles_out: bool = False  # in a row block, the row tiles outside the
                             # panels: a tile's MR x K of A stays in L1
                             # while it runs over the panels of B (from
                             # L2 when nc keeps the block there)
    pack_k: bool = False  # the packing of B walks k outside the panels
                          # (rows of B read in order, not 32 bytes of
                          # each of K rows per panel); threads split k
    c_accum: bool = False  # int8: the C tile's registers start at zero
                           # and are added to C after the k loop (no
                           # load of C ahead of the tile's dot products)
    unroll_k: int = 1  # the micro-kernel's k step loop unrolled by this
                       # factor (split + unroll; divides KC / g and the
                       # prefetch distance)


#: 8 x 32: 16 accumulators (two registers per row), enough to hide the
#: dot products' latency at two per cycle, and sizes that are powers of two
#: fit (measured at 1024^3 under load, clang: 8x32 1.0x MKL-VNNI, 4x64
#: 0.67x, 16x16 0.27x, KC=512 0.4x). int8: the packed panel prefetched 8
#: k steps ahead (loaded machine, one thread, side by side, three runs:
#: +4-7% at 1024, -0.4 to +7% at 2048, -12 to +10% at 512; d = 12, 16 no
#: better). bf16 runs at 93-98% of the vdpbf16ps peak without it. int8
#: packs B along its rows (pack_k): the packing alone (C probe, CPU time)
#: is 2x faster at 1024-2048, 1.2-1.4x at 512; the whole GEMM, side by side
#: with the panel-order packing, loaded, one thread, seven runs: -3 to +6%
#: (about +1 to +2% on average: the packing was 2.5-3.4% of the call).
DEFAULT_U8 = Tile(8, 32, 256, prefetch=8, pack_k=True)
DEFAULT_BF16 = Tile(8, 32, 128)
DEFAULT_TILES = {"u8s8": DEFAULT_U8, "bf16": DEFAULT_BF16}


def cache_sizes() -> dict:
    """{level: bytes} of the data caches this machine reports (sysfs)."""
    from apps.sgemm.schedule import cache_sizes as sizes
    return sizes()


#: used when the machine reports no L2
DEFAULT_L2 = 1 << 20


def tile_for(kind: str, N: int, K: int, caches: dict = None) -> "Tile":
    """The default tile of ``kind`` with its L2 blocking for an N x K
    operand B (a model, from the machine's reported L2; ``caches``:
    {level: bytes}, default this machine's): ``nc`` is the widest multiple
    of NR dividing N whose packed K x nc block of B takes at most half the
    L2 (the rest holds A's row tile and C's lines), 0 when all of B does
    (one block); ``tiles_out`` when such a block exists, so each row
    tile's MR x K of A stays in L1 while it runs over the block's panels
    from L2. Measured (loaded, one thread, side by side): +3 to +7% at
    512-2048 over the untiled loops; tiles_out without the block loses
    a third at 2048 (B then streams from L3 for every row tile). bf16
    keeps its default (it runs at the vdpbf16ps peak unblocked; the
    blocking was not measured there)."""
    base = DEFAULT_TILES[kind]
    if kind != "u8s8":
        return base
    caches = cache_sizes() if caches is None else caches
    half = caches.get(2, DEFAULT_L2) // 2
    size = K                            # bytes per column of B (i8)
    if N * size <= half:
        return replace(base, nc=0, tiles_out=True)
    nc = half // size // base.nr * base.nr
    while nc >= base.nr and N % nc:
        nc -= base.nr
    if nc < base.nr:
        return base                     # no block of B fits: stream it
    return replace(base, nc=nc, tiles_out=True)


def spec_u8s8(t: Tile = DEFAULT_U8):
    """The int8 GEMM for tile ``t`` (its preconditions name the tile)."""
    MC, NR, KC = t.mc, t.nc or t.nr, t.kc

    @proc
    def gemm_u8s8(M: size, N: size, K: size, A: ui8[M, K], B: i8[K, N],
                  C: i32[M, N]):
        assert M % MC == 0
        assert N % NR == 0
        assert K % KC == 0
        for i in seq(0, M):
            for j in seq(0, N):
                for k in seq(0, K):
                    C[i, j] += A[i, k] * B[k, j]
    return gemm_u8s8


def spec_bf16(t: Tile = DEFAULT_BF16):
    """The bf16 GEMM for tile ``t``, summing each pair of k odd first."""
    MC, NR, KC = t.mc, t.nc or t.nr, t.kc

    @proc
    def gemm_bf16(M: size, N: size, K: size, A: bf16[M, K],
                  B: bf16[K, N], C: f32[M, N]):
        assert M % MC == 0
        assert N % NR == 0
        assert K % KC == 0
        for i in seq(0, M):
            for j in seq(0, N):
                for kp in seq(0, K / 2):
                    for t in seq(0, 2):
                        C[i, j] += A[i, 2 * kp + 1 - t] * B[2 * kp + 1 - t, j]
    return gemm_bf16


@dataclass(frozen=True)
class Kind:
    name: str
    group: int        # k values per lane of one instruction
    spec: object      # Tile -> Procedure
    dot: object       # the broadcast dot-product instruction
    load: object      # C register load / store
    store: object
    features: frozenset
    pack: object      # G rows x 16 columns of B -> 16 groups of G
    prefetch: object  # prefetcht0 of one element of the packed panel


U8S8 = Kind("u8s8", 4, spec_u8s8, X.mm512_dpbusd_bcst_epi32,
            X.mm512_loadu_epi32, X.mm512_storeu_epi32,
            frozenset({"avx512f", "avx512vnni"}), X.pack_vnni_epi8,
            X.mm_prefetch_t0_epi8)
BF16 = Kind("bf16", 2, spec_bf16, X.mm512_dpbf16_bcst_ps,
            X.mm512_loadu_ps, X.mm512_storeu_ps,
            frozenset({"avx512f", "avx512bf16"}), X.pack_vnni_bf16,
            X.mm_prefetch_t0_bf16)
KINDS = {k.name: k for k in (U8S8, BF16)}


@functools.lru_cache(maxsize=16)
def stages(kind: Kind, tile: Tile = None, threads: bool = False):
    """[(what, procedure)] after each group of steps (procedures are
    immutable: cached per kind, tile and threads)."""
    t = tile or (DEFAULT_U8 if kind is U8S8 else DEFAULT_BF16)
    MR, NR, KC, G, MC = t.mr, t.nr, t.kc, kind.group, t.mc
    if NR % 16 or KC % G or MC % MR:
        raise ValueError(f"tile {t}: NR must be a multiple of 16, KC of "
                         f"{G}, MC of MR")
    if not 0 <= t.prefetch < KC // G:
        raise ValueError(f"tile {t}: prefetch must be in [0, KC / {G})")
    if t.nc and (t.nc % NR or t.par_cols):
        raise ValueError(f"tile {t}: nc must be a multiple of NR (and "
                         f"par_cols needs nc = 0)")
    if (t.unroll_k < 1 or (KC // G) % t.unroll_k
            or t.prefetch % t.unroll_k):
        raise ValueError(f"tile {t}: unroll_k must divide KC / {G} and "
                         f"the prefetch distance")
    if t.pack_k and t.par_cols:
        raise ValueError(f"tile {t}: pack_k needs par_cols off (the "
                         f"threads split the packing by k)")
    if t.c_accum and kind is not U8S8:
        raise ValueError(f"tile {t}: c_accum is for int8 only (f32 sums "
                         f"in another order round differently)")
    if t.tiles_out and (t.par_cols or t.pack_a):
        raise ValueError(f"tile {t}: tiles_out needs par_cols and pack_a "
                         f"off")
    out = []
    p = kind.spec(t)
    out.append(("the algorithm", p))
    k = "k" if kind is U8S8 else "kp"
    kc = KC if kind is U8S8 else KC // 2
    p = p.split("i", MC, "im", "i1", tail="perfect")
    p = p.split("i1", MR, "io", "ii", tail="perfect")
    p = p.split("j", NR, "jo", "jj", tail="perfect")
    p = p.split("jj", 16, "jb", "ji", tail="perfect")
    p = p.split(k, kc, "ko", "kk", tail="perfect")
    if kind is U8S8:
        p = p.split("kk", G, "kq", "t", tail="perfect")
    kq = "kq" if kind is U8S8 else "kk"   # bf16: the pair loop kk, then t
    # im io ii jo jb ji ko kq t -> im jo ko io kq ii jb ji t
    p = p.reorder("ii", "jo")
    p = p.reorder("io", "jo")
    for a, b in (("ji", "ko"), ("jb", "ko"), ("ii", "ko"), ("io", "ko"),
                 ("ji", kq), ("jb", kq), ("ii", kq)):
        p = p.reorder(a, b)
    out.append(("tiled: panels of B and k blocks outside, the C tile in",
                p))
    # pack B: the KC x NR block of a panel, in the VNNI layout, one slot
    # per k block (expand_dim), the packing of the whole panel split off
    # ahead of the row tiles (fission), which then run over all of K with
    # their C tile in registers (reorder ko and io)
    p = p.stage_mem("io", f"B[{KC} * ko:{KC} * ko + {KC}, "
                    f"{NR} * jo:{NR} * jo + {NR}]", "B_pack")
    p = p.divide_dim("B_pack", 0, G)
    p = p.divide_dim("B_pack", 2, 16)
    p = p.rearrange_dim("B_pack", [0, 2, 3, 1])
    p = p.expand_dim("B_pack", f"K / {KC}", "ko")
    p = p.lift_alloc("B_pack : _")
    p = p.fission_after(list(p.find_loop("ko").body())[0])
    p = p.reorder(p.find_loop("ko #1"), p.find_loop("io"))
    # ... and all panels packed once, before the row blocks: a slot per
    # panel, the packing split off the panel loop and then off the row
    # block loop, whose first part (the same packing each time) goes
    p = p.expand_dim("B_pack", f"N / {NR}", "jo")
    p = p.lift_alloc("B_pack : _")
    p = p.fission_after(p.find_loop("ko"))
    p = p.lift_alloc("B_pack : _")
    p = p.fission_after(p.find_loop("jo"))
    p = p.remove_loop(p.find_loop("im"))
    if t.pack_a:
        p = _pack_a(p, t, G, kq="kq" if kind is U8S8 else "kk")
    p = p.stage_mem(p.find_loop("ko #2" if t.pack_a else "ko #1"),
                    f"C[{MC} * im + {MR} * io:{MC} * im + {MR} * io + {MR}, "
                    f"{NR} * jo:{NR} * jo + {NR}]", "C_reg",
                    accum=t.c_accum)
    p = p.divide_dim("C_reg", 1, 16)
    # the C tile's copy loops (named after A's packing loops, if any)
    cr, cc = ("i4", "i5") if t.pack_a else ("i2", "i3")
    out.append(("B packed in the VNNI layout per panel; C tile staged", p))
    # the packing nest: k by groups of G, columns by 16, then one packing
    # instruction per G x 16 block (a transpose)
    p = p.split("i0", G, "i0o", "i0i", tail="perfect")
    p = p.split("i1", 16, "i1o", "i1i", tail="perfect")
    p = p.reorder("i0i", "i1o")
    p = p.reorder("i0i", "i1i")
    p = p.replace(p.find_loop("i1i"), kind.pack)
    p = p.split(cc, 16, "i3o", "i3i", tail="perfect")
    p = p.split(cc, 16, "i3p", "i3j", tail="perfect")
    p = p.set_memory("C_reg", X.AVX512)
    p = p.replace(p.find_loop("i3i"), X.mm512_setzero_epi32 if t.c_accum
                  else kind.load)
    p = p.replace(p.find_loop("i3j"), X.mm512_reduce_storeu_epi32
                  if t.c_accum else kind.store)
    p = p.replace(p.find_loop("ji"), kind.dot)
    out.append(("instructions", p))
    for loop in ("jb", "ii", "i3o", cr, "i3p", cr):
        p = p.unroll(loop)
    if t.pack_a:
        # A's copy by groups of G bytes (one 4-byte move each), the rows
        # inside: 32 contiguous bytes written per group
        p = p.split("i3", G, "i3q", "i3g", tail="perfect")
        p = p.reorder("i2", "i3q")
    if t.prefetch:
        p = _prefetch(p, kind, t, kq)
    if t.unroll_k > 1:
        p = _unroll_k(p, t.unroll_k, kq)
    if t.nc:
        p = _column_blocks(p, t)
    if t.tiles_out:
        jo = p.find_loop("jo #1")
        p = p.reorder(jo, list(jo.body())[0])
    if t.pack_k:
        # the packing's panel loop inside its k blocks and k groups: each
        # 4 x NR block of rows of B read in order along the rows
        p = p.reorder(p.find_loop("jo"), p.find_loop("ko"))
        p = p.reorder(p.find_loop("jo"), p.find_loop("i0o"))
    if threads:
        # the packing's panels, then the row blocks: each row block writes
        # its own rows of C and reads the shared packed B. (Parallelizing
        # only the first ``jo`` found -- the packing -- left the compute on
        # one thread: the 2-thread kernel did not scale.)
        p = p.parallelize(p.find_loop("ko" if t.pack_k else "jo"))
        if t.par_cols:
            # panels outside the row blocks, split like the packing's
            # (same static partition: no packed panel crosses cores)
            p = p.reorder(p.find_loop("im"), p.find_loop("jo #1"))
            p = p.parallelize(p.find_loop("jo #1"))
        else:
            p = p.parallelize(p.find_loop("im"))
    out.append(("tile unrolled"
                + (f", packed panel prefetched {t.prefetch} k steps ahead"
                   if t.prefetch else "")
                + (f", column blocks of {t.nc}" if t.nc else "")
                + (", row tiles outside the panels" if t.tiles_out else "")
                + (", panels in parallel" if threads else ""), p))
    return out


def _pack_a(p, t, G, kq):
    """Pack the row block of A (MC x K) once per row block, ahead of its
    panels: ``A_pack[MC / MR, K / KC, KC / G, MR, G]``, so a row tile's k
    step reads its MR groups of G bytes from one 32-byte run instead of
    MR rows K bytes apart. ``stage_mem`` of the tile's MR x KC block of A
    at the k step loop, ``divide_dim`` + ``rearrange_dim`` to ``[KC / G,
    MR, G]``, ``expand_dim`` by the k block and the row tile (a slot
    each), then ``lift_alloc`` + ``fission_after`` hoist the copy out of
    the k block, row tile and panel loops, and ``remove_loop`` drops the
    panel loop around it (the copy does not depend on the panel)."""
    MR, KC, MC = t.mr, t.kc, t.mc
    p = p.stage_mem(p.find_loop(kq),
                    f"A[{MC} * im + {MR} * io:{MC} * im + {MR} * io + {MR}, "
                    f"{KC} * ko:{KC} * ko + {KC}]", "A_pack")
    p = p.divide_dim("A_pack", 1, G)
    p = p.rearrange_dim("A_pack", [1, 0, 2])
    p = p.expand_dim("A_pack", f"K / {KC}", "ko")
    p = p.lift_alloc("A_pack : _")
    p = p.fission_after(list(p.find_loop("ko #1").body())[0])
    p = p.expand_dim("A_pack", f"{MC // MR}", "io")
    p = p.lift_alloc("A_pack : _")
    p = p.fission_after(p.find_loop("ko #1"))
    p = p.lift_alloc("A_pack : _")
    p = p.fission_after(p.find_loop("io"))
    p = p.remove_loop(list(p.find_loop("im").body())[1])
    return p


def _column_blocks(p, t):
    """Column blocks of B: the packing's panel loop and the compute's are
    each split by ``nc / nr`` (``jc`` outside, ``jo`` inside), the
    compute's ``jc`` reordered outside the row blocks, and the two ``jc``
    loops fused: each K x nc block of B is packed, then every row block
    runs over it while it is in L2 (without it, every row block streams
    all of the packed B, K x N bytes, from L3 once N K exceeds the L2)."""
    f = t.nc // t.nr
    p = p.split(p.find_loop("jo"), f, "jc", "jo", tail="perfect")
    p = p.split(p.find_loop("jo #1"), f, "jc", "jo", tail="perfect")
    p = p.reorder(p.find_loop("im"), p.find_loop("jc #1"))
    return p.fuse_loop(p.find_loop("jc"), p.find_loop("jc #1"))


def _unroll_k(p, u, kq):
    """The micro-kernel's k step loop(s) (two after the prefetch's cut)
    split by ``u`` and the inner loop unrolled: one loop iteration runs
    u k steps. (Measured, loaded, the 8 x 32 tile alone in a C probe with
    gcc 12: 74-79% of the vpdpbusd peak with one k step per iteration,
    90-100% with two; the loop's instructions, not the data, held it.)"""
    n = sum(1 for _ in _loops_named(p, kq))
    for i in range(n):
        p = p.split(p.find_loop(f"{kq} #{i}" if i else kq), u, kq,
                    f"{kq}u", tail="perfect")
    for _ in range(n):
        p = p.unroll(p.find_loop(f"{kq}u"))
    return p


def _loops_named(p, name):
    """The loops of ``p`` named ``name``, in order (cursors)."""
    i = 0
    while True:
        try:
            yield p.find_loop(f"{name} #{i}" if i else name)
        except SchedulingError:     # no such loop
            return
        i += 1


def _prefetch(p, kind, t, kq):
    """Each k step of the micro-kernel prefetches the packed panel's row
    ``d = t.prefetch`` steps ahead: one ``prefetcht0`` per 16 x G block
    (64 bytes, a cache line), put in by ``insert_noop_call`` after
    ``cut_loop`` cuts the k loop at ``KC / G - d`` (the calls' windows are
    then proven inside the packed panel). The last d steps of a k block
    prefetch nothing (as apps/sgemm's ``_prefetch``: the next k block
    follows in memory, where the hardware's stream prefetcher finds it)."""
    d, n = t.prefetch, t.kc // kind.group
    p = p.cut_loop(p.find_loop(kq), n - d)
    for jb in reversed(range(t.nr // 16)):
        p = p.insert_noop_call(
            list(p.find_loop(kq).body())[0].before(), kind.prefetch,
            [f"B_pack[jo, ko, {kq} + {d}, {jb}, 0, 0:1]"])
    return p


def kernel(kind: Kind, tile: Tile = None, threads: bool = False):
    """The scheduled kernel (the last stage)."""
    return stages(kind, tile, bool(threads))[-1][1]


# ---------------------------------------------------------------------------
# runtime dispatch

def _builder(kind: Kind):
    """The dispatch's builder of ``kind``'s kernel: (threads, tile=None,
    shape=None) -> procedure. With no tile but a shape (M, N, K), the tile
    is ``tile_for(kind, N, K)``: the L2 blocking of this machine for that
    B (column blocks of B once K x N bytes exceed half the L2), so what a
    user of the dispatch gets for a large product is the blocked kernel;
    with neither, the default tile (no column blocks: its kernel takes
    every N % NR == 0)."""
    def build(threads, tile=None, shape=None):
        if tile is None and shape is not None:
            tile = tile_for(kind.name, shape[1], shape[2])
        return kernel(kind, tile, threads=threads)
    return build


#: (kind name) -> [(required CPU features, label, builder)], best first.
#: A builder takes (threads, tile=None, shape=None). The AMX schedule
#: (another library) inserts its kernels at the front.
DISPATCH = {
    "u8s8": [(U8S8.features, "avx512-vnni", _builder(U8S8))],
    "bf16": [(BF16.features, "avx512-bf16", _builder(BF16))],
}


def choose_kernel(kind: str, features=None, threads: bool = False,
                  tile: Tile = None, shape=None):
    """(label, procedure): the first kernel of ``DISPATCH[kind]`` whose CPU
    features ``features`` (default: this host's) contains; ``RuntimeError``
    when none fits (run the algorithm, ``KINDS[kind].spec()``, instead).
    ``shape`` (M, N, K): the kernel for that product, blocked for this
    machine's L2 (``tile_for``); ``tile`` overrides it; with neither, the
    default tile. The kernel's preconditions (``M % mc``, ``N % nc or
    nr``, ``K % kc``) are those of the tile chosen."""
    from exo_hl.codegen_c.host_cpu import host_features
    for need, label, build in DISPATCH[kind]:
        have = (host_features(need) if features is None
                else frozenset(need) & frozenset(features))
        if have == frozenset(need):
            return label, build(threads, tile, shape)
    raise RuntimeError(f"no {kind} GEMM kernel for this CPU (needs one of "
                       f"{[sorted(n) for n, _, _ in DISPATCH[kind]]})")
