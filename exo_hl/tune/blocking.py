"""Cache blocking from an analytical model of the caches, after BLIS.

Low, Igual, Smith and Quintana-Ortí ("Analytical Modeling Is Enough for
High-Performance BLIS", ACM TOMS 43(2), 2016) derive the blocking of a
GotoBLAS-style matrix product from the caches alone, with no search:

* **KC** (L1): the micro-kernel multiplies an ``mr x kc`` micro-panel of A
  by a ``kc x nr`` micro-panel of B. One of them stays in L1 while
  micro-panels of the other stream through it (in BLIS's loop order the B
  micro-panel stays and A's stream; in a row-panel-first order it is the
  other way round: the constraint is the same). With an LRU cache of
  ``W`` ways, the resident panel survives when both panels together take
  at most ``W - 1`` ways (a way is left to the streaming data of C):
  ``ceil(mr kc S / way) + ceil(nr kc S / way) <= W - 1``. The paper
  writes the same constraint in closed form with the ways split in
  proportion ``mr : nr`` (``C_Ar = floor((W - 1) / (1 + nr / mr))``); the
  largest ``kc`` that satisfies it exactly is taken here, rounded down to
  a multiple of ``k_multiple``. Unknown associativity: both panels in
  half the L1.
* **MC** (L2): the packed ``mc x kc`` block of A stays in L2 while the
  ``kc x nr`` micro-panels of B stream through it: at most ``W2 - 1`` ways
  minus those of one B micro-panel, and at most half of the L2 (the half
  leaves room for C's tiles and the next panels; the paper's bound alone
  fills the cache, which a non-inclusive L2 and hardware prefetching do
  not honour), a multiple of ``mr``.
* **NC** (L3): the packed ``kc x nc`` block of B stays in this core's
  share of the L3 (the L3 divided by the CPUs sharing it), half of it, a
  multiple of ``nr``.

Kernels whose loop order streams the whole packed block of B once per
``mr`` rows (the order exo_hl's SGEMM used first) need that block in L2
instead: ``nc_l2`` is NC from half the L2.

>>> from exo_hl.tune import CacheLevel, blis_blocking
>>> caches = {1: CacheLevel(1, 32 << 10, ways=8, line=64),
...           2: CacheLevel(2, 1 << 20, ways=16, line=64),
...           3: CacheLevel(3, 32 << 20, ways=16, line=64, shared_by=8)}
>>> b = blis_blocking(6, 8, elem_bytes=8, caches=caches)  # Haswell DGEMM
>>> b.kc   # BLIS's Haswell kc for its 6x8 DGEMM kernel
256
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .machine import CacheLevel, cache_levels

#: assumed when the machine reports no cache of a level
DEFAULT_CACHES = {1: CacheLevel(1, 32 << 10, ways=8, line=64),
                  2: CacheLevel(2, 1 << 20, ways=16, line=64),
                  3: CacheLevel(3, 8 << 20, ways=16, line=64)}


@dataclass(frozen=True)
class Blocking:
    """Block sizes for an ``mr x nr`` micro-kernel, and how each was
    derived (``notes``, one line each).

    >>> Blocking(6, 32, kc=256, mc=960, nc=4096, nc_l2=1024).kc
    256
    """

    mr: int
    nr: int
    kc: int
    mc: int
    nc: int
    nc_l2: int
    notes: tuple = field(default=(), compare=False)


def _ceil_div(a, b):
    return -(-a // b)


def _round_down(x, m):
    return max(m, x // m * m)


def _kc(mr, nr, s, l1, k_multiple, notes):
    if l1.ways >= 2:
        way = l1.way_bytes
        best = 0
        kc = k_multiple
        while kc <= 4096:
            if (_ceil_div(mr * kc * s, way) + _ceil_div(nr * kc * s, way)
                    <= l1.ways - 1):
                best = kc
            kc += k_multiple
        if best:
            notes.append(f"KC={best}: A's {mr}x{best} micro-panel and B's "
                         f"{best}x{nr} one in {l1.ways - 1} of the "
                         f"{l1.ways} ways of the {l1.size >> 10} KiB L1")
            return best
    kc = _round_down(l1.size // 2 // ((mr + nr) * s), k_multiple)
    notes.append(f"KC={kc}: A's {mr}x{kc} micro-panel and B's {kc}x{nr} "
                 f"one in half the {l1.size >> 10} KiB L1")
    return kc


def blis_blocking(mr: int, nr: int, elem_bytes: int = 4,
                  caches: dict | None = None, k_multiple: int = 16,
                  kc_range: tuple = (64, 1024)) -> Blocking:
    """KC, MC, NC (and ``nc_l2``) for an ``mr x nr`` micro-kernel on
    elements of ``elem_bytes`` from the caches ``caches`` ({level:
    CacheLevel}, default: this machine's, ``cache_levels()``). The module
    docstring states the model.

    >>> b = blis_blocking(6, 32)
    >>> b.kc % 16, b.mc % 6, b.nc % 32
    (0, 0, 0)
    """
    caches = cache_levels() if caches is None else caches
    notes = []
    got = {lvl: caches.get(lvl) for lvl in (1, 2, 3)}
    for lvl, c in got.items():
        if c is None:
            got[lvl] = DEFAULT_CACHES[lvl]
            notes.append(f"no L{lvl} reported: assuming "
                         f"{DEFAULT_CACHES[lvl].size >> 10} KiB")
    l1, l2, l3 = got[1], got[2], got[3]
    s = elem_bytes
    kc = _kc(mr, nr, s, l1, k_multiple, notes)
    lo, hi = kc_range
    if not lo <= kc <= hi:
        kc = min(max(kc, lo), hi)
        notes.append(f"KC clamped to {kc} (range {lo}..{hi})")
    # MC: A's block in the L2 beside one B micro-panel, at most half of it
    room = l2.size // 2
    if l2.ways >= 2:
        b_ways = _ceil_div(kc * nr * s, l2.way_bytes)
        room = min(room, (l2.ways - 1 - b_ways) * l2.way_bytes)
    mc = _round_down(room // (kc * s), mr)
    notes.append(f"MC={mc}: the {mc}x{kc} block of A in "
                 f"{room >> 10} KiB of the {l2.size >> 10} KiB L2")
    share = l3.size // max(1, l3.shared_by)
    nc = _round_down(share // 2 // (kc * s), nr)
    notes.append(f"NC={nc}: the {kc}x{nc} block of B in half this core's "
                 f"{share >> 10} KiB share of the L3")
    nc_l2 = _round_down(l2.size // 2 // (kc * s), nr)
    notes.append(f"NC(L2)={nc_l2}: the {kc}x{nc_l2} block of B in half the "
                 f"{l2.size >> 10} KiB L2")
    return Blocking(mr, nr, kc, mc, nc, nc_l2, tuple(notes))
