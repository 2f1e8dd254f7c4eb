"""apps/sgemm: one schedule of checked rewrites, parametrized by an
instruction-set description, gives an AVX2 6x16 and an AVX-512 6x32 SGEMM
for any M, N, K >= 1 (k blocks with a K % KC block, row and column tails,
packed A and B, par row blocks). Results are compared with numpy: exactly
on small-integer data (every partial sum is an exact integer), within a
tolerance on random data; interpreted and compiled, on 1 and 2 threads.
The AVX-512 kernel runs through the emulation layer on hosts without it;
scheduling it (like the CLI, run.py and bench.py runs, which schedule in a
child process) takes long, so those tests are marked slow."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import set_openmp_threads  # noqa: E402
from apps.common.peak import (CHAINS, PeakUnavailable, fma_peak,  # noqa: E402
                              probe_source)
from apps.sgemm import api  # noqa: E402
from apps.sgemm.schedule import (AVX2, AVX512, ISAS, Isa,  # noqa: E402
                                 alpha_beta, k_block, row_tiles, sgemm,
                                 sequential, stages)
from apps.sgemm.schedule import \
    sgemm_alpha_beta as alpha_beta_algorithm  # noqa: E402
from exo_hl import SchedulingError, compile_procs  # noqa: E402

APP = REPO / "apps" / "sgemm"


class _Chain:
    """The AVX2 chain, built once, in the first test that needs it: built
    inside a test, its 160-odd procedures fall under the suite audit's
    per-test cap (tests/conftest.py) instead of all being compiled twice
    and reparsed (minutes)."""

    def __init__(self):
        self.stages = stages(AVX2)
        self.fast = self.stages[-1][1]
        self.ab = alpha_beta(AVX2, self.fast)
        self.compiled = self.fast.compile()
        self.compiled_ab = self.ab.compile()

    def stage(self, prefix):
        return next(p for w, p in self.stages if w.startswith(prefix))


@pytest.fixture(scope="module")
def chain():
    return _Chain()

# edge cases of every tail: 1 row/column/k step, rows < MR, columns < a
# register, a register plus a tail, K < KC, K = KC, K = KC + tail
EDGE_SHAPES = [(1, 1, 1), (7, 7, 7), (1, 16, 256), (6, 16, 256),
               (5, 3, 257), (13, 37, 300), (127, 64, 300), (31, 129, 7),
               (12, 24, 513), (2, 1000, 3),
               # every count of tail rows (M % 6 = 2, 3, 4, 5: tiles of
               # 2, 2 + 1, 4, 4 + 1 rows)
               (8, 33, 260), (9, 48, 256), (4, 17, 1), (10, 50, 300),
               (11, 40, 256), (3, 16, 513)]


def _host_has(flag):
    """What the CPU has (for C that tests the CPU itself)."""
    with open("/proc/cpuinfo") as f:
        return any(flag in line.split() for line in f
                   if line.startswith("flags"))


def _needs_emulation(flag):
    """Whether ``compile()`` sees the CPU lacking ``flag``: it honours
    ``EXO_HL_HOST_CPU`` (a run that pretends to be an AVX2-only host)."""
    from exo_hl.codegen_c.host_cpu import host_features
    return flag not in host_features([flag])


def _ints(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32)


def _random_shapes(seed, n, hi):
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in rng.integers(1, hi, 3)) for _ in range(n)]


@pytest.fixture
def threads():
    """Run the test body's kernels on a given OpenMP thread count."""
    used = []

    def use(n):
        assert set_openmp_threads(n)
        used.append(n)
    yield use
    if used:
        set_openmp_threads(os.cpu_count() or 1)


# ---------------------------------------------------------------------------
# the schedule

def test_schedule_shape(chain):
    FAST = chain.fast
    text = str(FAST)
    assert "assert" not in text                 # no preconditions
    kc = AVX2.kc
    # the packed panels are cache-line aligned (heap and stack), one row
    # apart (PANEL_PAD_ROWS: not a power of two apart)
    assert f"B_pack: f32[(N + 15) / 16, {kc + 1}, 16] @ DRAM_ALIGNED\n" \
        in text
    assert "B_pack_t: f32[(N + 15) / 16, K % 512 + 1, 16] @ DRAM_ALIGNED\n" \
        in text
    assert f"A_pack: f32[6, {kc}] @ DRAM_STATIC_ALIGNED\n" in text
    # the last k block's (K % KC columns) fits the same stack block
    assert f"A_pack_t: f32[6, {kc}] @ DRAM_STATIC_ALIGNED\n" in text
    assert "C_reg: f32[6, 2, 8] @ AVX2" in text   # the 6x16 tile
    assert "R4_reg: f32[4, 2, 8] @ AVX2" in text  # 4 tail rows
    assert "R2_reg: f32[2, 2, 8] @ AVX2" in text  # 2 tail rows
    assert "R_reg: f32[2, 8] @ AVX2" in text      # a tail row
    assert "V_reg: f32[6, 8] @ AVX2" in text      # tail columns
    assert "W_reg: f32[6, 8] @ AVX2" in text      # the last, masked ones
    assert "X_reg: f32[8] @ AVX2" in text         # tail rows x tail columns:
    assert "Y_reg: f32[8] @ AVX2" in text         # a register, a masked one
    assert f"if K % {kc} > 0:" in text            # the last k block
    # the only calls are the six instructions; the FMA once per
    # accumulator of the six kernels (6, 4, 2 and 1 rows x 16, 6 x 8, and
    # the corner's 1 x 8), the masked FMA once per row of the masked 6 x 8
    # tile and once in the corner, in both k blocks
    calls = set(re.findall(r"(\w+)\(", text)) - {"seq", "par",
                                                   FAST.name()}
    assert calls == {"mm256_loadu_ps", "mm256_storeu_ps",
                     "mm256_fmadd_bcst_ps", "mm256_maskload_ps",
                     "mm256_prefix_store_ps", "mm256_prefix_fmadd_bcst_ps"}
    assert text.count("mm256_fmadd_bcst_ps(") == 2 * (12 + 8 + 4 + 2 + 6
                                                      + 1)
    assert text.count("mm256_prefix_fmadd_bcst_ps(") == 2 * (6 + 1)
    # 6 rows of C and one row of B per k step, loaded with a mask, and
    # in the corner one row of each
    assert text.count("mm256_maskload_ps(") == 2 * (6 + 1 + 2)
    # one scalar update of C is left: the last block's nest in the branch
    # where K % KC == 0, whose k loop runs zero times
    updates = [line for line in text.splitlines()
               if "+=" in line and "C[" in line]
    assert len(updates) == 1 and "C[i, j] +=" in updates[0]
    # packing and the row blocks (with their column tails) are parallel,
    # in both k blocks: two par loops per k block
    assert text.count("in par(") == 4
    assert "for cio in" not in text                # joined the row blocks
    assert FAST.cpu_features() == {"avx2", "fma"}
    c = FAST.c_code_str()
    assert "__m256 C_reg[12];" in c and "_mm256_fmadd_ps(" in c
    assert c.count("_Alignas(64) float A_pack") == 2
    # the heap panels through exo_hl_malloc (on a 64-byte line, the size
    # checked for overflow and the block for NULL), no unchecked allocation
    assert c.count("exo_hl_malloc(&exo_hl_status") == 2
    assert c.count("aligned_alloc(") == 1 and " malloc(" not in c
    # each par loop is outlined (a target function: codegen_c/outline.py);
    # the two of a k block share one parallel region, a barrier between
    assert c.count("#pragma omp parallel\n") == 2
    assert c.count("#pragma omp barrier\n") == 2
    assert c.count("exo_hl_share(") == 2 * 4 + 1   # 4 loops, the helper
    # every stage is derived from the algorithm by checked rewrites
    assert FAST.derivation()[0][1].ir() is sgemm.ir()
    assert len(FAST.derivation()) > 100


def test_micro_benchmark_finds_the_tile(chain):
    """ukernel_bench.py times the generated tile alone: the C it extracts
    is one whole tile (C loaded, the k loop, C stored), nothing more."""
    from apps.sgemm.ukernel_bench import tile_body
    body = tile_body(chain.fast.c_code_str(), AVX2.nr)
    assert body.count("_mm256_loadu_ps(&C[") == 12
    assert body.count("_mm256_storeu_ps(&C[") == 12
    assert body.count("_mm256_fmadd_ps(") == 12
    assert body.count("for (") == 1 and "A_pack[" in body
    assert "jv" not in body and "B_pack[jo" in body


def test_k_block_from_the_cache_sizes():
    assert k_block(6, {1: 32 << 10}) == 256        # 6 KiB block of A
    assert k_block(6, {1: 64 << 10}) == 512
    assert k_block(6, {}) == 256                   # the default L1
    assert k_block(14, {1: 32 << 10}) == 128       # at least 128
    assert k_block(6, {1: 1 << 30}) == 512         # at most 512
    assert AVX2.kc == k_block(6) and AVX512.kc == k_block(6)


def test_row_tiles():
    assert row_tiles(6) == [4, 2, 1]
    assert row_tiles(8) == [4, 2, 1]
    assert row_tiles(14) == [8, 4, 2, 1]
    assert row_tiles(2) == [1]
    # every count of tail rows is a sum of distinct tiles
    for mr in (2, 6, 8, 14):
        tiles = row_tiles(mr)
        for rest in range(mr):
            left = rest
            for r in tiles:
                left -= r if left >= r else 0
            assert left == 0, (mr, rest)


def test_descriptions():
    assert (AVX2.mr, AVX2.nr, AVX2.lanes, AVX2.regs) == (6, 16, 8, 2)
    assert (AVX512.mr, AVX512.nr, AVX512.lanes, AVX512.regs) == (6, 32, 16, 2)
    assert AVX2.cpu_features() == {"avx2", "fma"}
    assert AVX512.cpu_features() == {"avx512f"}
    assert list(ISAS) == ["avx512", "avx2"]             # best first
    with pytest.raises(ValueError, match="multiple of 16 lanes"):
        dataclasses.replace(AVX512, nr=40)
    assert isinstance(AVX2, Isa)


def test_every_stage_agrees_on_the_interpreter(chain):
    """Each stage computes the same, on a problem that reaches every nest
    (both k blocks, tail rows, a register of tail columns and a masked
    one)."""
    rng = np.random.default_rng(2)
    n, k = 16 + 8 + 3, AVX2.kc + 3
    for m in (11, 9):        # tail rows in tiles of 4 + 1, then 2 + 1
        A, B, C0 = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        want = C0 + A @ B
        for what, p in chain.stages:
            C = C0.copy()
            p.interpret(M=m, N=n, K=k, A=A, B=B, C=C)
            assert np.array_equal(C, want), (m, what)


# ---------------------------------------------------------------------------
# numbers

@pytest.mark.parametrize("nthreads", [1, 2])
def test_compiled_equals_numpy_exactly(chain, threads, nthreads):
    threads(nthreads)
    f = chain.compiled
    rng = np.random.default_rng(nthreads)
    for m, n, k in EDGE_SHAPES + _random_shapes(nthreads, 6, 140):
        A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        want = C + A @ B
        f(m, n, k, A, B, C)
        assert np.array_equal(C, want), (m, n, k)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_float_data_close_to_numpy(chain, threads, nthreads):
    threads(nthreads)
    rng = np.random.default_rng(3)
    for m, n, k in [(127, 64, 300), (64, 61, 700), (200, 130, 90)]:
        A = rng.standard_normal((m, k), dtype=np.float32)
        B = rng.standard_normal((k, n), dtype=np.float32)
        C = rng.standard_normal((m, n), dtype=np.float32)
        want = C.astype(np.float64) + A.astype(np.float64) @ B
        chain.compiled(m, n, k, A, B, C)
        assert np.max(np.abs(C - want)) / np.max(np.abs(want)) < 1e-5


