"""apps/gemm_lowp: the int8 and bf16 GEMM kernels are made of checked
rewrites, pack B into the VNNI layout, and are bit-exact with interpret()
of their algorithm (small problems; through the emulation layer where the
CPU lacks VNNI/BF16); the dispatch hook picks a kernel by CPU features."""
from __future__ import annotations

import numpy as np
import pytest

from apps.gemm_lowp import schedule as S
from apps.gemm_lowp.run import check_exact
from exo_hl import SchedulingError


def exact_with_default(kind, name, tile, p, *shape):
    """``check_exact`` of ``p`` while ``tile`` is the default tile of
    ``name`` (the reference the run checks against is built from it)."""
    saved = S.DEFAULT_TILES
    try:
        S.DEFAULT_TILES = {**saved, name: tile}
        return check_exact(kind, p, *shape)
    finally:
        S.DEFAULT_TILES = saved


@pytest.mark.parametrize("name", ["u8s8", "bf16"])
def test_kernel_is_bit_exact_with_interpret(name):
    kind = S.KINDS[name]
    t = S.Tile(8, 32, 8, 16)       # small k block: a cheap interpret()
    assert S.stages(kind, t) is S.stages(kind, t)
    p = S.kernel(kind, t)
    text = str(p)
    assert "B_pack:" in text and "pack_vnni" in text
    assert ("mm512_dpbusd_bcst_epi32" if name == "u8s8"
            else "mm512_dpbf16_bcst_ps") in text
    # two panels of columns, two k blocks, two row tiles
    assert exact_with_default(kind, name, t, p, 16, 64, 16)


def test_packing_is_a_checked_rearrange():
    st = dict(S.stages(S.U8S8, S.Tile(8, 32, 8, 16)))
    packed = str(st["B packed in the VNNI layout per panel; C tile staged"])
    assert "B_pack: i8[N / 32, K / 8, 2, 2, 16, 4]" in packed
    assert "B_pack[jo, ko, i0 / 4, i1 / 16, i1 % 16, i0 % 4]" in packed


def test_a_tile_that_does_not_divide_is_refused():
    with pytest.raises(ValueError):
        S.stages(S.U8S8, S.Tile(8, 24, 8, 16))
    with pytest.raises(SchedulingError):
        # the spec's preconditions name the tile: a kernel for another
        # tile cannot split its loops perfectly
        p = S.spec_u8s8(S.Tile(8, 32, 8, 16))
        p.split("i", 32, "io", "ii", tail="perfect")


def test_dispatch_picks_by_cpu_features():
    label, p = S.choose_kernel("u8s8", features={"avx512f", "avx512vnni"},
                               tile=S.Tile(8, 32, 8, 16))   # cached: built above
    assert label == "avx512-vnni" and "dpbusd" in str(p)
    with pytest.raises(RuntimeError, match="no bf16 GEMM kernel"):
        S.choose_kernel("bf16", features={"avx2", "fma"})


def test_dispatch_blocks_large_shapes_for_the_l2(monkeypatch):
    """``choose_kernel(shape=...)`` gives the kernel blocked for the L2
    (``tile_for``): column blocks of B once K x N bytes exceed half the
    L2, the row tiles outside the panels; the shape-free default and an
    explicit tile are unchanged. (The dispatch once built the unblocked
    default whatever the shape: only bench.py used the blocking.)"""
    from apps.gemm_amx import dispatch as amx
    monkeypatch.setattr(S, "cache_sizes", lambda: {2: 2 << 20})
    feats = {"avx512f", "avx512vnni"}
    label, p = S.choose_kernel("u8s8", features=feats,
                               shape=(64, 8192, 8192))   # 64 MiB of B
    assert label == "avx512-vnni"
    assert p is S.kernel(S.U8S8, S.replace(S.DEFAULT_U8, nc=128,
                                           tiles_out=True))
    text = str(p)
    assert "assert N % 128 == 0" in text
    assert "for jc in seq(0, N / 128):" in text
    # all of B in half the L2: no column blocks, row tiles outside
    _, q = S.choose_kernel("u8s8", features=feats, shape=(64, 512, 512))
    assert q is S.kernel(S.U8S8, S.replace(S.DEFAULT_U8, tiles_out=True))
    assert S.choose_kernel("u8s8", features=feats)[1] is S.kernel(S.U8S8)
    t = S.Tile(8, 32, 8, 16)
    assert S.choose_kernel("u8s8", features=feats, tile=t,
                           shape=(64, 8192, 8192))[1] is S.kernel(S.U8S8, t)
    # the AMX-first dispatch falls back to the same kernel without AMX
    assert amx.choose_kernel("u8s8", features=feats,
                             shape=(64, 8192, 8192))[1] is p


