"""Tuning the SGEMM schedule on this machine, and the parameters the app
runs with.

The schedule (``schedule.py``) takes its parameters from an ``Isa``
description: the register tile MR x NR, the k block KC, the column block
NC (the packed ``kc x NC`` block of B, 0 for all of N), the row block MC
(0 for all of M) and which loops are ``par``. ``variant`` makes a
description from a dict of them; ``template`` schedules it; ``Bench``
times it; ``space`` is what ``exo-hl tune sgemm`` searches
(``exo_hl.tune.tune``); every candidate is a chain of checked rewrites.

``configured(isa_name)`` is what the app runs: this machine's record from
the tuning database (``exo_hl.tune.TuningDB``) when there is one, else the
blocking of the BLIS analytical model (``exo_hl.tune.blis_blocking``:
KC from the L1, NC from the L2 since this schedule's loop order streams
the packed block of B once per MR rows), with a note that says which.
"""
from __future__ import annotations

import dataclasses
import math

from exo_hl import SchedulingError
from exo_hl.tune import (TuningDB, blis_blocking, cache_levels, cpu_family,
                         is_amd)

from apps.common.blas_env import OVERRIDES
from apps.sgemm.schedule import ISAS, Isa, cache_sizes, k_block, schedule

#: bump when the schedule changes what a parameter means (old records
#: are then left alone: the key changes)
SCHEDULE_VERSION = 2

#: micro-kernel shapes (MR x NR) per instruction set, the model's default
#: first (but see ``default_shape``). AVX-512 6x64 (24 accumulators) over
#: 6x32 (12): measured on the 2-core Intel Xeon (loaded, side by side with
#: OpenBLAS), 6x64 was 10-20% faster at 512-2048, 8x32 and 14x32 in
#: between. Per flop both tiles load as much of B and C; 6x64 halves the
#: per-tile costs (the C tile's loads and stores, the loop around k).
#: 12x32 (24 accumulators too) over 6x64 for the square kernels: this
#: loop order streams B's packed panels from L2, NR floats per k step for
#: MR x NR / L FMAs, i.e. 64 / MR bytes per FMA, half as many with 12
#: rows (measured on the quiet Xeon, side by side: 1-4% faster at
#: 768-2048^3, 5% at 128x2048x512; README); the narrow kernels keep 6x64
#: (``narrow_shape``)
SHAPES = {"avx512": ("12x32", "6x64", "6x32", "8x32", "14x32", "4x64"),
          "avx2": ("6x16", "4x24", "8x8", "3x32")}


def key(isa_name: str) -> str:
    """The tuning database key: app, instruction set, schedule version."""
    return f"sgemm.{isa_name}.v{SCHEDULE_VERSION}"


def space(isa_name: str, threads: int = 1) -> dict:
    """The search space: tile shape, KC, NC, MC (NC and MC are rounded
    down to multiples of NR and MR; 0: no blocking), whether A's
    micro-panel and B's panels are packed (``pack_a``, ``pack_b``) and
    the prefetch distance in k steps (``prefetch``).

    Left out, with the reason:

    * ``par='cols'`` (the NC column blocks on the threads instead of the
      row blocks) and the app's choice of kernel per product
      (``par_min``, ``nc_cols``: ``api.Dispatch``): the app builds the
      row-split, one-thread and column-split kernels from one chain and
      picks per product, so what the search would choose (on its large
      squares, where the row split is used) is the block kernel; the two
      thresholds come from the model (``model_params``). ``par='cols'``
      alone now builds in about a minute (64 s measured, loaded; it took
      ten before the rewrites got faster). ``threads`` is kept for a
      search of those.
      ``cols_narrow`` (the column split on narrow block kernels, which
      the app now runs on two threads for 1024^3-2048^3 too) is the
      model's for the same reason: the template builds the row-split
      kernel, so a two-thread search times a kernel the app runs only
      where the column blocks do not share out evenly (768^3, 1000^3);
      searching it needs a template of the ``Dispatch``, not built.
    How the threads share the row blocks (``dynamic``: False, a fixed
    block of consecutive row blocks each, OpenMP's static schedule
    written out; True, one at a time from a shared counter, a
    ``par_dynamic`` loop, so a thread another process slows does not
    hold the other at the end of the region),
    ``pack_b`` (B's panels packed or loaded in place), ``prefetch``
    (the row of B's panel that many k steps ahead, 0: none; in the goto
    order the row of A's micro-panel; ``Isa``) and
    the loop order (``order``: 'rows', A's micro-panel in L1 and B's
    panels streamed from L2, or 'goto', GotoBLAS/BLIS's jc -> pc -> ic ->
    jr -> ir: B's micro-panel in L1, A's packed MC x kc block in L2; in
    it MC is the A block, and a point with MC = 0 or A unpacked is
    refused) are in it."""
    model = model_params(isa_name)
    out = {"isa": [isa_name], "shape": list(SHAPES[isa_name]),
           "kc": [96, 128, 192, 256, 320, 384, 512],
           "nc": [0, 256, 512, 768, 1024, 1536, 2048],
           "mc": [0, 192, 384, 768], "pack_a": [True, False],
           "pack_b": [True, False],
           "prefetch": [0, 4, 8, 16], "order": ["rows", "goto"],
           "dynamic": [False, True]}
    for name in ("kc", "nc"):           # the model's point is in the space
        out[name] = sorted(set(out[name]) | {model[name]})
    return out