def test_alpha_beta(chain, threads):
    threads(2)
    f, AB = chain.compiled_ab, chain.ab
    text = str(AB)
    assert f"{chain.fast.name()}(M, N, K, A, B, T)" in text
    assert text.count("in par(") == 2
    rng = np.random.default_rng(4)
    for (m, n, k), (al, be) in zip(EDGE_SHAPES[:6],
                                   [(1, 1), (2, -3), (0, 1), (-1, 0),
                                    (0.5, 2), (3, 0.25)]):
        A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        a, b = np.float32(al), np.float32(be)
        want = a * (A @ B) + b * C
        f(m, n, k, np.array([a]), np.array([b]), A, B, C)
        assert np.array_equal(C, want), (m, n, k)
    # interpreted, too
    A, B, C = _ints(rng, 7, 5), _ints(rng, 5, 19), _ints(rng, 7, 19)
    want = 2 * (A @ B) - C
    AB.interpret(M=7, N=19, K=5, alpha=np.array([2.0], np.float32),
                 beta=np.array([-1.0], np.float32), A=A, B=B, C=C)
    assert np.array_equal(C, want)


# ---------------------------------------------------------------------------
# safety: the steps the schedule takes are checked, unsafe ones refused

def test_unsafe_steps_are_rejected(chain):
    blocked = chain.stage("k blocks")
    # every k block writes all of C: the blocks are not independent
    with pytest.raises(SchedulingError, match="race"):
        blocked.parallelize('ko')
    # nor are the k steps (a reduction into C[i, j])
    with pytest.raises(SchedulingError, match="race"):
        sgemm.parallelize('k')
    # without a precondition, N % 16 == 0 cannot be proven
    with pytest.raises(SchedulingError, match="divisible"):
        sgemm.split('j', 16, 'jo', 'jj', tail='perfect')
    tiles = chain.stage("per block")
    # a register tile that does not cover the accesses in the k block
    k = tiles.find_loop('k')
    with pytest.raises(SchedulingError, match="cover"):
        tiles.stage_mem(k, 'C[6 * io:6 * io + 6, 16 * jo:16 * jo + 8]', 'T')
    # the row-block loop runs M / 6 times: not a constant, not unrollable
    with pytest.raises(SchedulingError):
        tiles.unroll('io')
    staged = chain.stage("register tiles")
    assert "C_reg: f32[6, 2, 8] @ DRAM" in str(staged)
    # a register instruction over a DRAM buffer: memories must match
    load = staged.find_loop('cli')
    with pytest.raises(SchedulingError, match="memory AVX2"):
        staged.replace(load, AVX2.load)
    # the masked tile of the last N % 16 % 8 columns: its update runs only
    # in the lanes inside C (jn < m), so the plain FMA, which updates
    # every lane, does not match it, and the lane test cannot be widened
    masked = staged.find_loop('jn')
    with pytest.raises(SchedulingError):
        staged.set_memory('W_reg', AVX2.mem).set_memory(
            'WB_reg', AVX2.mem).replace(masked, AVX2.fma)
    with pytest.raises(SchedulingError, match="cannot prove"):
        staged.rewrite_expr(masked.body()[0].find('_ < _'), 'jn < 8')
    # 16-lane registers cannot hold rows of 8
    with pytest.raises(SchedulingError, match="last dimension of 16"):
        staged.set_memory('C_reg', AVX512.mem)
    regs = chain.stage("registers")
    block = [s for s in regs.find_loop('ko').body() if s.is_loop()]
    pack, rows = block[0], block[1]
    assert (pack.name(), rows.name(), block[2].name()) == ('jo', 'io', 'q4')
    # the row blocks read the panels the packing loop writes: they cannot
    # run before it
    with pytest.raises(SchedulingError, match="do not commute"):
        regs.reorder_stmts(pack, rows)
    # the row blocks and the 4-row tail tile write different rows of C:
    # they commute (the schedule moves the column tails past the tail rows
    # the same way); but they are no loops of equal bounds to fuse
    assert regs.reorder_stmts(rows, block[2]) is not None
    with pytest.raises(SchedulingError, match="cannot be proven equal"):
        regs.fuse_loop(rows, block[2])


def test_packing_needs_enough_slots(chain):
    """expand_dim refuses a packed buffer with fewer panels than column
    blocks (the schedule's B_pack has (N + 15) / 16)."""
    tiles = chain.stage("per block")
    p = tiles.reorder('ii', 'jo')
    p = p.reorder('io', 'jo')
    kc = AVX2.kc
    p = p.stage_mem(p.find_loop('io'),
                    f'B[{kc} * ko:{kc} * ko + {kc}, 16 * jo:16 * jo + 16]',
                    'P')
    with pytest.raises(SchedulingError):
        p.expand_dim('P', 'N / 32', 'jo')
    assert "P: f32[(N + 15) / 16" in str(
        p.expand_dim('P', '(N + 15) / 16', 'jo'))


# ---------------------------------------------------------------------------
# entry points

def _clear_api_caches():
    """The entry point's per-ISA caches (a test that patches what they
    are built from clears them before and after; a patched one is no
    cache)."""
    for f in (api.compiled, api._narrow_dispatch, api._scheduled,
              api.narrow_procedures, api.alpha_beta_procedures,
              api.narrow_alpha_beta_procedures):
        getattr(f, "cache_clear", lambda: None)()


def test_python_entry_point(chain, monkeypatch):
    # the module's AVX2 chain instead of scheduling it again
    monkeypatch.setattr(api, "procedures",
                        lambda name: (chain.fast, chain.ab))
    monkeypatch.setattr(api, "sequential_procedure",
                        lambda name: sequential(AVX2, chain.stages))
    monkeypatch.setattr(api, "choose_isa",
                        lambda name="auto": (AVX2, False, "test"))
    # the narrow products' kernels (A unpacked: test_narrow_kernels_...)
    # replaced by the same chain's too, to schedule nothing more here
    monkeypatch.setattr(api, "narrow_procedures",
                        lambda name, pack_b=True: (
                            chain.fast, sequential(AVX2, chain.stages)))
    _clear_api_caches()
    rng = np.random.default_rng(5)
    A, B, C = _ints(rng, 13, 300), _ints(rng, 300, 37), _ints(rng, 13, 37)
    new = api.sgemm(A, B)
    assert np.array_equal(new, A @ B)
    assert new.ctypes.data % 64 == 0 and new.flags.c_contiguous
    for shape in ((1, 1), (3, 5), (1000, 1000)):
        z = api.aligned_zeros(shape)
        assert z.shape == shape and z.dtype == np.float32
        assert z.ctypes.data % 64 == 0 and not z.any()
    want = C + A @ B
    out = api.sgemm(A, B, C)
    assert out is C and np.array_equal(C, want)
    C2 = C.copy()
    api.sgemm(A, B, C2, alpha=2.0, beta=-1.0)
    assert np.array_equal(C2, 2 * (A @ B) - C)
    C2[...] = np.nan                      # beta = 0: C is not read
    api.sgemm(A, B, C2, alpha=2.0, beta=0.0)
    assert np.array_equal(C2, 2 * (A @ B))
    with pytest.raises(ValueError, match="13x300"):
        api.sgemm(A, A)
    with pytest.raises(TypeError, match="float32"):
        api.sgemm(A.astype(np.float64), B)
    with pytest.raises(TypeError, match="C-contiguous"):
        api.sgemm(A, B, np.zeros((37, 13), np.float32).T)
    X, Y = np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="overlap"):
        api.sgemm(X, Y, X)
    with pytest.raises(ValueError, match="need a C"):
        api.sgemm(X, Y, alpha=2.0)
    # a read-only C was written (a read-only mapping crashed the process),
    # an array alpha silently lost all but its first element
    R = np.zeros((4, 4), np.float32)
    R.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        api.sgemm(X, Y, R)
    assert not R.any()
    Z = np.zeros((4, 4), np.float32)
    for bad in (np.array([3.0, 100.0]), "2", True, 1j):
        with pytest.raises(TypeError, match="alpha must be a real number"):
            api.sgemm(X, Y, Z, alpha=bad)
    api.sgemm(X, Y, Z, alpha=np.float64(0.5), beta=np.array(2.0))
    assert (Z == 2.0).all()
    # a size past 32 bits went to the kernel unchecked (a view: no memory)
    tall = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32),
                                           shape=(2**31, 1), strides=(4, 4))
    assert tall.flags.c_contiguous
    with pytest.raises(ValueError, match="sizes above 2147483647"):
        api.sgemm(tall, np.ones((1, 1), np.float32))
    _clear_api_caches()


def test_one_thread_kernel(chain):
    """``sequential``: the chain stopped before its par loops, renamed;
    no parallel region in its C; it equals numpy, interpreted on a shape
    that reaches every nest and compiled on every tail shape."""
    one = sequential(AVX2, chain.stages)
    assert one.name() == "sgemm_avx2_1t"
    assert " par(" in str(chain.fast) and " par(" not in str(one)
    assert "#pragma omp" not in one.c_code_str()
    rng = np.random.default_rng(12)
    m, n, k = 11, 16 + 8 + 3, AVX2.kc + 3
    A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
    want = C + A @ B
    one.interpret(M=m, N=n, K=k, A=A, B=B, C=C)
    assert np.array_equal(C, want)
    f = one.compile()
    for m, n, k in EDGE_SHAPES:
        A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        want = C + A @ B
        f(m, n, k, A, B, C)
        assert np.array_equal(C, want), (m, n, k)