@pytest.mark.parametrize("name", ["u8s8"])
def test_threaded_kernel_runs_the_compute_in_parallel(name):
    # the 2-thread kernel once parallelized only the packing (the first
    # ``jo`` loop) and ran every row block on one thread
    kind = S.KINDS[name]
    t = S.Tile(8, 32, 8, 16)
    p = S.kernel(kind, t, threads=True)
    text = str(p)
    assert "for im in par(0, M / 16):" in text
    assert "for jo in par(0, N / 32):" in text
    assert exact_with_default(kind, name, t, p, 32, 64, 16)     # two row blocks


@pytest.mark.parametrize("name", ["u8s8"])   # bf16: the same steps
def test_prefetch_of_the_packed_panel(name):
    """``Tile.prefetch``: the k loop cut, the first part prefetching the
    packed panel d steps ahead (one prefetcht0 per 64-byte block), the
    kernel still bit-exact; without the cut the same call is refused (its
    window would pass the k block's end)."""
    kind = S.KINDS[name]
    t = S.Tile(8, 32, 16, 16, prefetch=2)   # 4 (u8s8) / 8 (bf16) k steps
    p = S.kernel(kind, t)
    kq = "kq" if name == "u8s8" else "kk"
    n = 16 // kind.group
    text = str(p)
    pf = kind.prefetch.name()
    assert (f"for {kq} in seq(0, {n - 2}):\n"
            f"                        {pf}(B_pack[jo, ko, {kq} + 2, 0, 0, 0:1])\n"
            f"                        {pf}(B_pack[jo, ko, {kq} + 2, 1, 0, 0:1])"
            in text)
    assert f"for {kq} in seq({n - 2}, {n}):" in text
    assert text.count(pf) == 2
    assert exact_with_default(kind, name, t, p, 16, 64, 32)   # two k blocks
    q = S.kernel(kind, S.Tile(8, 32, 16, 16))
    with pytest.raises(SchedulingError, match="out of bounds"):
        q.insert_noop_call(list(q.find_loop(kq).body())[0].before(),
                           kind.prefetch, [f"B_pack[jo, ko, {kq} + 2, 0, 0, 0:1]"])
    with pytest.raises(ValueError, match="prefetch"):
        S.stages(kind, S.Tile(8, 32, 16, 16, prefetch=n))


@pytest.mark.parametrize("name", ["u8s8", "bf16"])
def test_k_steps_unrolled(name):
    """``Tile.unroll_k``: each k step loop (both parts of the prefetch's
    cut) split by u and unrolled, so one iteration runs u k steps; the
    kernel still bit-exact; a factor that does not divide the k steps or
    the prefetch distance is refused."""
    kind = S.KINDS[name]
    t = S.Tile(8, 32, 16, 16, prefetch=2, unroll_k=2)
    p = S.kernel(kind, t)
    kq = "kq" if name == "u8s8" else "kk"
    n = 16 // kind.group
    text = str(p)
    assert f"for {kq} in seq(0, {(n - 2) // 2}):" in text
    assert f"for {kq} in seq(0, 1):" in text            # the cut's 2 steps
    assert f"{kq}u" not in text                          # unrolled
    assert text.count(kind.dot.name()) == 2 * 2 * 16     # 2 loops x 2 steps
    assert text.count(kind.prefetch.name()) == 2 * 2
    assert exact_with_default(kind, name, t, p, 16, 64, 32)   # two k blocks
    for bad in (S.Tile(8, 32, 16, 16, unroll_k=3),
                S.Tile(8, 32, 16, 16, prefetch=1, unroll_k=2),
                S.Tile(8, 32, 16, 16, unroll_k=0)):
        with pytest.raises(ValueError, match="unroll_k"):
            S.stages(kind, bad)


