"""The Python entry point: ``sgemm(A, B, C)`` on the best kernel this CPU
runs.

    from apps.sgemm.api import sgemm
    C = sgemm(A, B)                       # a new C = A @ B
    sgemm(A, B, C)                        # C += A @ B, in place
    sgemm(A, B, C, alpha=2.0, beta=0.5)   # C = 2 A @ B + 0.5 C, in place
    sgemm(A, B, C, alpha=2.0, beta=0.0)   # C = 2 A @ B: C is not read

float32, row-major (C-contiguous) matrices of any sizes below 2**31
(a size of 0 as BLAS has it: ``M`` or ``N`` = 0 changes nothing, ``K`` = 0
leaves ``beta * C``), aligned to a float, C writeable; alpha and beta real numbers, a finite one past
float32's range refused (``ValueError``), as a compiled procedure refuses
it (``apps/common/raw_call``: the checks the direct C call skips). The kernel
is scheduled and compiled on first use per instruction set (then cached
by this process and, for the C build, on disk). ``isa='auto'`` takes the
best instruction set the CPU has (AVX-512, else AVX2); naming one the CPU
lacks is an error unless emulation is on (``EXO_HL_EMULATE=1``). The
kernels run on ``OMP_NUM_THREADS`` threads (all cores by default), except
the products too small for threads (``Dispatch``), which run on a
one-thread kernel. With or without alpha/beta, a product runs the same
kernel (``Dispatch``: one-thread, column split, A unpacked (and B read
in place for at most ``narrow_b_m`` rows) or row split, the row split
with static row blocks for N below ``dynamic_min_n``).

The schedule's parameters (tile, KC, NC, MC, par loops) come from this
machine's tuning record (``exo-hl tune sgemm``), else from the BLIS
model of its caches (``apps/sgemm/tuning.py``); ``configuration(isa)``
says which. ``EXO_HL_SGEMM_PARAMS=model`` ignores the record,
``EXO_HL_SGEMM_PARAMS=fixed`` runs the base description (no NC blocking).
"""
from __future__ import annotations

import ctypes
import functools
import math
import os

import numpy as np

from apps.sgemm.schedule import (ISAS, alpha_beta, by_columns, narrow,
                                 sequential, stages, static_rows)
from apps.sgemm.tuning import configured
from apps.common import isa_choice as _common_isa
from apps.common.aligned import aligned_empty
from apps.common import raw_call as _raw_call
from apps.common.raw_call import raw_function
from apps.common.kernel_flags import kernel_compile_opts


def missing_features(isa) -> frozenset:
    return _common_isa.missing_features(isa)


#: (isa, emulated, note) or (None, None, one-line error), for a name
choose_isa = _common_isa.chooser(ISAS)


@functools.lru_cache(maxsize=None)
def configuration(isa_name: str):
    """(Isa, note): the parameters the kernels of ``isa_name`` use and
    where they come from (``tuning.configured``; ``EXO_HL_SGEMM_PARAMS``:
    auto, model or fixed)."""
    return configured(isa_name, os.environ.get("EXO_HL_SGEMM_PARAMS",
                                               "auto"))


@functools.lru_cache(maxsize=None)
def _scheduled(isa_name: str):
    """(threaded C += A @ B, C = alpha A @ B + beta C, the one-thread
    C += A @ B or None): the last two from the first one's stages."""
    isa, _ = configuration(isa_name)
    st = stages(isa)
    kernel = st[-1][1]
    one = sequential(isa, st) if isa.par_min else None
    cols = by_columns(isa, isa.nc_cols, st) if isa.nc_cols else None
    return kernel, alpha_beta(isa, kernel), one, cols


def procedures(isa_name: str):
    """(C += A @ B, C = alpha A @ B + beta C) scheduled for an ISA."""
    return _scheduled(isa_name)[:2]


def sequential_procedure(isa_name: str):
    """The one-thread C += A @ B for an ISA (``schedule.sequential``), or
    None when its parameters have no ``par_min``."""
    return _scheduled(isa_name)[2]


def columns_procedure(isa_name: str):
    """The C += A @ B for an ISA with the threads on column blocks
    (``schedule.by_columns``), or None when its parameters have no
    ``nc_cols`` (or are not blocked)."""
    return _scheduled(isa_name)[3]