def test_dispatch_runs_small_products_on_one_thread():
    """``api.Dispatch``: the one-thread kernel below ``par_min`` (M N K);
    the column-split kernel for wide products whose column blocks share
    out evenly; the one-thread kernel for fewer than two row blocks;
    else the threaded one; without the others, always the threaded
    one."""
    ran = []

    class Fake:
        def __init__(self, name):
            self.name = name

        def __call__(self, M, N, K, *arrays):
            ran.append(self.name)

        def bound(self, M, N, K, *arrays):
            return self.name
    d = api.Dispatch(Fake("par"), Fake("one"), par_min=1000, mr=6)
    d(9, 10, 10)                          # 900 < 1000
    d(12, 10, 10)                         # 1200, two row blocks
    d(11, 100, 100)                       # one row block of 6
    assert ran == ["one", "par", "one"]
    assert d.bound(12, 10, 8) == "one" and d.bound(12, 10, 10) == "par"
    assert api.Dispatch(Fake("par")).bound(1, 1, 1) == "par"
    # wide products on the column blocks, when they share out evenly
    count = [2]
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: count[0])
    assert d.bound(128, 2048, 512) == "cols"          # 4 blocks each
    assert d.bound(256, 1024, 512) == "cols"          # 2 blocks each
    assert d.bound(1024, 256, 512) == "par"           # tall
    assert d.bound(2048, 2048, 512) == "par"          # square
    assert d.bound(128, 1000, 512) == "par"           # 3 blocks + 232
    assert d.bound(128, 300, 512) == "par"            # one block
    assert d.bound(11, 2048, 5) == "cols"             # one row block
    assert d.bound(11, 1000, 5) == "one"              # uneven
    count[0] = 1
    assert d.bound(128, 2048, 512) == "par"           # one thread
    # with narrow column blocks (cols_any_m), any M when they share out
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: 2, cols_any_m=True)
    assert d.bound(2048, 2048, 2048) == "cols"        # square
    assert d.bound(4099, 1024, 300) == "cols"         # tall
    assert d.bound(1536, 1536, 1536) == "cols"        # 3 blocks each
    assert d.bound(768, 768, 768) == "par"            # 3 blocks on 2
    assert d.bound(1000, 1000, 1000) == "par"         # 3 blocks + 232
    assert d.bound(256, 256, 256) == "par"            # one block
    # on one thread, the column blocks for an A of at most cols_one_mk
    # elements (M K) and whole enough blocks (api.whole_blocks)
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: 1, cols_any_m=True, cols_one_mk=1024 * 1024)
    assert d.bound(1024, 1024, 1024) == "cols"        # A: 1 M elements
    assert d.bound(1024, 1024, 1025) == "par"         # one more column
    assert d.bound(128, 2048, 512) == "cols"
    assert d.bound(2048, 1000, 512) == "cols"         # blocks + a tail
    assert d.bound(300, 384, 300) == "cols"           # a block + half
    assert d.bound(300, 300, 300) == "par"            # a narrow tail
    assert d.bound(300, 560, 300) == "par"
    assert d.bound(300, 1100, 300) == "cols"          # beside 4 blocks
    assert d.bound(300, 255, 300) == "par"            # under a block
    assert d.bound(1, 600, 1) == "one"                # below par_min
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: 1, cols_any_m=True)
    assert d.bound(1024, 1024, 1024) == "par"         # no cols_one_mk
    # a second column width for N that shares out in it, not in nc_cols
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: 2, cols_any_m=True, cols_alt=Fake("alt"),
                     nc_cols_alt=192)
    assert d.bound(384, 384, 384) == "alt"            # 2 x 192
    assert d.bound(768, 768, 768) == "alt"            # 4 x 192, 3 x 256
    assert d.bound(1152, 1152, 1152) == "alt"         # 6 x 192, 4 x 256 +
    assert d.bound(576, 576, 576) == "par"            # 1.11, 1.33: rows
    assert d.bound(1024, 1024, 1024) == "cols"        # 4 x 256
    assert d.bound(1536, 1536, 1536) == "cols"        # a tie: nc_cols
    assert d.bound(640, 640, 640) == "par"            # neither
    assert d.bound(2, 384, 1) == "one"                # below par_min
    # narrow products (N <= narrow_n) on the kernels with A unpacked,
    # which are built only when the first one comes
    built = []

    def narrow():
        built.append(1)
        return api.Dispatch(Fake("npar"), Fake("none"), 1000, 6)
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, narrow=narrow,
                     narrow_n=128)
    assert d.bound(512, 512, 512) == "par" and not built
    assert d.bound(4099, 64, 300) == "npar"           # narrow, large
    assert d.bound(127, 128, 300) == "npar" and d.bound(5, 64, 3) == "none"
    assert d.bound(127, 129, 300) == "par"
    # the row split with static row blocks for N below dynamic_min_n,
    # where the threaded (dynamic) kernel would run
    d = api.Dispatch(Fake("par"), Fake("one"), 1000, 6, Fake("cols"), 256,
                     lambda: 2, narrow=narrow, narrow_n=128,
                     static=Fake("static"), dynamic_min_n=1093)
    assert d.bound(256, 256, 256) == "static"
    assert d.bound(2048, 1092, 8) == "static"
    assert d.bound(1536, 1536, 1536) == "par"
    assert d.bound(2048, 1093, 8) == "par"
    assert d.bound(4099, 64, 300) == "npar"           # narrow first
    assert d.bound(3, 200, 1) == "one"                # below par_min
    assert d.bound(128, 1024, 512) == "cols"          # wide
    assert d.bound(11, 500, 100) == "one"             # one row block
    # the narrow kernels' Dispatch: at most short_m rows to short() (the
    # pair reading B in place), built only when the first one comes
    short = []

    def in_place():
        short.append(1)
        return api.Dispatch(Fake("bpar"), Fake("bone"), 1000, 6)
    d = api.Dispatch(Fake("npar"), Fake("none"), 1000, 6, short=in_place,
                     short_m=512)
    assert d.bound(513, 64, 300) == "npar" and not short
    assert d.bound(512, 64, 300) == "bpar" and short
    assert d.bound(127, 64, 300) == "bpar"
    assert d.bound(11, 64, 300) == "bone"             # one row block
    assert d.bound(4099, 64, 300) == "npar"
    assert api.Dispatch(Fake("npar"), short=in_place).bound(
        5, 64, 3) == "npar"                           # short_m = 0
    d = api.Dispatch(Fake("npar"), Fake("none"), 1000, 6, short=in_place,
                     short_m=512, short_n=128)
    assert d.bound(512, 128, 300) == "bpar"
    assert d.bound(512, 129, 300) == "npar"           # too wide
    assert api.even(1024, 256, 2) and api.even(1088, 256, 2)
    assert not api.even(1000, 256, 2) and not api.even(768, 256, 2)
    assert not api.even(4096, 256, 1) and not api.even(256, 256, 2)
    assert api.imbalance(1024, 256, 2) == 1.0
    assert api.imbalance(1152, 256, 2) == 2.5 * 256 * 2 / 1152
    assert api.imbalance(100, 0, 2) == api.imbalance(512, 256, 1) == \
        float("inf")


def test_bound_calls_for_the_benchmark(chain):
    """``RawKernel.bound`` and ``OpenBlas.bound_sgemm`` (what bench.py
    times) compute C += A @ B on the arrays they were given, every call."""
    from apps.common.blas_env import OpenBlas
    kernel = api.RawKernel(chain.fast.compile())
    rng = np.random.default_rng(9)
    A, B, C = _ints(rng, 13, 300), _ints(rng, 300, 37), _ints(rng, 13, 37)
    want = C + 2 * (A @ B)
    call = kernel.bound(13, 37, 300, A, B, C)
    call()
    call()
    assert np.array_equal(C, want)
    blas = OpenBlas.load()
    if blas is not None:        # numpy built on OpenBLAS (the bench's case)
        C2 = want.copy()
        blas.bound_sgemm(A, B, C2)()
        assert np.array_equal(C2, want + A @ B)


def test_auto_picks_the_best_isa_the_host_has(monkeypatch):
    monkeypatch.setenv("EXO_HL_EMULATE", "0")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    isa, emulated, note = api.choose_isa("auto")
    assert isa is AVX2 and not emulated and "avx512f" in note
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma,avx512f")
    assert api.choose_isa("auto")[:2] == (AVX512, False)
    monkeypatch.setenv("EXO_HL_HOST_CPU", "sse4.2")
    isa, _, msg = api.choose_isa("auto")
    assert isa is None and "avx2+fma" in msg
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    isa, _, msg = api.choose_isa("avx512")
    assert isa is None and "avx512f" in msg and "auto picks avx2" in msg
    monkeypatch.setenv("EXO_HL_EMULATE", "1")
    assert api.choose_isa("avx512")[:2] == (AVX512, True)


def test_isa_choice_is_remembered_per_environment(monkeypatch):
    """The entry point chooses on every call: the answer is worked out
    once per name and environment, and a changed environment is seen."""
    from apps.common import isa_choice
    calls = []
    real = isa_choice.choose_isa
    monkeypatch.setattr(isa_choice, "choose_isa", lambda isas, name:
                        calls.append(name) or real(isas, name))
    choose = isa_choice.chooser(ISAS)
    monkeypatch.setenv("EXO_HL_EMULATE", "0")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    assert choose()[0] is AVX2 and choose("auto")[0] is AVX2
    assert calls == ["auto"]
    assert choose("avx512")[0] is None
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma,avx512f")
    assert choose()[0] is AVX512 and choose("avx512")[0] is AVX512
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    monkeypatch.setenv("EXO_HL_EMULATE", "1")
    assert choose("avx512")[:2] == (AVX512, True)
    assert calls == ["auto", "avx512", "auto", "avx512", "avx512"]


def test_peak_probe():
    src = probe_source("avx2")
    assert src.count("_mm256_fmadd_ps(") == CHAINS
    assert '__attribute__((target("avx2,fma")' in src
    assert fma_peak("avx2", runs=3) > 0
    # two probes at once: the sum of both (each at most a core's peak)
    assert fma_peak("avx2", runs=3, copies=2) > 0
    with pytest.raises(ValueError, match="copies"):
        fma_peak("avx2", copies=0)
    if not _host_has("avx512f"):
        with pytest.raises(PeakUnavailable, match="avx512f"):
            fma_peak("avx512", runs=1)


# ---------------------------------------------------------------------------
# AVX-512 (emulated here), the CLI and C program, the scripts: slow

@pytest.fixture(scope="module")
def avx512_chain():
    return stages(AVX512)


@pytest.mark.slow
@pytest.mark.parametrize("nthreads", [1, 2])
def test_avx512_equals_numpy(chain, avx512_chain, threads, nthreads):
    threads(nthreads)
    fast = avx512_chain[-1][1]
    text = str(fast)
    assert "C_reg: f32[6, 2, 16] @ AVX512" in text
    assert "V_reg: f32[6, 16] @ AVX512" in text
    assert "W_reg: f32[6, 16] @ AVX512" in text   # masked: 5 columns below
    assert text.count("in par(") == 4
    ops = [op for op, _ in fast.derivation()]
    assert ops == [op for op, _ in chain.fast.derivation()]  # same schedule
    f = fast.compile(emulate=_needs_emulation("avx512f"))
    rng = np.random.default_rng(6)
    kc = AVX512.kc
    for m, n, k in [(1, 1, 1), (7, 32 + 16 + 5, kc + 3), (13, 37, 300),
                    (6, 32, 2 * kc), (2, 130, 3)]:
        A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        want = C + A @ B
        f(m, n, k, A, B, C)
        assert np.array_equal(C, want), (m, n, k)
    ab = alpha_beta(AVX512, fast).compile(
        emulate=_needs_emulation("avx512f"))
    A, B, C = _ints(rng, 9, 70), _ints(rng, 70, 67), _ints(rng, 9, 67)
    want = 3 * (A @ B) - 2 * C
    ab(9, 67, 70, np.array([3.0], np.float32),
       np.array([-2.0], np.float32), A, B, C)
    assert np.array_equal(C, want)


@pytest.mark.slow
def test_cli_build_and_c_program(tmp_path):
    """exo-hl compile of kernels.py, then a C program using c/sgemm.h
    (run-time dispatch), warning-free with -Wall -Wextra -Werror."""
    r = subprocess.run([sys.executable, "-m", "exo_hl", "compile",
                        str(APP / "kernels.py"), "-o", str(tmp_path),
                        "--stem", "sgemm_kernels"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "sgemm_kernels.h").read_text()
    for name in ("sgemm_avx2", "sgemm_avx512", "sgemm_alpha_beta_avx2",
                 "sgemm_alpha_beta_avx512"):
        # heap buffers (B's packed panels, alpha/beta's temporary): the
        # function returns its allocation status
        assert f"int {name}(" in h
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "demo"
    b = subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Wextra",
                        "-Werror", "-fopenmp", f"-I{tmp_path}",
                        f"-I{APP / 'c'}", "-o", str(exe),
                        str(APP / "c" / "main.c"), str(APP / "c" / "sgemm.c"),
                        str(tmp_path / "sgemm_kernels.c")],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    want = "avx512" if _host_has("avx512f") else "avx2"
    assert lines[0] == f"isa {want}"
    assert len(lines) == 8 and all(ln.endswith(" ok") for ln in lines[1:])


def test_c_program_with_the_avx2_kernels(chain, tmp_path):
    """The header and a C main against the generated AVX2 kernels alone
    (the dispatcher needs both ISAs: see the slow test above)."""
    compile_procs([chain.fast, chain.ab], str(tmp_path), "k")
    main = tmp_path / "main.c"
    main.write_text("""
#include <stdio.h>
#include "k.h"
int main(void) {
    float A[2 * 3] = {1, 2, 3, 4, 5, 6}, B[3 * 2] = {1, 0, 0, 1, 1, 1};
    float C[2 * 2] = {1, 1, 1, 1}, a = 2.0f, b = -1.0f;
    if (sgemm_avx2(NULL, 2, 2, 3, A, B, C))   /* exo_hl's status */
        return 1;
    printf("%g %g %g %g\\n", C[0], C[1], C[2], C[3]);
    sgemm_alpha_beta_avx2(NULL, 2, 2, 3, &a, &b, A, B, C);
    printf("%g %g %g %g\\n", C[0], C[1], C[2], C[3]);
    return 0;
}
""")
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "m"
    b = subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
                        f"-I{tmp_path}", "-o", str(exe), str(main),
                        str(tmp_path / "k.c")], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True).stdout
    # A @ B = [[4, 5], [10, 11]]; C += it; then 2 A @ B - C
    assert out.split("\n")[:2] == ["5 6 11 12", "3 4 9 10"]