def test_packing_walks_k_outside_the_panels():
    """``Tile.pack_k``: the packing's panel loop reordered inside its k
    block and k group loops (rows of B read in order); with threads the
    k blocks are the par loop; bit-exact serial and threaded, with and
    without column blocks; refused with par_cols."""
    t = S.Tile(8, 32, 16, 16, prefetch=2, pack_k=True)
    text = str(S.kernel(S.U8S8, t, threads=True))
    assert ("    for ko in par(0, K / 16):\n"
            "        for i0o in seq(0, 4):\n"
            "            for jo in seq(0, N / 32):\n"
            "                for i1o in seq(0, 2):\n"
            "                    pack_vnni_epi8(") in text
    assert "for im in par(0, M / 16):" in text
    tb = S.replace(t, nc=64, tiles_out=True)
    text = str(S.kernel(S.U8S8, tb))
    assert ("    for jc in seq(0, N / 64):\n"
            "        for ko in seq(0, K / 16):\n"
            "            for i0o in seq(0, 4):\n"
            "                for jo in seq(0, 2):\n") in text
    A_ = S.DEFAULT_TILES
    try:
        for tile in (t, tb):
            S.DEFAULT_TILES = {**A_, "u8s8": tile}
            for threads in (False, True):
                assert check_exact(S.U8S8, S.kernel(S.U8S8, tile, threads),
                                   32, 128, 32)
    finally:
        S.DEFAULT_TILES = A_
    with pytest.raises(ValueError, match="pack_k"):
        S.stages(S.U8S8, S.Tile(8, 32, 16, 16, pack_k=True, par_cols=True))


def test_c_tile_accumulated_from_zero():
    """``Tile.c_accum`` (int8): the C tile staged with accum=True, its
    registers zeroed and added to C after the k loop (wrapping i32 sums:
    the same bits), bit-exact; refused for bf16 (f32 sums would round
    differently)."""
    t = S.Tile(8, 32, 16, 16, prefetch=2, c_accum=True)
    text = str(S.kernel(S.U8S8, t))
    assert text.count("mm512_setzero_epi32(C_reg[") == 16
    assert text.count("mm512_reduce_storeu_epi32(") == 16
    assert "mm512_loadu_epi32" not in text
    assert exact_with_default(S.U8S8, "u8s8", t, S.kernel(S.U8S8, t), 16, 64, 32)
    with pytest.raises(ValueError, match="c_accum"):
        S.stages(S.BF16, S.Tile(8, 32, 16, 16, c_accum=True))


def test_packed_a_row_block():
    """``Tile.pack_a``: each row block of A copied once, ahead of its
    panels, into ``[MC / MR, K / KC, KC / g, MR, g]`` (a row tile's k step
    reads MR x g contiguous bytes), by checked rewrites; the threaded
    kernel (the copy inside each par row block, next to the B packing's
    par loop) is bit-exact."""
    t = S.Tile(8, 32, 16, 16, prefetch=2, pack_a=True)
    p = S.kernel(S.U8S8, t, threads=True)
    text = str(p)
    assert ("    for im in par(0, M / 16):\n"
            "        A_pack: ui8[2, K / 16, 4, 8, 4] @ DRAM\n" in text)
    assert ("A_pack[io, ko, i3q, i2, i3g] = A[8 * io + 16 * im + i2, "
            "16 * ko + 4 * i3q + i3g]" in text)
    assert "A_pack[io, ko, kq, 7, 0:4]" in text   # the tile's last row
    assert "A[" not in text.split("for jo in seq(0, N / 32):")[1]
    assert exact_with_default(S.U8S8, "u8s8", t, p, 32, 64, 32)  # 2 row blocks, 2 k blocks


def test_threads_split_by_panels():
    """``Tile.par_cols``: on threads the panels of B are split, the
    compute's panel loop moved outside the row blocks (``reorder``) and
    made par like the packing's (the same static partition: each thread
    computes the panels it packed); bit-exact."""
    t = S.Tile(8, 32, 8, 16, par_cols=True)
    p = S.kernel(S.U8S8, t, threads=True)
    text = str(p)
    assert text.count("for jo in par(0, N / 32):") == 2
    assert "for im in seq(0, M / 16):" in text
    assert "for im in par(" not in text
    assert exact_with_default(S.U8S8, "u8s8", t, p, 32, 64, 16)     # two panels


