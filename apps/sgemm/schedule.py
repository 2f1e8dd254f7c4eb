"""The schedule: naive SGEMM -> a blocked, packed, register-tiled kernel
for any M, N, K >= 1.

One schedule, parametrized by an instruction-set description (``Isa``):
the register memory, its f32 lanes, the tile (MR rows x NR columns of C,
NR / lanes registers per row), the k block KC, and the instructions the
kernels are made of (register load, register store, broadcast-FMA).
Two descriptions ship:

* ``AVX512``: 6x32 tile, 12 zmm accumulators (2 registers of 16 per row);
* ``AVX2``: 6x16 tile, 12 ymm accumulators (2 registers of 8 per row).

KC comes from the L1 data cache size the machine reports (``k_block``:
256 with a 32 KiB L1).

The structure is GotoBLAS's. K is cut into blocks of KC (``split`` with
``tail='cut'``): K / KC full blocks, then one block of K % KC; each block is
a rank-kc update of all of C, scheduled by the same function. Inside a
block the columns are cut into N / NR panels of NR and a tail of N % NR,
the rows into M / MR blocks of MR and a tail of M % MR, which gives four
nests:

* rows x panels: the MR x NR micro-kernel. The kc x N block of B it reads
  is packed once per k block into N / NR contiguous kc x NR panels, in the
  order the kernel reads them; the C tile lives in registers for the whole
  k block, each k step loads one row of the panel (NR / lanes registers)
  and does MR x NR / lanes broadcast-FMAs;
* tail rows x panels: the M % MR rows in register tiles of 4, 2 and 1
  rows x NR (``row_tiles``), reading the same packed panels;
* rows x tail columns: an MR x lanes kernel per whole register of the
  N % NR columns, then one more on masked instructions for the last
  (N % NR) % lanes columns (``_mask_kernel``);
* tail rows x tail columns: per row, registers of lanes on masked
  instructions (``_corner_kernel``).

The packed buffers of A (stack) and B (heap) are cache-line aligned
(``DRAM_STATIC_ALIGNED``, ``DRAM_ALIGNED``), so no register load of a
panel straddles two lines.

The row-block loop, which also does each row block's tail columns, is
``par`` (``parallelize`` proves it race-free: each iteration writes its
own rows of C, and reads A, B or the packed panels, which no iteration
writes), as is the packing loop (each iteration writes its own row of
every panel): two par loops per k block, one after the other, which the
generated C runs in one parallel region with a barrier between them.
OpenMP runs them on all cores by default; with one thread the generated C
calls the loops directly, with no region (docs/api.md section 6).

That is the 'rows' loop order (``Isa.order``): per row block, its MR x kc
micro-panel of A packed (in L1), then all the column panels, whose packed
kc x NR panels of B stream from L2. ``order='goto'`` is GotoBLAS/BLIS's
(jc -> pc -> ic -> jr -> ir): the row blocks in blocks of MC rows, each
MC x kc block of A packed at once (one k-major micro-panel per row block,
so a k step reads MR consecutive floats), then the column panels outside
the row blocks, so each kc x NR panel of B stays in L1 while the MC / MR
tiles below it read A's block from L2 (``_goto_order``; the (M / MR) %
(MC / MR) row blocks left over get the same steps). Its tiles walk down
the rows of C, where the hardware's prefetcher does not follow, so each
tile but an MC block's last prefetches the next tile's C
(``_prefetch_c``). Its par loops: per MC block the packing of A (each
iteration writes its own micro-panel) and the column panels (BLIS's jr:
each writes its own columns of C; with 2 threads even a 128-row product
splits), one region per MC block; the column tails are a par loop of
their own (``_goto_par``). Measured on the 2-core Xeon it was not faster
than the 'rows' order (level or 5-30% slower in five runs of six at
512-2048; README, "The GotoBLAS/BLIS order"), so the model keeps 'rows'.

Every step is a checked rewrite. ``stages(isa)`` returns the procedure
after each group of steps (``run.py --steps`` prints them).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from exo_hl import (DRAM, DRAM_STATIC, Procedure, SchedulingError, f32, proc,
                    seq, size, stride)
from exo_hl.hw_libs import avx2 as _avx2
from exo_hl.hw_libs import avx512 as _avx512


# ---------------------------------------------------------------------------
# the algorithm: C += A @ B, row-major, no preconditions

@proc
def sgemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
          B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def sgemm_win(M: size, N: size, K: size, A: [f32][M, K] @ DRAM,
              B: [f32][K, N] @ DRAM, C: [f32][M, N] @ DRAM):
    """The algorithm on windows (row strides of their own, unit column
    strides): the block an NC / MC blocked SGEMM calls (``blocked``)."""
    assert stride(A, 1) == 1
    assert stride(B, 1) == 1
    assert stride(C, 1) == 1
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def sgemm_alpha_beta(M: size, N: size, K: size, alpha: f32, beta: f32,
                     A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
                     C: f32[M, N] @ DRAM):
    """C = alpha * A @ B + beta * C, through a product T = A @ B (beta = 0
    still reads C: NaN or Inf in C stay NaN; the entry points, api.sgemm
    and c/sgemm.c, do not call it for beta == 0, as BLAS reads no C)."""
    T: f32[M, N] @ DRAM
    for i in seq(0, M):
        for j in seq(0, N):
            T[i, j] = 0.0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                T[i, j] += A[i, k] * B[k, j]
    for i in seq(0, M):
        for j in seq(0, N):
            C[i, j] = alpha * T[i, j] + beta * C[i, j]


# ---------------------------------------------------------------------------
# memories of the packed panels: cache-line aligned

#: bytes: a cache line (and a whole number of AVX-512 registers)
ALIGN = 64


class DRAM_ALIGNED(DRAM):
    """Heap memory aligned to a cache line. A packed panel read register
    by register then never has a load that straddles two cache lines,
    which ``malloc``'s 16-byte alignment gives every other load. ``DRAM``'s
    own allocation now starts on a line (``exo_hl_malloc``: aligned_alloc,
    the size checked for overflow and the result for NULL), so this
    memory inherits it: its own ``aligned_alloc`` had neither check. It
    stays a memory of its own so the schedule states the requirement."""


class DRAM_STATIC_ALIGNED(DRAM_STATIC):
    """A C stack array (constant size) aligned to a cache line
    (``_Alignas``), for the same reason as ``DRAM_ALIGNED``."""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        text = super().alloc(new_name, prim_type, shape, srcinfo)
        return f"_Alignas({ALIGN}) {text}" if shape else text


# ---------------------------------------------------------------------------
# instruction-set descriptions

@dataclass(frozen=True)
class Isa:
    """What the schedule needs to know about a vector instruction set."""

    name: str              # --isa value: 'avx512', 'avx2'
    title: str             # for people: 'AVX-512'
    mem: type              # register memory (a VectorRegisters subclass)
    lanes: int             # f32 lanes of one register
    mr: int                # rows of the C tile
    nr: int                # columns of the C tile (a multiple of lanes)
    kc: int                # k block (rows of a packed panel of B)
    load: Procedure        # reg[0:lanes] = mem[0:lanes]
    store: Procedure       # mem[0:lanes] = reg[0:lanes]
    fma: Procedure         # reg[0:lanes] += a[0] * reg_b[0:lanes]
    mask_load: Procedure   # the first m lanes of mem, 0 in the others
    mask_store: Procedure  # the first m lanes to mem (none past them)
    mask_fma: Procedure    # fma in the first m lanes, the others kept
    nc: int = 0            # column block of B packed per call (0: all N)
    mc: int = 0            # row block per call (0: all M)
    par: str = "rows"      # 'rows': the kernel's row blocks and packing
    #                        are par; 'cols': the NC column blocks are
    pack_a: bool = True    # pack A's MR x kc micro-panel (False: the
    #                        micro-kernel broadcasts from A's rows)
    pack_b: bool = True    # pack B's kc x NR panels (False: the kernels
    #                        load B's rows where they are)
    prefetch: int = 0      # prefetch B's packed panel this many k steps
    #                        ahead in the full k blocks (0: none; in the
    #                        'goto' order A's packed micro-panel)
    par_min: int = 0       # not the schedule's but the app's: M N K below
    #                        which it runs the one-thread kernel
    #                        (``sequential``; 0: always the threaded one)
    nc_cols: int = 0       # the app's too: the column block of its kernel
    #                        with the threads on column blocks, for wide
    #                        products (``by_columns``; 0: none)
    cols_narrow: bool = False  # the app's too: that kernel's column
    #                        blocks run the narrow kernel (A unpacked,
    #                        KC = ``narrow_kc``; ``by_columns``)
    nc_cols_alt: int = 0   # the app's too: a second column block, for
    #                        products whose N does not share out in
    #                        blocks of ``nc_cols`` (0: none)
    cols_one_mk: int = 0   # the app's too: on one thread, products whose
    #                        A has at most this many elements (M K) run
    #                        that kernel as well (0: never)
    narrow_n: int = 0      # the app's too: N at or below which it runs
    #                        the kernels with A unpacked (``narrow``; 0:
    #                        none)
    narrow_kc: int = 0     # the app's too: the k block of those kernels
    #                        (``narrow``; 0: ``kc``)
    narrow_mr: int = 0     # the app's too: the tile of those kernels,
    narrow_nr: int = 0     # MR x NR (``narrow``; 0: ``mr``, ``nr``)
    narrow_b_m: int = 0    # the app's too: M at or below which those
    #                        kernels read B in place, not packed
    #                        (``narrow(pack_b=False)``; 0: never)
    narrow_b_n: int = 0    # the app's too: ... and N at most this (0:
    #                        any narrow N)
    narrow_b_par_min: int = 0  # the app's too: M N K below which those
    #                        in-place kernels run on one thread (0:
    #                        ``par_min``)
    dynamic_min_n: int = 0  # the app's too: with ``dynamic``, N below
    #                        which it runs the row-split kernel with
    #                        static row blocks (``static_rows``; 0: none)
    order: str = "rows"    # 'rows': per row block of MR, its A micro-panel
    #                        packed, then all column panels (A in L1, B's
    #                        panels streamed from L2); 'goto': per MC rows,
    #                        their A block packed, then for each column
    #                        panel all its row blocks (GotoBLAS/BLIS: B's
    #                        micro-panel in L1, A's MC x kc block streamed
    #                        from L2; MC is then the kernel's, not calls)
    dynamic: bool = False  # the threads take the par row blocks (the
    #                        column panels and tails in the 'goto' order,
    #                        the column blocks with par='cols'; not
    #                        by_columns') one at a time from a
    #                        shared counter (par_dynamic) instead of a
    #                        fixed consecutive block each (par)

    def __post_init__(self):
        if self.nr % self.lanes:
            raise ValueError(f"{self.name}: NR={self.nr} is not a multiple "
                             f"of {self.lanes} lanes")
        # a split by 1 leaves no tail loop, where the schedule puts the
        # M % MR rows' and the K % KC block's kernels (IndexError or a
        # SchedulingError deep in ``stages`` otherwise)
        if self.kc < 2 or self.mr < 2:
            raise ValueError(f"{self.name}: MR and KC must be at least 2 "
                             f"(MR={self.mr}, KC={self.kc})")
        if self.narrow_mr == 1 or self.narrow_kc == 1:
            raise ValueError(f"{self.name}: the narrow kernels' MR and KC "
                             f"must be at least 2 (narrow_mr="
                             f"{self.narrow_mr}, narrow_kc={self.narrow_kc})")
        if self.nc < 0 or self.nc % self.nr:
            raise ValueError(f"{self.name}: NC={self.nc} is not a multiple "
                             f"of NR={self.nr}")
        if self.mc < 0 or self.mc % self.mr:
            raise ValueError(f"{self.name}: MC={self.mc} is not a multiple "
                             f"of MR={self.mr}")
        if self.par not in ("rows", "cols"):
            raise ValueError(f"{self.name}: par is 'rows' or 'cols', not "
                             f"{self.par!r}")
        if self.prefetch < 0 or self.prefetch >= self.kc:
            raise ValueError(f"{self.name}: prefetch={self.prefetch} is not "
                             f"in [0, KC={self.kc})")
        for f in ("par_min", "narrow_n", "narrow_b_m", "narrow_b_n",
                  "narrow_b_par_min", "dynamic_min_n", "cols_one_mk"):
            if getattr(self, f) < 0:
                raise ValueError(f"{self.name}: {f}={getattr(self, f)} is "
                                 f"negative")
        if self.narrow_mr < 0 or self.narrow_nr < 0 or \
                self.narrow_nr % self.lanes:
            raise ValueError(f"{self.name}: the narrow tile "
                             f"{self.narrow_mr}x{self.narrow_nr} is negative "
                             f"or NR not a multiple of {self.lanes} lanes")
        for f in ("nc_cols", "nc_cols_alt"):
            v = getattr(self, f)
            if v < 0 or v % self.cols_nr:
                raise ValueError(f"{self.name}: {f}={v} is not a multiple "
                                 f"of NR={self.cols_nr}" +
                                 (" (the narrow tile's: cols_narrow)"
                                  if self.cols_narrow else ""))
        if self.nc_cols_alt and not self.nc_cols:
            raise ValueError(f"{self.name}: nc_cols_alt={self.nc_cols_alt} "
                             f"needs nc_cols")
        if self.narrow_kc < 0 or (self.narrow_kc and
                                  self.prefetch >= self.narrow_kc):
            raise ValueError(f"{self.name}: narrow_kc={self.narrow_kc} is "
                             f"negative or not above prefetch="
                             f"{self.prefetch}")
        if self.par == "cols" and not self.nc:
            raise ValueError(f"{self.name}: par='cols' needs NC blocks")
        if self.order not in ("rows", "goto"):
            raise ValueError(f"{self.name}: order is 'rows' or 'goto', not "
                             f"{self.order!r}")
        if self.order == "goto" and not (self.mc and self.pack_a):
            raise ValueError(f"{self.name}: order='goto' needs MC (the "
                             f"packed MC x KC block of A) and pack_a")
        if self.order == "goto" and self.mc < 2 * self.mr:
            # its row blocks are split by MC / MR: by 1, no tail loop
            raise ValueError(f"{self.name}: order='goto' needs MC of at "
                             f"least 2 MR (MC={self.mc}, MR={self.mr})")
        if not isinstance(self.cols_narrow, bool):
            raise ValueError(f"{self.name}: cols_narrow is True or False, "
                             f"not {self.cols_narrow!r}")
        if not isinstance(self.dynamic, bool):
            raise ValueError(f"{self.name}: dynamic is True or False, not "
                             f"{self.dynamic!r}")

    @property
    def cols_nr(self) -> int:
        """The tile width the column split's blocks (``nc_cols``) are
        made of: the narrow tile's with ``cols_narrow`` (its blocks are
        narrow kernels, ``by_columns``), else NR."""
        return (self.narrow_nr or self.nr) if self.cols_narrow else self.nr

    @property
    def blocked(self) -> bool:
        """Whether the kernel is called per NC x MC block (``blocked``;
        with ``order='goto'`` MC is the kernel's own A block, not a call's
        rows)."""
        return bool(self.nc or self.call_mc)

    @property
    def call_mc(self) -> int:
        """The row block per call of the kernel (``blocked``): MC in the
        'rows' order, 0 in the 'goto' one (MC blocks A in the kernel)."""
        return self.mc if self.order == "rows" else 0

    @property
    def params(self) -> dict:
        """The tunable parameters of this description."""
        return {"mr": self.mr, "nr": self.nr, "kc": self.kc, "nc": self.nc,
                "mc": self.mc, "par": self.par, "pack_a": self.pack_a,
                "pack_b": self.pack_b, "prefetch": self.prefetch,
                "par_min": self.par_min, "nc_cols": self.nc_cols,
                "nc_cols_alt": self.nc_cols_alt,
                "cols_narrow": self.cols_narrow,
                "cols_one_mk": self.cols_one_mk,
                "narrow_n": self.narrow_n, "narrow_kc": self.narrow_kc,
                "narrow_mr": self.narrow_mr, "narrow_nr": self.narrow_nr,
                "narrow_b_m": self.narrow_b_m,
                "narrow_b_n": self.narrow_b_n,
                "narrow_b_par_min": self.narrow_b_par_min,
                "order": self.order,
                "dynamic": self.dynamic,
                "dynamic_min_n": self.dynamic_min_n}

    @property
    def regs(self) -> int:
        """Registers per row of the C tile."""
        return self.nr // self.lanes

    @property
    def label(self) -> str:
        return f"{self.title} {self.mr}x{self.nr}"

    @property
    def blocking_label(self) -> str:
        """``KC=288 NC=896`` (MC, par when set)."""
        out = f"KC={self.kc}" + (f" NC={self.nc}" if self.nc else "") + \
            (f" MC={self.mc}" if self.mc else "")
        return out + (" order=goto" if self.order == "goto" else "") + \
            (" par=cols" if self.par == "cols" else "") + \
            (" dynamic" if self.dynamic else "") + \
            ("" if self.pack_a else " A unpacked") + \
            ("" if self.pack_b else " B unpacked") + \
            (f" prefetch={self.prefetch}" if self.prefetch else "") + \
            (f" 1 thread below MNK={self.par_min}" if self.par_min else "") \
            + (f" wide: par cols of {self.nc_cols}" +
               (" (A unpacked)" if self.cols_narrow else "") +
               (f" or {self.nc_cols_alt}" if self.nc_cols_alt else "") +
               (f", on 1 thread for MK <= {self.cols_one_mk}"
                if self.cols_one_mk else "")
               if self.nc_cols else "") \
            + (f" N <= {self.narrow_n}: A unpacked" if self.narrow_n else "") \
            + (f" {self.narrow_mr or self.mr}x{self.narrow_nr or self.nr}"
               if self.narrow_n and (self.narrow_mr or self.narrow_nr)
               and (self.narrow_mr or self.mr, self.narrow_nr or self.nr)
               != (self.mr, self.nr) else "") \
            + (f" KC={self.narrow_kc}" if self.narrow_n and self.narrow_kc
               and self.narrow_kc != self.kc else "") \
            + (f", B in place for M <= {self.narrow_b_m}" +
               (f", N <= {self.narrow_b_n}" if self.narrow_b_n else "")
               if self.narrow_n and self.narrow_b_m else "") \
            + (f" (1 thread below MNK={self.narrow_b_par_min})"
               if self.narrow_n and self.narrow_b_m and
               self.narrow_b_par_min else "") \
            + (f" static rows below N={self.dynamic_min_n}"
               if self.dynamic and self.dynamic_min_n else "")

    @property
    def kernel_name(self) -> str:
        return f"sgemm_{self.name}"

    def cpu_features(self) -> frozenset:
        """CPU features of the kernel's memory and instructions."""
        out = set(self.mem.cpu_features)
        for i in (self.load, self.store, self.fma, self.mask_load,
                  self.mask_store, self.mask_fma):
            out |= i.cpu_features()
        return frozenset(out)


