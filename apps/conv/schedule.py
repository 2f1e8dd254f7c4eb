"""The schedule: a plain 3x3 convolution layer -> a register-blocked AVX2 or
AVX-512 kernel, for any N, H, W, IC, OC >= 1.

The layer (Halide's conv-layer benchmark, as Exo's paper runs it): a 3x3
convolution, stride 1, no padding, plus a bias, then ReLU, in f32, with
channels innermost:

* ``inp[N, H + 2, W + 2, IC]`` (NHWC: the input image, H x W the *output*
  size; the two extra rows and columns are the kernel's border);
* ``wt[3, 3, IC, OC]`` (KY, KX, input channel, output channel);
* ``bias[OC]``;
* ``out[N, H, W, OC]`` (NHWC).

``out[n, y, x, oc] = relu(bias[oc] + sum over ky, kx, ic of
inp[n, y + ky, x + kx, ic] * wt[ky, kx, ic, oc])``.

One schedule, parametrized by an instruction-set description (``Isa``):

* output channels in blocks of OB = ``regs`` x ``lanes`` (the ``oco``
  loop, outermost: the weights of a block are packed once, contiguous, in
  the order the kernel reads them, and stay in L2 while every pixel uses
  them), a tail of OC % OB channels; in a size-specialized kernel, groups
  of ``group`` blocks (AVX2: 4, 64 channels) packed together, the blocks
  under the column groups, so the input pixels of a tile serve the whole
  group while they are in L1 (one pass over the input per group, not per
  block);
* in a block, output columns in groups of XB = ``cols``: the XB x OB
  output tile lives in XB x ``regs`` vector registers for the whole
  reduction over ky, kx, ic; each reduction step loads ``regs`` registers
  of weights and broadcasts one input pixel's channel per column into a
  fused multiply-add (``*_fmadd_bcst_ps``); the tile is initialized from
  the bias and written back through a ReLU fused into the store
  (``*_storeu_relu_ps``);
* the W % XB tail columns: a 1 x OB tile, ``regs`` accumulators;
* the tail channels: per whole register of them an XB x 1-register tile
  (and 1 x 1 for the tail columns), weights loaded from ``wt``; the last
  (OC % OB) % ``lanes`` channels in scalar code;
* the channel-block (or group) loop is ``par`` (``parallelize`` proves
  it race-free: each block packs its weights into its own buffer and
  writes its own channels of ``out``): one parallel region per call, so
  threads meet at one barrier; the rows of the channel tail are ``par``
  too. With fewer blocks (groups) than threads (OC < 16 t for AVX2, 64 t
  with groups) some threads idle.

Descriptions: ``AVX2`` (5 columns x 2 ymm registers of 8 channels: 10
accumulators, 2 weight registers, 1 broadcast: 13 of 16 registers; 5
divides the benchmark's W = 100), ``AVX512`` (5 columns x 4 zmm registers
of 16 channels: 20 accumulators).

Variants (parameters of ``stages``, searched by ``tuning.py``), all with
the sizes fixed: ``packed`` schedules ``conv_packed``, the same layer
with the weights pre-packed once per layer (``pack_weights``) instead of
packed by the kernel on every call; ``rows`` tiles of several output
rows; ``kc`` the reduction in blocks of input channels with partial sums
in a buffer (``_kc_tiles``); ``par='rows'`` threads on the output rows
instead of the channel blocks (with N > 1 fixed, the rows of every
image in one loop, ``_par_rows``); ``par='split'`` the channel groups
and the rows in one par loop, a contiguous share of it per thread
(``_par_split``); ``par='bands'`` bands of rows outside the groups,
one per thread (``_par_bands``); ``dynamic`` every ``par`` loop a
``par_dynamic`` one (``parallelize(..., dynamic=True)``: the threads
take its iterations one at a time instead of a fixed block each).

Every step is a checked rewrite. ``stages(isa)`` returns the procedure
after each group of steps (``run.py --steps`` prints them).
"""
from __future__ import annotations

from dataclasses import dataclass

from exo_hl import (DRAM, Procedure, SchedulingError, f32, instr, proc,
                    seq, size)
from exo_hl.hw_libs import avx2 as _avx2
from exo_hl.hw_libs import avx512 as _avx512


# ---------------------------------------------------------------------------
# the algorithm

@proc
def conv(N: size, H: size, W: size, IC: size, OC: size,
         inp: f32[N, H + 2, W + 2, IC] @ DRAM, wt: f32[3, 3, IC, OC] @ DRAM,
         bias: f32[OC] @ DRAM, out: f32[N, H, W, OC] @ DRAM):
    for n in seq(0, N):
        for y in seq(0, H):
            for x in seq(0, W):
                for oc in seq(0, OC):
                    acc: f32 @ DRAM
                    acc = bias[oc]
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            for ic in seq(0, IC):
                                acc += (inp[n, y + ky, x + kx, ic] *
                                        wt[ky, kx, ic, oc])
                    out[n, y, x, oc] = relu(acc)