def test_column_blocks_and_row_tiles_outside():
    """``Tile.nc`` / ``Tile.tiles_out``: the packing's and the compute's
    panel loops split by nc / nr, the compute's block loop moved outside
    the row blocks and fused with the packing's (each K x nc block packed,
    then used by every row block), the row tiles outside the panels; the
    threaded kernel (a par packing and par row blocks per block) is
    bit-exact over two blocks, two row blocks and two k blocks."""
    t = S.Tile(8, 32, 8, 16, nc=64, tiles_out=True)
    p = S.kernel(S.U8S8, t, threads=True)
    text = str(p)
    assert "assert N % 64 == 0" in text
    assert text.count("for jc in seq(0, N / 64):") == 1
    body = text.split("for jc in seq(0, N / 64):")[1]
    assert body.index("for jo in par(0, 2):") < body.index(
        "for im in par(0, M / 16):")
    assert ("for im in par(0, M / 16):\n"
            "            for io in seq(0, 2):\n"
            "                for jo in seq(0, 2):\n") in body
    assert "B_pack[2 * jc + jo, ko, kq, 0, 0:16, 0:4]" in body
    A_ = S.DEFAULT_TILES
    try:
        S.DEFAULT_TILES = {**A_, "u8s8": t}
        assert check_exact(S.U8S8, p, 32, 128, 16)
        assert check_exact(S.U8S8, S.kernel(S.U8S8, t), 32, 128, 16)
    finally:
        S.DEFAULT_TILES = A_
    for bad in (S.Tile(8, 32, 8, 16, nc=48),                 # not k * NR
                S.Tile(8, 32, 8, 16, nc=64, par_cols=True),
                S.Tile(8, 32, 8, 16, tiles_out=True, pack_a=True)):
        with pytest.raises(ValueError):
            S.stages(S.U8S8, bad)


def test_l2_blocking_model():
    """``tile_for``: nc is the widest multiple of NR dividing N whose
    K x nc bytes of packed B take at most half the L2; none when all of
    B does; no block (and A streamed as before) when not even one panel
    fits; bf16 keeps its default."""
    mib = {2: 2 << 20}
    t = S.tile_for("u8s8", 1024, 1024, mib)          # 1 MiB: all of B
    assert (t.nc, t.tiles_out) == (0, True)
    t = S.tile_for("u8s8", 2048, 2048, mib)
    assert (t.nc, t.tiles_out) == (512, True)
    assert S.tile_for("u8s8", 2048, 2048, {2: 1 << 20}).nc == 256
    assert S.tile_for("u8s8", 640, 2048, mib).nc == 320   # 512 does not divide N
    t = S.tile_for("u8s8", 4096, 64 << 10, mib)      # a panel is 2 MiB
    assert (t.nc, t.tiles_out) == (0, False)
    assert S.tile_for("bf16", 2048, 2048, mib) == S.DEFAULT_BF16


@pytest.mark.slow
@pytest.mark.parametrize("name", ["u8s8", "bf16"])
def test_dispatched_kernels_do_not_spill_with_native_flags(tmp_path,
                                                           monkeypatch, name):
    """What the bench and the dispatch compile on this machine (the default
    tile, and ``tile_for``'s L2 blocking of the bench's shapes; one and two
    threads), as ``compile()`` builds it (``-O3 -march=native``): no dot
    product (``vpdpbusd`` / ``vdpbf16ps``) reads an operand from the
    stack (a spilled accumulator or B register; tests/asm_checks.py).
    The features are the kernel's own, so the check runs on any x86."""
    from asm_checks import fma_stack_operands, native_flags
    monkeypatch.delenv("CFLAGS", raising=False)
    kind = S.KINDS[name]
    seen = {}
    for threads in (False, True):
        for n in (None, 256, 512, 1024, 2048):
            _, p = S.choose_kernel(name, features=kind.features,
                                   threads=threads,
                                   shape=None if n is None else (n, n, n))
            seen[id(p)] = (n, threads, p)
    assert len(seen) >= 2
    for n, threads, p in seen.values():
        spilled, dots = fma_stack_operands(p, tmp_path, flags=native_flags())
        assert dots > 0 and spilled == 0, (n, threads, spilled, dots)