def cache_sizes(cpu: int = 0) -> dict:
    """{level: bytes} of the data caches this machine reports (Linux
    sysfs), {} when it reports none."""
    import glob
    out = {}
    for d in glob.glob(f"/sys/devices/system/cpu/cpu{cpu}/cache/index*"):
        try:
            with open(f"{d}/type") as f:
                if f.read().strip() not in ("Data", "Unified"):
                    continue
            with open(f"{d}/level") as f:
                level = int(f.read())
            with open(f"{d}/size") as f:
                text = f.read().strip().upper()
        except (OSError, ValueError):
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        try:
            out[level] = int(text.rstrip("KMG")) * mult
        except ValueError:
            continue
    return out


#: used when the machine does not report its L1 data cache
DEFAULT_L1 = 32 << 10


def k_block(mr: int, caches: dict = None) -> int:
    """KC from the L1 data cache size: the MR x kc block of A, packed,
    which the micro-kernel reads again for every panel of B in its row
    block, takes at most a quarter of L1 (the panels of B stream from L2
    through the rest), a power of two in [128, 512].

    (Measured on Zen 4: with an AVX-512 6x64 tile, KC = 256 was 3-5%
    faster than 128 at 512-2048, where a rule sizing B's kc x NR panel for
    L1 gave 128; with the 6x32 tile, 128, 256 and 512 are within 2%.)"""
    caches = cache_sizes() if caches is None else caches
    l1 = caches.get(1, DEFAULT_L1)
    kc = 128
    while kc < 512 and mr * (2 * kc) * 4 <= l1 // 4:
        kc *= 2
    return kc