def variant(isa_name: str, params: dict) -> Isa:
    """The description for ``params`` ({shape or mr/nr, kc, nc, mc, par,
    pack_a, pack_b, prefetch, order, dynamic; narrow_shape or
    narrow_mr/narrow_nr, the narrow kernels' tile, and the app's other
    thread and dispatch parameters};
    missing ones from the base description). Raises ``SchedulingError``
    for a combination the schedule cannot build (so a search records it as
    refused)."""
    base = ISAS[isa_name]
    mr, nr = base.mr, base.nr
    if "shape" in params:
        mr, nr = (int(x) for x in str(params["shape"]).split("x"))
    mr, nr = int(params.get("mr", mr)), int(params.get("nr", nr))
    nmr, nnr = 0, 0                     # the narrow kernels' tile (0: MR x NR)
    if "narrow_shape" in params:
        nmr, nnr = (int(x) for x in
                    str(params["narrow_shape"]).split("x"))
    nmr = int(params.get("narrow_mr", nmr))
    nnr = int(params.get("narrow_nr", nnr))
    nc = int(params.get("nc", 0)) // nr * nr
    cols_nr = (nnr or nr) if _flag(params.get("cols_narrow", False)) \
        else nr                         # Isa.cols_nr
    mc = int(params.get("mc", 0)) // mr * mr
    try:
        return dataclasses.replace(base, mr=mr, nr=nr,
                                   kc=int(params.get("kc", base.kc)),
                                   nc=nc, mc=mc,
                                   par=params.get("par", "rows"),
                                   pack_a=_flag(params.get("pack_a", True)),
                                   pack_b=_flag(params.get("pack_b", True)),
                                   prefetch=int(params.get("prefetch", 0)),
                                   par_min=int(params.get("par_min", 0)),
                                   nc_cols=int(params.get("nc_cols", 0))
                                   // cols_nr * cols_nr,
                                   cols_narrow=_flag(params.get(
                                       "cols_narrow", False)),
                                   cols_one_mk=int(params.get(
                                       "cols_one_mk", 0)),
                                   nc_cols_alt=int(params.get(
                                       "nc_cols_alt", 0))
                                   // cols_nr * cols_nr,
                                   narrow_n=int(params.get("narrow_n", 0)),
                                   narrow_kc=int(params.get("narrow_kc",
                                                            0)),
                                   narrow_mr=nmr, narrow_nr=nnr,
                                   narrow_b_m=int(params.get("narrow_b_m",
                                                             0)),
                                   narrow_b_n=int(params.get("narrow_b_n",
                                                             0)),
                                   narrow_b_par_min=int(params.get(
                                       "narrow_b_par_min", 0)),
                                   dynamic_min_n=int(params.get(
                                       "dynamic_min_n", 0)),
                                   order=params.get("order", "rows"),
                                   dynamic=_flag(params.get("dynamic",
                                                            False)))
    except ValueError as e:
        raise SchedulingError(f"sgemm: {e}") from None


def _flag(v) -> bool:
    """A yes/no parameter: a bool, or its text ('True', 'false', '1')."""
    if isinstance(v, str):
        if v.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise SchedulingError(f"sgemm: {v!r} is not a yes/no value")
        return v.lower() in ("true", "1", "yes")
    return bool(v)


def _amd(vendor: str | None, family: int | None):
    """(AMD?, full-width 512-bit FMAs?) for ``vendor`` (the CPU's
    ``vendor_id``) and ``family`` (``cpu family``): both this machine's
    when ``vendor`` is None; with ``vendor`` given and ``family`` not,
    family 0 (an AMD core of unknown family is taken for Zen 4)."""
    if vendor is None:
        family = cpu_family() if family is None else family
    amd = is_amd(vendor)
    return amd, amd and (family or 0) >= ZEN5_FAMILY


#: the first AMD family whose cores run a 512-bit FMA at full width (Zen
#: 5: two 16-lane FMAs a cycle, 257-272 GFLOP/s on one core against 130
#: with AVX2; Zen 4, family 25, runs it as two 256-bit halves, so there
#: AVX-512 and AVX2 peaks are equal)
ZEN5_FAMILY = 26


def full_width_amd(vendor: str | None = None,
                   family: int | None = None) -> bool:
    """Whether the CPU is an AMD core with full-width 512-bit FMAs
    (family ``ZEN5_FAMILY`` or later; ``_amd`` for the defaults): where
    the model takes the AVX-512 tile and blocking measured on Zen 5
    (``default_shape``, ``model_blocking``'s ``wide_nc``)."""
    return _amd(vendor, family)[1]


def default_shape(isa_name: str, vendor: str | None = None,
                  family: int | None = None) -> str:
    """The model's tile: the first of ``SHAPES`` (12x32 for AVX-512),
    except AVX-512 on an AMD core that halves 512-bit FMAs (Zen 4, family
    25, or an unknown family: ``_amd``), where it is 6x32: there one
    512-bit FMA issues a cycle, and 6x32 measured 2-4% faster than 6x64
    at 768-2048 (README, Zen 4 section); on the Intel Xeon 6x64 was
    10-20% faster than 6x32, and 12x32 1-4% faster than 6x64
    (``SHAPES``). On Zen 5 (family 26, full-width FMAs: twice Zen 4's
    FMA rate, so B's stream from L2, 64 / MR bytes per FMA, counts as on
    the Xeon) 12x32 again, with the wide NC block (``model_blocking``):
    side by side with OpenBLAS (one thread, quiet, 6-15 rounds; README
    "AMD Zen 5") 12x32 KC=128 NC=1024 against 6x32 KC=256 NC=512 was
    1.01-1.07x against 0.99-1.03x at 1024^3, 1.00-1.04 against 0.95-1.02
    at 768^3, 0.93-1.01 against 0.96-1.01 at 1536^3, 0.93-1.02 against
    0.94-1.00 at 2048^3, level at 512^3, 0-9% behind at 128x2048x512
    and 2% at 256x1024x512 (the wide NC: ``model_blocking``); 12x32 at
    the L1 rule's KC=256 NC=512 was level with 6x32, 6x64 KC=160 3-10%
    behind, 6x32 KC=128 NC=1024 as 12x32 at 1024^3-2048^3 and 1-3%
    behind it at 768^3 and 1000^3."""
    amd, full = _amd(vendor, family)
    if isa_name == "avx512" and amd and not full:
        return "6x32"
    return SHAPES[isa_name][0]


def narrow_shape(isa_name: str, vendor: str | None = None,
                 family: int | None = None) -> str:
    """The tile of the narrow kernels (A unpacked, N at most
    ``narrow_n``; ``narrow_mr`` x ``narrow_nr``): for AVX-512 6x64 where
    the FMA is full width (Intel, and AMD from ``ZEN5_FAMILY``: ``_amd``),
    else the square kernels' own (6x32 on Zen 4, 6x16 for AVX2). There
    A's rows are read in place (12 rows with 12x32, each a stream the
    prefetcher follows and a set of L1 lines) and B's KC x N block is at
    most a few panels: measured on the quiet Xeon (side by side, one
    thread, two runs) 12x32 was 3-7% slower than 6x64 at 256^3, 384^3,
    127x64x300, 1000x64x300 and 4099x64x300 (README). On Zen 5 (quiet,
    side by side, best of 7; README "Narrow kernels on Zen 5") 6x64
    against 6x32, one thread (two runs): B packed +1-6% at
    64^3-2048x128x512, B in place +1-15%; two threads (one run) +1-9% on
    the narrow products, and as the column blocks of the squares
    (``cols_narrow``, three runs) -3 to +4%."""
    amd, full = _amd(vendor, family)
    if isa_name == "avx512" and (full or not amd):
        return "6x64"
    return default_shape(isa_name, vendor, family)