@functools.lru_cache(maxsize=None)
def columns_alt_procedures(isa_name: str):
    """(C += A @ B, C = alpha A @ B + beta C) with the threads on column
    blocks of the second width ``nc_cols_alt`` (``by_columns``, suffix
    ``'_alt'``), or None without it; scheduled when the first product
    that runs them comes."""
    isa, _ = configuration(isa_name)
    if not isa.nc_cols_alt:
        return None
    kernel = by_columns(isa, isa.nc_cols_alt, suffix="_alt")
    if kernel is None:
        return None
    return kernel, alpha_beta(isa, kernel, "_cols_alt")


def _static_rows(isa) -> bool:
    """Whether the app has a static row-split kernel besides the dynamic
    one (``static_procedure``)."""
    return bool(isa.dynamic and isa.dynamic_min_n)


@functools.lru_cache(maxsize=None)
def static_procedure(isa_name: str):
    """The row-split C += A @ B with static row blocks for an ISA
    (``schedule.static_rows``), for products with N below
    ``dynamic_min_n``; None when its row blocks are not dynamic or it
    has no ``dynamic_min_n``."""
    isa, _ = configuration(isa_name)
    return static_rows(isa) if _static_rows(isa) else None


@functools.lru_cache(maxsize=None)
def static_alpha_beta_procedure(isa_name: str):
    """``C = alpha A @ B + beta C`` around ``static_procedure`` (None
    without it)."""
    isa, _ = configuration(isa_name)
    kernel = static_procedure(isa_name)
    return alpha_beta(isa, kernel, "_static") if kernel else None


@functools.lru_cache(maxsize=None)
def narrow_procedures(isa_name: str, pack_b: bool = True):
    """(threaded, one-thread) C += A @ B with A unpacked for an ISA
    (``schedule.narrow``), for products with N at most ``narrow_n``; None
    when its parameters have no ``narrow_n``. ``pack_b=False``: the pair
    that reads B in place too, for those of at most ``narrow_b_m`` rows
    (None without ``narrow_b_m``)."""
    isa, _ = configuration(isa_name)
    if not isa.narrow_n or not (pack_b or isa.narrow_b_m):
        return None
    return narrow(isa, pack_b)


@functools.lru_cache(maxsize=None)
def alpha_beta_procedures(isa_name: str):
    """(threaded, one-thread or None, column-split or None) ``C = alpha A
    @ B + beta C`` for an ISA: ``schedule.alpha_beta`` around each of the
    kernels ``Dispatch`` picks from (``procedures``,
    ``sequential_procedure``, ``columns_procedure``), the one-thread one
    with no par loop. All compute T = A @ B in the same order, so their C
    is the same, bit for bit; each is scheduled (checked) on first use."""
    isa, _ = configuration(isa_name)
    one = sequential_procedure(isa_name) if isa.par_min else None
    cols = columns_procedure(isa_name) if isa.nc_cols else None
    return (procedures(isa_name)[1],
            alpha_beta(isa, one, "_1t", par=False) if one else None,
            alpha_beta(isa, cols, "_cols") if cols else None)


@functools.lru_cache(maxsize=None)
def narrow_alpha_beta_procedures(isa_name: str, pack_b: bool = True):
    """(threaded, one-thread) ``C = alpha A @ B + beta C`` around the
    kernels with A unpacked (``narrow_procedures``, with ``pack_b``);
    None without them."""
    isa, _ = configuration(isa_name)
    kernels = narrow_procedures(isa_name, pack_b)
    if kernels is None:
        return None
    t = "_narrow" + ("" if pack_b else "_bip")
    return (alpha_beta(isa, kernels[0], t),
            alpha_beta(isa, kernels[1], t + "_1t", par=False))