AVX512 = Isa(name="avx512", title="AVX-512", mem=_avx512.AVX512, lanes=16,
             mr=6, nr=32, kc=k_block(6), load=_avx512.mm512_loadu_ps,
             store=_avx512.mm512_storeu_ps, fma=_avx512.mm512_fmadd_bcst_ps,
             mask_load=_avx512.mm512_maskz_loadu_ps,
             mask_store=_avx512.mm512_prefix_storeu_ps,
             mask_fma=_avx512.mm512_prefix_fmadd_bcst_ps)

AVX2 = Isa(name="avx2", title="AVX2", mem=_avx2.AVX2, lanes=8, mr=6, nr=16,
           kc=k_block(6), load=_avx2.mm256_loadu_ps,
           store=_avx2.mm256_storeu_ps, fma=_avx2.mm256_fmadd_bcst_ps,
           mask_load=_avx2.mm256_maskload_ps,
           mask_store=_avx2.mm256_prefix_store_ps,
           mask_fma=_avx2.mm256_prefix_fmadd_bcst_ps)

#: best first (``--isa auto`` and the dispatcher take the first the CPU has)
ISAS = {isa.name: isa for isa in (AVX512, AVX2)}


# ---------------------------------------------------------------------------
# pointing inside one k block

def _loops(root, name):
    try:
        return root.find(f"for {name} in _: _", many=True)
    except SchedulingError:
        return []


def _loop(root, name, k=0):
    """The k-th loop named ``name`` in the statement ``root`` (itself
    included). Loop names repeat between k blocks and nests (``k``
    everywhere, the copies a cut or a fission makes), so every loop is
    found by name inside a given statement."""
    found = _loops(root, name)
    if len(found) <= k:
        raise SchedulingError(f"schedule: no loop '{name}' #{k} in {root}")
    return found[k]


def _staging(p, buf):
    """(load nest, store nest or None) that stage_mem made for ``buf``:
    the statements after its allocation (their loop names are fresh)."""
    a = p.find(f'{buf} : _')
    sib = a.parent().body() if a.path()[:-1] else p.body()
    sib = list(sib)
    i = next(n for n, x in enumerate(sib) if x == a)
    rest = sib[i + 1:]
    return rest[0], (rest[2] if len(rest) > 2 else None)


def _lane_loop(c):
    """The innermost loop of the perfect nest at ``c``."""
    while True:
        inner = list(c.body())
        if len(inner) != 1 or not inner[0].is_loop():
            return c
        c = inner[0]


def _split_lanes(p, buf, L, names):
    """Split the lane loops of ``buf``'s load (and store) nest by L."""
    for which, (o, i) in enumerate(names):
        nest = _staging(p, buf)[which]
        p = p.split(_lane_loop(nest), L, o, i, tail='perfect')
    return p


def _k0(isa, full):
    """The first k of a k block: ``KC * ko`` in the full blocks, ``KC * (K
    / KC)`` in the last one."""
    return f"{isa.kc} * ko" if full else f"{isa.kc} * (K / {isa.kc})"


def _block(p, full):
    """The statements of a k block: the body of the ``ko`` loop (the full
    blocks) or of the ``if K % KC > 0`` after it (the last block)."""
    top = list(p.body())
    i = next(n for n, s in enumerate(top) if s.is_loop()
             and s.name() == "ko")
    return list(top[i].body()) if full else list(top[i + 1].body())


# ---------------------------------------------------------------------------
# the three kernels of a k block

#: rows of padding after each packed kc x NR panel of B. The packing
#: loop writes one row of every panel per row of B; with panels a power
#: of two apart (KC x NR floats: 512 x 16 or 128 x 32 are 32 or 16 KiB)
#: those rows fall in one set of the L1 and evict each other (16-32 lines
#: into 12 ways), and the copy of B took about a tenth of the time of a
#: product with M = 128. One row more moves each panel to other sets.
#: Measured on Zen 5 (one thread, side by side, one process; README
#: "Padded panels of B"): 128x2048x512 +16% (AVX-512) and +3-4% (AVX2),
#: 256x1024x512 +4% and +1%, the squares 512-1024 +1-2%, the others level.
PANEL_PAD_ROWS = 1