def default_prefetch(isa_name: str, vendor: str | None = None,
                     family: int | None = None) -> int:
    """The model's prefetch distance (``prefetch``, k steps ahead in B's
    packed panel): 16 with the AVX-512 12x32 tile on Intel, whose B
    panels stream from L2 (16 steps of 12 cycles at two FMAs a cycle:
    about 190 cycles ahead, well past the L2's latency and within the L1
    the prefetched lines take, 16 x 128 bytes); else 0. Measured on the
    quiet Xeon (side by side, one thread): with 12x32 KC=256, prefetch
    16 against none 0-2% faster at 768-2048^3 and 128x2048x512, 8 in
    between; with 6x64 KC=160, 8 was mixed (README). On Zen 5 (12x32
    KC=128 NC=1024, side by side, quiet) 16 was 0-5% slower than none at
    1024^3-2048^3 (two rounds each; README "AMD Zen 5")."""
    amd, _ = _amd(vendor, family)
    if amd:
        return 0
    return 16 if default_shape(isa_name, vendor, family) == "12x32" else 0


#: M N K below which the app runs the one-thread kernel (``par_min``):
#: 2^23 (203^3). Measured on the quiet 2-core Xeon (README, recorded
#: machines), the threaded kernel on two threads against one: 128^3
#: (2.1 M) 68 against 117 GFLOP/s, 127x64x300 (2.4 M) 45 against 97,
#: 256^3 (16.8 M) 168 against 135, 1000x64x300 (19.2 M) 151 against 99.
#: Those figures fit a fixed cost of about 40-80 us per threaded call
#: (each k block opens a parallel region; with the runtime's threads
#: asleep between regions, as with ``KMP_BLOCKTIME=0``, each region
#: wakes them), and two threads pay once one thread's time is twice
#: that: about 100-160 us, 12-19 MFLOP at 120 GFLOP/s, M N K = 6-10 M.
#: OpenBLAS, whose threads spin between calls, forks above 64^3 per
#: thread.
PAR_MIN = 1 << 23

#: the model's rule where the machine's parallel region is measured
#: (``apps/common/fork_cost``; ``PAR_MIN`` and ``NARROW_B_PAR_MIN`` are
#: only the fallback without OpenMP): two threads from the product whose
#: one-thread time is ``PAR_REGIONS`` regions (``par_min_model``). A
#: threaded call of the packing kernels pays a region, a barrier after
#: B's packing, B's packed rows read from the other core's cache and the
#: last row block's imbalance; the in-place narrow kernels only the
#: region (``NARROW_B_PAR_REGIONS``). Measured on the quiet 2-core Zen 5
#: (region 0.63-0.67 us; 2 threads, wall clock, best of 5, side by
#: side): the packing kernels threaded against one thread 126 against
#: 123 GFLOP/s at 64^3 (0.26 M), 200 against 172 at 80^3 (0.51 M), 160
#: against 149 at 96x64x64 (0.39 M), 307 against 176 at 128^3; the
#: in-place ones 104 against 100 at 48^3 (0.11 M), 172 against 168 at
#: 64^3. So about 8 and 4 regions: at 0.7 of a 261 GFLOP/s peak, M N K
#: 0.48 M and 0.24 M there (where 2^23 had kept 128^3 on one thread:
#: 0.67x OpenBLAS, which forks). The Xeon's 2^23 fits a region of about
#: 20 us by the same rule. The in-place ones then 6, not 4 (session 12,
#: same machine, three rounds side by side, 2 threads set): the two
#: threads' gain near the crossover depends on how fast the second vCPU
#: answers, which changed from round to round (the threaded kernel
#: against the one-thread one at 64^3: 0.68, 0.70, 1.05; at 72^3: 0.90,
#: 0.91, 1.34; 80^3: 0.86, 0.82, 1.39; 96^3: 1.05-1.61), and the first
#: two-thread shape of recorded runs, 64^3, fell to 0.83x OpenBLAS in one
#: of them. At 6 regions (M N K 0.33 M here) 64^3 keeps one thread
#: (1.15-1.2x OpenBLAS on two in every round), 72^3 and above fork.
PAR_REGIONS = 8
NARROW_B_PAR_REGIONS = 6

#: the one-thread rate of a small product, as a fraction of the FMA peak
#: (Zen 5, 96^3-192^3: 0.75-0.9)
SMALL_RATE = 0.7


def par_min_model(fork_us: float, peak_gflops: float,
                  regions: int = PAR_REGIONS) -> int:
    """M N K from which two threads pay: the product whose 2 M N K FLOPs
    take ``regions`` parallel regions of ``fork_us`` us on one thread at
    ``SMALL_RATE`` of the FMA peak (``peak_gflops``; us x GFLOP/s = 1000
    FLOP). ``fork_us`` 0.65 and 261 GFLOP/s: 475 000 (78^3).

    >>> par_min_model(0.65, 261.0)
    475020
    """
    return int(regions * fork_us * SMALL_RATE * peak_gflops * 1000 / 2)


def thread_minimums(isa_name: str, threads: int = None):
    """(``par_min``, ``narrow_b_par_min``, note) for this machine: from its
    measured parallel region and FMA peak (``par_min_model``; measured
    once per machine and stored, ``apps/common/fork_cost``), else the
    constants (no OpenMP, one thread)."""
    from apps.common.fork_cost import fma_peak_gflops, fork_cost_us
    us = fork_cost_us(threads)
    peak = fma_peak_gflops(isa_name) if us is not None else None
    if us is None or peak is None:
        return PAR_MIN, NARROW_B_PAR_MIN, "fixed thread minimums"
    return (par_min_model(us, peak), par_min_model(
        us, peak, NARROW_B_PAR_REGIONS),
        f"thread minimums from a parallel region of {us:.2f} us")