@proc
def conv_packed(N: size, H: size, W: size, IC: size, OCB: size, OB: size,
                inp: f32[N, H + 2, W + 2, IC] @ DRAM,
                wp: f32[OCB, 3, 3, IC, OB] @ DRAM, bias: f32[OCB, OB] @ DRAM,
                out: f32[N, H, W, OCB, OB] @ DRAM):
    for n in seq(0, N):
        for y in seq(0, H):
            for x in seq(0, W):
                for oco in seq(0, OCB):
                    for oci in seq(0, OB):
                        acc: f32 @ DRAM
                        acc = bias[oco, oci]
                        for ky in seq(0, 3):
                            for kx in seq(0, 3):
                                for ic in seq(0, IC):
                                    acc += (inp[n, y + ky, x + kx, ic] *
                                            wp[oco, ky, kx, ic, oci])
                        out[n, y, x, oco, oci] = relu(acc)


def pack_weights(wt, ob: int):
    """``wt[3, 3, IC, OC]`` -> ``wp[OC / ob, 3, 3, IC, ob]``, the layout
    ``conv_packed`` reads (numpy; prepared once per layer, as ONNX Runtime
    and oneDNN reorder their weights when the model is loaded).
    ``bias[OC]`` and ``out[N, H, W, OC]`` are already ``[OC / ob, ob]``
    and ``[N, H, W, OC / ob, ob]`` in memory. The result starts on a
    cache line (``apps/common/aligned.py``): the kernel reads it with
    full-width vector loads, and numpy's own 16-byte alignment made each
    AVX-512 load of it straddle two lines (18-20% slower on Halide's
    layer, 1 thread)."""
    from apps.common.aligned import aligned_copy
    k1, k2, ic, oc = wt.shape
    if oc % ob:
        raise ValueError(f"pack_weights: OC = {oc} is not a multiple of "
                         f"the block {ob}")
    return aligned_copy(
        wt.reshape(k1, k2, ic, oc // ob, ob).transpose(3, 0, 1, 2, 4))


#: the layer of Halide's benchmark: batch 5, output 80 x 100, 128 -> 128
HALIDE_SIZES = {"N": 5, "H": 80, "W": 100, "IC": 128, "OC": 128}


def flops(N, H, W, IC, OC) -> float:
    """Multiply-adds of the layer, times 2 (bias and ReLU not counted)."""
    return 2.0 * N * H * W * OC * 9 * IC


# ---------------------------------------------------------------------------
# instruction-set descriptions

@dataclass(frozen=True)
class Isa:
    """What the schedule needs to know about a vector instruction set."""

    name: str              # --isa value: 'avx512', 'avx2'
    title: str             # for people: 'AVX-512'
    mem: type              # register memory (a VectorRegisters subclass)
    lanes: int             # f32 lanes of one register
    regs: int              # registers of output channels in the tile
    cols: int              # output columns in the tile
    group: int             # channel blocks per pass over the input
    #                        (size-specialized kernels)
    load: Procedure        # reg[0:lanes] = mem[0:lanes]
    store_relu: Procedure  # mem[0:lanes] = relu(reg[0:lanes])
    fma: Procedure         # reg[0:lanes] += a[0] * reg_b[0:lanes]
    store: Procedure = None  # mem[0:lanes] = reg[0:lanes] (kc blocking)
    vregs: int = 16        # vector registers of the instruction set
    fma_bmem: Procedure = None  # reg[0:lanes] += a[0] * mem_b[0:lanes],
    #                             b read by the FMA (``_weights_in_memory``)

    @property
    def ob(self) -> int:
        """Output channels of the tile."""
        return self.regs * self.lanes

    @property
    def label(self) -> str:
        return f"{self.title} {self.cols}x{self.ob}"

    @property
    def kernel_name(self) -> str:
        return f"conv_{self.name}"

    def cpu_features(self) -> frozenset:
        out = set(self.mem.cpu_features)
        for i in (self.load, self.store_relu, self.fma, self.store,
                  self.fma_bmem):
            if i is not None:
                out |= i.cpu_features()
        return frozenset(out)


AVX512 = Isa(name="avx512", title="AVX-512", mem=_avx512.AVX512, lanes=16,
             regs=4, cols=5, group=1, load=_avx512.mm512_loadu_ps,
             store_relu=_avx512.mm512_storeu_relu_ps,
             fma=_avx512.mm512_fmadd_bcst_ps,
             store=_avx512.mm512_storeu_ps, vregs=32,
             fma_bmem=_avx512.mm512_fmadd_bcst_bmem_ps)

AVX2 = Isa(name="avx2", title="AVX2", mem=_avx2.AVX2, lanes=8, regs=2,
           cols=5, group=4, load=_avx2.mm256_loadu_ps,
           store_relu=_avx2.mm256_storeu_relu_ps,
           fma=_avx2.mm256_fmadd_bcst_ps,
           store=_avx2.mm256_storeu_ps, vregs=16,
           fma_bmem=_avx2.mm256_fmadd_bcst_bmem_ps)

#: best first (``--isa auto`` and the dispatcher take the first the CPU has)
ISAS = {isa.name: isa for isa in (AVX512, AVX2)}


# ---------------------------------------------------------------------------
# pointing

def _loops(root, name):
    try:
        return root.find(f"for {name} in _: _", many=True)
    except SchedulingError:
        return []


def _loop(root, name, k=0):
    """The k-th loop named ``name`` inside ``root`` (a cursor or a
    procedure), in program order."""
    found = _loops(root, name)
    if len(found) <= k:
        raise SchedulingError(f"schedule: no loop '{name}' #{k}")
    return found[k]


def _unroll_all(p, root, name):
    """Unroll every loop named ``name`` under ``root(p)``."""
    while _loops(root(p), name):
        p = p.unroll(_loop(root(p), name))
    return p


# ---------------------------------------------------------------------------
# one register tile

def _tile(p, root, isa, cols, tag, pack='W_pack[ky, kx, ic, 0:{ob}]',
          rows=0):
    """The nest ``[for xi in cols:] for oci in OB: {acc; init; reduce;
    store}`` that is ``root(p)`` -> a (cols x) ``regs`` x ``lanes`` tile of
    ``acc`` in registers: ``acc`` expanded over the tile's loops and lifted
    out of them, the init / reduction / store split apart (fission), the
    reduction loops moved outside the tile loops, one row of the packed
    weights staged in registers per reduction step (``W_reg`` + tag), every
    lane loop replaced by an instruction, the tile loops unrolled.
    ``rows``: the nest is ``for yi in rows: for xi: for oci`` (a tile of
    rows x cols pixels)."""
    L, R = isa.lanes, isa.regs
    p = p.split(_loop(root(p), 'oci'), L, 'ot', 'ol', tail='perfect')
    dims = [(L, 'ol'), (R, 'ot')] + ([(cols, 'xi')] if cols else []) + \
        ([(rows, 'yi')] if rows else [])
    for sz, it in dims:
        p = p.expand_dim(root(p).find('acc : _'), str(sz), it)
    p = p.lift_alloc(root(p).find('acc : _'), n_lifts=len(dims))
    p = p.fission_after(root(p).find('acc[_] = _'), n_lifts=len(dims))
    p = p.fission_after(_loop(root(p), 'ky'), n_lifts=len(dims))
    outer = dims[-1][1]                     # the tile's outermost loop
    red = lambda q: _loop(root(q), outer, 1)
    for _, it in dims:                      # innermost first
        for k in ('ky', 'kx', 'ic'):
            p = p.reorder(_loop(red(p), it), _loop(red(p), k))
    ic = lambda q: _loop(root(q), 'ic')
    wreg = f'W_reg{tag}'
    bmem = _weights_in_memory(isa, cols, rows)
    if bmem:        # the last register of weights read by its FMAs
        p = p.cut_loop(_loop(ic(p), 'ot'), str(R - 1))
        wblock = lambda q: _loop(ic(q), 'ot')
    else:
        wblock = lambda q: _loop(ic(q), outer)
    p = p.stage_mem(wblock(p), pack.format(ob=isa.ob - L if bmem
                                           else isa.ob), wreg)
    p = p.divide_dim(wreg, 0, L)
    p = p.split(wblock(p).prev(), L, 'wo', 'wl',    # the staged load
                tail='perfect')
    # registers and instructions
    p = p.set_memory(root(p).find('acc : _'), isa.mem)
    p = p.set_memory(wreg, isa.mem)
    for instr in (isa.load, isa.fma) + ((isa.fma_bmem,) if bmem else ()) \
            + (isa.store_relu,):
        p = p.replace(_loop(root(p), 'ol'), instr)
    p = p.replace(_loop(root(p), 'wl'), isa.load)
    for it in (['yi'] if rows else []) + (['xi'] if cols else []) + \
            ['ot', 'wo']:
        p = _unroll_all(p, root, it)
    return p


def _lane_tile(p, root, isa, cols, tag, oc):
    """``[for xj in cols:] for ol in lanes: {acc; init; reduce; store}``
    under ``root(p)`` (the ``ov`` loop over the whole registers of the
    channel tail) -> a (cols x) 1-register tile, as ``_tile`` builds but
    with the weights loaded straight from ``wt`` (a tail is too narrow to
    be worth packing); ``W_reg_c`` + tag holds them."""
    L, OB = isa.lanes, isa.ob
    dims = [(L, 'ol')] + ([(cols, 'xj')] if cols else [])
    for sz, it in dims:
        p = p.expand_dim(root(p).find('acc : _'), str(sz), it)
    p = p.lift_alloc(root(p).find('acc : _'), n_lifts=len(dims))
    p = p.fission_after(root(p).find('acc[_] = _'), n_lifts=len(dims))
    p = p.fission_after(_loop(root(p), 'ky'), n_lifts=len(dims))
    outer = dims[-1][1]
    red = lambda q: _loop(root(q), outer, 1)
    for _, it in dims:                      # innermost first
        for k in ('ky', 'kx', 'ic'):
            p = p.reorder(_loop(red(p), it), _loop(red(p), k))
    ic = lambda q: _loop(root(q), 'ic')
    c0 = f'{L} * ov + {OB} * ({oc} / {OB})'  # the register's first channel
    wreg = f'W_reg_c{tag}'
    p = p.stage_mem(_loop(ic(p), outer), f'wt[ky, kx, ic, {c0}:{c0} + {L}]',
                    wreg)
    p = p.set_memory(root(p).find('acc : _'), isa.mem)
    p = p.set_memory(wreg, isa.mem)
    for instr in (isa.load, isa.fma, isa.store_relu):
        p = p.replace(_loop(root(p), 'ol'), instr)
    p = p.replace(list(ic(p).body())[1], isa.load)  # after the allocation
    if cols:
        p = _unroll_all(p, root, 'xj')
    return p


def _weights_in_memory(isa, cols=None, rows=0) -> bool:
    """Whether the tile's FMAs read the last register of weights from
    the packed weights (``isa.fma_bmem``) instead of a register: when the
    accumulators and the weights take every vector register, none is
    left for the broadcast of the input, and GCC 12 then kept an
    accumulator on the stack (AVX-512 7x4: 28 + 4 of 32, AVX2 7x2 with
    16 ymm registers, ``-march=haswell``: 14 + 2; the k loop loaded and
    stored it in every step; ``hw_libs/avx512/fma_mem``). 16 for AVX2
    although AVX-512 machines give AVX2 code 32: the kernel is for AVX2
    machines too.
    ``cols`` (0: one column) and ``rows`` (0: one row) as in ``_tile``."""
    cols = isa.cols if cols is None else max(cols, 1)
    acc = cols * max(rows, 1) * isa.regs
    return isa.fma_bmem is not None and isa.regs > 1 and \
        acc + isa.regs >= isa.vregs


def _kc_tiles(p, isa, kc, fixed, at='image'):
    """Reduction blocking (the GEMM view: K = 9 IC, the pixels M, the
    channels of a block N): per channel block ``oco``, the accumulators
    of every output pixel go to a buffer ``acc[N, H, W / XB, XB, OB]``
    (``expand_dim`` x 5, ``lift_alloc``), initialized from the bias and
    stored through the ReLU in nests of their own (``fission_after``);
    the input channels are split in blocks of ``kc`` (``ico``) and that
    loop is moved outside the pixels (``reorder`` x 7: each pixel's sum
    stays the same sum, in the same order), so the weights of one
    ``[3, 3, kc, OB]`` block (36 KiB at kc = 32, OB = 32) stay in L1 while
    every pixel uses them; the XB x OB tile is staged from ``acc`` into
    registers around each block's reduction (``stage_mem``) with vector
    loads and stores, the rest as in ``_tile``. Pre-packed weights
    (``wp``), no tail columns. ``at='row'``: the same one output row at a
    time (``acc[W / XB, XB, OB]`` inside the row loop, ``ico`` moved
    outside the row's tiles only): a row's partial sums stay in L1 or L2
    instead of the whole image's, and each ``[3, 3, kc, OB]`` weight
    block is read from L2 once per row and reused by all its tiles."""
    N, H, W = fixed["N"], fixed["H"], fixed["W"]
    XB, OB, L = isa.cols, isa.ob, isa.lanes
    oco = lambda q: q.find_loop('oco')
    dims = [(OB, 'oci'), (XB, 'xi'), (W // XB, 'xo')]
    if at == 'image':
        dims += [(H, 'y'), (N, 'n')]
    for sz, it in dims:
        p = p.expand_dim(p.find('acc : _'), str(sz), it)
    p = p.lift_alloc(p.find('acc : _'), n_lifts=len(dims))
    p = p.fission_after(p.find('acc[_] = _'), n_lifts=len(dims))
    p = p.fission_after(p.find_loop('ky'), n_lifts=len(dims))
    red = lambda q: _loop(oco(q), dims[-1][1], 1)   # the reduction nest
    p = p.split(_loop(red(p), 'ic'), kc, 'ico', 'ici', tail='perfect')
    for _, name in [(0, 'kx'), (0, 'ky')] + dims:
        p = p.reorder(_loop(red(p), name), _loop(red(p), 'ico'))
    xr = lambda q: _loop(q.find_loop('ico'), 'xo')
    win = f'xo, 0:{XB}, 0:{OB}' if at == 'row' else \
        f'n, y, xo, 0:{XB}, 0:{OB}'
    p = p.stage_mem(_loop(xr(p), 'xi'), f'acc[{win}]', 'acc_r')
    for _ in range(2):                 # the load and the store nests
        p = p.split(_loop(xr(p), 'i1'), L, 'io', 'ii', tail='perfect')
    p = p.split(_loop(xr(p), 'oci'), L, 'ot', 'ol', tail='perfect')
    p = p.divide_dim('acc_r', 1, L)
    for it in ('ol', 'ot', 'xi'):
        for k in ('ky', 'kx', 'ici'):
            p = p.reorder(_loop(xr(p), it), _loop(xr(p), k))
    ici = lambda q: _loop(xr(q), 'ici')
    bmem = _weights_in_memory(isa)
    if bmem:        # the last register of weights read by its FMAs
        p = p.cut_loop(_loop(ici(p), 'ot'), str(isa.regs - 1))
        wblock = lambda q: _loop(_loop(ici(q), 'xi'), 'ot')
    else:
        wblock = lambda q: _loop(ici(q), 'xi')
    p = p.stage_mem(wblock(p), f'wp[oco, ky, kx, {kc} * ico + ici, '
                    f'0:{OB - L if bmem else OB}]', 'W_reg')
    p = p.divide_dim('W_reg', 0, L)
    p = p.split(wblock(p).prev(), L, 'wo', 'wl',   # the staged load
                tail='perfect')
    p = p.set_memory('acc_r', isa.mem)
    p = p.set_memory('W_reg', isa.mem)
    p = p.replace(_loop(xr(p), 'ii'), isa.load)
    p = p.replace(_loop(xr(p), 'ol'), isa.fma)
    if bmem:
        p = p.replace(_loop(xr(p), 'ol'), isa.fma_bmem)
    p = p.replace(_loop(xr(p), 'ii'), isa.store)
    p = p.replace(_loop(xr(p), 'wl'), isa.load)
    for it in ('i0', 'io', 'xi', 'ot', 'wo'):
        p = _unroll_all(p, xr, it)
    return p


@instr("_mm_prefetch((const char *)&{src_data}, _MM_HINT_T1);",
       "#include <immintrin.h>\n")
def mm_prefetch_t1(src: [f32][1] @ DRAM):
    """Prefetch the cache line holding ``src[0]`` into L2 (``prefetcht1``;
    SSE, any x86-64). As ``mm_prefetch_t0`` of the AVX2 library, whose
    body it copies: a read of ``src[0]`` into a local, so
    ``insert_noop_call`` may add it anywhere and proves the address
    inside its buffer. Into L2, not L1: the kc block it fetches ahead
    would otherwise evict the one being used from L1."""
    t: f32 @ DRAM
    t = src[0]


def _kc_prefetch(p, isa, kc, ic):
    """In every step ``ici`` of a kc block's register tile, prefetch into
    L2 the same weight row of the next kc block (``prefetcht1``, one per
    64-byte line of the ``OB`` channels): the weights of a layer larger
    than the L2 stream from L3, and the hardware prefetchers stop at each
    4 KiB ``(ky, kx)`` piece of a block. Every tile of the block issues
    them; the first brings the lines, the others find them in L2. The
    next block's index is taken modulo IC (``insert_noop_call`` proves
    the window inside ``wp``): the last block prefetches the first one
    again, which is in L2 already."""
    ici = lambda q: _loop(q.find_loop('ico'), 'ici')
    for c in reversed(range(0, isa.ob, 16)):
        row = (f'wp[oco, ky, kx, ({kc} * ico + {kc} + ici) % {ic}, '
               f'{c}:{c + 1}]')
        p = p.insert_noop_call(list(ici(p).body())[0].before(),
                               mm_prefetch_t1, [row])
    return p


def _channel_tail(p, isa, oc):
    """The OC % OB tail channels (``for x: for oci``) -> whole registers of
    them (``ov``) in XB x 1-register tiles, the W % XB tail columns in 1 x 1
    tiles, then the last (OC % OB) % lanes channels in scalar code (``oc``: OC
    or its fixed value)."""
    L, XB = isa.lanes, isa.cols
    p = p.split(p.find_loop('oci'), L, 'ov', 'ol', tail='cut')
    if len(list(p.find_loop('ov').parent().body())) > 1:
        p = p.fission_after(p.find_loop('ov'), n_lifts=1)   # (no scalar
    #                                   channels when OC is fixed, OC % OB a
    #                                   multiple of the lanes)
    p = p.split(p.find_loop('ov').parent(), XB, 'xv', 'xj', tail='cut')
    p = p.reorder(p.find_loop('xj'), p.find_loop('ov'))
    p = _lane_tile(p, lambda q: q.find_loop('ov'), isa, XB, '', oc)
    if len(_loops(p, 'ov')) < 2:       # no tail columns (W fixed, a
        return p                       # multiple of XB)
    return _lane_tile(p, lambda q: q.find_loop('ov #1'), isa, 0, '_t', oc)


def _par_rows(p, n_fixed, dynamic=False):
    """Every row loop ``y`` -> ``par``. With a fixed batch N > 1, each
    ``for n: for y`` nest is first collapsed into one loop ``ny`` over the
    N H rows of all images (``mult_loops``): one parallel region per
    channel block (group) instead of one per block and image (each region
    ends in a barrier, and the threads that slept through the gap take
    long to wake on a virtual machine), and N H rows to share out instead
    of H (5 x 28 rows on 2 threads: 70 each, with no image split)."""
    if n_fixed > 1:
        while True:
            nest = [n for n in _loops(p, 'n') if len(list(n.body())) == 1
                    and list(n.body())[0].is_loop()
                    and list(n.body())[0].name() == 'y']
            if not nest:
                break
            p = p.mult_loops(nest[0], list(nest[0].body())[0], 'ny')
        for k in range(len(_loops(p, 'ny'))):
            p = p.parallelize(_loop(p, 'ny', k), dynamic=dynamic)
    for k in range(len(_loops(p, 'y'))):
        p = p.parallelize(_loop(p, 'y', k), dynamic=dynamic)
    return p


def _par_split(p, outer, dynamic=False):
    """The channel-group (or block) loop ``outer`` and the rows under it
    collapsed into one par loop ``gy`` over (group, image, row)
    (``mult_loops`` twice: ``n`` with ``y``, then ``outer`` with the
    rows): with the static split each thread takes one
    contiguous range of it, so with at least as many groups as threads
    a thread owns about 1 / t of the output channels (it reads only its
    share of the weights, as with ``par='blocks'``) and the shares differ
    by at most one row even when the groups do not divide evenly over
    the threads (3 groups on 2 threads: 1.5 each, where 'blocks' gives 2
    and 1); with fewer groups than threads, the rows of each are
    shared (as ``par='rows'``), in one parallel loop instead of one per
    group. Needs the group loop's body to be the image (row) loop alone:
    pre-packed weights, no left-over blocks, no channel tail."""
    p = p.mult_loops(p.find_loop('n'), p.find_loop('y'), 'ny')
    p = p.mult_loops(p.find_loop(outer), p.find_loop('ny'), 'gy')
    return p.parallelize(p.find_loop('gy'), dynamic=dynamic)


def _par_bands(p, outer, rows, bands, dynamic=False):
    """The rows of every image (``n`` and ``y`` collapsed into ``ny``,
    ``rows`` = N H of them) in bands of ceil(rows / ``bands``)
    consecutive rows (``split``: at most ``bands`` bands, a guard for a
    last, shorter one), the band loop moved
    outside the channel-group loop ``outer`` (``reorder``) and run on
    threads: a thread takes a band and computes every channel group of
    it. Its share of the input stays in its L2 across the groups, the
    weights of each group stream through (each thread reads them all,
    once per group), and there is one par loop per call, with no barrier
    between the groups (``par='rows'`` has one par loop per group).
    Needs the group loop's body to be the rows alone (as ``_par_split``)."""
    p = p.mult_loops(p.find_loop('n'), p.find_loop('y'), 'ny')
    p = p.split(p.find_loop('ny'), -(-rows // bands), 'band', 'ny',
                tail='guard')
    p = p.reorder(p.find_loop(outer), p.find_loop('band'))
    return p.parallelize(p.find_loop('band'), dynamic=dynamic)


def stages(isa: Isa, fixed: dict = None, packed: bool = False,
           kc: int = 0, par: str = 'blocks', kc_at: str = 'image',
           rows: int = 1, prefetch: bool = False, dynamic: bool = False,
           bands: int = 0):
    """[(description, procedure)] after each group of rewrites of the
    algorithm, or of the algorithm with the sizes ``fixed`` ({name:
    value}) by ``partial_eval``. ``packed``: of ``conv_packed`` instead
    (the weights pre-packed in blocks of OB channels, ``pack_weights``),
    which needs all five sizes fixed and OC a multiple of OB; the same
    steps, minus the packing and the channel tail. ``kc`` > 0 (packed,
    no groups, W a multiple of the tile's columns, IC of ``kc``): the
    reduction in blocks of ``kc`` input channels (``_kc_tiles``; ``kc_at``
    'image' or 'row': where the partial sums are kept).
    ``par``: the loop run on threads, 'blocks' (the channel blocks or
    groups), 'rows' (the output rows, in each block), 'split' (groups
    and rows in one loop, ``_par_split``) or 'bands' (``bands`` bands of
    rows outside the groups, ``_par_bands``). ``rows`` > 1
    (packed, no groups, no kc, par on blocks, W a multiple of the
    columns): register tiles of ``rows`` output rows x XB columns (the
    H % rows last rows in 1-row tiles): each weight row loaded serves
    ``rows`` x XB pixels, the GEMM view's taller micro-tile, for layers
    whose rows are too short for a wide tile (W = 7). ``prefetch`` (with
    ``kc``): each kc block's tiles prefetch the next block's weights into
    L2 (``_kc_prefetch``)."""
    OB, XB = isa.ob, isa.cols
    fixed = fixed or {}
    if kc_at not in ('image', 'row'):
        raise SchedulingError(f"schedule: kc_at={kc_at!r}: 'image' or "
                              f"'row'")
    if par not in ('blocks', 'rows', 'split', 'bands'):
        raise SchedulingError(f"schedule: par={par!r}: 'blocks', 'rows', "
                              f"'split' or 'bands'")
    if par in ('split', 'bands') and (not packed or kc or rows > 1):
        raise SchedulingError(
            f"schedule: par={par!r} (groups and rows in one par loop) "
            f"needs pre-packed weights, no kc blocking and 1-row tiles")
    if par == 'bands' and bands < 1:
        raise SchedulingError(f"schedule: par='bands' needs bands >= 1, "
                              f"not {bands}")
    if rows < 1:
        raise SchedulingError(f"schedule: rows={rows} < 1")
    if rows > 1 and (not packed or isa.group != 1 or kc or par != 'blocks'
                     or fixed["W"] % XB):
        raise SchedulingError(
            "schedule: tiles of several rows need pre-packed weights, no "
            "groups, no kc, par on blocks and W a multiple of the columns")
    if prefetch and not kc:
        raise SchedulingError("schedule: prefetch needs kc blocking (it "
                              "fetches the next kc block's weights)")
    if kc:
        if not packed or isa.group != 1:
            raise SchedulingError("schedule: kc blocking needs pre-packed "
                                  "weights and no channel groups")
        if fixed["W"] % XB or fixed["IC"] % kc:
            raise SchedulingError(
                f"schedule: kc blocking needs W ({fixed['W']}) a multiple "
                f"of the tile's {XB} columns and IC ({fixed['IC']}) of kc "
                f"({kc})")
    if packed:
        if set(fixed) != {"N", "H", "W", "IC", "OC"}:
            raise SchedulingError("schedule: pre-packed weights need the "
                                  "sizes N, H, W, IC, OC fixed")
        if fixed["OC"] % OB:
            raise SchedulingError(
                f"schedule: pre-packed weights need OC ({fixed['OC']}) a "
                f"multiple of the channel block ({OB})")
        p = conv_packed.partial_eval(
            N=fixed["N"], H=fixed["H"], W=fixed["W"], IC=fixed["IC"],
            OCB=fixed["OC"] // OB, OB=OB)
    else:
        p = conv.partial_eval(**fixed) if fixed else conv
    out = [("the algorithm", p)]
    p = p.rename(isa.kernel_name)

    def step(what, q):
        out.append((what, q))
        return q

    # 1. output channels: blocks of OB outermost, then the OC % OB tail
    if not packed:                     # (conv_packed has its blocks)
        p = p.split(p.find_loop('oc'), OB, 'oco', 'oci', tail='cut')
    oc_tail = len(list(p.find_loop('oco').parent().body())) > 1
    if oc_tail:                        # (no tail when OC is a constant
        p = p.fission_after(p.find_loop('oco'), n_lifts=3)   # multiple)
    for name in ('x', 'y', 'n'):
        p = p.reorder(p.find_loop(name), p.find_loop('oco'))
    # 2. output columns: groups of XB, then the W % XB tail
    p = p.split(p.find_loop('x'), XB, 'xo', 'xi', tail='cut')
    p = step(f"blocks of {OB} output channels (outermost) and a tail of "
             f"OC % {OB}; groups of {XB} columns and a tail of W % {XB}", p)

    if rows > 1:
        p = p.split(p.find_loop('y'), rows, 'yo', 'yi', tail='cut')
        p = p.reorder(p.find_loop('yi'), p.find_loop('xo'))
        pack = 'wp[oco, ky, kx, ic, 0:{ob}]'
        p = _tile(p, lambda q: _loop(q.find_loop('yo'), 'xo'), isa, XB, '',
                  pack, rows=rows)
        if len(_loops(p, 'xo')) > 1:               # the H % rows last rows
            p = _tile(p, lambda q: _loops(q, 'xo')[-1], isa, XB, '_t', pack)
        p = step(f"{rows} x {XB} x {OB} register tiles (rows x columns x "
                 f"channels), {XB} x {OB} for the last H % {rows} rows", p)
        step("par: channel blocks",
             p.parallelize(p.find_loop('oco'), dynamic=dynamic))
        return out

    if kc:
        p = step(f"reduction in blocks of {kc} input channels around "
                 f"{XB} x {OB} register tiles of partial sums",
                 _kc_tiles(p, isa, kc, fixed, kc_at))
        if prefetch:
            p = step("the next kc block's weights prefetched into L2",
                     _kc_prefetch(p, isa, kc, fixed["IC"]))
        if par == 'rows':        # (the rows of the reduction nest: the
            red = p.find_loop('y') if kc_at == 'row' else \
                _loop(p.find_loop('ico'), 'y')     # others are short)
            step("par: rows", p.parallelize(red, dynamic=dynamic))
        else:
            step("par: channel blocks",
                 p.parallelize(p.find_loop('oco'), dynamic=dynamic))
        return out

    # 3. the weights of a channel block, packed once per block
    #    ([3, 3, IC, OB], contiguous in the order the kernel reads them);
    #    with groups, of G blocks ([G, 3, 3, IC, OB]) once per group, the
    #    G blocks innermost, under the column groups
    ic = str(fixed.get('IC', 'IC'))         # a size or its fixed value
    # (groups only with fixed sizes: on symbolic ones their index
    # arithmetic, OC / 64 and the like, makes the schedule's checks
    # several times slower, for a few per cent)
    G = isa.group if fixed else 1
    GB = G * OB
    rest = None                    # the blocks left over by the groups
    if G > 1:
        p = p.split(p.find_loop('oco'), G, 'og', 'ob', tail='cut')
        rest = lambda q: q.find_loop('og').next()
        try:                       # (none when OC is a constant multiple;
            r = rest(p)            # what follows may be the channel tail)
            if not (r.is_loop() and r.name() == 'ob'):
                rest = None
        except SchedulingError:
            rest = None
        if not packed:
            p = p.stage_mem(
                p.find_loop('ob'),
                f'wt[0:3, 0:3, 0:{ic}, {GB} * og:{GB} * og + {GB}]',
                'W_pack')
            p = p.divide_dim('W_pack', 3, OB)
            p = p.rearrange_dim('W_pack : _', [3, 0, 1, 2, 4])
        ob = lambda q: q.find_loop('ob')
        for name in ('n', 'y'):
            p = p.reorder(ob(p), p.find_loop(name))
        if len(list(ob(p).body())) > 1:        # the tail columns apart
            p = p.fission_after(_loop(ob(p), 'xo'), n_lifts=1)
        p = p.reorder(ob(p), p.find_loop('xo'))
        if rest and not packed:
            oc = str(fixed.get('OC', 'OC'))
            c0 = f'{OB} * ob + {GB} * ({oc} / {GB})'
            p = p.stage_mem(_loop(rest(p), 'n'),
                            f'wt[0:3, 0:3, 0:{ic}, {c0}:{c0} + {OB}]',
                            'W_pack_r')
        p = step(f"groups of {G} channel blocks: " + (
            "" if packed else "their weights packed once per group, ") +
            "the blocks under the column groups", p)
    elif not packed:
        p = p.stage_mem(p.find_loop('n'),
                        f'wt[0:3, 0:3, 0:{ic}, {OB} * oco:{OB} * oco + {OB}]',
                        'W_pack')
        p = step("weights of a channel block packed", p)

    # 4. the register tiles: XB x OB, then 1 x OB for the tail columns
    pack = 'W_pack[ob, ky, kx, ic, 0:{ob}]' if G > 1 else \
        'W_pack[ky, kx, ic, 0:{ob}]'
    if packed:
        pack = (f'wp[{G} * og + ob, ky, kx, ic, 0:{{ob}}]' if G > 1 else
                'wp[oco, ky, kx, ic, 0:{ob}]')
    main = lambda q: q.find_loop('xo')
    p = _tile(p, main, isa, XB, '', pack)
    tail = lambda q: _loop(q.find_loop('y'), 'xi')
    if _loops(p.find_loop('y'), 'xi'):     # (the main tile's are unrolled)
        p = _tile(p, tail, isa, 0, '_t', pack)
    if rest:
        pack = 'W_pack_r[ky, kx, ic, 0:{ob}]'
        if packed:
            pack = (f'wp[ob + {G * (fixed["OC"] // OB // G)}, ky, kx, ic, '
                    f'0:{{ob}}]')
        p = _tile(p, lambda q: _loop(rest(q), 'xo'), isa, XB, '_r', pack)
        if _loops(rest(p), 'xi'):
            p = _tile(p, lambda q: _loop(rest(q), 'xi'), isa, 0, '_rt',
                      pack)
    p = step(f"{XB} x {OB} and 1 x {OB} register tiles @ "
             f"{isa.mem.__name__}: {isa.load.name()}, {isa.fma.name()}, "
             f"{isa.store_relu.name()}", p)
    if oc_tail:
        p = step(f"tail channels: {XB} x {isa.lanes} and 1 x {isa.lanes} "
                 f"register tiles per whole register of them, the last "
                 f"OC % {OB} % {isa.lanes} scalar",
                 _channel_tail(p, isa, str(fixed.get('OC', 'OC'))))

    # 5. threads: the channel blocks (one parallel region per call; each
    #    block packs its own weights and writes its own channels of out),
    #    and the rows of the channel tail; or (par='rows') the rows of
    #    every nest, for layers with fewer blocks than threads (a
    #    parallel region per block and image)
    if par == 'rows':
        p = _par_rows(p, fixed.get("N", 0), dynamic)
        step("par: rows (of every image at once)" if fixed.get("N", 0) > 1
             else "par: rows", p)
        return out
    if par in ('split', 'bands'):
        if rest:
            raise SchedulingError(
                f"schedule: par={par!r} needs the groups to divide the "
                f"channel blocks (OC / {OB} = {fixed['OC'] // OB} blocks, "
                f"groups of {G})")
        outer = 'og' if G > 1 else 'oco'
        if par == 'split':
            p = _par_split(p, outer, dynamic)
            step("par: groups and rows in one loop, a contiguous share per "
                 "thread", p)
        else:
            p = _par_bands(p, outer, fixed["N"] * fixed["H"], bands,
                           dynamic)
            step(f"par: {bands} bands of rows, each with every group", p)
        return out
    if G > 1:
        p = p.parallelize(p.find_loop('og'), dynamic=dynamic)
        if rest:
            p = p.parallelize(rest(p), dynamic=dynamic)
    else:
        p = p.parallelize(p.find_loop('oco'), dynamic=dynamic)
    if oc_tail:
        p = p.parallelize(_loops(p, 'y')[-1], dynamic=dynamic)
    step("par: channel blocks", p)
    return out


def schedule(isa: Isa, fixed: dict = None, packed: bool = False,
             kc: int = 0, par: str = 'blocks', kc_at: str = 'image',
             rows: int = 1, prefetch: bool = False,
             dynamic: bool = False, bands: int = 0) -> Procedure:
    """The fully scheduled kernel, named ``isa.kernel_name`` (sizes
    ``fixed``, ``packed``, ``kc``, ``par``, ``kc_at``, ``rows``,
    ``prefetch``, ``dynamic`` and ``bands`` as in ``stages``)."""
    return stages(isa, fixed, packed, kc, par, kc_at, rows,
                  prefetch, dynamic, bands)[-1][1]


def specialized(isa: Isa, sizes: dict = None) -> Procedure:
    """The schedule of the algorithm with its sizes fixed first
    (``partial_eval``; default: Halide's layer), named
    ``conv_halide_<isa>``: constant strides and trip counts for the C
    compiler, and no tail nests where the sizes are multiples of the tile
    (the same steps, minus those on empty tails)."""
    sizes = HALIDE_SIZES if sizes is None else sizes
    return schedule(isa, sizes).rename(f"conv_halide_{isa.name}")