def _main_kernel(p, full, isa, t):
    """rows x panels: ``for io: for ii: for jo: for jj: for k`` -> the
    MR x NR register tile, B packed as N / NR panels of kc x NR."""
    MR, NR, KC, L = isa.mr, isa.nr, isa.kc, isa.lanes
    k0 = _k0(isa, full)
    kc = f"{KC}" if full else f"K % {KC}"
    root = lambda q: next(s for s in _block(q, full) if s.is_loop()
                          and _loops(s, 'jj') + _loops(s, 'ji'))
    k = lambda q: _loop(root(q), 'k')
    p = p.reorder(_loop(root(p), 'ii'), _loop(root(p), 'jo'))
    p = p.split(_loop(root(p), 'jj'), L, 'jt', 'ji', tail='perfect')
    p = p.reorder(_loop(root(p), 'ji'), k(p))
    p = p.reorder(_loop(root(p), 'jt'), k(p))
    p = p.reorder(_loop(root(p), 'ii'), k(p))
    p = p.reorder(_loop(root(p), 'io'), _loop(root(p), 'jo'))
    # the tail rows' nest, its column panels outermost too, joins the
    # panel loop: both then read the packed panel of B below
    rows = lambda q: next(s for s in _block(q, full) if s.is_loop()
                          and s.name() == 'ii')
    p = p.reorder(rows(p), _loop(rows(p), 'jo'))
    p = p.fuse_loop(root(p), root(p).next())
    # the C tile, in registers for the whole k block
    p = p.stage_mem(k(p), f'C[{MR} * io:{MR} * io + {MR}, '
                    f'{NR} * jo:{NR} * jo + {NR}]', f'C_reg{t}')
    p = p.divide_dim(f'C_reg{t}', 1, L)
    p = _split_lanes(p, f'C_reg{t}', L, [('cl', 'cli'), ('cs', 'csi')])
    # one row of B per k step
    p = p.stage_mem(_loop(root(p), 'ii'),
                    f'B[{k0} + k, {NR} * jo:{NR} * jo + {NR}]', f'B_reg{t}')
    p = p.divide_dim(f'B_reg{t}', 0, L)
    p = _split_lanes(p, f'B_reg{t}', L, [('bl', 'bli')])
    # pack B: the kc x NR panel of a column block, one slot per column
    # block (expand_dim), the packing loop split off (fission), rows back
    # outside the columns
    if isa.pack_b:
        p = p.stage_mem(_loop(root(p), 'io').expand(0, 1),
                        f'B[{k0}:{k0} + {kc}, {NR} * jo:{NR} * jo + {NR}]',
                        f'B_pack{t}')
        p = p.expand_dim(f'B_pack{t}', f'(N + {NR - 1}) / {NR}', 'jo')
        p = p.lift_alloc(f'B_pack{t}')
        # one row more per panel: panels KC x NR floats apart are a power
        # of two apart (PANEL_PAD_ROWS)
        if PANEL_PAD_ROWS:
            p = p.resize_dim(f'B_pack{t}', 1, KC + PANEL_PAD_ROWS if full
                             else f'{kc} + {PANEL_PAD_ROWS}', '0')
        p = p.fission_after(list(root(p).body())[0])
    p = p.fission_after(_loop(root(p), 'io'))
    p = p.reorder(root(p), _loop(root(p), 'io'))
    tail = lambda q: next(s for s in _block(q, full) if s.is_loop()
                          and s.name() == 'jo' and _loops(s, 'ii'))
    p = p.reorder(tail(p), _loop(tail(p), 'ii'))
    if not isa.pack_a:                 # broadcasts from A's own rows
        return p
    # pack A: the MR x kc block of A a row block reads, for all its column
    # blocks (contiguous rows: no cache-set conflicts between them)
    p = p.stage_mem(_loop(root(p), 'jo'), f'A[{MR} * io:{MR} * io + {MR}, '
                    f'{k0}:{k0} + {kc}]', f'A_pack{t}')
    if not full:                       # K % KC < KC columns: room for KC
        p = p.resize_dim(f'A_pack{t} : _', 1, KC, '0')
    if isa.order == "goto":            # k-major: a k step reads MR
        #                                  consecutive floats (one stream
        #                                  of the MC x kc block from L2)
        p = p.rearrange_dim(f'A_pack{t} : _', [1, 0])
    # constant size: on the stack, cache-line aligned
    p = p.set_memory(f'A_pack{t}', DRAM_STATIC_ALIGNED)
    return p


def row_tiles(mr: int) -> list:
    """Heights of the register tiles for the M % MR tail rows: the powers
    of two below MR, largest first, down to 1 (6 -> [4, 2, 1]); every
    count of tail rows is a sum of distinct ones."""
    out, r = [], 1
    while r < mr:
        out.insert(0, r)
        r *= 2
    return out


def _top(q, full, name):
    return next(s for s in _block(q, full) if s.is_loop()
                and s.name() == name)


def _row_kernel(p, full, isa, t):
    """tail rows x panels: ``for ii: for jo: for jj: for k`` (reading the
    packed panels) -> the M % MR rows in tiles of R rows x NR, R in
    ``row_tiles(MR)`` (each of 4 or 2 rows has 4 or 2 times the
    accumulators of a single row: independent FMA chains), the tile's
    rows staged in R x NR / lanes registers for the whole k block.

    The row loop is cut (``split(.., R, tail='cut')``) into a nest of
    whole R-row tiles (``qR``, at most one) and a remainder (``rR``) the
    next, smaller tile takes."""
    NR, L, MR = isa.nr, isa.lanes, isa.mr
    base = f'{MR} * (M / {MR})'         # the first tail row
    rows, off = 'ii', base              # the remainder loop, its first row
    for R in row_tiles(MR):
        if R > 1:
            q, r = f'q{R}', f'r{R}'
            p = p.split(_top(p, full, rows), R, q, r, tail='cut')
            root = lambda x, q=q: _top(x, full, q)
            p = p.reorder(_loop(root(p), r), _loop(root(p), 'jo'))
            row0, rows_next = f'{off} + {R} * {q}', r
        else:
            root = lambda x, rows=rows: _top(x, full, rows)
            r, row0, rows_next = rows, f'{off} + {rows}', None
        name = f'R{R}_reg{t}' if R > 1 else f'R_reg{t}'
        bname = f'RB{R}_reg{t}' if R > 1 else f'RB_reg{t}'
        k = lambda x: _loop(root(x), 'k')
        p = p.split(_loop(root(p), 'jj'), L, f'rt{R}', f'ri{R}',
                    tail='perfect')
        p = p.reorder(_loop(root(p), f'ri{R}'), k(p))
        p = p.reorder(_loop(root(p), f'rt{R}'), k(p))
        if R > 1:
            p = p.reorder(_loop(root(p), r), k(p))
        if R > 1:
            p = p.stage_mem(k(p), f'C[{row0}:{row0} + {R}, '
                            f'{NR} * jo:{NR} * jo + {NR}]', name)
            p = p.divide_dim(name, 1, L)
        else:
            p = p.stage_mem(k(p), f'C[{row0}, {NR} * jo:{NR} * jo + {NR}]',
                            name)
            p = p.divide_dim(name, 0, L)
        p = _split_lanes(p, name, L, [(f'rl{R}', f'rli{R}'),
                                      (f'rs{R}', f'rsi{R}')])
        src = (f'B_pack{t}[jo, k, 0:{NR}]' if isa.pack_b else
               f'B[{_k0(isa, full)} + k, {NR} * jo:{NR} * jo + {NR}]')
        p = p.stage_mem(_loop(root(p), r if R > 1 else f'rt{R}'), src,
                        bname)
        p = p.divide_dim(bname, 0, L)
        p = _split_lanes(p, bname, L, [(f'rbl{R}', f'rbli{R}')])
        if rows_next is not None:
            rows, off = rows_next, f'{off} + {R} * ({_rest(MR, R)} / {R})'
    return p


def _rest(mr, r):
    """The rows left for tiles of at most ``r`` rows: M % MR % (2 r) ...
    (M % MR for the largest tile)."""
    expr, big = f'M % {mr}', row_tiles(mr)
    for h in big:
        if h == r:
            return expr
        expr = f'{expr} % {h}'
    raise ValueError(r)