#: the column block of the kernel with the threads on column blocks
#: (``nc_cols``, ``schedule.by_columns``), for wide products: 256
#: columns (rounded down to a multiple of NR): B's kc x 256 block is
#: 160 KiB at KC = 160, a fraction of the L2 each thread packs and reads
#: alone, and N = 1024 or 2048 share out evenly between 2 or 4 threads
NC_COLS = 256


#: the second column block of the column-split kernel
#: (``nc_cols_alt``: 3 panels of the narrow tile, 192 columns with 6x64)
#: for the products whose N does not share out in blocks of ``NC_COLS``
#: between the threads (``api.even``) but does in these: N = 384, 768,
#: 1152 on two threads. Measured on the quiet Zen 5 (2 threads, wall
#: clock, best of 7, side by side with the row split; README "Two
#: threads: a second column block"): 384^3 1.00-1.01x OpenBLAS against
#: 0.975-0.98 (and 0.96 for the static row split the app ran), 768^3
#: 1.03 against 1.00-1.02, 1152^3 1.01 against 0.97. AVX-512 with the
#: narrow column blocks only (as ``cols_one_mk``; 0 elsewhere)
NC_COLS_ALT_PANELS = 3


#: products of at most this many column panels (N <= 2 NR: 128 for the
#: 6x64 tile) run the kernels with A unpacked (``narrow_n``,
#: ``schedule.narrow``) on any machine: a packed micro-panel of A is read
#: by one or two panels there, so packing it costs as much as it saves.
#: Measured on the 2-core Xeon (loaded, one thread, side by side, two
#: rounds, both kernels at KC = 160): 8-18% faster at N = 64, 3-10% at
#: N = 128, the same at N = 256 (README). ``narrow_n`` goes further
#: where the L2 holds more (``narrow_n``)
NARROW_PANELS = 2


def narrow_kc(mr: int, kc: int, caches: dict = None) -> int:
    """The k block of the narrow kernels (``narrow_kc``,
    ``schedule.narrow``): the larger of the model's KC (``kc``) and
    ``schedule.k_block``'s, MR rows of A in a quarter of the L1 (512 for
    6 rows and a 48 KiB L1; ``caches``: {level: bytes}, default this
    machine's). In those kernels A is not packed and N is at most
    ``narrow_n``: what a row block keeps in L1 across its one or two
    column panels is its MR x KC piece of A, while the KC x N block of B
    (256 KiB at KC = 512, N = 128) is read by every row block from L2
    whatever KC; the BLIS rule's KC (160 for 6 x 64) also holds a KC x
    NR micro-panel of B in L1, which this loop order does not reuse from
    there. Each k block is one more pass over C (its tiles loaded and
    stored again, and a short K % KC block: K = 512 is 160 + 160 + 160 +
    32 at KC = 160). Measured on the 2-core Xeon (loaded, one thread,
    side by side with OpenBLAS and MKL, three runs): KC = 512 against
    160, 2048x128x512 0.98-1.03x OpenBLAS and 0.87-0.91x MKL to
    1.11-1.16x and 0.98-1.02x; 4099x64x300 1.07-1.13x to 1.08-1.20x
    (0.92-0.95x MKL to 0.96-1.00x); 1000x64x300, 127x64x300 and 128^3
    level."""
    return max(kc, k_block(mr, caches))


def narrow_n(nr: int, kc: int, caches: dict = None) -> int:
    """N at or below which the app runs the narrow kernels (A unpacked,
    KC = ``narrow_kc``, no NC blocks; ``api.Dispatch``): the N whose kc x
    N block of B fits in half the L2, where the model puts the square
    kernels' block (``nc_l2``), so that at the larger KC no NC block is
    needed (512 for KC = 512 and a 2 MiB L2), rounded down to a multiple
    of NR, and at least ``NARROW_PANELS`` panels (all of them when the
    machine reports no L2). ``kc``: the narrow kernels' KC; ``caches``:
    {level: bytes}, default this machine's. Measured on the 2-core Xeon
    (loaded, one thread, side by side with OpenBLAS and MKL, two runs
    each; README): against the square kernel (KC = 160, A packed) the
    narrow one was 3-19% faster at N = 256 (1024x256x512, 2048x256x512,
    4099x256x300, 256^3), level or ahead at N = 384 and 512 except
    1024x512x512 once (8% behind, 4% ahead in the other run), 10-15%
    ahead at 4099x512x300; for AVX2 (6x16, KC = 512 in both) 2-8% ahead
    at N = 64-256. On two threads (fastest single calls, loaded) 7-30%
    ahead at 256^3 and 384^3, level at 1024x256x512, 3% behind at 512^3
    in both runs: the N = 512 end of the rule is its least supported."""
    caches = cache_sizes() if caches is None else caches
    fit = caches.get(2, 0) // 2 // (kc * 4) // nr * nr
    return max(NARROW_PANELS * nr, fit)


#: M at or below which the narrow kernels read B in place instead of
#: packing it (``narrow_b_m``, ``schedule.narrow(pack_b=False)``): B's
#: copy (K x N floats, a barrier after it on threads, and half of the
#: packed rows then read from the other core's cache) is shared by M / MR
#: row blocks, too few to pay for it in a short product. Measured on the
#: 2-core Xeon (loaded, one thread, CPU clock, side by side, 5 rounds,
#: medians): B in place 11% faster at 127x64x300, 7-8% at 128^3, 0-3%
#: at 1000x64x300, 1-7% slower at 4099x64x300 and 2048x128x512 (numpy's
#: B is not cache-line aligned, the packed panels are). Only up to
#: ``NARROW_PANELS`` column panels (``narrow_b_n``: N <= 128 for 6x64):
#: wider, the evidence is mixed (loaded, wall, medians of 4 rounds of the
#: best of 20 short samples, the one-thread kernels): 256^3 9-10% slower
#: in both runs, 384^3 and 512^3 4-13% slower in one, 6-9% faster in the
#: other; on two threads 5% slower at 256^3. So the rule stays where it
#: was measured ahead
NARROW_B_M = 512