class RawKernel:
    """A compiled SGEMM called straight through ctypes: the compiled
    callable's argument checks (shapes, dtypes, overlap: tens of
    microseconds) are done once here by ``sgemm``'s own checks, which
    matters for small matrices. Wraps a ``compile()`` result."""

    def __init__(self, compiled):
        self.compiled = compiled
        n_scalars = len(compiled.proc.args) - 6      # alpha, beta
        lib, self._fn, self._check = raw_function(
            compiled, 3, 3 + n_scalars,
            ("M", "N", "K") + ("alpha", "beta")[:n_scalars] + ("A", "B", "C"))
        self._lib = lib

    def __call__(self, M, N, K, *arrays):
        self._check(self._fn(None, M, N, K,
                             *(a.ctypes.data for a in arrays)))

    def call_ptrs(self, M, N, K, *ptrs):
        """The call on data addresses (``raw_call.float32_pointer``), for
        a caller that already has them; it keeps the arrays alive."""
        self._check(self._fn(None, M, N, K, *ptrs))

    def bound(self, M, N, K, *arrays):
        """A call of the kernel on these arrays with no arguments: their
        addresses are looked up once, here (numpy takes about a microsecond
        per array: for three, half the time of a 64^3 SGEMM), for
        benchmarks that time the kernel and not its caller. The callable
        keeps the arrays alive."""
        fn, ptrs = self._fn, tuple(a.ctypes.data for a in arrays)
        check = self._check

        def call(_keep=arrays):
            check(fn(None, M, N, K, *ptrs))
        return call


class Deferred:
    """A kernel built (scheduled and compiled: ``build()`` returns a
    ``RawKernel``) on its first call, for the kernels of ``Dispatch``
    that many programs never run (the alpha/beta ones)."""

    def __init__(self, build):
        self._build, self._kernel = build, None

    def kernel(self):
        """The ``RawKernel``, built on the first call."""
        if self._kernel is None:
            self._kernel = self._build()
        return self._kernel

    def __call__(self, M, N, K, *arrays):
        self.kernel()(M, N, K, *arrays)

    def call_ptrs(self, M, N, K, *ptrs):
        self.kernel().call_ptrs(M, N, K, *ptrs)

    def bound(self, M, N, K, *arrays):
        return self.kernel().bound(M, N, K, *arrays)


def whole_blocks(n: int, nc: int) -> bool:
    """Whether one thread runs ``n`` columns well as blocks of ``nc``: at
    least one block, and the last ``n % nc`` columns none, at least half
    a block, or beside at least four blocks. A narrow tail is a narrow
    product of its own (its tiles masked below NR columns). Measured on
    Zen 5 (one thread, column blocks of 256 against the square kernel,
    side by side): N = 560 (tail 48) -2%, 600 (88) level, 640 (128)
    +3%, 384 (128) +2%, 300 (44) -7%, 1100 (76, four blocks) +3%."""
    tail = n % nc
    return n >= nc and (tail == 0 or 2 * tail >= nc or n >= 4 * nc)