def _col_kernel(p, full, isa, t):
    """rows x tail columns: ``for cio: for cii: for jj: for k`` -> an
    MR x lanes register tile per whole register of the N % NR columns,
    the last (N % NR) % lanes columns are left to ``_mask_kernel``."""
    MR, NR, L = isa.mr, isa.nr, isa.lanes
    k0 = _k0(isa, full)
    root = lambda q: next(s for s in _block(q, full)
                          if s.is_loop() and s.name() == 'cio')
    p = p.split(_loop(root(p), 'jj'), L, 'jv', 'jl', tail='cut')
    p = p.fission_after(_loop(root(p), 'jv'))
    p = p.reorder(_loop(root(p), 'cii'), _loop(root(p), 'jv'))
    k = lambda q: _loop(_loop(root(q), 'jv'), 'k')
    p = p.reorder(_loop(root(p), 'jl'), k(p))
    p = p.reorder(_loop(root(p), 'cii'), k(p))
    col = f'{L} * jv + {NR} * (N / {NR})'
    p = p.stage_mem(k(p), f'C[{MR} * cio:{MR} * cio + {MR}, '
                    f'{col}:{col} + {L}]', f'V_reg{t}')
    p = p.stage_mem(_loop(_loop(root(p), 'jv'), 'cii'),
                    f'B[{k0} + k, {col}:{col} + {L}]', f'VB_reg{t}')
    return p


def _mask_kernel(p, full, isa, t):
    """rows x the last (N % NR) % lanes columns: ``for cii: for jl: for k``
    -> one more MR x lanes register tile on masked instructions.

    The columns are split by the lanes with a guard (``tail='guard'``: at
    most one block, ``jm``), ``k`` moved outside the rows; then
    ``_masked_register`` stages the C tile and the row of B a k step reads
    past the row ends and rewrites the guard into the lane test."""
    MR, L = isa.mr, isa.lanes
    k0 = _k0(isa, full)
    root = lambda q: next(s for s in _block(q, full)
                          if s.is_loop() and s.name() == 'cio')
    inner = lambda q, name: next(s for s in root(q).body()
                                 if s.is_loop() and s.name() == name)
    rest = lambda q: inner(q, 'cii')
    p = p.reorder(_loop(rest(p), 'jl'), _loop(rest(p), 'k'))
    p = p.reorder(rest(p), _loop(rest(p), 'k'))
    rest = lambda q: inner(q, 'k')
    p = p.split(_loop(rest(p), 'jl'), L, 'jm', 'jn', tail='guard')
    p = p.reorder(_loop(rest(p), 'cii'), _loop(rest(p), 'jm'))
    p = p.reorder(rest(p), _loop(rest(p), 'jm'))
    return _masked_register(p, lambda q: inner(q, 'jm'), 'jn', 'cii',
                            f'{MR} * cio:{MR} * cio + {MR}', k0, isa,
                            f'W_reg{t}', f'WB_reg{t}')


def _masked_register(p, block, lane, b_around, rows, k0, isa, c_name,
                     b_name):
    """The last (N % NR) % lanes columns, the guarded block ``block(p)``
    (``for v: for k: ... if L * v + lane < N % NR % L``) of a split by the
    lanes: the guard rewritten (proven equal) to the lane test ``lane <
    m`` of the masked FMA's specification, and the C window ``rows`` x one
    register (around ``k``) and B's row of it (around the loop
    ``b_around``) staged past the end of C's and B's rows (``stage_mem``'s
    guarded copies: lanes past N are neither read nor written)."""
    NR, L = isa.nr, isa.lanes
    v = block(p).name()
    p = p.rewrite_expr(block(p).find('if _: _').find('_ < _'),
                       f'{lane} < N % {NR} % {L} - {L} * {v}')
    col = f'{L} * {v} + {L} * (N % {NR} / {L}) + {NR} * (N / {NR})'
    p = p.stage_mem(_loop(block(p), 'k'), f'C[{rows}, {col}:{col} + {L}]',
                    c_name)
    return p.stage_mem(_loop(block(p), b_around),
                       f'B[{k0} + k, {col}:{col} + {L}]', b_name)


def _corner_kernel(p, full, isa, t):
    """tail rows x tail columns: ``for cii: for jj: for k`` (at most
    MR - 1 rows x NR - 1 columns) -> per row, a register of lanes for each
    whole register of the N % NR columns (``jw``), then one on masked
    instructions for the last (N % NR) % lanes (``jy``, the steps of
    ``_mask_kernel``, ``_masked_register``); not scalar code."""
    MR, NR, L = isa.mr, isa.nr, isa.lanes
    k0 = _k0(isa, full)
    root = lambda q: next(s for s in _block(q, full) if s.is_loop()
                          and s.name() == 'cii')
    row = f'cii + {MR} * (M / {MR})'
    p = p.split(_loop(root(p), 'jj'), L, 'jw', 'jx', tail='cut')
    whole = lambda q: _loop(root(q), 'jw')
    rest = lambda q: next(s for s in root(q).body() if s.name() == 'jx')
    # whole registers
    p = p.reorder(_loop(whole(p), 'jx'), _loop(whole(p), 'k'))
    col = f'{L} * jw + {NR} * (N / {NR})'
    p = p.stage_mem(_loop(whole(p), 'k'), f'C[{row}, {col}:{col} + {L}]',
                    f'X_reg{t}')
    p = p.stage_mem(_loop(whole(p), 'jx'), f'B[{k0} + k, {col}:{col} + {L}]',
                    f'XB_reg{t}')
    # the last, masked register
    p = p.reorder(rest(p), _loop(rest(p), 'k'))
    rest = lambda q: next(s for s in root(q).body() if s.name() == 'k')
    p = p.split(_loop(rest(p), 'jx'), L, 'jy', 'jz', tail='guard')
    p = p.reorder(rest(p), _loop(rest(p), 'jy'))
    return _masked_register(p, lambda q: _loop(root(q), 'jy'), 'jz', 'jz',
                            row, k0, isa, f'Y_reg{t}', f'YB_reg{t}')


def _instructions(p, full, isa, t):
    """Registers into the ISA's memory; every lane loop over them becomes
    one instruction; the register loops unrolled."""
    blk = lambda q: _block(q, full)
    tiles = row_tiles(isa.mr)
    rbufs = [f'R{R}_reg' if R > 1 else 'R_reg' for R in tiles]
    rbbufs = [f'RB{R}_reg' if R > 1 else 'RB_reg' for R in tiles]
    for buf in ['C_reg', 'B_reg', 'V_reg', 'VB_reg', 'W_reg', 'WB_reg',
                'X_reg', 'XB_reg', 'Y_reg', 'YB_reg'] + rbufs + rbbufs:
        p = p.set_memory(f'{buf}{t}', isa.mem)
    main = lambda q: next(s for s in blk(q) if s.is_loop()
                          and s.name() == 'io')
    col = lambda q: next(s for s in blk(q) if s.is_loop()
                         and s.name() == 'cio')
    replaces = [(main, 'cli', isa.load), (main, 'csi', isa.store),
                (main, 'ji', isa.fma), (main, 'bli', isa.load)]
    unrolls = [(main, ('jt', 'ii', 'cl', 'cs', 'bl'))]
    rows = 'ii'
    for R in tiles:                    # the tail-row tiles (_row_kernel)
        top = f'q{R}' if R > 1 else rows
        row = lambda q, top=top: _top(q, full, top)
        replaces += [(row, f'rli{R}', isa.load), (row, f'rsi{R}', isa.store),
                     (row, f'ri{R}', isa.fma), (row, f'rbli{R}', isa.load)]
        unrolls.append((row, (f'rt{R}', f'rl{R}', f'rs{R}', f'rbl{R}')
                        + ((f'r{R}', ) if R > 1 else ())))
        rows = f'r{R}' if R > 1 else rows
    for root, loop, instr in replaces:
        p = p.replace(_loop(root(p), loop), instr)
    # the column tails (_col_kernel, _mask_kernel) and the corner
    # (_corner_kernel): staged one register per row, lane loops last; each
    # tile's C load and store, its row of B, its FMA loop
    jv = lambda q: _loop(col(q), 'jv')
    jm = lambda q: _loop(col(q), 'jm')
    corner = lambda q: next(s for s in blk(q) if s.is_loop()
                            and s.name() == 'cii')
    plain = (isa.load, isa.store, isa.fma)
    masked = (isa.mask_load, isa.mask_store, isa.mask_fma)
    for buf, root, loop, (ld, st, fma) in (('V', jv, 'jl', plain),
                                           ('W', jm, 'jn', masked),
                                           ('X', corner, 'jx', plain),
                                           ('Y', corner, 'jz', masked)):
        p = p.replace(_lane_loop(_staging(p, f'{buf}_reg{t}')[0]), ld)
        p = p.replace(_lane_loop(_staging(p, f'{buf}_reg{t}')[1]), st)
        p = p.replace(_lane_loop(_staging(p, f'{buf}B_reg{t}')[0]), ld)
        p = p.replace(_loop(root(p), loop), fma)
    for root, loops in unrolls + [(jv, ('cii', )), (jm, ('cii', ))]:
        for loop in loops:
            p = p.unroll(_loop(root(p), loop))
    multi = [f'R{R}_reg' for R in tiles if R > 1]
    for buf in ['C_reg', 'V_reg', 'W_reg'] + multi:  # the tiles' row loops
        for which in (1, 0):
            p = p.unroll(_staging(p, f'{buf}{t}')[which])
    return p