#: M N K below which those in-place narrow kernels run on one thread
#: (``narrow_b_par_min``; the other kernels: ``PAR_MIN``): a threaded
#: call of theirs is one parallel region with no barrier inside (no
#: packing loop before the row blocks), so threads pay from smaller
#: products. Measured on the 2-core Xeon (loaded, 2 threads, wall clock,
#: side by side, medians of 5 rounds of the best of 20 short samples, so
#: the quiet moments): threaded against one thread 179 against 145
#: GFLOP/s at 127x64x300 (2.4 M), 186 against 157 at 128^3 (2.1 M), 220
#: against 164 at 300x64x300 (5.8 M), 188 against 147 at 128x64x128
#: (1.05 M), where the B-packing threaded kernel ran at 119, 126, 117 and
#: 82; but 61 against 135 at 64x64x128 (0.5 M). Doubtful: timed as
#: bench.py times (best of 5 samples of 20 ms, load average 3), the
#: threaded one was behind, 82 against 108 at 127x64x300, 56 against
#: 107 at 128x64x128, 60 against 94 at 128^3 (a 20 ms sample of two
#: threads rarely misses another job's time slice); a quiet run decides
#: (``narrow_b_par_min=0`` is ``par_min`` again)
NARROW_B_PAR_MIN = 1 << 20


def cols_one_mk(cols_narrow: bool, caches: dict = None) -> int:
    """The largest A (M K elements) for which the app runs the column-block
    kernel on one thread too (``cols_one_mk``, ``api.Dispatch``, when N
    makes whole enough blocks: ``api.whole_blocks``): A in a
    third of the L3 (2.8 M elements for a 32 MiB L3), where its rows,
    read again for each column block of ``NC_COLS``, stay in the L3
    beside B and C; 0 (never) when the column blocks are not narrow
    kernels (``cols_narrow``) or the machine reports no L3. The column
    blocks run the narrow kernel: A unpacked with its larger KC, a KC x
    256 block of B packed per block, against the square kernel's A
    micro-panels packed per k block. Measured on the quiet Zen 5 (one
    thread, CPU clock, best of 7, side by side, two runs; README "One
    thread on column blocks"): the column blocks +5% at 128x2048x512
    and 256x1024x512, +8% at 128x1024x1024, +1-5% at 384^3-1024^3,
    1000^3, 768x1024x512, 2048x1024x512 and 1024x512x1024 (A 0.6-4
    MiB); +1-4% at 1536^3 (9 MiB, three runs) and -1 to -2% at 2048^3
    and 2048x512x2048 (16 MiB: A partly from memory). AVX-512 only (the
    model passes ``cols_narrow`` False for AVX2): the AVX2 kernels (6x16,
    the square one already at NC = 256, KC = 512) on the same machine
    gained 1-3% with whole blocks (512^3-1536^3, 128x2048x512) and lost
    3-7% with a tail (384^3, 640^3, 1000^3), two runs."""
    caches = cache_sizes() if caches is None else caches
    if not cols_narrow or not caches.get(3):
        return 0
    return caches[3] // 3 // 4


def dynamic_model(threads: int = None) -> bool:
    """Whether the threads take the row blocks one at a time
    (``dynamic``): on a machine of more than one core. A row block is
    MR x N x KC multiply-adds, 0.5 MFLOP at 6x256x160: the one atomic
    increment per block (about 0.1 us contended) is well under 1% of it,
    and a thread another process slows no longer holds the other at the
    end of each k block's region. Measured on the 2-core Xeon (loaded, 2
    threads, side by side, static and dynamic alternating; README, "Two
    threads: par_dynamic row blocks"): dynamic ahead at 1024^3 in every
    run, at 2048^3 ahead or level in three of four (static once at
    0.69x OpenBLAS, dynamic 1.16x), but behind at 256^3 in three
    samples of five (by 0.06-0.19x OpenBLAS). Where the row blocks are
    too small for a claim each (N below ``dynamic_min_n``, and the narrow
    kernels) the app runs static row blocks."""
    import os
    return (threads or os.cpu_count() or 1) > 1


#: multiply-adds of a row block (MR x N x KC) from which the threads
#: claim row blocks one at a time (``dynamic``): 2^20, about 32 K cycles
#: at the 32 multiply-adds per cycle of two 16-lane FMA ports, so a claim
#: (the shared counter's cache line moved between the cores, some
#: hundreds of cycles) is at most 1-2% of a block; for narrower vectors
#: proportionally fewer (``dynamic_min_n``'s ``lanes``: the same time)
DYNAMIC_BLOCK = 1 << 20