def imbalance(n: int, nc: int, threads: int) -> float:
    """How much longer than an even share of the ``n`` columns
    ``threads`` threads take on the ``n // nc`` column blocks of ``nc``
    (OpenMP's static schedule), then one of them on the last ``n % nc``
    columns: ``(ceil(blocks / threads) + (n % nc) / nc) * nc threads /
    n`` (1.0: even); infinite below two threads or a block each."""
    blocks = n // nc if nc else 0
    if threads < 2 or blocks < threads:
        return math.inf
    return (-(-blocks // threads) + (n % nc) / nc) * nc * threads / n


#: the column split runs when its imbalance is at most this: 1.15 on the
#: Xeon's evidence, lowered on Zen 5's (2 threads, quiet, side by side):
#: at 576^3 (2 blocks of 256 and 64 columns, 1.11) the column split ran
#: at 0.90x OpenBLAS, the row split 0.98x
EVEN_SLACK = 1.10


def even(n: int, nc: int, threads: int) -> bool:
    """Whether the column blocks of ``nc`` share out within
    ``EVEN_SLACK`` (``imbalance``)."""
    return imbalance(n, nc, threads) <= EVEN_SLACK


class Dispatch:
    """The kernel (``RawKernel``) for each product: the one-thread kernel
    (``one``) for the products too small for threads, M N K below
    ``par_min`` (OpenBLAS decides the same way, one thread below M N K =
    64^3 per thread); the kernel with the threads on column blocks of
    ``nc_cols`` (``cols``) for wide products (fewer rows than columns)
    whose column blocks share out evenly between the ``threads()``
    threads (``even``); the one-thread kernel again for fewer than two
    row blocks of MR rows (the threads split the row blocks: with one,
    the others would only wait); else the threaded kernel, whose threads
    split the row blocks. Before all that, a product with N at most
    ``narrow_n`` goes to ``narrow()``, the ``Dispatch`` of the kernels
    with A unpacked (``schedule.narrow``; a callable, so they are
    scheduled and compiled only when a narrow product first comes). With
    one OpenMP thread all run the same loops (a par loop is called
    directly, docs/api.md section 6). Where the threaded kernel would
    run, a product with N below ``dynamic_min_n`` runs ``static``
    instead (when given): the same kernel with static row blocks, for
    row blocks too small for a claim each (``tuning.dynamic_min_n``).
    Before that, a product of at most ``short_m`` rows (and ``short_n``
    columns, when given) goes to ``short()`` (when given), another
    ``Dispatch``: the narrow kernels' own uses it for the pair that reads
    B in place (``narrow_b_m``, ``narrow_b_n``). With ``cols_any_m`` the
    column-split kernel takes every product whose column blocks share
    out evenly, not only the wide ones: the app sets it when that
    kernel's blocks are narrow kernels (``Isa.cols_narrow``), where each
    thread runs the one-thread narrow kernel on its own columns: no A
    packed, its own packed B, one parallel region per call and no barrier
    but its end, against a region, a shared packing of B and its barrier
    per k block and column block for the row split (apps/sgemm/README.md,
    "Two threads: columns on narrow kernels"). On one thread the column
    blocks do not share out, but with ``cols_one_mk`` the products whose
    A has at most that many elements still run that kernel (the narrow
    kernel per column block; ``tuning.cols_one_mk``). With ``cols_alt``,
    the same kernel with blocks of ``nc_cols_alt``
    (``tuning.NC_COLS_ALT_PANELS``), the column split takes the width
    whose blocks share out more evenly (``imbalance``; ``nc_cols`` on a
    tie, neither above ``EVEN_SLACK``)."""

    def __init__(self, threaded, one=None, par_min=0, mr=1, cols=None,
                 nc_cols=0, threads=None, narrow=None, narrow_n=0,
                 static=None, dynamic_min_n=0, short=None, short_m=0,
                 short_n=0, cols_any_m=False, cols_one_mk=0,
                 cols_alt=None, nc_cols_alt=0):
        self.threaded, self.one, self.cols = threaded, one, cols
        self.par_min, self.mr, self.nc_cols = par_min, mr, nc_cols
        self.threads = threads
        self.narrow, self.narrow_n = narrow, narrow_n
        self.static, self.dynamic_min_n = static, dynamic_min_n
        self.short, self.short_m, self.short_n = short, short_m, short_n
        self.cols_any_m, self.cols_one_mk = cols_any_m, cols_one_mk
        self.cols_alt, self.nc_cols_alt = cols_alt, nc_cols_alt

    def pick(self, M, N, K):
        """The kernel that runs an M x N x K product."""
        if self.narrow is not None and N <= self.narrow_n:
            return self.narrow().pick(M, N, K)
        if self.short is not None and M <= self.short_m and \
                (not self.short_n or N <= self.short_n):
            return self.short().pick(M, N, K)
        if self.one is not None and M * N * K < self.par_min:
            return self.one
        if self.cols is not None and (M < N or self.cols_any_m):
            t = self.threads()
            if t == 1 and M * K <= self.cols_one_mk and \
                    whole_blocks(N, self.nc_cols):
                return self.cols
            a = imbalance(N, self.nc_cols, t)
            b = imbalance(N, self.nc_cols_alt, t) \
                if self.cols_alt is not None else math.inf
            if min(a, b) <= EVEN_SLACK:
                return self.cols if a <= b else self.cols_alt
        if self.one is not None and M < 2 * self.mr:
            return self.one
        if self.static is not None and N < self.dynamic_min_n:
            return self.static
        return self.threaded

    def __call__(self, M, N, K, *arrays):
        self.pick(M, N, K)(M, N, K, *arrays)

    def call_ptrs(self, M, N, K, *ptrs):
        """``RawKernel.call_ptrs`` of the kernel ``pick`` chooses."""
        self.pick(M, N, K).call_ptrs(M, N, K, *ptrs)

    def bound(self, M, N, K, *arrays):
        """``RawKernel.bound`` of the kernel ``pick`` chooses."""
        return self.pick(M, N, K).bound(M, N, K, *arrays)


def _raw(p, isa_name: str) -> "RawKernel":
    """``p`` compiled as the app's kernels of ``isa_name`` are
    (``kernel_flags``)."""
    return RawKernel(p.compile(**kernel_compile_opts(isa_name)))


@functools.lru_cache(maxsize=None)
def compiled(isa_name: str):
    """(``Dispatch`` of the C += A @ B kernels, ``Dispatch`` of the
    ``C = alpha A @ B + beta C`` kernels), compiled (``RawKernel``). Both
    pick the same way for a product (the alpha/beta kernels are the same
    kernels inside ``schedule.alpha_beta``); the alpha/beta ones, and the
    narrow products' kernels, are scheduled and compiled when the first
    product that runs them comes (``Deferred``, ``_narrow_dispatch``)."""
    plain = _raw(procedures(isa_name)[0], isa_name)
    isa, _ = configuration(isa_name)
    one = sequential_procedure(isa_name) if isa.par_min else None
    cols = columns_procedure(isa_name) if isa.nc_cols else None
    cols = _raw(cols, isa_name) if cols else None
    threads = None
    if cols is not None:     # the runtime the kernels' par loops run on
        try:
            threads = cols._lib.omp_get_max_threads
            threads.restype, threads.argtypes = ctypes.c_int, []
        except AttributeError:           # built without OpenMP
            threads = lambda: 1          # noqa: E731

    def scaled(i):
        return Deferred(lambda: _raw(
            alpha_beta_procedures(isa_name)[i], isa_name))

    def alt(i):
        return Deferred(lambda: _raw(
            columns_alt_procedures(isa_name)[i], isa_name)) \
            if cols is not None and isa.nc_cols_alt else None
    narrow = functools.partial(_narrow_dispatch, isa_name) \
        if isa.narrow_n else None
    narrow_scaled = functools.partial(_narrow_dispatch, isa_name, True) \
        if isa.narrow_n else None
    static = static_scaled = None
    if _static_rows(isa):            # scheduled on the first such product
        static = Deferred(lambda: _raw(
            static_procedure(isa_name), isa_name))
        static_scaled = Deferred(lambda: _raw(
            static_alpha_beta_procedure(isa_name), isa_name))
    return (Dispatch(plain, _raw(one, isa_name) if one else None,
                     isa.par_min, isa.mr, cols, isa.nc_cols, threads,
                     narrow, isa.narrow_n, static, isa.dynamic_min_n,
                     cols_any_m=isa.cols_narrow,
                     cols_one_mk=isa.cols_one_mk, cols_alt=alt(0),
                     nc_cols_alt=isa.nc_cols_alt),
            Dispatch(scaled(0), scaled(1) if one else None, isa.par_min,
                     isa.mr, scaled(2) if cols else None, isa.nc_cols,
                     threads, narrow_scaled, isa.narrow_n, static_scaled,
                     isa.dynamic_min_n, cols_any_m=isa.cols_narrow,
                     cols_one_mk=isa.cols_one_mk, cols_alt=alt(1),
                     nc_cols_alt=isa.nc_cols_alt))


@functools.lru_cache(maxsize=None)
def _narrow_dispatch(isa_name: str, scaled: bool = False,
                     pack_b: bool = True):
    """The ``Dispatch`` of the kernels with A unpacked (threaded, and
    one-thread below ``par_min`` or for one row block), compiled on first
    use; with ``scaled``, of their alpha/beta kernels. With ``pack_b``
    and ``narrow_b_m``, the products of at most ``narrow_b_m`` rows (and
    ``narrow_b_n`` columns) go to
    the ``Dispatch`` of the pair that reads B in place (``pack_b=False``,
    compiled when the first such product comes), one thread below M N K
    = ``narrow_b_par_min`` (else ``par_min``)."""
    isa, _ = configuration(isa_name)
    threaded, one = (narrow_alpha_beta_procedures if scaled
                     else narrow_procedures)(isa_name, pack_b)
    short = functools.partial(_narrow_dispatch, isa_name, scaled, False) \
        if pack_b and isa.narrow_b_m else None
    par_min = isa.par_min if pack_b else \
        (isa.narrow_b_par_min or isa.par_min)
    return Dispatch(_raw(threaded, isa_name),
                    _raw(one, isa_name) if par_min else None,
                    par_min, isa.narrow_mr or isa.mr, short=short,
                    short_m=isa.narrow_b_m if short else 0,
                    short_n=isa.narrow_b_n)


def aligned_zeros(shape, align=64):
    """A C-contiguous float32 array of zeros whose data starts on an
    ``align``-byte boundary. numpy puts large arrays 16 bytes past a cache
    line, so each 64-byte row piece of a C tile spans two lines; the AVX2
    kernel runs 2-3% slower on such a C (apps/sgemm/README.md)."""
    out = aligned_empty(shape, np.float32, align)
    out[...] = 0.0
    return out


#: the largest size a kernel takes (its sizes are 32-bit values)
MAX_DIM = _raw_call.MAX_DIM


def _matrix(x, name, written=False):
    """The checks a raw call skips (``raw_call.float32_pointer``); x's
    data address (0 for an empty matrix: no kernel is called then)."""
    return _raw_call.float32_pointer("sgemm", x, name, 2, written,
                                     empty_ok=True)


def _without_product(C, scalars):
    """``C`` after ``alpha * A @ B + beta * C`` when the product is not
    computed, as BLAS's sgemm does for ``K == 0`` or ``alpha == 0``
    (A and B are not read, so a NaN or an infinity in them does not reach
    C): ``beta * C`` in float32, C set to zero when ``beta == 0`` (not
    read) and left alone when ``beta == 1`` (or without alpha/beta,
    ``C += A @ B`` with an empty sum)."""
    if scalars is None or scalars[1][0] == 1.0:
        return C
    if scalars[1][0] == 0.0:
        C.fill(0.0)
    else:
        np.multiply(C, scalars[1][0], out=C)
    return C


def sgemm(A, B, C=None, *, alpha=None, beta=None, isa="auto"):
    """``C += A @ B`` (or, with ``alpha``/``beta``, ``C = alpha * A @ B +
    beta * C``) in place and returns C; without C, returns a new
    ``A @ B`` (its data cache-line aligned: ``aligned_zeros``).

    The rounding: T = A @ B (the kernel's order), then ``alpha * T + beta
    * C``. With ``beta == 0`` (either sign), as in BLAS, C is not read:
    C = ``alpha * T`` (NaN or an infinity in C on input does not reach
    the result). That product is the new-C one: C is set to zero (not
    read), the ``C += A @ B`` kernel ``Dispatch`` picks for the product
    adds T (the same kernel, so the same T bit for bit, that the
    alpha/beta kernel computes), then numpy multiplies it by alpha in
    float32 (skipped for alpha = 1): one rounding, as ``alpha * T``.

    As in BLAS, ``alpha == 0`` or ``K == 0`` does not compute the
    product (A and B are not read): C = ``beta * C`` (zero for ``beta ==
    0``); ``M`` or ``N`` = 0 returns C as it is."""
    ptrs = [_matrix(A, "A"), _matrix(B, "B")]
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2:
        raise ValueError(f"sgemm: A is {M}x{K} but B is {K2}x{N}")
    if C is None:
        if alpha is not None or beta is not None:
            raise ValueError("sgemm: alpha and beta need a C")
        C = aligned_zeros((M, N))
    ptrs.append(_matrix(C, "C", written=True))
    if C.shape != (M, N):
        raise ValueError(f"sgemm: C is {C.shape[0]}x{C.shape[1]}, "
                         f"A @ B is {M}x{N}")
    if np.may_share_memory(C, A) or np.may_share_memory(C, B):
        raise ValueError("sgemm: C must not overlap A or B")
    scalars = None if alpha is None and beta is None else tuple(
        _raw_call.float32_scalar("sgemm", 1.0 if v is None else v, name)
        for v, name in ((alpha, "alpha"), (beta, "beta")))
    if M == 0 or N == 0:
        return C
    if K == 0 or scalars is not None and scalars[0][0] == 0.0:
        return _without_product(C, scalars)
    chosen, _, note = choose_isa(isa)
    if chosen is None:
        raise RuntimeError(f"sgemm: {note}")
    plain, scaled = compiled(chosen.name)
    if scalars is None:
        plain.call_ptrs(M, N, K, *ptrs)
    elif scalars[1][0] == 0.0:
        # BLAS: beta = 0 does not read C (0 * NaN would be NaN)
        C.fill(0.0)
        plain.call_ptrs(M, N, K, *ptrs)
        if scalars[0][0] != 1.0:
            np.multiply(C, scalars[0][0], out=C)
    else:
        scaled.call_ptrs(M, N, K, *(x.ctypes.data for x in scalars),
                         *ptrs)
    return C