_FAKE_KERNELS_H = """
#include <stdint.h>
#define KERNEL(isa) \\
int sgemm_##isa(void *ctx, int_fast32_t M, int_fast32_t N, int_fast32_t K, \\
                const float *A, const float *B, float *C); \\
int sgemm_alpha_beta_##isa(void *ctx, int_fast32_t M, int_fast32_t N, \\
                           int_fast32_t K, const float *alpha, \\
                           const float *beta, const float *A, \\
                           const float *B, float *C);
KERNEL(avx2)
KERNEL(avx512)
#undef KERNEL
"""

# the algorithms, as the generated kernels compute them (the alpha/beta
# one reads C whatever beta is)
_FAKE_KERNELS_C = """
#include <stddef.h>
#include "sgemm_kernels.h"
static void add(int_fast32_t M, int_fast32_t N, int_fast32_t K,
                const float *A, const float *B, float *C) {
    for (int_fast32_t i = 0; i < M; i++)
        for (int_fast32_t j = 0; j < N; j++)
            for (int_fast32_t k = 0; k < K; k++)
                C[i * N + j] += A[i * K + k] * B[k * N + j];
}
static float T[64 * 64];
#define KERNEL(isa) \\
int sgemm_##isa(void *ctx, int_fast32_t M, int_fast32_t N, int_fast32_t K, \\
                const float *A, const float *B, float *C) { \\
    (void)ctx; add(M, N, K, A, B, C); return 0; } \\
int sgemm_alpha_beta_##isa(void *ctx, int_fast32_t M, int_fast32_t N, \\
                           int_fast32_t K, const float *alpha, \\
                           const float *beta, const float *A, \\
                           const float *B, float *C) { \\
    (void)ctx; \\
    for (int_fast32_t i = 0; i < M * N; i++) T[i] = 0.0f; \\
    add(M, N, K, A, B, T); \\
    for (int_fast32_t i = 0; i < M * N; i++) \\
        C[i] = *alpha * T[i] + *beta * C[i]; \\
    return 0; }
KERNEL(avx2)
KERNEL(avx512)
"""


def test_c_entry_point_beta_zero_does_not_read_c(tmp_path):
    """``sgemm_alpha_beta`` of c/sgemm.c with beta == 0 (BLAS: C is not
    read) ran the alpha/beta kernel, which computes ``alpha T + 0 * C``:
    NaN or Inf in C came out NaN. Built here against stand-in kernels
    (the algorithms in plain C; the real ones need both ISAs scheduled,
    the slow test above runs them through main.c), warning-free with
    -Wall -Wextra -Werror: beta = +-0 gives alpha A @ B exactly, any other
    beta still goes to the alpha/beta kernel."""
    (tmp_path / "sgemm_kernels.h").write_text(_FAKE_KERNELS_H)
    (tmp_path / "sgemm_kernels.c").write_text(_FAKE_KERNELS_C)
    (tmp_path / "main.c").write_text(r"""
#include <math.h>
#include <stdio.h>
#include "sgemm.h"
int main(void) {
    float A[2 * 3] = {1, 2, 3, 4, 5, 6}, B[3 * 2] = {1, 0, 0, 1, 1, -1};
    const float betas[3] = {0.0f, -0.0f, 0.5f};
    for (int b = 0; b < 3; b++) {
        float C[4] = {NAN, INFINITY, -INFINITY, NAN};
        if (sgemm_alpha_beta(2, 2, 3, -2.0f, betas[b], A, B, C))
            return 1;
        printf("%g %g %g %g\n", C[0], C[1], C[2], C[3]);
    }
    return 0;
}
""")
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "m"
    b = subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
                        f"-I{tmp_path}", f"-I{APP / 'c'}", "-o", str(exe),
                        str(tmp_path / "main.c"), str(APP / "c" / "sgemm.c"),
                        str(tmp_path / "sgemm_kernels.c")],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0
    # A @ B = [[4, -1], [10, -1]], times -2
    lines = out.stdout.split("\n")
    assert lines[:2] == ["-8 2 -20 2"] * 2
    assert all(x in ("nan", "-nan", "inf", "-inf") for x in lines[2].split())


def _script(name, *args, env=None):
    e = dict(os.environ)
    e["OPENBLAS_CORETYPE"] = "Haswell"
    e["OPENBLAS_L2_SIZE"] = "1048576"
    e.update(env or {})
    return subprocess.run([sys.executable, str(APP / name), *args],
                          capture_output=True, text=True, timeout=900, env=e)


@pytest.mark.slow
def test_bench_script(tmp_path):
    out = tmp_path / "rows.json"
    plot = tmp_path / "plot.png"
    args = ["--isa", "avx2", "--shapes", "7x9x11", "20x20x20", "--threads",
            "1", "2", "--reps", "1", "--json", str(out)]
    try:
        import matplotlib  # noqa: F401
        args += ["--plot", str(plot)]
    except ImportError:
        plot = None
    r = _script("bench.py", *args, "--params", "model", env={
        "EXO_HL_RESULTS_DIR": str(tmp_path / "results")})
    assert r.returncode == 0, r.stderr
    assert "OPENBLAS_CORETYPE=Haswell" in r.stdout     # it was unset
    assert "unset OPENBLAS_L2_SIZE=1048576" in r.stdout
    assert "parameters: AVX2 6x16 KC=" in r.stdout and "BLIS model" in \
        r.stdout
    assert "MKL" in r.stdout                 # a column, or the line why not
    from exo_hl.tune import machine_signature, signature_label
    recorded = json.loads((tmp_path / "results" / (signature_label(
        machine_signature()) + ".json")).read_text())
    assert recorded["signature"] == machine_signature()
    assert recorded["runs"][0]["rows"] == json.loads(out.read_text())
    rows = json.loads(out.read_text())
    assert [(r["shape"], r["threads"]) for r in rows] == [
        ([7, 9, 11], 1), ([20, 20, 20], 1), ([7, 9, 11], 2),
        ([20, 20, 20], 2)]
    for row in rows:
        assert row["isa"] == "avx2"
        assert row["exo_hl_gflops"] > 0 and row["openblas_gflops"] > 0
        assert row["ratio"] == pytest.approx(
            row["exo_hl_gflops"] / row["openblas_gflops"], rel=0.02)
        assert row["peak_pct"] > 0
    table = [ln for ln in r.stdout.splitlines() if ln.startswith("| 7x9x11")]
    assert len(table) == 3              # 1 and 2 threads, and the scaling
    for one, two in zip(rows[:2], rows[2:]):
        assert "scaling" not in one
        assert two["scaling"] == pytest.approx(
            two["exo_hl_gflops"] / one["exo_hl_gflops"])
        assert two["openblas_scaling"] == pytest.approx(
            two["openblas_gflops"] / one["openblas_gflops"])
    assert "Scaling: GFLOP/s on t threads" in r.stdout
    assert "FMA peak, 2 cores (measured, probes at once)" in r.stdout
    if plot is not None:
        assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_run_script_prints_table():
    r = _script("run.py", "--isa", "avx2", "--sizes", "67", "--reps", "1")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("ISA: avx2 (requested)")
    assert "interpret: equal to numpy" in out
    assert out.count("compiled C: equal to numpy") == 3
    assert re.search(r"\|\s+67 \|", out)


def test_run_script_without_the_isa_exits_2():
    e = dict(os.environ, EXO_HL_HOST_CPU="avx2,fma", EXO_HL_EMULATE="0")
    r = subprocess.run([sys.executable, str(APP / "run.py"), "--isa",
                        "avx512"], capture_output=True, text=True,
                       timeout=300, env=e)
    assert r.returncode == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "avx512f" in err and err.startswith("run.py:")


def test_kernel_runs_clean_under_asan_ubsan(chain):
    """The whole AVX2 kernel under AddressSanitizer and UBSan, on shapes
    whose every tail is taken (rows in tiles of 4 + 1, a register of tail
    columns and a masked one, both k blocks), with arrays of exactly
    M x K, K x N, M x N: an access past any of them, or undefined
    behaviour, fails the run."""
    f = chain.fast.compile(sanitize=True)
    rng = np.random.default_rng(9)
    for m, n, k in [(11, 16 + 8 + 5, AVX2.kc + 3), (5, 3, 2)]:
        A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
        want = C + A @ B
        f(m, n, k, A, B, C)
        assert np.array_equal(C, want), (m, n, k)


def test_register_tiles_do_not_spill(tmp_path, chain, avx512_chain):
    """No FMA of either kernel reads an operand from the stack (GCC 12,
    -O3; see tests/asm_checks.py)."""
    from asm_checks import fma_stack_operands
    for p in (chain.fast, avx512_chain[-1][1]):
        spilled, fmas = fma_stack_operands(p, tmp_path)
        assert fmas > 0 and spilled == 0, (p.name(), spilled, fmas)


def _dispatched_kernels(isa_name):
    """Every kernel ``api.Dispatch`` can run for ``isa_name`` with this
    machine's model parameters (the plain ones; the alpha/beta kernels
    call the same)."""
    from apps.sgemm import api
    isa, _ = api.configuration(isa_name)
    out = [api.procedures(isa_name)[0]]
    if isa.par_min:
        out.append(api.sequential_procedure(isa_name))
    if isa.nc_cols:
        out.append(api.columns_procedure(isa_name))
    if isa.nc_cols_alt:
        out += list(api.columns_alt_procedures(isa_name))[:1]
    if api.static_procedure(isa_name) is not None:
        out.append(api.static_procedure(isa_name))
    if isa.narrow_n:
        out += list(api.narrow_procedures(isa_name))
        if isa.narrow_b_m:
            out += list(api.narrow_procedures(isa_name, False))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("isa_name", ["avx2", "avx512"])
def test_dispatched_kernels_do_not_spill_with_native_flags(
        tmp_path, monkeypatch, isa_name):
    """What the app compiles on this machine (its model's kernels, GCC
    with ``-march=native`` and ``kernel_flags``, as the app builds them):
    no FMA reads an operand from the stack. Without
    ``-fira-region=one``, GCC 12 on Zen 5 (znver3 tuning with AVX-512)
    kept one B register of the AVX2 one-thread narrow kernel on the stack
    (82 GFLOP/s instead of 128 at 512x64x512), and of the static-row
    kernel at KC = 128 (61% of the peak at 384^3-768^3, found by the
    recorded bench, not by the test above: its base descriptions)."""
    from asm_checks import fma_stack_operands
    from apps.common.kernel_flags import is_gcc, kernel_compile_opts
    monkeypatch.setenv("EXO_HL_SGEMM_PARAMS", "model")
    monkeypatch.delenv("CFLAGS", raising=False)
    monkeypatch.delenv("CC", raising=False)
    opts = kernel_compile_opts(isa_name)
    assert ("cflags" in opts) == (is_gcc("cc") and isa_name == "avx2")
    flags = tuple(opts.get("cflags", "-O3 -march=native").split())
    for p in _dispatched_kernels(isa_name):
        spilled, fmas = fma_stack_operands(p, tmp_path, flags=flags)
        assert fmas > 0 and spilled == 0, (p.name(), spilled, fmas)


# ---------------------------------------------------------------------------
# the tuning space: other tiles, NC / MC blocks, par on the column blocks

from apps.sgemm import tuning  # noqa: E402
from apps.sgemm.schedule import (blocked, by_columns, narrow,  # noqa: E402
                                 sgemm_win, static_rows)

#: shapes that cross every block of the points below: remainders of NC,
#: MC, KC, NR and MR at once, exact multiples, and single rows/columns
BLOCK_SHAPES = [(1, 1, 1), (13, 37, 70), (24, 96, 128), (29, 101, 131),
                (7, 5, 3), (56, 129, 33), (3, 200, 65)]