def _prefetch(p, isa):
    """In the full k blocks' micro-kernel, each k step prefetches the row
    of B's packed panel ``d = isa.prefetch`` steps ahead, one
    ``prefetcht0`` per cache line of the row (in the 'goto' order, where
    B's panel stays in L1 and A's block streams from L2, the row of A's
    k-major micro-panel d steps ahead): the k loop is cut at KC - d
    (``cut_loop``) and the first part gets the calls
    (``insert_noop_call``), whose windows are then proven inside the
    panel. The last d steps prefetch nothing: the next panel follows in
    memory, where the hardware's stream prefetcher finds it, and a guard
    for the last panel would cost a branch per step. The K % KC block
    is left alone."""
    d, KC, NR = isa.prefetch, isa.kc, isa.nr
    k = lambda q: _loop(_top(q, True, 'io'), 'k')
    p = p.cut_loop(k(p), KC - d)
    if isa.order == "goto":            # the streamed operand is A: its
        #                                k-major micro-panel, MR floats a
        #                                step (MR <= 16: one call a step
        #                                reaches every line)
        return p.insert_noop_call(list(k(p).body())[0].before(),
                                  _avx2.mm_prefetch_t0,
                                  [f'A_pack[k + {d}, 0:1]'])
    for c in reversed(range(0, NR, 16)):   # 16 floats: a 64-byte line
        row = (f'B_pack[jo, k + {d}, {c}:{c + 1}]' if isa.pack_b else
               f'B[{KC} * ko + k + {d}, {NR} * jo + {c}:'
               f'{NR} * jo + {c + 1}]')
        p = p.insert_noop_call(list(k(p).body())[0].before(),
                               _avx2.mm_prefetch_t0, [row])
    return p


def stages(isa: Isa, p: Procedure = None, name: str = None):
    """[(description, procedure)] after each group of rewrites of the
    algorithm (or ``p``, an SGEMM of the same form), the kernel named
    ``name`` (default ``isa.kernel_name``). A blocked description
    (``isa.blocked``) ends with the procedure that calls the kernel, built
    from ``sgemm_win``, per block (``blocked``)."""
    if isa.blocked and p is None:
        out = stages(isa, sgemm_win, isa.kernel_name + "_block")
        return out + [(f"NC={isa.nc}, MC={isa.call_mc} blocks, each a call of "
                       f"the kernel (par: {isa.par})",
                       blocked(isa, out[-1][1]))]
    MR, NR, KC, L = isa.mr, isa.nr, isa.kc, isa.lanes
    p = sgemm if p is None else p
    out = [("the algorithm", p)]
    p = p.rename(name or isa.kernel_name)

    def step(what, q):
        out.append((what, q))
        return q

    # 1. k in blocks of KC, outermost: K / KC full blocks (the ko loop),
    #    then the K % KC block, each a rank-kc update of all of C; the
    #    last block runs only when K % KC > 0 (add_guard; in the other
    #    branch its k loop, moved outermost, runs zero times)
    p = p.split('k', KC, 'ko', 'k', tail='cut')
    p = p.fission_after(p.find_loop('ko'), n_lifts=2)
    p = p.reorder('j', 'ko').reorder('i', 'ko')
    p = p.add_guard(list(p.body())[1], f'K % {KC} > 0')
    other = lambda q: list(list(q.body())[1].orelse())[0]
    p = p.reorder(other(p).find('for j in _: _'), other(p).find('for k in _: _'))
    p = p.reorder(other(p).find('for i in _: _'), other(p).find('for k in _: _'))
    p = step(f"k blocks of {KC}, then a block of K % {KC}", p)

    # 2. in each block: columns in panels of NR and a tail of N % NR, rows
    #    in blocks of MR and a tail of M % MR: four nests
    for full in (True, False):
        p = p.split(_block(p, full)[0].find('for j in _: _'), NR, 'jo', 'jj',
                    tail='cut')
        p = p.fission_after(_block(p, full)[0].find('for jo in _: _'))
        p = p.split(_block(p, full)[0], MR, 'io', 'ii', tail='cut')
        p = p.split(_block(p, full)[2], MR, 'cio', 'cii', tail='cut')
    p = step(f"per block: {MR}-row blocks and a tail of M % {MR}, "
             f"{NR}-column panels and a tail of N % {NR}", p)

    # 3. the kernels, staged in DRAM
    for full, t in ((True, ''), (False, '_t')):
        p = _main_kernel(p, full, isa, t)
        p = _row_kernel(p, full, isa, t)
        p = _col_kernel(p, full, isa, t)
        p = _mask_kernel(p, full, isa, t)
        p = _corner_kernel(p, full, isa, t)
    p = step("register tiles and packed B, staged in DRAM", p)

    # 4. into registers, instructions selected, register loops unrolled
    for full, t in ((True, ''), (False, '_t')):
        p = _instructions(p, full, isa, t)
    p = step(f"registers @ {isa.mem.__name__}: {isa.load.name()}, "
             f"{isa.store.name()}, {isa.fma.name()}; unrolled", p)
    if isa.prefetch:
        what = "A's block" if isa.order == "goto" else "B's panel"
        p = step(f"prefetch of {what} {isa.prefetch} k steps ahead",
                 _prefetch(p, isa))

    # 5. threads: the packing of B (each iteration writes its own panel),
    #    the row blocks of the main and column-tail kernels (each writes
    #    its own rows of C); parallelize proves each race-free
    #    the column tail of a row block runs right after its panels: the
    #    rows x tail-columns nest moves up past the tail rows (disjoint
    #    rows of C: reorder_stmts proves they commute) and joins the row
    #    blocks' loop (fuse_loop), so one parallel region does both
    for full, t in ((True, ''), (False, '_t')):
        if isa.order == "goto":
            p = _goto_order(p, full, isa, t)
        else:
            while True:
                blk = _block(p, full)
                i = next(n for n, s in enumerate(blk) if s.is_loop()
                         and s.name() == 'cio')
                if blk[i - 1].is_loop() and blk[i - 1].name() == 'io':
                    break
                p = p.reorder_stmts(blk[i - 1], blk[i])
            p = p.fuse_loop(_top(p, full, 'io'), _top(p, full, 'cio'))
        if isa.pack_b:
            # pack B row by row (each row of B read once, in order)
            pack = _staging(p, f'B_pack{t}')[0]
            p = p.reorder(pack, list(pack.body())[0])
    # the buffers before the threads: a rewrite after ``parallelize``
    # proves again the par loops it touches
    packs = {full: _staging(p, f'B_pack{t}')[0]
             for full, t in ((True, ''), (False, '_t'))} if isa.pack_b else {}
    if isa.pack_b:
        p = p.lift_alloc('B_pack')     # one buffer for all full k blocks
        for buf in ('B_pack', 'B_pack_t'):  # cache-line aligned panels
            p = p.set_memory(buf, DRAM_ALIGNED)
    if isa.par == "cols":               # the caller's column blocks are
        step("sequential (the column blocks of the caller are par)", p)
        return out
    # the kernel as it is before the threads (``sequential``)
    step(SEQUENTIAL, p)
    for full, t in ((True, ''), (False, '_t')):
        # the packing rows in parallel (each writes its own row of every
        # panel), and the row blocks (``isa.dynamic``: par_dynamic; the
        # packing stays par: an iteration copies one row of B's block, a
        # few KiB, which a contended counter per row would slow)
        if isa.pack_b:
            p = p.parallelize(p.forward(packs[full]))
        if isa.order == "goto":
            p = _goto_par(p, full, isa.dynamic)
        else:
            p = p.parallelize(_top(p, full, 'io'), dynamic=isa.dynamic)
    step(("par: packing of B; per MC block, packing of A and the column "
          "panels; the column tails" if isa.order == "goto" else
          "par: packing; row blocks with their column tails")
         + (" (par_dynamic: " + ("the column panels and tails)"
                                 if isa.order == "goto" else
                                 "the row blocks)") if isa.dynamic else ""),
         p)
    return out