def dynamic_min_n(mr: int, kc: int, lanes: int = 16) -> int:
    """N below which the row-split kernel's row blocks are static
    (``dynamic_min_n``): a row block of MR x N x KC multiply-adds under
    ``DYNAMIC_BLOCK`` x ``lanes`` / 16, the same time whatever the vector
    width (1093 for 6 x 64 at KC = 160; AVX2's 6 x 16 at KC = 128: 683).
    Measured on the
    2-core Xeon (loaded, 2 threads, fastest of 200 single calls each,
    interleaved, two or three rounds; README): static ahead of dynamic
    by 10-15% at 256^3, 7% at 512^3, 4-5% at 768^3, 10-20% at
    1024x256x512 and 30-40% on the narrow kernels, so a claim and the loss of
    consecutive rows per thread cost more than the counter's balance
    gains there; at 1536^3 and above the dynamic kernel stays. AVX2
    (8 lanes: half the multiply-adds per cycle), quiet Zen 5, 2 threads,
    side by side, three rounds: dynamic ahead of static by 1.5-3.3% at
    768^3, 0.8-3% at 896^3, level at 1152^3 and 384^3; with the 16-lane
    count AVX2 ran all of them static (N < 1366).

    >>> dynamic_min_n(6, 128, lanes=8), dynamic_min_n(12, 128)
    (683, 683)
    """
    return -(-DYNAMIC_BLOCK * lanes // 16 // (mr * kc))


def even_kc(kc: int) -> int:
    """KC of the L1 rule (``blis_blocking``), rounded down to a multiple
    of 64 when that gives up at most an eighth of it: the K of most
    products (powers of two, multiples of 64) then splits into whole k
    blocks. With KC = 288, K = 2048 ends in a 32-deep block, whose pass
    loads and stores every C tile around 32 k steps, and N = 2048 in a
    256-column NC block (NC from the L2 follows KC: 448). Measured on
    the 2-core AMD Zen 5 (1 MiB L2; side by side with OpenBLAS, one
    thread, two quiet runs, README "AMD Zen 5"): KC = 256, NC = 512
    against 288 / 448, 512^3-2048^3 0.94-0.98x -> 0.97-1.01x, 1000^3
    level, 128x2048x512 2% behind. Unchanged where the rule already gives
    a multiple of 64 (the Xeon's 12x32: 256; AVX2 6x16 on a 48 KiB L1:
    512) or where 64 is more than an eighth away (Zen 4's 32 KiB L1,
    6x32: 160, where 128 measured 12% slower)."""
    k64 = kc // 64 * 64
    return k64 if k64 and 8 * k64 >= 7 * kc else kc


#: the NC block the model asks for on Zen 5 (``model_blocking``'s
#: ``wide_nc``)
WIDE_NC = 1024


def model_blocking(mr: int, nr: int, caches: dict = None,
                   wide_nc: int = 0):
    """``blis_blocking`` with KC from ``even_kc`` (MC and NC follow it).
    ``wide_nc`` (``WIDE_NC`` on Zen 5, ``full_width_amd``; else 0): KC
    at most what lets a ``kc x wide_nc`` block of B fill half the L2
    (``nc_l2``), a multiple of 64, so the block is wide rather than deep:
    on a 1 MiB L2, KC = 128 and NC = 1024 instead of 256 and 512. Then
    N up to 1024 is one NC block (A packed and each row block's C strip
    swept once per k block instead of twice), and larger N half as many.
    Measured on Zen 5 (quiet, one thread, side by side; README "AMD Zen
    5"; medians of 6-15 rounds against 6x32 KC=256 NC=512): +2-3% at
    768^3, 1000^3 and 1024^3 (two NC blocks to one; 1024^3 ahead in 13
    of 15 rounds, never behind), +1-1.5% at 1536^3 and 2048^3 (behind in
    a fifth of the rounds), +1% at 512^3 (one block either way); but -5%
    at 128x2048x512 and -2.4% at 256x1024x512, where KC=128 with NC=512
    is as fast as the old point and KC=96 NC=1024 is not: a guess, with
    M = 128 the M x NC block of C no longer stays in the L2 beside B's
    between k blocks (a per-product NC would need another kernel in
    ``api.Dispatch``).
    With B's panels padded (``schedule.PANEL_PAD_ROWS``) the two K = 512
    shapes' loss is gone (side by side, one thread: 12x32 KC=128 NC=1024
    level with or ahead of KC=256 NC=512 everywhere). The AVX2 6x16 tile
    gained 1-3% from it too in ``schedule`` (KC = 128, NC = 1024 against
    the L1's 512 and 256), but GCC 12 with ``-march=native`` on Zen 5
    (znver3 tuning with AVX-512) kept one B register on the stack in its
    static-row kernel, which the app runs for N < ``dynamic_min_n``
    (1366 at KC = 128): 384^3-768^3 at 61% of the AVX2 peak instead of
    95% (README "Padded panels of B"). Built with ``-fira-region=one``
    (``apps/common/kernel_flags``) none spills, and both ISAs take it.
    Not on Zen 4 (32 KiB L1: KC = 160 from the L1, and 128 measured 12%
    slower there); on the Xeon (2 MiB L2) it would give its KC = 256,
    NC = 1024 anyway. ``caches``: {level: CacheLevel}, default this
    machine's."""
    b = blis_blocking(mr, nr, caches=caches)
    kc = even_kc(b.kc)
    if wide_nc:
        l2 = (cache_levels() if caches is None else caches).get(2)
        cap = l2.size // 2 // (wide_nc * 4) // 64 * 64 if l2 else 0
        kc = min(kc, cap) if cap else kc
    return b if kc == b.kc else blis_blocking(mr, nr, caches=caches,
                                              kc_range=(kc, kc))


def model_params(isa_name: str, minimums: tuple = None) -> dict:
    """The BLIS model's parameters for the default tile
    (``default_shape``): KC from the L1 (``even_kc``), NC from the L2
    (``nc_l2``: this schedule's 'rows' loop order streams the packed block
    of B once per MR rows), no MC blocks (MC here only splits the calls, each packing B
    again), A packed. The 'rows' order, not 'goto' (GotoBLAS/BLIS's, with
    the model's MC as its A block): on the 2-core Xeon (loaded, six
    side-by-side runs) the goto points were level or 5-30% slower, at
    1024^3 and 1536^3 in every run; ahead only at 2048^3 in two runs
    (README, "The GotoBLAS/BLIS order"). And how the app uses the
    threads: one thread below M N K = ``par_min`` (``thread_minimums``:
    from the machine's measured parallel region), the column blocks of
    ``NC_COLS`` on the threads for wide products, the kernels with A
    unpacked for N at most ``narrow_n`` (``api.Dispatch``), with their
    own KC (``narrow_kc``). The row blocks ``par_dynamic`` on a machine of
    more than one core (``dynamic_model``). On Zen 5 (``full_width_amd``)
    AVX-512 takes 12x32 with a wide NC block (KC = 128, NC = 1024 on its
    1 MiB L2: ``model_blocking``'s ``wide_nc``), measured there.
    ``minimums``: ``thread_minimums(isa_name)`` when the caller has it."""
    shape = default_shape(isa_name)
    mr, nr = (int(x) for x in shape.split("x"))
    small = narrow_shape(isa_name)
    nmr, nnr = (int(x) for x in small.split("x"))
    wide = full_width_amd()            # both ISAs (``model_blocking``)
    b = model_blocking(mr, nr, wide_nc=WIDE_NC if wide else 0)
    nc_cols = max(nr, NC_COLS // nr * nr)
    n_narrow = narrow_n(nnr, narrow_kc(nmr, b.kc))
    par_min, narrow_b_par_min, _ = (thread_minimums(isa_name)
                                    if minimums is None else minimums)
    cols_narrow = nc_cols <= n_narrow
    # the column rules measured on AVX-512 only (cols_one_mk,
    # NC_COLS_ALT_PANELS): AVX2 keeps the square kernels there
    wide_cols = cols_narrow and isa_name == "avx512"
    return {"shape": shape, "kc": b.kc, "nc": b.nc_l2, "mc": 0,
            "pack_a": True, "prefetch": default_prefetch(isa_name),
            "dynamic": dynamic_model(),
            "par_min": par_min,
            "nc_cols": nc_cols,
            "cols_narrow": cols_narrow,
            "cols_one_mk": cols_one_mk(wide_cols),
            "nc_cols_alt": NC_COLS_ALT_PANELS * nnr if wide_cols else 0,
            "narrow_shape": small,
            "narrow_n": n_narrow,
            "narrow_kc": narrow_kc(nmr, b.kc),
            "narrow_b_m": NARROW_B_M,
            "narrow_b_n": NARROW_PANELS * nnr,
            "narrow_b_par_min": narrow_b_par_min,
            "dynamic_min_n": dynamic_min_n(mr, b.kc,
                                           ISAS[isa_name].lanes)}


#: where ``configured`` takes the parameters from
SOURCES = ("auto", "model", "fixed")


def configured(isa_name: str, source: str = "auto"):
    """(Isa, note): the description the app runs. ``source``: 'auto' (this
    machine's tuning record, else the model), 'model' (the BLIS model
    only) or 'fixed' (the base description: KC from the L1 rule, no NC or
    MC blocking)."""
    if source not in SOURCES:        # (a typo in EXO_HL_SGEMM_PARAMS ran
        raise ValueError(             # the model, saying "model requested")
            f"params source {source!r}: one of {', '.join(SOURCES)}")
    if source == "fixed":
        isa = ISAS[isa_name]
        return isa, (f"fixed schedule ({isa.blocking_label} from the L1 "
                     f"rule k_block, no NC or MC blocking)")
    found = TuningDB().lookup(key(isa_name)) if source == "auto" else None
    minimums = thread_minimums(isa_name)        # measured once per call
    model = model_params(isa_name, minimums)
    if found is not None and found.record is not None:
        try:
            unknown = sorted(set(found.record["params"]) - PARAMS)
            if unknown:   # (renamed since: variant would drop them)
                raise ValueError(f"parameters this schedule does not "
                                 f"know: {', '.join(unknown)}")
            isa = variant(isa_name, dict(
                {k: model[k] for k in THREAD_PARAMS},
                **found.record["params"]))
            return isa, (f"{isa.label} {isa.blocking_label}: "
                         f"{found.note}; {minimums[2]}")
        except (SchedulingError, KeyError, TypeError, ValueError) as e:
            why = f"tuned record unusable ({e})"
        else:                             # pragma: no cover
            why = ""
    else:
        why = found.note if found is not None else "model requested"
    isa = variant(isa_name, model)
    return isa, (f"{isa.label} {isa.blocking_label} from the BLIS model "
                 f"of this machine's caches ({why}); {minimums[2]}")


#: every parameter ``variant`` reads: a tuning record naming another
#: (a parameter renamed without a new ``SCHEDULE_VERSION``) is not used,
#: since ``variant`` would run its default in its place
PARAMS = frozenset({
    "isa", "shape", "mr", "nr", "narrow_shape", "narrow_mr", "narrow_nr",
    "kc", "nc", "mc", "par", "pack_a", "pack_b", "prefetch", "order",
    "dynamic", "par_min", "nc_cols", "cols_narrow", "cols_one_mk",
    "nc_cols_alt", "narrow_n", "narrow_kc", "narrow_b_m", "narrow_b_n",
    "narrow_b_par_min", "dynamic_min_n"})


#: the app's choice of kernel per product (``api.Dispatch``), not the
#: schedule's: the search times the threaded kernel on large squares,
#: where it does not matter, so a record takes them from the model
THREAD_PARAMS = ("par_min", "nc_cols", "nc_cols_alt", "cols_narrow",
                 "cols_one_mk",
                 "narrow_shape",
                 "narrow_n", "narrow_kc", "narrow_b_m", "narrow_b_n",
                 "narrow_b_par_min", "dynamic_min_n")


def valid(params: dict):
    """None when ``variant`` can describe ``params``, else why not (e.g.
    ``order='goto'`` with MC = 0 or A unpacked): the search skips such a
    point before building it, so it takes no worker (``tune(valid=)``);
    28 of 76 candidates of a quiet search were such points."""
    try:
        variant(params["isa"], params)
    except SchedulingError as e:
        return str(e)
    return None


def template(params: dict):
    """The scheduled SGEMM for ``params`` (``params['isa']`` names the
    instruction set)."""
    return schedule(variant(params["isa"], params))


class Bench:
    """GFLOP/s of a compiled candidate: the geometric mean over
    ``shapes`` of the best of ``reps`` samples, on ``threads`` threads,
    after a check against numpy on an odd shape (a wrong result raises:
    the candidate is recorded as crashed, which a checked schedule never
    should be). A picklable callable, as ``tune`` needs.

    ``clock``: 'cpu' (default; the process's CPU time divided by the
    threads: on a machine shared with other jobs it leaves out the time
    slices they take, which wall time charges to whichever candidate was
    unlucky; measured on the loaded development VM, wall-clock values
    were a sixth of the CPU-time ones) or 'wall'.

    ``baseline='openblas'``: each sample of the candidate alternates with
    one of numpy's OpenBLAS on the same arrays and thread count
    (``best_times``), and the value is the geometric mean of the ratios
    (units ``x OpenBLAS``), not GFLOP/s. Candidates are timed minutes
    apart; on the loaded development VM, GFLOP/s of one kernel moved by
    30% between such times, more than the differences between candidates:
    a 10-minute search there picked 4x64 KC=96 (132.6 GFLOP/s against
    the model's 118.3), which side by side was 0.85-0.92x OpenBLAS where
    the model's point was 0.97-1.04x. A ratio taken in one sample cancels
    most of that (``tune_spec`` asks for it when numpy has OpenBLAS).

    What it does not cancel: one value still moves by 3-5% from call to
    call (light load) and by 10% or more under heavy load, mostly at
    2048^3 (the model's point, four calls in one process at load 8 on
    the 2 cores: 0.72-1.03x there, 0.95-1.09x at 512^3); six samples
    instead of three did not narrow it, and the first call in a fresh
    process was not slower than the second (0.98/0.96, 1.06/0.99,
    0.87/0.93, 0.98/0.96). The best of dozens of such values is mostly
    luck, which is why ``tune`` re-times its finalists against the
    model's point (its confirmation rounds)."""

    def __init__(self, shapes=((512,) * 3, (1024,) * 3, (2048,) * 3),
                 threads=1, reps=3, clock="cpu", baseline=None):
        if baseline not in (None, "openblas"):
            raise ValueError(f"Bench: baseline is None or 'openblas', not "
                             f"{baseline!r}")
        self.shapes = tuple(tuple(s) for s in shapes)
        self.threads = threads
        self.reps = reps
        self.clock = clock
        self.baseline = baseline

    def __call__(self, compiled, params):
        """GFLOP/s; the OpenMP thread count set for the timing is put
        back to the caller's afterwards."""
        from apps.common.blas_env import openmp_threads, set_openmp_threads
        before = openmp_threads()
        set_openmp_threads(self.threads)
        try:
            return self._measure(compiled)
        finally:                  # the caller's thread count again
            if before is not None:
                set_openmp_threads(before)

    def _measure(self, compiled):
        import numpy as np

        from apps.common.timing import best_times
        from apps.sgemm.api import RawKernel, aligned_zeros
        kernel = RawKernel(compiled)
        rng = np.random.default_rng(0)
        m, n, k = 37, 75, 301
        A = rng.integers(-2, 3, (m, k)).astype(np.float32)
        B = rng.integers(-2, 3, (k, n)).astype(np.float32)
        C = np.ones((m, n), np.float32)
        kernel(m, n, k, A, B, C)
        if not np.array_equal(C, 1 + A @ B):
            raise AssertionError("the kernel's result differs from numpy's")
        blas = None
        if self.baseline == "openblas":
            from apps.common.blas_env import OpenBlas
            blas = OpenBlas.load()
            if blas is None:          # never mix ratios with GFLOP/s
                raise RuntimeError("Bench: numpy's OpenBLAS is not there")
            blas.set_threads(self.threads)
        logs = []
        for m, n, k in self.shapes:
            A = rng.standard_normal((m, k), dtype=np.float32)
            B = rng.standard_normal((k, n), dtype=np.float32)
            C = aligned_zeros((m, n))
            fns = [kernel.bound(m, n, k, A, B, C)]
            if blas is not None:
                fns.append(blas.bound_sgemm(A, B, aligned_zeros((m, n))))
            times = best_times(fns, self.reps, self.clock, self.threads,
                               min_time=0.05)
            logs.append(math.log(times[1] / times[0]) if blas is not None
                        else math.log(2.0 * m * n * k / times[0] / 1e9))
        return math.exp(sum(logs) / len(logs))

    @property
    def units(self) -> str:
        """What the values are: ``x OpenBLAS`` or ``GFLOP/s``."""
        return "x OpenBLAS" if self.baseline == "openblas" else "GFLOP/s"


#: the searched parameters ``model_params`` does not set: what the
#: app runs without a record (``variant``'s defaults: B packed, no
#: prefetch, the 'rows' order)
MODEL_FIXED = {"pack_b": True, "prefetch": 0, "order": "rows"}


def tune_spec(options: dict) -> dict:
    """What ``exo-hl tune sgemm`` searches. Options (``--isa``,
    ``--threads``, ``--option shapes=512,1024,2048``, ``--option
    reps=3``): the instruction set (``auto``: the best this CPU has), the
    thread count, the square sizes timed, ``clock=cpu|wall`` (default:
    CPU time on one thread, wall time on more, where idle or spinning
    threads would make CPU time mean little), ``baseline=openblas|none``
    (default: ``openblas`` when numpy has it: values are ratios to it,
    timed side by side, ``Bench``). The model's point and the same
    with A unpacked are tried first, then 4 random points before TPE's
    model of the measurements takes over (``n_startup``: a candidate
    takes 15-30 s to build on the quiet 2-core Xeon, 60-170 s loaded, so
    a 10-minute search sees 10-40 of them; with optuna's default of 10
    random points the search ran out of time before TPE proposed one)."""
    from apps.sgemm.api import choose_isa
    isa, emulated, note = choose_isa(options.get("isa", "auto"))
    if isa is None:
        raise ValueError(note)
    if emulated:
        raise ValueError(f"{isa.name} is emulated on this CPU: timings "
                         f"would mean nothing")
    threads = int(options.get("threads", 1))
    sizes = [int(x) for x in str(options.get("shapes", "512,1024,2048"))
             .split(",")]
    # every parameter named: one left out would be drawn at random by
    # the search (the "model's point" of one search had pack_b=False, and
    # measured 0.74x OpenBLAS where the model's point ran at 1.0x)
    start = dict(MODEL_FIXED, **{k: v for k, v in
                                 model_params(isa.name).items()
                                 if k not in THREAD_PARAMS})
    start["isa"] = isa.name
    baseline = options.get("baseline", "openblas")
    if baseline not in ("openblas", "none"):
        raise ValueError(f"baseline is openblas or none, not {baseline!r}")
    if baseline == "openblas":
        from apps.common.blas_env import OpenBlas
        baseline = "openblas" if OpenBlas.load() is not None else "none"
    bench = Bench([(n, n, n) for n in sizes], threads,
                  int(options.get("reps", 3)),
                  options.get("clock", "cpu" if threads == 1 else "wall"),
                  None if baseline == "none" else baseline)
    from apps.common.kernel_flags import kernel_compile_opts
    return {"template": template, "space": space(isa.name, threads),
            "bench": bench, "key": key(isa.name), "units": bench.units,
            # the candidates built as the app builds its kernels (GCC's
            # whole-function register allocation for AVX2): without it
            # the search timed kernels that spilled where the app's do not
            "compile_opts": kernel_compile_opts(isa.name),
            "valid": valid,
            "initial": [start, dict(start, pack_a=False)],
            "n_startup": 4,
            "about": (f"SGEMM, {isa.title} ({note}), {threads} thread(s), "
                      f"{bench.units} (geometric mean over "
                      f"{', '.join(f'{n}^3' for n in sizes)})"),
            # the workers that time the candidates load OpenBLAS afresh:
            # with OPENBLAS_CORETYPE=Haswell (some shells export it) every
            # ratio was to its AVX2 kernels (1.9x on an AVX-512 machine)
            "unset_env": OVERRIDES if baseline == "openblas" else ()}