#: (isa, parameters): small blocks, so small shapes cross them
POINTS = [("avx2", {"shape": "4x24", "kc": 64, "nc": 48, "mc": 12}),
          ("avx2", {"shape": "8x8", "kc": 32, "nc": 16}),
          ("avx2", {"shape": "3x32", "kc": 32, "nc": 64}),
          ("avx512", {"shape": "14x32", "kc": 48, "nc": 64, "mc": 28,
                      "prefetch": 8}),
          ("avx2", {"shape": "6x16", "kc": 32, "nc": 32,
                    "pack_a": False}),
          ("avx2", {"shape": "6x16", "kc": 32, "nc": 32, "mc": 12,
                    "pack_b": False, "prefetch": 4})]


@pytest.mark.slow
@pytest.mark.parametrize("isa_name,params", POINTS,
                         ids=[f"{i}-{p['shape']}"
                              + ("-unpacked-A" if "pack_a" in p else "")
                              + ("-unpacked-B" if "pack_b" in p else "")
                              + (f"-prefetch{p['prefetch']}"
                                 if "prefetch" in p else "")
                              for i, p in POINTS])
def test_tuning_points_equal_numpy(isa_name, params, threads):
    """Each point of the space is a checked schedule: compiled, it equals
    numpy exactly (small-integer data) on every shape, 1 and 2 threads;
    its driver calls the block kernel per NC x MC block."""
    isa = tuning.variant(isa_name, params)
    p = tuning.template(dict(params, isa=isa_name))
    text = str(p)
    assert ("A_pack" in p.c_code_str()) == isa.pack_a   # kernels too
    assert ("B_pack" in p.c_code_str()) == isa.pack_b
    # one prefetch per cache line of a row of B's panel, k + d ahead
    assert p.c_code_str().count("_mm_prefetch(") == \
        (-(-isa.nr // 16) if isa.prefetch else 0)
    if isa.prefetch and not isa.blocked:    # (else in the callee)
        assert f"for k in seq(0, {isa.kc - isa.prefetch}):" in text
        row = "B_pack[jo, k + {d}, {c}:{c1}]" if isa.pack_b else \
            "B[{kc} * ko + k + {d}, {nr} * jo + {c}:{nr} * jo + {c1}]"
        calls = "\n".join(
            "mm_prefetch_t0(" + row.format(d=isa.prefetch, c=c, c1=c + 1,
                                           kc=isa.kc, nr=isa.nr) + ")"
            for c in range(0, isa.nr, 16))
        assert calls in "\n".join(x.strip() for x in text.splitlines())
    if isa.blocked:
        assert f"{isa.kernel_name}_block(" in text
        if isa.nc:
            assert f"for jc in {'par' if isa.par == 'cols' else 'seq'}(0, " \
                f"N / {isa.nc})" in text
            assert f"if N % {isa.nc} > 0:" in text
        if isa.mc:
            assert f"if M % {isa.mc} > 0:" in text
    f = p.compile(emulate=any(_needs_emulation(x)
                              for x in isa.cpu_features()))
    for nthreads in (1, 2):
        threads(nthreads)
        rng = np.random.default_rng(nthreads)
        for m, n, k in BLOCK_SHAPES:
            A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
            want = C + A @ B
            f(m, n, k, A, B, C)
            assert np.array_equal(C, want), (params, nthreads, m, n, k)


def test_par_on_the_column_blocks(threads):
    """``par='cols'``: the column-block loop is par (proven on the calls of
    the algorithm), the calls then swapped for the kernel. With the
    algorithm itself as the kernel (the scheduled one takes minutes more:
    the par loop is proven again through its effects), it equals numpy
    on 1 and 2 threads."""
    isa = tuning.variant("avx2", {"shape": "8x8", "kc": 32, "nc": 16,
                                  "par": "cols"})
    p = blocked(isa, sgemm_win)
    assert "for jc in par(0, N / 16):" in str(p)
    f = p.compile()
    for nthreads in (1, 2):
        threads(nthreads)
        rng = np.random.default_rng(nthreads)
        for m, n, k in BLOCK_SHAPES:
            A, B, C = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
            want = C + A @ B
            f(m, n, k, A, B, C)
            assert np.array_equal(C, want), (nthreads, m, n, k)


@pytest.mark.slow
def test_one_thread_and_column_kernels_of_a_blocked_description(threads):
    """From one chain of a blocked description, the app's other kernels:
    the one-thread kernel (``sequential``: its driver calls a sequential
    block kernel, no par loop anywhere) and the kernel with the threads
    on column blocks (``by_columns``: the column-block loop par, proven
    on the calls, the block kernel sequential). Each equals numpy,
    interpreted on a shape with every tail, and compiled on the block
    tails on 1 and 2 threads."""
    isa = tuning.variant("avx2", {"shape": "8x8", "kc": 32, "nc": 16,
                                  "par_min": 10, "nc_cols": 24})
    st = stages(isa)
    one, cols = sequential(isa, st), by_columns(isa, isa.nc_cols, st)
    assert one.name() == "sgemm_avx2_1t"
    assert "sgemm_avx2_1t_block(" in str(one)
    assert "#pragma omp" not in one.c_code_str()
    assert "for jc in par(0, N / 24):" in str(cols)
    assert "sgemm_avx2_cols_block(" in str(cols)
    # one parallel region: the column blocks' (the block kernel has none)
    assert cols.c_code_str().count("#pragma omp parallel") == 1
    assert by_columns(tuning.variant("avx2", {}), 24) is None
    rng = np.random.default_rng(4)
    m, n, k = 11, 24 + 16 + 3, 32 + 5
    A, B, C0 = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
    for p in (one, cols):
        C = C0.copy()
        p.interpret(M=m, N=n, K=k, A=A, B=B, C=C)
        assert np.array_equal(C, C0 + A @ B), p.name()
    _compiled_equal_numpy((one, cols), BLOCK_SHAPES, rng, threads)


def test_column_kernel_on_narrow_blocks(threads):
    """``by_columns`` with ``cols_narrow``: the column blocks (the par
    loop, proven on the calls of the algorithm) call the narrow kernel
    on windows (``narrow_block``: A unpacked, KC = ``narrow_kc``, no par
    loop inside), whatever the description's blocking (a description
    without NC gets one too); one parallel region per call; equal to
    numpy interpreted and compiled (column-block tails, the K % KC
    block), 1 and 2 threads; the model turns it on when a column block
    is a narrow product (``nc_cols <= narrow_n``)."""
    isa = tuning.variant("avx2", {"shape": "2x8", "kc": 16, "nc": 0,
                                  "nc_cols": 16, "cols_narrow": True,
                                  "narrow_n": 16, "narrow_kc": 24,
                                  "dynamic": True})
    assert isa.params["cols_narrow"] and "par cols of 16 (A unpacked)" in \
        isa.blocking_label
    cols = by_columns(isa, isa.nc_cols)
    assert cols.name() == "sgemm_avx2_cols_narrow"
    text = str(cols)
    assert "for jc in par(0, N / 16):" in text
    assert "sgemm_avx2_cols_narrow_block(" in text
    code = cols.c_code_str()
    assert "A_pack" not in code and "B_pack" in code and "K / 24" in code
    assert code.count("#pragma omp parallel") == 1
    assert "exo_hl_claim" not in code                 # static blocks
    rng = np.random.default_rng(17)
    m, n, k = 7, 16 + 16 + 9, 24 + 5
    A, B, C0 = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
    C = C0.copy()
    cols.interpret(M=m, N=n, K=k, A=A, B=B, C=C)
    assert np.array_equal(C, C0 + A @ B)
    _compiled_equal_numpy((cols,), BLOCK_SHAPES + [(13, 48, 50)], rng,
                          threads)
    m = tuning.model_params("avx512")
    assert m["cols_narrow"] == (m["nc_cols"] <= m["narrow_n"])
    assert "cols_narrow" in tuning.THREAD_PARAMS
    assert not tuning.variant("avx2", {}).cols_narrow
    with pytest.raises(SchedulingError, match="yes/no"):
        tuning.variant("avx2", {"cols_narrow": "maybe"})


def _compiled_equal_numpy(procs, shapes, rng, threads):
    """Each of ``procs`` compiled equals C + A @ B exactly on small-integer
    data, for every shape, on 1 and 2 threads."""
    for p in procs:
        f = p.compile()
        for nthreads in (1, 2):
            threads(nthreads)
            for m, n, k in shapes:
                A, B, C = _ints(rng, m, k), _ints(rng, k, n), \
                    _ints(rng, m, n)
                want = C + A @ B
                f(m, n, k, A, B, C)
                assert np.array_equal(C, want), (p.name(), nthreads,
                                                 m, n, k)


def test_narrow_kernels_equal_numpy(threads):
    """``schedule.narrow``: from a blocked description, the threaded and
    one-thread kernels with A unpacked and no NC / MC blocks (the app's
    kernels for N <= ``narrow_n``); no A_pack in their C, no parallel
    region in the one-thread one; static row blocks (``par``) even from
    a ``dynamic`` description (a narrow row block is too small for a
    claim from the shared counter); each equals numpy exactly on shapes
    crossing every remainder (rows, columns, the K % KC block), 1 and 2
    threads; their k block is ``narrow_kc``, not the description's KC."""
    isa = tuning.variant("avx2", {"shape": "2x8", "kc": 16, "nc": 16,
                                  "par_min": 10, "narrow_n": 16,
                                  "narrow_kc": 24, "dynamic": True})
    par, one = narrow(isa)                 # a small tile: quick to build
    assert "K / 24" in str(par) and "K / 16" not in str(par) + str(one)
    assert (par.name(), one.name()) == ("sgemm_avx2_narrow",
                                        "sgemm_avx2_narrow_1t")
    assert "A_pack" not in par.c_code_str() and "B_pack" in str(par)
    assert " par(" in str(par) and " par(" not in str(one)
    assert "par_dynamic" not in str(par) + str(one)
    assert str(par).count("for io in par(0, M / 2):") == 2
    assert "_block(" not in str(par)          # no NC driver
    rng = np.random.default_rng(6)
    _compiled_equal_numpy((par, one), BLOCK_SHAPES + [
        (13, 17, 32), (8, 8, 33), (2, 16, 16)], rng, threads)


def test_narrow_kernels_own_tile(threads):
    """``narrow_mr`` x ``narrow_nr`` (``narrow_shape``): the narrow
    kernels are built with their own tile, not the description's (the
    app's AVX-512 model: 12x32 for the square kernels, 6x64 for the
    narrow ones); the square kernel keeps its tile, a tile that is not a
    whole number of registers is refused, and both equal numpy exactly
    on shapes crossing every remainder of either tile."""
    isa = tuning.variant("avx2", {"shape": "2x8", "kc": 16, "nc": 16,
                                  "narrow_n": 32, "narrow_kc": 24,
                                  "narrow_shape": "3x16"})
    assert (isa.narrow_mr, isa.narrow_nr) == (3, 16)
    assert isa.blocking_label.endswith("N <= 32: A unpacked 3x16 KC=24")
    par, one = narrow(isa)
    assert "M / 3" in str(one) and "N / 16" in str(one)
    assert "M / 2" not in str(one) and "N / 8" not in str(one)
    assert (isa.mr, isa.nr) == (2, 8)       # the square kernels keep theirs
    rng = np.random.default_rng(61)
    _compiled_equal_numpy((par, one), [(13, 17, 32), (5, 33, 25),
                                       (2, 16, 16)], rng, threads)
    with pytest.raises(SchedulingError, match="narrow tile"):
        tuning.variant("avx2", {"narrow_shape": "3x12"})
    with pytest.raises(SchedulingError, match="narrow tile"):
        tuning.variant("avx2", {"narrow_mr": -1})


def test_narrow_kernels_reading_b_in_place(threads):
    """``schedule.narrow(pack_b=False)`` (the app's narrow kernels for at
    most ``narrow_b_m`` rows): nothing packed, so the threaded one has a
    single par loop per k block (no packing loop, no barrier before the
    row blocks); both equal numpy exactly, 1 and 2 threads, and on float
    data equal the B-packing pair bit for bit."""
    isa = tuning.variant("avx2", {"shape": "2x8", "kc": 16, "nc": 16,
                                  "par_min": 10, "narrow_n": 16,
                                  "narrow_kc": 24, "narrow_b_m": 64})
    par, one = narrow(isa, pack_b=False)
    assert (par.name(), one.name()) == ("sgemm_avx2_narrow_bip",
                                        "sgemm_avx2_narrow_bip_1t")
    code = par.c_code_str()
    assert "A_pack" not in code and "B_pack" not in code
    assert str(par).count(" par(") == 2 and " par(" not in str(one)
    assert "K / 24" in str(par)
    rng = np.random.default_rng(16)
    _compiled_equal_numpy((par, one), BLOCK_SHAPES + [
        (13, 17, 32), (2, 16, 16)], rng, threads)
    packed = [p.compile() for p in narrow(isa)]
    for m, n, k in ((13, 17, 50), (37, 16, 20)):
        A = rng.standard_normal((m, k), dtype=np.float32)
        B = rng.standard_normal((k, n), dtype=np.float32)
        outs = []
        for p in [par.compile(), one.compile()] + packed:
            C = np.zeros((m, n), np.float32)
            p(m, n, k, A, B, C)
            outs.append(C)
        assert all(np.array_equal(outs[0], c) for c in outs[1:])


def test_variant_checks_its_parameters():
    v = tuning.variant("avx512", {"shape": "8x32", "kc": 256, "nc": 1000,
                                  "mc": 100})
    assert (v.mr, v.nr, v.kc, v.nc, v.mc) == (8, 32, 256, 992, 96)
    assert v.blocking_label == "KC=256 NC=992 MC=96"
    # a point the schedule cannot build is refused, as a search records it
    with pytest.raises(SchedulingError, match="needs NC blocks"):
        tuning.variant("avx2", {"nc": 0, "par": "cols"})
    with pytest.raises(SchedulingError, match="multiple of 8 lanes"):
        tuning.variant("avx2", {"shape": "6x20"})
    for name, shapes in tuning.SHAPES.items():
        for s in shapes:
            v = tuning.variant(name, {"shape": s})
            assert f"{v.mr}x{v.nr}" == s
    # every point of the spaces is a description (or a refusal)
    sp = tuning.space("avx512")
    assert sp["shape"][0] == "12x32" and sp["isa"] == ["avx512"]
    assert sp["pack_a"] == [True, False]
    # the model's tile: 6x32 on AMD (Zen 4 halves 512-bit FMAs; a vendor
    # given without a family is taken for Zen 4), else
    # 12x32 (half the B stream from L2 per FMA), with B's panel
    # prefetched 16 k steps ahead; the narrow kernels 6x64
    assert tuning.default_shape("avx512", "AuthenticAMD") == "6x32"
    assert tuning.default_shape("avx512", "GenuineIntel") == "12x32"
    assert tuning.default_shape("avx2", "AuthenticAMD") == "6x16"
    assert tuning.narrow_shape("avx512", "GenuineIntel") == "6x64"
    assert tuning.narrow_shape("avx512", "AuthenticAMD") == "6x32"  # Zen 4
    assert tuning.narrow_shape("avx512", "AuthenticAMD", 25) == "6x32"
    assert tuning.narrow_shape("avx512", "AuthenticAMD", 26) == "6x64"
    assert tuning.narrow_shape("avx2", "AuthenticAMD", 26) == "6x16"
    assert tuning.narrow_shape("avx2", "GenuineIntel") == "6x16"
    assert tuning.default_prefetch("avx512", "GenuineIntel") == 16
    assert tuning.default_prefetch("avx512", "AuthenticAMD") == 0
    assert tuning.default_prefetch("avx2", "GenuineIntel") == 0
    assert "narrow_shape" in tuning.THREAD_PARAMS
    assert not tuning.variant("avx512", {"pack_a": "False"}).pack_a
    # the app's narrow products: N <= 2 NR on the kernels with A unpacked
    m = tuning.model_params("avx2")
    assert m["narrow_n"] == tuning.narrow_n(16, m["narrow_kc"]) >= 32
    # at least two panels; beyond, the N whose kc x N block of B fits in
    # half the L2 (no NC block needed at the narrow kernels' KC)
    assert tuning.narrow_n(64, 512, {2: 2 << 20}) == 512
    assert tuning.narrow_n(64, 512, {2: 256 << 10}) == 128
    assert tuning.narrow_n(16, 512, {}) == 32
    v = tuning.variant("avx2", {"narrow_n": 32})
    assert v.narrow_n == 32 and v.blocking_label.endswith(
        "N <= 32: A unpacked")
    with pytest.raises(SchedulingError, match="narrow_n=-1"):
        tuning.variant("avx2", {"narrow_n": -1})
    # their KC: the larger of the model's and k_block's (A's MR rows in a
    # quarter of the L1); the app's, like narrow_n
    assert tuning.narrow_kc(6, 160, {1: 48 * 1024}) == 512
    assert tuning.narrow_kc(6, 512, {1: 32 * 1024}) == 512
    assert "narrow_kc" in tuning.THREAD_PARAMS
    v = tuning.variant("avx2", {"narrow_n": 32, "narrow_kc": 384})
    assert v.params["narrow_kc"] == 384 and v.blocking_label.endswith(
        "N <= 32: A unpacked KC=384")
    for bad in ({"narrow_kc": -1}, {"narrow_kc": 8, "prefetch": 8}):
        with pytest.raises(SchedulingError, match="narrow_kc="):
            tuning.variant("avx2", bad)
    with pytest.raises(SchedulingError, match="yes/no"):
        tuning.variant("avx512", {"pack_a": "maybe"})
    assert sp["pack_b"] == [True, False]
    assert tuning.variant("avx2", {"pack_b": 0}).blocking_label.endswith(
        " B unpacked")
    # the prefetch distance: in [0, KC), a step ahead inside the panel
    assert sp["prefetch"][0] == 0
    v = tuning.variant("avx2", {"kc": 64, "prefetch": 8})
    assert v.prefetch == 8 and v.blocking_label == "KC=64 prefetch=8"
    for d in (64, -1):
        with pytest.raises(SchedulingError, match="prefetch="):
            tuning.variant("avx2", {"kc": 64, "prefetch": d})
    for shape in sp["shape"]:
        for nc in sp["nc"]:
            for mc in sp["mc"]:
                tuning.variant("avx512", {"shape": shape, "nc": nc,
                                          "mc": mc})


def test_the_app_uses_this_machines_record_else_the_model(tmp_path,
                                                           monkeypatch):
    from exo_hl.tune import TuningDB, machine_signature
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.delenv("EXO_HL_TUNING_DB")   # the default place
    isa, note = tuning.configured("avx2")
    m = tuning.model_params("avx2")
    b = tuning.model_blocking(6, 16, wide_nc=tuning.WIDE_NC
                              if tuning.full_width_amd() else 0)
    assert (isa.kc, isa.nc) == (m["kc"], m["nc"]) == (b.kc, b.nc_l2)
    assert "BLIS model" in note
    assert "no tuned record" in note
    db = TuningDB()
    other = dict(machine_signature(), cpu_model="Some Other CPU")
    db.store(tuning.key("avx2"), {"shape": "4x24", "kc": 96, "nc": 480},
             150.0, signature=other)
    isa, note = tuning.configured("avx2")
    assert isa.kc == b.kc and "1 record(s) of other machines not used" in note
    db.store(tuning.key("avx2"), {"shape": "4x24", "kc": 96, "nc": 480},
             150.0, units="GFLOP/s")
    isa, note = tuning.configured("avx2")
    assert (isa.mr, isa.nr, isa.kc, isa.nc) == (4, 24, 96, 480)
    assert "tuned record" in note and str(tmp_path) in note
    # the model and the fixed description on request
    assert tuning.configured("avx2", "model")[0].kc == b.kc
    assert tuning.configured("avx2", "fixed")[0] is AVX2


def test_the_tuning_bench_checks_and_times(chain, monkeypatch):
    """``tuning.Bench`` (what ``exo-hl tune sgemm`` times): checks the
    kernel against numpy, then GFLOP/s by either clock; a kernel that is
    wrong raises (the search records the candidate as crashed)."""
    for clock in ("cpu", "wall"):
        v = tuning.Bench([(64, 64, 64), (33, 17, 100)], reps=1,
                         clock=clock)(chain.compiled, {})
        assert 0 < v < 1e5
    # against OpenBLAS, side by side: a ratio (a candidate timed alone
    # minutes after another on a loaded machine compared noise)
    rel = tuning.Bench([(64, 64, 64)], reps=1, baseline="openblas")
    assert rel.units == "x OpenBLAS" and 0.05 < rel(chain.compiled, {}) < 20
    with pytest.raises(ValueError, match="baseline"):
        tuning.Bench(baseline="mkl")

    import apps.sgemm.api as sapi
    real = sapi.RawKernel

    class Twice(real):
        """Adds A @ B twice."""

        def __call__(self, *a):
            super().__call__(*a)
            super().__call__(*a)
    monkeypatch.setattr(sapi, "RawKernel", Twice)
    with pytest.raises(AssertionError, match="differs from numpy"):
        tuning.Bench([(8, 8, 8)], reps=1)(chain.compiled, {})


def test_the_tuning_bench_restores_the_thread_count(chain):
    """``tuning.Bench`` times on its own thread count and then puts the
    caller's back (it left later kernels of the process on one thread)."""
    from apps.common.blas_env import openmp_threads
    assert set_openmp_threads(2)
    try:
        tuning.Bench([(16, 16, 16)], threads=1, reps=1)(chain.compiled, {})
        assert openmp_threads() == 2
    finally:
        set_openmp_threads(os.cpu_count() or 1)


def test_alpha_beta_takes_the_same_kernel_as_the_product(monkeypatch,
                                                         threads):
    """``sgemm(..., alpha=, beta=)`` picks its kernel per product as
    ``sgemm(A, B, C)`` does (it ran the row split for every product): the
    one-thread, column-split, narrow (A unpacked, threaded and one-thread)
    and row-split kernels (dynamic, and static for N below
    ``dynamic_min_n``), each inside ``schedule.alpha_beta``. Shapes
    crossing every threshold of a small-tile description equal numpy
    exactly on small integers, and on float data equal, bit for bit, what
    the row-split alpha/beta kernel computes (the documented rounding:
    T = A @ B, then alpha T + beta C)."""
    isa = tuning.variant("avx2", {"shape": "2x8", "kc": 16, "nc": 16,
                                  "par_min": 2000, "nc_cols": 16,
                                  "narrow_n": 16, "dynamic": True,
                                  "dynamic_min_n": 40, "narrow_b_m": 6,
                                  "narrow_b_par_min": 400})
    monkeypatch.setattr(api, "configuration", lambda name: (isa, "test"))
    monkeypatch.setattr(api, "choose_isa",
                        lambda name="auto": (AVX2, False, "test"))
    _clear_api_caches()
    threads(2)
    try:
        plain, scaled = api.compiled("avx2")
        ab_one = api.alpha_beta_procedures("avx2")[1]
        assert "sgemm_avx2_1t(M, N, K, A, B, T)" in str(ab_one)
        assert " par(" not in str(ab_one)
        assert "#pragma omp" not in ab_one.c_code_str()
        assert str(api.alpha_beta_procedures("avx2")[2]).count(
            "in par(") == 2
        rng = np.random.default_rng(14)
        # (M, N, K) -> the kernel Dispatch picks (MR = 2, par_min = 2000,
        # nc_cols = 16, narrow_n = 16, dynamic_min_n = 40, narrow_b_m = 6,
        # narrow_b_par_min = 400, 2 threads)
        want_kernel = {(3, 17, 5): "_1t", (4, 64, 33): "_cols",
                       (40, 24, 33): "_static", (1, 40, 100): "_1t",
                       (37, 16, 20): "_narrow", (7, 9, 7): "_narrow_1t",
                       (5, 9, 7): "_narrow_bip_1t",
                       (6, 16, 40): "_narrow_bip",
                       (6, 16, 5): "_narrow_bip",      # 480 >= 400
                       (6, 16, 4): "_narrow_bip_1t",
                       (61, 37, 40): "_static", (61, 41, 40): ""}
        for (m, n, k), suffix in want_kernel.items():
            picked = plain.pick(m, n, k)     # a Deferred, else compiled
            picked = getattr(picked, "kernel", lambda: picked)()
            assert picked.compiled.name == "sgemm_avx2" + suffix, (m, n, k)
            picked = scaled.pick(m, n, k)    # a Deferred, else compiled
            picked = getattr(picked, "kernel", lambda: picked)()
            assert picked.compiled.name == "sgemm_alpha_beta_avx2" + suffix
            for al, be in ((2.0, -3.0), (0.5, 0.0), (-1.0, 1.0)):
                A, B, C = _ints(rng, m, k), _ints(rng, k, n), \
                    _ints(rng, m, n)
                want = np.float32(al) * (A @ B) + np.float32(be) * C
                assert api.sgemm(A, B, C, alpha=al, beta=be) is C
                assert np.array_equal(C, want), (m, n, k, al, be)
            A = rng.standard_normal((m, k), dtype=np.float32)
            B = rng.standard_normal((k, n), dtype=np.float32)
            C0 = rng.standard_normal((m, n), dtype=np.float32)
            a, b = np.float32(0.7), np.float32(-1.3)
            rows = C0.copy()
            scaled.threaded(m, n, k, np.array([a]), np.array([b]), A, B,
                            rows)
            C = C0.copy()
            api.sgemm(A, B, C, alpha=a, beta=b)
            assert np.array_equal(C, rows), (m, n, k)
            exact = a * (A.astype(np.float64) @ B) + b * C0.astype(
                np.float64)
            assert np.max(np.abs(C - exact)) <= 1e-5 * np.max(np.abs(exact))
    finally:
        _clear_api_caches()


def test_beta_zero_does_not_read_c(monkeypatch, threads):
    """BLAS: with ``beta == 0`` C is not read. ``sgemm(..., beta=0)`` ran
    ``alpha T + 0 * C``, so NaN or an infinity in C came out NaN. Now C =
    ``alpha * T`` (the ``C += A @ B`` kernel on a zeroed C, times alpha):
    exact on small integers, the bits of ``alpha * T`` on float data, for
    -0.0 too, on 1 and 2 threads. The entry point runs small stand-in
    kernels (the algorithm, its row loop parallel) so that nothing is
    scheduled here; it reads only ``api.compiled``'s two ``Dispatch``."""
    par = sgemm.rename("sgemm_beta0_plain")
    par = par.parallelize(par.find_loop("i"))
    plain = api.RawKernel(par.compile())
    ab = api.RawKernel(alpha_beta_algorithm.rename(
        "sgemm_beta0_ab").compile())
    monkeypatch.setattr(api, "compiled",
                        lambda name: (api.Dispatch(plain), api.Dispatch(ab)))
    monkeypatch.setattr(api, "choose_isa",
                        lambda name="auto": (AVX2, False, "test"))
    rng = np.random.default_rng(21)
    for n_threads in (1, 2):
        threads(n_threads)
        for (m, n, k) in ((1, 1, 1), (7, 19, 5), (33, 17, 64)):
            A, B = _ints(rng, m, k), _ints(rng, k, n)
            for alpha in (1.0, 2.0, -0.5, 0.0):
                for beta in (0.0, -0.0):
                    C = np.full((m, n), np.nan, np.float32)
                    C[::2, ::3] = np.inf
                    C[1::2, ::2] = -np.inf
                    assert api.sgemm(A, B, C, alpha=alpha, beta=beta) is C
                    want = np.float32(alpha) * (A @ B)
                    assert np.array_equal(C, want), (m, n, k, alpha, beta)
            # float data: the bits of alpha * T, T = the kernel's A @ B
            A = rng.standard_normal((m, k), dtype=np.float32)
            B = rng.standard_normal((k, n), dtype=np.float32)
            T = np.zeros((m, n), np.float32)
            plain(m, n, k, A, B, T)
            a = np.float32(0.3)
            C = np.full((m, n), np.nan, np.float32)
            api.sgemm(A, B, C, alpha=a, beta=0.0)
            assert np.array_equal(C.view(np.uint32),
                                  (a * T).view(np.uint32))
            # beta != 0 still runs the alpha/beta kernel (NaN stays NaN)
            C = np.full((m, n), np.nan, np.float32)
            api.sgemm(A, B, C, alpha=a, beta=1e-30)
            assert np.isnan(C).all()



# ---------------------------------------------------------------------------
# the GotoBLAS/BLIS loop order (``order='goto'``)

#: a small tile and blocks, so small shapes cross every block: MR = 2,
#: NR = 8, KC = 8, MC = 4 (two row blocks per A block), A's block
#: prefetched 2 k steps ahead
GOTO = ("avx2", {"shape": "2x8", "kc": 8, "mc": 4, "nc": 0,
                 "order": "goto", "prefetch": 2})


@pytest.fixture(scope="module")
def goto_stages():
    return stages(tuning.variant(*GOTO))


def test_goto_order_structure(goto_stages):
    """Per k block: B packed (par), then per MC block its A block packed
    (one k-major micro-panel per row block, par) and the column panels
    outside the row blocks (par: BLIS's jr), the (M / MR) % (MC / MR)
    row blocks left the same way, the column tails a par loop of their
    own. The A block is one heap buffer per MC block; the tiles prefetch
    the next row block's C."""
    text = str(goto_stages[-1][1])
    lines = [x.strip() for x in text.splitlines()]
    block = ["for ic in seq(0, M / 4):",
             "A_pack: f32[2, 8, 2] @ DRAM_ALIGNED",
             "for ir in par(0, 2):", "for i3 in seq(0, 2):",
             "for i4 in seq(0, 8):",
             "A_pack[ir, i4, i3] = A[i3 + 4 * ic + 2 * ir, 8 * ko + i4]",
             "for jo in par(0, N / 8):", "for ir in seq(0, 1):"]
    at = lines.index(block[0])
    assert lines[at:at + len(block)] == block
    # each tile but an MC block's last prefetches the next tile's C rows
    # (the last one, ir = 1, in a loop of its own, does not)
    flat = "".join(lines)
    assert flat.count("mm_prefetch_t0(C[4 * ic + 2 * ir + 2, 8 * jo + 0:"
                      "8 * jo + 1])") == 2           # both k blocks
    assert lines.count("for ir in seq(1, 2):") == 2
    # in the full k blocks, each of the first KC - 2 k steps prefetches
    # the row of A's micro-panel 2 steps ahead (the streamed operand)
    assert flat.count("for k in seq(0, 6):mm_prefetch_t0(A_pack[ir, k + 2,"
                      " 0:1])") == 3    # MC blocks: 2 row loops; the rest
    assert flat.count("mm_prefetch_t0(") == 4 + 3
    rest = ["A_pack: f32[2, 8, 2] @ DRAM_ALIGNED",
            "for ir in par(0, M / 2 % 2):"]
    at = lines.index(rest[1], at)
    assert lines[at - 1:at + 1] == rest
    assert lines.count("for cio in par(0, M / 2):") == 2  # both k blocks
    # the micro-kernel broadcasts A from the packed block, k-major
    assert "A_pack[ir, k, 1:2]" in text
    # the one-thread kernel: the same order, no par loop
    one = sequential(tuning.variant(*GOTO), goto_stages)
    assert "for ic in seq(0, M / 4):" in str(one) and " par(" not in str(one)


def test_goto_order_equals_numpy(goto_stages, threads):
    """Interpreted on a shape crossing every block (2 MC blocks and a row
    block left, M % MR, N % NR with a masked register, K % KC), then
    compiled on edge shapes (1x1x1, M, N, K off every multiple of MR, NR,
    KC and MC), 1 and 2 threads: equal to numpy exactly (small integers)."""
    p = goto_stages[-1][1]
    rng = np.random.default_rng(31)
    m, n, k = 11, 8 * 2 + 8 + 3, 2 * 8 + 3
    A, B, C0 = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, m, n)
    C = C0.copy()
    p.interpret(M=m, N=n, K=k, A=A, B=B, C=C)
    assert np.array_equal(C, C0 + A @ B)
    _compiled_equal_numpy((p, ), BLOCK_SHAPES + [
        (2, 8, 8), (4, 8, 8), (5, 9, 9), (9, 17, 17), (6, 3, 1),
        (3, 16, 40)], rng, threads)


def test_goto_order_in_the_space_and_checked():
    """The tuning space has both orders; 'goto' is in the parameters and
    the label; a 'goto' point without an A block (MC = 0) or with A
    unpacked, or an unknown order, is refused as a search records it."""
    assert tuning.space("avx512")["order"] == ["rows", "goto"]
    assert tuning.space("avx2")["order"] == ["rows", "goto"]
    isa = tuning.variant(*GOTO)
    assert isa.params["order"] == "goto"
    assert isa.blocking_label == "KC=8 MC=4 order=goto prefetch=2"
    assert not isa.blocked and isa.call_mc == 0     # MC is the kernel's
    assert tuning.variant("avx2", {"mc": 12}).params["order"] == "rows"
    for bad, why in (({"mc": 0}, "needs MC"), ({"pack_a": False}, "needs MC"),
                     ({"order": "ijk"}, "order is")):
        with pytest.raises(SchedulingError, match=why):
            tuning.variant(GOTO[0], dict(GOTO[1], **bad))


# ---------------------------------------------------------------------------
# the par loops shared out one iteration at a time (``Isa.dynamic``)

def test_dynamic_par_loops_equal_numpy(threads):
    """``dynamic=True``: the row blocks (with their column tails) are
    ``par_dynamic``, B's packing and the column-split kernel's column
    blocks stay ``par``; in the 'goto' order the column panels and tails are
    ``par_dynamic``, A's packing ``par``. Compiled, each equals numpy
    exactly on the block edge shapes on 1 and 2 OpenMP threads."""
    rng = np.random.default_rng(37)
    isa = tuning.variant("avx2", {"shape": "8x8", "kc": 32, "nc": 16,
                                  "nc_cols": 24, "dynamic": True})
    st = stages(isa)
    what, block = st[-2]                          # the block kernel
    text = str(block)
    assert text.count("for io in par_dynamic(0, M / 8):") == 2
    assert " in par(0, 32):" in text              # the packing of B
    assert "par_dynamic" in what
    cols = by_columns(isa, isa.nc_cols, st)    # static whatever dynamic
    assert "for jc in par(0, N / 24):" in str(cols)
    goto = stages(tuning.variant(GOTO[0], dict(GOTO[1], dynamic=True)))[-1][1]
    gtext = str(goto)
    assert "for ir in par(0, 2):" in gtext          # A's packing
    assert "for jo in par_dynamic(0, N / 8):" in gtext
    assert "for cio in par_dynamic(0, M / 2):" in gtext
    _compiled_equal_numpy((st[-1][1], cols, goto), BLOCK_SHAPES + [
        (9, 17, 17), (6, 3, 1), (3, 16, 40)], rng, threads)


def test_static_rows_kernel_equals_numpy(threads):
    """``schedule.static_rows``: from a blocked ``dynamic`` description,
    the row-split kernel with static row blocks (what the app runs for N
    below ``dynamic_min_n``): named ``_static``, no ``par_dynamic`` (the
    row blocks and B's packing ``par``), the NC driver kept; equals numpy
    exactly on the block edge shapes on 1 and 2 OpenMP threads."""
    rng = np.random.default_rng(41)
    isa = tuning.variant("avx2", {"shape": "8x8", "kc": 32, "nc": 16,
                                  "dynamic": True, "dynamic_min_n": 40})
    kernel = static_rows(isa)
    assert kernel.name() == "sgemm_avx2_static"
    code = kernel.c_code_str()               # the driver and the block
    assert "exo_hl_claim" not in code and "schedule(dynamic)" not in code
    assert "omp parallel" in code
    assert "_block(" in str(kernel)                  # the NC driver
    dyn = stages(isa)[-1][1].c_code_str()          # and the dynamic one
    assert "exo_hl_claim" in dyn
    _compiled_equal_numpy((kernel,), BLOCK_SHAPES + [
        (9, 17, 17), (6, 3, 1), (17, 39, 40)], rng, threads)


def test_dynamic_min_n_model_and_checks():
    """``dynamic_min_n``: the model's is the N at which a row block has
    ``DYNAMIC_BLOCK`` multiply-adds; a parameter of the app (taken from
    the model for a tuned record), in the label only with ``dynamic``;
    negative refused."""
    assert tuning.dynamic_min_n(6, 160) == 1093
    assert tuning.dynamic_min_n(6, 160) * 6 * 160 >= tuning.DYNAMIC_BLOCK
    assert 1092 * 6 * 160 < tuning.DYNAMIC_BLOCK
    m = tuning.model_params("avx2")
    mr = int(m["shape"].split("x")[0])
    assert m["dynamic_min_n"] == tuning.dynamic_min_n(mr, m["kc"], 8)
    # the same time per block whatever the vector width: AVX2's 8 lanes
    # claim from half the multiply-adds
    assert tuning.dynamic_min_n(6, 128, 8) == 683 == \
        tuning.dynamic_min_n(12, 128)
    assert tuning.dynamic_min_n(6, 128, 8) * 6 * 128 >= \
        tuning.DYNAMIC_BLOCK // 2
    assert "dynamic_min_n" in tuning.THREAD_PARAMS
    isa = tuning.variant("avx2", {"kc": 32, "dynamic": True,
                                  "dynamic_min_n": 500})
    assert isa.params["dynamic_min_n"] == 500
    assert isa.blocking_label == "KC=32 dynamic static rows below N=500"
    assert "static" not in tuning.variant(
        "avx2", {"kc": 32, "dynamic_min_n": 500}).blocking_label
    with pytest.raises(SchedulingError, match="dynamic_min_n=-1"):
        tuning.variant("avx2", {"dynamic_min_n": -1})


def test_model_runs_column_blocks_on_one_thread_for_an_a_in_the_l3():
    """``cols_one_mk``: A in a third of the L3 (2.8 M elements on a 32 MiB
    L3: 1536^3 in, 2048^3 out), only when the column blocks are narrow
    kernels, none without an L3; an app parameter (the model's for a
    tuned record), in the label; negative refused."""
    mk = tuning.cols_one_mk(True, {1: 48 << 10, 2: 1 << 20, 3: 32 << 20})
    assert mk == (32 << 20) // 12 and 1536 ** 2 <= mk < 2048 ** 2
    assert tuning.cols_one_mk(False, {3: 32 << 20}) == 0
    assert tuning.cols_one_mk(True, {1: 48 << 10, 2: 1 << 20}) == 0
    assert "cols_one_mk" in tuning.THREAD_PARAMS
    m = tuning.model_params("avx512")
    assert m["cols_one_mk"] == tuning.cols_one_mk(m["cols_narrow"])
    assert tuning.model_params("avx2")["cols_one_mk"] == 0
    isa = tuning.variant("avx2", {"kc": 32, "nc_cols": 64,
                                  "cols_one_mk": 5000})
    assert isa.cols_one_mk == 5000
    assert "on 1 thread for MK <= 5000" in isa.blocking_label
    with pytest.raises(SchedulingError, match="cols_one_mk=-1"):
        tuning.variant("avx2", {"cols_one_mk": -1})


def test_model_second_column_block():
    """``nc_cols_alt``: 3 narrow panels (192 with 6x64) for AVX-512 with
    narrow column blocks, 0 for AVX2; refused without ``nc_cols`` or off
    the tile; in the label."""
    m = tuning.model_params("avx512")
    nnr = int(m["narrow_shape"].split("x")[1])
    assert m["nc_cols_alt"] == (tuning.NC_COLS_ALT_PANELS * nnr
                                if m["cols_narrow"] else 0)
    assert tuning.model_params("avx2")["nc_cols_alt"] == 0
    assert "nc_cols_alt" in tuning.THREAD_PARAMS
    isa = tuning.variant("avx2", {"kc": 32, "nc_cols": 64,
                                  "nc_cols_alt": 48})
    assert isa.nc_cols_alt == 48 and "par cols of 64 or 48" in \
        isa.blocking_label
    assert tuning.variant("avx2", {"nc_cols": 64,
                                   "nc_cols_alt": 50}).nc_cols_alt == 48
    with pytest.raises(SchedulingError, match="needs nc_cols"):
        tuning.variant("avx2", {"nc_cols_alt": 48})
    with pytest.raises(ValueError, match="nc_cols_alt=40 is not a multiple"):
        dataclasses.replace(isa, nc_cols_alt=40)


def test_narrow_b_in_place_parameters():
    """``narrow_b_m`` / ``narrow_b_par_min``: the model's M is the
    constant, its thread minimum the machine's (``thread_minimums``, below
    ``par_min``: app parameters, taken from the model for a tuned
    record); in the label only with ``narrow_n``; negative refused."""
    m = tuning.model_params("avx512")
    assert m["narrow_b_m"] == tuning.NARROW_B_M
    assert (m["par_min"], m["narrow_b_par_min"]) == \
        tuning.thread_minimums("avx512")[:2]
    assert 0 < m["narrow_b_par_min"] < m["par_min"]
    assert {"narrow_b_m", "narrow_b_n", "narrow_b_par_min"} <= set(
        tuning.THREAD_PARAMS)
    assert m["narrow_b_n"] == tuning.NARROW_PANELS * int(  # the narrow NR
        m["narrow_shape"].split("x")[1])
    isa = tuning.variant("avx2", {"kc": 32, "narrow_n": 32,
                                  "narrow_b_m": 100, "narrow_b_par_min": 7,
                                  "narrow_b_n": 16})
    assert (isa.narrow_b_m, isa.narrow_b_par_min) == (100, 7)
    assert isa.blocking_label.endswith(
        "N <= 32: A unpacked, B in place for M <= 100, N <= 16 (1 thread "
        "below MNK=7)")
    assert "in place" not in tuning.variant(
        "avx2", {"kc": 32, "narrow_b_m": 100}).blocking_label
    for bad in ("narrow_b_m", "narrow_b_n", "narrow_b_par_min"):
        with pytest.raises(SchedulingError, match=bad + "=-1"):
            tuning.variant("avx2", {bad: -1})


def test_dynamic_in_the_space_and_checked():
    """``dynamic`` is searched, in the parameters and the label; the
    default is off; a value that is not yes/no is refused."""
    assert tuning.space("avx512")["dynamic"] == [False, True]
    assert tuning.variant("avx2", {}).params["dynamic"] is False
    isa = tuning.variant("avx2", {"kc": 32, "dynamic": "True"})
    assert isa.dynamic is True and isa.params["dynamic"] is True
    assert isa.blocking_label == "KC=32 dynamic"
    with pytest.raises(SchedulingError, match="yes/no"):
        tuning.variant("avx2", {"dynamic": "maybe"})
    with pytest.raises(ValueError, match="dynamic is True or False"):
        dataclasses.replace(ISAS["avx2"], dynamic=1)


def test_model_shares_row_blocks_dynamically_on_several_cores():
    """The model's ``dynamic``: on a machine of more than one core only."""
    assert tuning.dynamic_model(2) and not tuning.dynamic_model(1)
    assert tuning.model_params("avx2")["dynamic"] == tuning.dynamic_model()


def test_model_zen5_rule_takes_12x32_with_a_wide_nc():
    """Zen 5 (AMD family 26: full-width 512-bit FMAs) takes 12x32, no
    prefetch, KC = 128 and NC = 1024 on its 1 MiB L2 (``wide_nc``); Zen 4
    (family 25) keeps 6x32 at KC = 160, the Xeon 12x32, prefetch 16, KC
    = 256 (its 2 MiB L2 gives NC = 1024 with or without the rule); the
    narrow kernels 6x64 where the FMA is full width (Zen 5, Intel), 6x32
    on Zen 4."""
    from exo_hl.tune import CacheLevel
    def caches(l1, ways1, l2):
        return {1: CacheLevel(1, l1 << 10, ways=ways1, line=64),
                2: CacheLevel(2, l2 << 20, ways=16, line=64),
                3: CacheLevel(3, 32 << 20, ways=16, line=64, shared_by=2)}
    zen5, xeon, zen4 = caches(48, 12, 1), caches(48, 12, 2), caches(32, 8, 1)
    amd, intel = "AuthenticAMD", "GenuineIntel"
    assert [tuning.full_width_amd(amd, f) for f in (25, 26, 27)] \
        == [False, True, True]
    assert not tuning.full_width_amd(intel, 6)
    assert not tuning.full_width_amd(amd, None)     # unknown: Zen 4's
    assert tuning.default_shape("avx512", amd, 26) == "12x32"
    assert tuning.default_shape("avx512", amd, 25) == "6x32"
    assert tuning.default_shape("avx512", intel, 6) == "12x32"
    assert tuning.default_shape("avx2", amd, 26) == "6x16"
    assert tuning.narrow_shape("avx512", amd, 26) == "6x64"
    assert tuning.narrow_shape("avx512", intel, 6) == "6x64"
    assert tuning.default_prefetch("avx512", amd, 26) == 0
    assert tuning.default_prefetch("avx512", intel, 6) == 16
    b = tuning.model_blocking(12, 32, zen5, wide_nc=tuning.WIDE_NC)
    assert (b.kc, b.nc_l2) == (128, 1024)
    assert (tuning.model_blocking(12, 32, zen5).kc,
            tuning.model_blocking(12, 32, zen5).nc_l2) == (256, 512)
    for wide in (0, tuning.WIDE_NC):
        b = tuning.model_blocking(12, 32, xeon, wide_nc=wide)
        assert (b.kc, b.nc_l2) == (256, 1024)
    assert tuning.model_blocking(6, 32, zen4).kc == 160
    # the AVX2 tile takes the wide block on Zen 5 too (L1's KC: 512)
    b = tuning.model_blocking(6, 16, zen5, wide_nc=tuning.WIDE_NC)
    assert (b.kc, b.nc_l2) == (128, 1024)
    assert tuning.model_blocking(6, 16, zen5).kc == 512
    # this machine's model follows the rule for its own vendor and family
    m, m2 = tuning.model_params("avx512"), tuning.model_params("avx2")
    if tuning.full_width_amd():
        assert (m["shape"], m["prefetch"]) == ("12x32", 0)
        assert (m["kc"], m2["kc"]) == (128, 128)
        assert m["nc"] == m2["nc"] == tuning.WIDE_NC
    assert m["shape"] == tuning.default_shape("avx512")
    assert m2["shape"] == "6x16"


def test_model_kc_splits_common_k_into_whole_blocks():
    """``even_kc``: the L1 rule's KC rounded down to a multiple of 64 when
    that gives up at most an eighth (Zen 5, 6x32: 288 -> 256, NC from the
    1 MiB L2 448 -> 512); kept where it already is one (the Xeon's 12x32:
    256) or 64 is further away (Zen 4's 32 KiB L1, 6x32: 160)."""
    from exo_hl.tune import CacheLevel
    def caches(l1, ways1, l2):
        return {1: CacheLevel(1, l1 << 10, ways=ways1, line=64),
                2: CacheLevel(2, l2 << 20, ways=16, line=64),
                3: CacheLevel(3, 32 << 20, ways=16, line=64, shared_by=2)}
    zen5, xeon, zen4 = caches(48, 12, 1), caches(48, 12, 2), caches(32, 8, 1)
    b = tuning.model_blocking(6, 32, zen5)
    assert (b.kc, b.nc_l2) == (256, 512)
    from exo_hl.tune import blis_blocking
    assert blis_blocking(6, 32, caches=zen5).kc == 288
    assert tuning.model_blocking(12, 32, xeon).kc == 256
    assert tuning.model_blocking(6, 16, xeon).kc == 512
    assert tuning.model_blocking(6, 32, zen4).kc == 160
    assert [tuning.even_kc(k) for k in (64, 72, 73, 74, 160, 288, 512, 40)] \
        == [64, 64, 64, 74, 160, 256, 512, 40]