def _goto_blocks(q, full):
    """The two row-block nests of a k block in the 'goto' order: the
    ``for ir`` loop of the MC blocks (inside ``for ic``) and the ``for
    ir`` loop of the (M / MR) % (MC / MR) row blocks after them."""
    return (_loop(_top(q, full, 'ic'), 'ir'), _top(q, full, 'ir'))


def _goto_order(p, full, isa, t):
    """The GotoBLAS/BLIS loop order on the row blocks of a k block
    (``for io: A_pack; pack A's MR x kc micro-panel; for jo: tile``):
    the row blocks in blocks of MC / MR (``split``, ``tail='cut'``: M /
    MC whole blocks in ``for ic: for ir``, then a loop of the (M / MR) %
    (MC / MR) row blocks left, which gets the same steps); in each, one
    slot of the micro-panel buffer per row block (``expand_dim``), the
    buffer out of the row-block loop (``lift_alloc``: the packed MC x kc
    block of A, heap memory: it is up to MiBs; each micro-panel is stored
    k-major, ``_main_kernel``), the packing split off
    (``fission_after``: the whole block is packed before the kernel runs)
    and the column panels moved outside the row blocks (``reorder``: each
    kc x NR panel of B is read by MC / MR tiles in a row, from L1). The
    column tails (``cio``) stay a loop of their own."""
    R = isa.mc // isa.mr
    p = p.split(_top(p, full, 'io'), R, 'ic', 'ir', tail='cut')
    for n in range(2):
        nest = lambda q: _goto_blocks(q, full)[n]
        alloc = list(nest(p).body())[0]
        p = p.expand_dim(alloc, R, 'ir')
        p = p.lift_alloc(p.forward(alloc))
        p = p.set_memory(nest(p).prev(), DRAM_ALIGNED)
        p = p.fission_after(list(nest(p).body())[0])
        compute = nest(p).next()
        p = p.reorder(compute, _loop(compute, 'jo'))
        if n == 0 and R > 1:
            p = _prefetch_c(p, full, isa, R)
    return p


def _prefetch_c(p, full, isa, R):
    """In the MC blocks of the 'goto' order, each tile but a block's last
    prefetches the C tile of the next row block (same columns), one
    ``prefetcht0`` per row and cache line, before its k loop: the row
    loop is cut at R - 1 (``cut_loop``), so the windows are proven inside
    the block (``insert_noop_call``). The tiles walk down the rows of C,
    each row in another page, where the hardware's stream prefetcher
    does not follow: without it the tile's C loads stall the FMA chains
    (measured loaded on the Xeon, 12x32 KC=192 MC=192: 0.66x OpenBLAS at
    2048^3 without, 0.87x with, side by side)."""
    MR, NR = isa.mr, isa.nr
    ir = lambda q: _loop(_goto_blocks(q, full)[0].next(), 'ir')
    p = p.cut_loop(ir(p), R - 1)
    k = _loop(ir(p), 'k')
    for r in reversed(range(MR)):
        for c in reversed(range(0, NR, 16)):
            row = f'{MR * R} * ic + {MR} * ir + {MR + r}'
            p = p.insert_noop_call(
                p.forward(k).before(), _avx2.mm_prefetch_t0,
                [f'C[{row}, {NR} * jo + {c}:{NR} * jo + {c + 1}]'])
    return p


def _goto_par(p, full, dynamic=False):
    """The par loops of a k block in the 'goto' order: in each row-block
    nest of ``_goto_blocks``, the packing of A (each iteration writes its
    own micro-panel) and the column panels (each writes its own columns
    of C), both in one parallel region; and the column tails (each row
    block writes its own rows of C). ``parallelize`` proves each. With
    ``dynamic`` the column panels and the column tails are
    ``par_dynamic``; the packing stays ``par`` (an iteration copies one
    MR x kc micro-panel, a few KiB: a contended counter per iteration
    would cost a good part of it)."""
    for n in range(2):
        pack = _goto_blocks(p, full)[n]
        compute = pack.next()
        p = p.parallelize(pack)
        p = p.parallelize(p.forward(compute), dynamic=dynamic)
    return p.parallelize(_top(p, full, 'cio'), dynamic=dynamic)


def blocked(isa: Isa, kernel: Procedure, name: str = None) -> Procedure:
    """``sgemm`` in column blocks of NC (B's ``kc x NC`` block, packed by
    the kernel once per k block, stays in L2 while every row block of C
    reads it) and row blocks of MC, each block a call of ``kernel`` (the
    schedule of ``sgemm_win``, ``call_eqv``): the blocks and their tails
    (``N % NC``, ``M % MC``, each guarded, the other branch's zero-trip
    loop removed by ``eliminate_dead_code``) come from ``split``,
    ``fission_after`` and ``reorder``, the calls from ``replace``
    (unification). With ``isa.par == 'cols'`` the column-block loop is
    ``par`` (``parallelize`` proves its iterations write disjoint columns
    of C) and the kernel runs sequentially in each."""
    NC, MC = isa.nc, isa.call_mc
    p = sgemm.rename(name or isa.kernel_name)
    top = lambda q, k: list(q.body())[k]
    if NC:
        p = p.split('j', NC, 'jc', 'jn', tail='cut')
        p = p.fission_after(p.find_loop('jc'))
        p = p.reorder('i', 'jc')
        p = p.add_guard(top(p, 1), f'N % {NC} > 0')
        other = lambda q: list(top(q, 1).orelse())[0]
        p = p.reorder(other(p), other(p).find('for jn in _: _'))
        p = p.eliminate_dead_code(other(p))
    if MC:
        for n in range(2 if NC else 1):
            p = p.split(p.find_loop('i'), MC, 'ic', 'ii', tail='cut')
            rest = p.find('for ic in _: _', many=True)[n].next()
            p = p.add_guard(rest, f'M % {MC} > 0')
            g = p.find('for ic in _: _', many=True)[n].next()
            p = p.eliminate_dead_code(list(g.orelse())[0])
    inner = 'ii' if MC else 'i'
    while True:
        try:
            nest = p.find_loop(inner)
        except SchedulingError:
            break
        p = p.replace(nest, sgemm_win)
    if isa.par == "cols":
        # proven on the calls of the algorithm, whose effects (what each
        # call reads and writes) the kernel's calls then inherit
        p = p.parallelize(p.find_loop('jc'), dynamic=isa.dynamic)
    for call in p.find('sgemm_win(_)', many=True):
        p = p.call_eqv(p.forward(call), kernel)
    return p


def schedule(isa: Isa, p: Procedure = None) -> Procedure:
    """The fully scheduled kernel, named ``isa.kernel_name`` (for a
    blocked description, the procedure calling it per block)."""
    return stages(isa, p)[-1][1]


#: the description of the stage before the par loops (``sequential``)
SEQUENTIAL = "sequential (before the par loops)"


def sequential(isa: Isa, st: list = None) -> Procedure:
    """The one-thread kernel of ``isa``, named ``isa.kernel_name + '_1t'``:
    the procedure of ``stages(isa)`` (or ``st``, its result) before any
    loop is made ``par``, so no call of it opens a parallel region. The
    app runs it for products too small to pay for the threads
    (``Isa.par_min``; OpenMP's parallel region and barriers cost
    microseconds, a 64^3 product takes about 8). It is the same chain of
    checked rewrites, stopped earlier: building it costs nothing more
    than the threaded kernel, except for a blocked description, whose
    driver (``blocked``: the calls swapped by ``call_eqv``) is built
    again around the sequential block kernel."""
    st = stages(isa) if st is None else st
    name = isa.kernel_name + "_1t"
    if not isa.blocked:
        return next(p for w, p in st if w == SEQUENTIAL).rename(name)
    if isa.par == "cols":              # the block kernel is sequential
        inner = st[-2][1]
    else:
        inner = next(p for w, p in st if w == SEQUENTIAL)
    return blocked(dataclasses.replace(isa, par="rows"),
                   inner.rename(name + "_block"), name)


def by_columns(isa: Isa, nc: int, st: list = None,
               suffix: str = "") -> Procedure:
    """A blocked description's kernel with the threads on column blocks
    of ``nc`` instead of the row blocks, named ``isa.kernel_name +
    '_cols'`` (+ ``suffix``, for a second block width): ``blocked`` with ``par='cols'`` around the sequential block
    kernel of ``stages(isa)`` (or ``st``) -- the block kernel does not
    depend on NC, so only the driver is built again. Each thread packs
    and reads only its own columns of B, and a call opens one parallel
    region (the row-block kernel opens one per k block and per column
    block), which is what a wide, short product needs: its row blocks
    are few, and with them its k blocks' regions and barriers are most
    of the time. Its column blocks stay ``par`` (a fixed block each)
    whatever ``isa.dynamic``: on the 2-core Xeon (loaded, 2 threads,
    side by side, two rounds) par_dynamic column blocks were 4-12%
    slower at 128x2048x512 and level at 256x1024x512 (8 and 4 blocks of
    256 on 2 threads). ``None`` for a description that is not blocked
    (its kernel is not a kernel of windows).

    With ``isa.cols_narrow`` the block kernel is instead the narrow
    one's (``narrow_block``: A unpacked, KC = ``narrow_kc``, no NC
    blocks; named ``isa.kernel_name + '_cols_narrow'``): a column block
    of ``nc`` <= ``narrow_n`` columns is itself a narrow product, where
    a packed micro-panel of A would serve only nc / NR column panels
    and the KC x nc block of B fits in half the L2 at the larger KC (one
    pass over C per 512 k steps instead of per 160). ``st`` is then not
    used, and the description need not be blocked."""
    if isa.cols_narrow:
        name = isa.kernel_name + "_cols_narrow" + suffix
        base = _narrow_base(isa, True)
        return blocked(dataclasses.replace(base, par="cols", nc=nc),
                       narrow_block(isa, name + "_block"), name)
    if not isa.blocked:
        return None
    st = stages(isa) if st is None else st
    name = isa.kernel_name + "_cols" + suffix
    inner = st[-2][1] if isa.par == "cols" else \
        next(p for w, p in st if w == SEQUENTIAL)
    return blocked(dataclasses.replace(isa, par="cols", nc=nc, mc=0,
                                       order="rows", dynamic=False),
                   inner.rename(name + "_block"), name)


def _narrow_base(isa: Isa, pack_b: bool) -> Isa:
    """The description of the narrow kernels of ``isa`` (``narrow``):
    their own tile (``narrow_mr`` x ``narrow_nr``, 0: the square one), A
    unpacked, KC = ``narrow_kc`` (0: ``kc``), no NC or MC blocks,
    static row blocks, none of the app's thresholds."""
    return dataclasses.replace(isa, pack_a=False, nc=0, mc=0, par="rows",
                               mr=isa.narrow_mr or isa.mr,
                               nr=isa.narrow_nr or isa.nr,
                               narrow_mr=0, narrow_nr=0,
                               kc=isa.narrow_kc or isa.kc, narrow_kc=0,
                               narrow_b_m=0, narrow_b_n=0,
                               narrow_b_par_min=0,
                               pack_b=isa.pack_b and pack_b,
                               par_min=0, nc_cols=0, cols_narrow=False,
                               cols_one_mk=0, nc_cols_alt=0,
                               narrow_n=0, order="rows", dynamic=False,
                               dynamic_min_n=0)


def narrow_block(isa: Isa, name: str) -> Procedure:
    """The one-thread narrow kernel of ``isa`` (``_narrow_base``, B
    packed) on windows (the chain of ``stages`` applied to ``sgemm_win``,
    stopped before the par loops), named ``name``: the block kernel of
    ``by_columns`` with ``cols_narrow``."""
    st = stages(_narrow_base(isa, True), sgemm_win, name)
    return next(p for w, p in st if w == SEQUENTIAL)


def narrow(isa: Isa, pack_b: bool = True) -> tuple:
    """(threaded, one-thread) kernels of ``isa`` with A unpacked, for
    narrow products (N at most ``isa.narrow_n``), named
    ``isa.kernel_name + '_narrow'`` and ``+ '_narrow_1t'`` (with B read in
    place, ``pack_b=False``: ``'_narrow_bip'``, ``'_narrow_bip_1t'``): the chain of
    ``stages`` for the tile ``isa.narrow_mr`` x ``isa.narrow_nr`` (0: the
    description's), the same prefetch, ``pack_a=False``, KC
    = ``isa.narrow_kc`` (0: ``isa.kc``) and no NC or MC blocks (N is
    below any NC), the one-thread kernel its stage before the par loops.
    Their k block is the app's (``tuning.narrow_kc``): what stays in L1
    there is A's MR rows, not a micro-panel of B (at most ``narrow_n``
    columns of B, all of the KC x N block, are read by every row block
    from L2 whatever KC), and each k block is one more pass over C. A packed MR x kc micro-panel of A is read
    by N / NR column panels: at N = 64 by one, so the copy is as much
    traffic as the kernel's own reads of A. Measured on the 2-core Xeon
    (loaded, one thread, side by side in one process, two rounds; README):
    A unpacked 8-18% faster at 4099x64x300, 1000x64x300 and 127x64x300,
    3-10% at 128^3 and 2048x128x512, the same at N = 256 and 512, and 5-7%
    slower at 2048^3 (6 rows of A 8 KiB apart share cache sets).

    Their row blocks are static (``par``) whatever ``isa.dynamic``: a row
    block of a narrow product is at most MR x ``narrow_n`` x KC
    multiply-adds (6 x 128 x 160 = 123 K, about 4 K cycles at the 32
    multiply-adds per cycle of two 16-lane FMA ports), so a claim from
    the shared counter (its cache line moved between the cores, some
    hundreds of cycles) costs 5-15% of it, and a thread's row blocks are
    no longer consecutive rows of the unpacked A the prefetcher streams.
    On the quiet 2-core Xeon (recorded runs of 28 November 2026, 03:00
    static and 05:33 dynamic, 2 threads) 4099x64x300 fell from 240 to 169
    GFLOP/s (OpenBLAS 222 in both); the other narrow shapes moved with
    OpenBLAS between those runs.

    With ``pack_b=False`` nothing is packed: the app runs that pair for
    narrow products of at most ``isa.narrow_b_m`` rows and
    ``isa.narrow_b_n`` columns
    (``tuning.NARROW_B_M``), whose few row blocks do not pay for B's copy
    and, on threads, for the barrier after it and the packed rows each
    thread then reads from the other core's cache. The same FMAs in the
    same order: the same C, bit for bit."""
    base = _narrow_base(isa, pack_b)
    name = isa.kernel_name + "_narrow" + ("" if pack_b else "_bip")
    st = stages(base, None, name)
    one = next(p for w, p in st if w == SEQUENTIAL).rename(name + "_1t")
    return st[-1][1], one


def static_rows(isa: Isa) -> Procedure:
    """The row-split kernel of ``isa`` with static row blocks (``par``,
    a fixed block of consecutive row blocks per thread) whatever
    ``isa.dynamic``, named ``isa.kernel_name + '_static'``: the chain of
    ``stages`` with ``dynamic=False``. The app runs it for products with
    N below ``isa.dynamic_min_n`` (``api.Dispatch``), whose row blocks
    (MR x N x KC) are too small for a claim from the shared counter per
    block (``tuning.dynamic_min_n``)."""
    base = dataclasses.replace(isa, dynamic=False, par_min=0, nc_cols=0,
                               cols_narrow=False, cols_one_mk=0,
                               nc_cols_alt=0, narrow_n=0,
                               dynamic_min_n=0)
    return stages(base)[-1][1].rename(isa.kernel_name + "_static")


def alpha_beta(isa: Isa, kernel: Procedure = None, suffix: str = "",
               par: bool = True) -> Procedure:
    """``C = alpha * A @ B + beta * C`` for ``isa``, named
    ``sgemm_alpha_beta_<isa><suffix>``: the product loop nest of
    ``sgemm_alpha_beta`` is replaced by a call of the algorithm (checked
    by unification), then by ``kernel`` (default: the scheduled kernel;
    any kernel derived from the algorithm: ``call_eqv`` checks it); with
    ``par`` the two passes over C and T run in parallel (without, for a
    one-thread kernel: no parallel region at all). The app builds one
    per kernel it picks from (``api.Dispatch``): all compute the same T,
    so the same C, bit for bit."""
    kernel = schedule(isa) if kernel is None else kernel
    p = sgemm_alpha_beta.rename(f"sgemm_alpha_beta_{isa.name}{suffix}")
    p = p.replace(p.find_loop('i #1'), sgemm)
    p = p.call_eqv(p.find('sgemm(_)'), kernel)
    if not par:
        return p
    p = p.parallelize(p.find_loop('i'))
    return p.parallelize(p.find_loop('i #1'))
