"""apps/conv: the 3x3 conv layer (bias, ReLU, NHWC, f32) as a plain loop
nest, and one schedule of checked rewrites, parametrized by an
instruction-set description, giving an AVX2 5x16 and an AVX-512 5x64
register-tiled kernel for any N, H, W, IC, OC >= 1 (tail columns, tail
channels), plus a size-specialized kernel (``partial_eval``). Results are
compared with numpy: exactly on small-integer data (every partial sum is
an exact integer), within a derived bound on random data; interpreted and
compiled, on 1 and 2 threads. The AVX-512 kernel runs through the
emulation layer on hosts without it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import set_openmp_threads  # noqa: E402
from apps.conv import api  # noqa: E402
from apps.conv.reference import im2col_conv, reference  # noqa: E402
from apps.conv.schedule import (AVX2, AVX512, HALIDE_SIZES,  # noqa: E402
                                ISAS, conv, flops, schedule, specialized,
                                stages)
from exo_hl import SchedulingError  # noqa: E402

APP = REPO / "apps" / "conv"


class _Chain:
    """The AVX2 chain, built once per module (scheduling takes seconds)."""

    def __init__(self):
        self.stages = stages(AVX2)
        self.fast = self.stages[-1][1]
        self.compiled = self.fast.compile()

    def stage(self, prefix):
        return next(p for w, p in self.stages if w.startswith(prefix))


@pytest.fixture(scope="module")
def chain():
    return _Chain()


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


def _loop_in(cursor, name):
    """The first loop named ``name`` inside ``cursor``."""
    return cursor.find(f"for {name} in _: _", many=True)[0]


def _ints(rng, *shape):
    return rng.integers(-3, 4, shape).astype(np.float32)


def _layer(rng, N, H, W, IC, OC):
    return (_ints(rng, N, H + 2, W + 2, IC), _ints(rng, 3, 3, IC, OC),
            _ints(rng, OC))


def _numpy_conv(inp, wt, bias):
    """relu(bias + conv3x3), written independently of the app: a direct
    sum over the 9 taps with einsum, in float64."""
    N, H2, W2, IC = inp.shape
    H, W = H2 - 2, W2 - 2
    acc = np.zeros((N, H, W, wt.shape[3]))
    for ky in range(3):
        for kx in range(3):
            acc += np.einsum("nhwc,co->nhwo",
                             inp[:, ky:ky + H, kx:kx + W].astype(np.float64),
                             wt[ky, kx].astype(np.float64))
    return np.maximum(acc + bias, 0.0)


def _run(f, sizes, inp, wt, bias):
    N, H, W, IC, OC = sizes
    out = np.full((N, H, W, OC), np.nan, np.float32)
    f(N=N, H=H, W=W, IC=IC, OC=OC, inp=inp, wt=wt, bias=bias, out=out)
    return out


# sizes (N, H, W, IC, OC) reaching every nest: W not a multiple of the 5
# columns (tail columns alone, W < 5), OC not a multiple of 8 or 16 (tail
# channels alone, OC < 8; a whole register of tail channels alone, OC = 8,
# or with scalar ones after it, OC = 29), N = 1, IC = 1, H = 1
EDGE_SIZES = [(1, 1, 1, 1, 1), (1, 2, 5, 1, 16), (2, 1, 7, 3, 19),
              (1, 3, 4, 2, 7), (1, 2, 11, 5, 33), (3, 2, 10, 1, 8),
              (1, 1, 16, 4, 48), (2, 3, 6, 6, 21), (1, 2, 12, 3, 29)]


# ---------------------------------------------------------------------------
# the algorithm

def test_the_algorithm_equals_numpy():
    """The plain loop nest, interpreted and compiled, equals numpy exactly
    (small-integer data), every edge size."""
    rng = np.random.default_rng(0)
    f = conv.compile()
    for sizes in EDGE_SIZES:
        inp, wt, bias = _layer(rng, *sizes)
        want = _numpy_conv(inp, wt, bias)
        assert np.array_equal(_run(f, sizes, inp, wt, bias), want), sizes
    for sizes in EDGE_SIZES[:3]:
        inp, wt, bias = _layer(rng, *sizes)
        assert np.array_equal(_run(conv.interpret, sizes, inp, wt, bias),
                              _numpy_conv(inp, wt, bias)), sizes


def test_relu_and_bias():
    """Negative sums become 0, the bias is added once per output."""
    inp = np.ones((1, 3, 3, 1), np.float32)
    wt = np.ones((3, 3, 1, 2), np.float32)
    wt[:, :, 0, 1] = -1
    bias = np.array([0.5, 4], np.float32)
    out = _run(conv.compile(), (1, 1, 1, 1, 2), inp, wt, bias)
    assert out.ravel().tolist() == [9.5, 0.0]
    assert flops(5, 80, 100, 128, 128) == 2 * 5 * 80 * 100 * 128 * 128 * 9


# ---------------------------------------------------------------------------
# the schedule

def test_schedule_shape(chain):
    text = str(chain.fast)
    assert "assert" not in text                     # no preconditions
    assert "acc: f32[5, 2, 8] @ AVX2" in text        # the 5 x 16 tile
    assert "acc: f32[2, 8] @ AVX2" in text           # a tail column
    assert "W_pack: f32[3, 3, IC, 16] @ DRAM" in text  # one block's
    # the 5 x 16 and 1 x 16 tiles, then the whole registers of the tail
    # channels in 5 x 8 and 1 x 8 tiles (weights straight from wt)
    assert text.count("mm256_fmadd_bcst_ps(") == 10 + 2 + 5 + 1
    assert text.count("mm256_storeu_relu_ps(") == 10 + 2 + 5 + 1
    assert text.count("acc: f32[5, 8] @ AVX2") == 1
    assert text.count("acc: f32[8] @ AVX2") == 1
    assert "for ov in seq(0, OC % 16 / 8)" in text
    assert "for ol in seq(0, OC % 16 % 8)" in text  # the last ones scalar
    assert text.count("in par(") == 2
    assert chain.fast.cpu_features() == {"avx2", "fma"}
    c = chain.fast.c_code_str()
    assert "__m256 acc[10];" in c and "_mm256_max_ps(" in c
    # the par loops, outlined (codegen_c/outline.py), each its own region
    # (the second inside the serial n loop); the packing loop mallocs
    # W_pack, so its region or's the threads' heap statuses together and
    # the caller returns a failing one before the compute loop
    regions = re.findall(r"^#pragma omp parallel(?! for)(.*)$", c, re.M)
    assert regions == [" reduction(|: exo_hl_status)", ""]
    assert "if (exo_hl_status) {\n        return exo_hl_status;" in c
    assert c.count("exo_hl_share(") == 2 * 2 + 1   # 2 loops, the helper
    assert chain.fast.derivation()[0][1].ir() is conv.ir()


def test_descriptions():
    assert (AVX2.cols, AVX2.regs, AVX2.lanes, AVX2.ob) == (5, 2, 8, 16)
    assert (AVX512.cols, AVX512.regs, AVX512.lanes) == (5, 4, 16)
    assert AVX2.cpu_features() == {"avx2", "fma"}
    assert AVX512.cpu_features() == {"avx512f"}
    assert list(ISAS) == ["avx512", "avx2"]          # best first


def test_every_stage_agrees_on_the_interpreter(chain):
    """Each stage computes the same, on a layer reaching every nest (a
    column group, tail columns, a channel block, tail channels: a whole
    register of them and scalar ones)."""
    rng = np.random.default_rng(2)
    sizes = (1, 2, 7, 2, 16 + 8 + 3)
    inp, wt, bias = _layer(rng, *sizes)
    want = _numpy_conv(inp, wt, bias)
    for what, p in chain.stages:
        assert np.array_equal(_run(p.interpret, sizes, inp, wt, bias),
                              want), what


@pytest.mark.parametrize("nthreads", [1, 2])
def test_compiled_equals_numpy_exactly(chain, threads, nthreads):
    threads(nthreads)
    rng = np.random.default_rng(nthreads)
    for sizes in EDGE_SIZES + [(2, 5, 23, 9, 40), (1, 4, 15, 16, 64)]:
        inp, wt, bias = _layer(rng, *sizes)
        got = _run(chain.compiled, sizes, inp, wt, bias)
        assert np.array_equal(got, _numpy_conv(inp, wt, bias)), sizes


@pytest.mark.parametrize("nthreads", [1, 2])
def test_float_data_within_the_rounding_bound(chain, threads, nthreads):
    """Random data: each output is a sum of K = 9 IC products plus the
    bias, accumulated in f32 (by FMAs, in some order); the rounding error
    of such a sum is at most K u sum |terms| (u = 2^-24, first order),
    and ReLU does not increase it. The test allows exactly that bound."""
    threads(nthreads)
    rng = np.random.default_rng(3)
    for sizes in [(2, 3, 17, 37, 40), (1, 2, 10, 128, 16)]:
        N, H, W, IC, OC = sizes
        inp = rng.standard_normal((N, H + 2, W + 2, IC), dtype=np.float32)
        wt = rng.standard_normal((3, 3, IC, OC), dtype=np.float32)
        bias = rng.standard_normal(OC, dtype=np.float32)
        got = _run(chain.compiled, sizes, inp, wt, bias)
        want = _numpy_conv(inp, wt, bias)
        mag = _numpy_conv(np.abs(inp), np.abs(wt), np.abs(bias))
        bound = (9 * IC + 1) * 2.0 ** -24 * mag
        assert np.all(np.abs(got - want) <= bound), sizes
        assert np.any(got == 0) and np.any(got > 0)    # ReLU did cut


def test_size_specialized_kernel(threads):
    """Halide's layer (N=5, 80x100, 128 -> 128) with the sizes fixed by
    partial_eval before the schedule: W % 5 == OC % 16 == 0, so the tail
    nests are never made; compiled, on 2 threads, exact against numpy on
    small-integer data (sums stay far below 2^24)."""
    threads(2)
    p = specialized(AVX2)
    text = str(p)
    assert p.name() == "conv_halide_avx2"
    assert "acc: f32[2, 8]" not in text              # no tail columns
    assert "relu(acc)" not in text                   # no tail channels
    assert "W_pack: f32[4, 3, 3, 128, 16] @ DRAM" in text
    assert "W_pack_r" not in text                    # no left-over blocks
    assert "for og in par(0, 2)" in text
    rng = np.random.default_rng(6)
    N, H, W, IC, OC = HALIDE_SIZES.values()
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = np.full((N, H, W, OC), np.nan, np.float32)
    p.compile()(inp=inp, wt=wt, bias=bias, out=out)
    assert np.array_equal(out, reference(inp, wt, bias))
    with pytest.raises(SchedulingError):
        conv.partial_eval(N=0)


@pytest.mark.slow
def test_specialized_groups_with_left_over_blocks(threads):
    """With the sizes fixed, AVX2 packs groups of 4 channel blocks; OC =
    5 x 16 + 8 + 3 leaves a block outside the groups (packed alone), a
    whole register of tail channels and 3 scalar ones, W = 7 tail
    columns: every nest, exact against numpy on 2 threads."""
    threads(2)
    sizes = dict(N=2, H=2, W=7, IC=3, OC=5 * 16 + 8 + 3)
    p = specialized(AVX2, sizes)
    text = str(p)
    assert "W_pack: f32[4, 3, 3, 3, 16] @ DRAM" in text
    assert "W_pack_r: f32[3, 3, 3, 16] @ DRAM" in text
    assert "for og in par(0, 1)" in text
    assert text.count("mm256_fmadd_bcst_ps(") == 2 * (10 + 2) + 5 + 1
    rng = np.random.default_rng(11)
    inp, wt, bias = _layer(rng, *sizes.values())
    out = np.full((2, 2, 7, sizes["OC"]), np.nan, np.float32)
    p.compile()(inp=inp, wt=wt, bias=bias, out=out)
    assert np.array_equal(out, _numpy_conv(inp, wt, bias))


def test_avx512_kernel(threads):
    """The AVX-512 schedule (5 x 64 tile; emulated on hosts without it),
    exact against numpy on tails of both kinds."""
    threads(2)
    fast = stages(AVX512)[-1][1]
    text = str(fast)
    assert "acc: f32[5, 4, 16] @ AVX512" in text
    assert text.count("mm512_storeu_relu_ps(") == 20 + 4 + 5 + 1
    assert "for ov in seq(0, OC % 64 / 16)" in text
    f = fast.compile()
    rng = np.random.default_rng(7)
    for sizes in [(1, 2, 7, 3, 64 + 16 + 5), (2, 1, 5, 2, 9),
                  (1, 1, 11, 2, 2 * 16 + 3)]:
        inp, wt, bias = _layer(rng, *sizes)
        assert np.array_equal(_run(f, sizes, inp, wt, bias),
                              _numpy_conv(inp, wt, bias)), sizes


# ---------------------------------------------------------------------------
# safety: the steps the schedule takes are checked, unsafe ones refused

def test_unsafe_steps_are_rejected(chain):
    # a reduction loop is not parallel (every step writes acc)
    with pytest.raises(SchedulingError, match="race"):
        conv.parallelize('ic')
    # without a precondition, OC % 16 == 0 cannot be proven
    with pytest.raises(SchedulingError, match="divisible"):
        conv.split('oc', 16, 'oco', 'oci', tail='perfect')
    blocks = chain.stage("blocks of")
    # a packed panel of weights narrower than what the block reads
    with pytest.raises(SchedulingError, match="cover"):
        blocks.stage_mem(blocks.find_loop('n'),
                         'wt[0:3, 0:3, 0:IC, 16 * oco:16 * oco + 8]', 'P')
    # the scalar accumulator shared by a tile's lanes cannot be split
    # apart before it has a dimension per lane
    p = blocks.split(blocks.find_loop('oci'), 8, 'ot', 'ol', tail='perfect')
    with pytest.raises(SchedulingError):
        p.fission_after(p.find('acc = _'), n_lifts=2)
    packed = chain.stage("weights")
    # the channel-block loop writes W_pack, allocated inside it: fine; the
    # rows of a block read the packed weights written before them, but
    # the packing must stay outside the row loop (it reads every row's
    # weights); moving the rows outside the block loop is refused because
    # the packing nest sits between them
    with pytest.raises(SchedulingError):
        packed.reorder(packed.find_loop('oco'), packed.find_loop('n'))
    # a group's packed weights narrower than the group's four blocks read
    grouped = blocks.split(blocks.find_loop('oco'), 4, 'og', 'ob',
                           tail='cut')
    with pytest.raises(SchedulingError, match="cover"):
        grouped.stage_mem(grouped.find_loop('ob'),
                          'wt[0:3, 0:3, 0:IC, 64 * og:64 * og + 48]', 'P')
    # the weight register of a tail-channel tile staged from the wrong
    # channels: the ReLU store and FMAs would not read what it holds
    tail = chain.stage("5 x 16")
    tail = tail.split(tail.find_loop('oci'), 8, 'ov', 'ol', tail='cut')
    red = _loop_in(tail.find_loop('ov'), 'ic').body()[0]
    with pytest.raises(SchedulingError, match="cover"):
        tail.stage_mem(red, 'wt[ky, kx, ic, 8 * ov:8 * ov + 8]', 'P')
    c0 = '8 * ov + ol + 16 * (OC / 16)'              # the right channel
    assert "* P[0]" in str(tail.stage_mem(
        red, f'wt[ky, kx, ic, {c0}:{c0} + 1]', 'P'))
    # a plain store cannot stand for the ReLU store, nor the reverse
    tiles = chain.stage("5 x 16")
    store = tiles.find('mm256_storeu_relu_ps(_)')
    assert store is not None
    with pytest.raises(SchedulingError):
        chain.stage("blocks of").replace(
            chain.stage("blocks of").find('out[_] = _').parent(),
            AVX2.load)


def test_parallel_rows_are_proven(chain):
    """The row loops became par only through parallelize: the row loop of
    the algorithm is parallel too, the reduction loops are not."""
    p = conv.parallelize('y')
    assert "for y in par(0, H)" in str(p)
    for loop in ('ky', 'kx'):
        with pytest.raises(SchedulingError, match="race"):
            conv.parallelize(loop)


# ---------------------------------------------------------------------------
# entry points

def test_python_entry_point(chain, monkeypatch):
    monkeypatch.setattr(api, "procedure", lambda name: chain.fast)
    monkeypatch.setattr(api, "choose_isa", lambda name="auto":
                        (AVX2, False, "test"))
    api.compiled.cache_clear()
    rng = np.random.default_rng(8)
    inp, wt, bias = _layer(rng, 2, 3, 8, 5, 20)
    want = _numpy_conv(inp, wt, bias)
    assert np.array_equal(api.conv(inp, wt, bias), want)
    out = np.zeros((2, 3, 8, 20), np.float32)
    assert api.conv(inp, wt, bias, out) is out
    assert np.array_equal(out, want)
    with pytest.raises(TypeError):
        api.conv(inp.astype(np.float64), wt, bias)
    with pytest.raises(ValueError, match="expected"):
        api.conv(inp, np.ascontiguousarray(wt[:, :, :4]), bias)
    with pytest.raises(ValueError, match="bias"):
        api.conv(inp, wt, bias[:5])
    with pytest.raises(ValueError, match="out"):
        api.conv(inp, wt, bias, np.zeros((2, 3, 8, 21), np.float32))
    with pytest.raises(ValueError, match="smaller"):
        api.conv(np.ascontiguousarray(inp[:, :2]), wt, bias)
    api.compiled.cache_clear()


def test_auto_picks_the_best_isa_the_host_has(monkeypatch):
    monkeypatch.setenv("EXO_HL_EMULATE", "0")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    isa, emulated, note = api.choose_isa("auto")
    assert (isa, emulated) == (AVX2, False) and "lacks avx512f" in note
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma,avx512f")
    assert api.choose_isa("auto")[:2] == (AVX512, False)
    monkeypatch.setenv("EXO_HL_HOST_CPU", "sse4.2")
    assert api.choose_isa("auto")[0] is None
    assert api.choose_isa("avx512")[0] is None
    assert api.choose_isa("neon")[0] is None


def test_im2col_baseline_equals_numpy():
    rng = np.random.default_rng(9)
    inp, wt, bias = _layer(rng, 2, 3, 4, 5, 6)
    cols = np.empty((2, 3, 4, 3, 3, 5), np.float32)
    out = np.empty((24, 6), np.float32)
    im2col_conv(inp, wt.reshape(45, 6), bias, cols, out)
    assert np.array_equal(out.reshape(2, 3, 4, 6), _numpy_conv(inp, wt, bias))
    assert np.array_equal(reference(inp, wt, bias),
                          _numpy_conv(inp, wt, bias))


@pytest.mark.slow
def test_bench_json_rows(tmp_path):
    """bench.py on a small layer, one rep: the JSON rows have the promised
    keys; all three implementations were checked before timing. A
    variant asked with --also is timed beside the layer's kernel (and
    checked), one the schedule refuses for the layer is reported."""
    out = tmp_path / "rows.json"
    r = subprocess.run(
        [sys.executable, str(APP / "bench.py"), "--size", "1", "4", "7",
         "8", "19", "--reps", "1", "--threads", "1", "2", "--no-record",
         "--also", "par=rows,dynamic=false", "--also", "par=bands",
         "--json", str(out)], capture_output=True, text=True, timeout=600,
        env={**os.environ, "EXO_HL_EMULATE": "0"})
    assert r.returncode == 0, r.stderr
    assert "--also par=bands: refused" in r.stdout
    rows = json.loads(out.read_text())
    assert [row["threads"] for row in rows] == [1, 2]
    for row in rows:
        for key in ("threads", "isa", "exo_hl_gflops", "onnxruntime_gflops",
                    "im2col_blas_gflops", "peak_pct"):
            assert key in row
        assert row["exo_hl_gflops"] > 0 and row["onnxruntime_gflops"] > 0
        assert list(row["exo_hl_also"]) == ["par=rows,dynamic=false"]
        assert row["exo_hl_also"]["par=rows,dynamic=false"]["gflops"] > 0


def test_register_tiles_do_not_spill(tmp_path):
    """No FMA of either kernel reads an operand from the stack (GCC 12,
    -O3): with restrict pointers in the outlined par function, the
    AVX-512 tile's weight registers were spilled and the layer ran at
    60 GFLOP/s instead of 112."""
    from asm_checks import fma_stack_operands
    for isa in (AVX512, AVX2):
        for p in (specialized(isa), schedule(isa)):
            spilled, fmas = fma_stack_operands(p, tmp_path)
            assert fmas > 0 and spilled == 0, (p.name(), spilled, fmas)


#: the layers of ``bench.py --resnet``: ResNet-50's 3x3 layers at N = 1
#: and 5, and Halide's
BENCH_LAYERS = [(n, hw, hw, c, c) for n in (1, 5)
                for hw, c in ((56, 64), (28, 128), (14, 256), (7, 512))] + \
    [tuple(HALIDE_SIZES.values())]


@pytest.mark.slow
@pytest.mark.parametrize("isa_name", ["avx512", "avx2"])
def test_model_kernels_do_not_spill_with_native_flags(tmp_path, monkeypatch,
                                                      isa_name):
    """What the app compiles on this machine: the base kernels and, for
    each layer of the bench, the kernel its model picks, as ``compile()``
    builds them (``-O3 -march=native``): no FMA reads an operand from the
    stack. The model's 7x4 tile of 7x7x512 (AVX-512, 28 accumulators + 4
    registers of weights) kept an accumulator there (GCC 12 on Zen 5)."""
    from asm_checks import fma_stack_operands, native_flags
    from apps.conv import tuning
    monkeypatch.delenv("CFLAGS", raising=False)
    assert [s[1:] for s in BENCH_LAYERS[:4]] == [
        (hw, hw, c, c) for hw, c in tuning.RESNET]
    isa = ISAS[isa_name]
    kernels = [("specialized", specialized(isa)), ("general", schedule(isa))]
    for sizes in BENCH_LAYERS:
        params, _, _ = tuning.configured(isa_name, sizes, "model")
        kernels.append((f"{sizes} {params}",
                        tuning.build(isa_name, params, sizes)))
    for what, p in kernels:
        spilled, fmas = fma_stack_operands(p, tmp_path, flags=native_flags())
        assert fmas > 0 and spilled == 0, (what, spilled, fmas)


#: (isa, params, sizes): full-register tiles, kc-blocked, grouped with
#: tails, general sizes
FULL_TILES = [
    ("avx512", {"tile": "7x4", "group": 1, "fixed": True, "packed": True,
                "kc": 32, "par": "blocks", "prefetch": True},
     (1, 7, 7, 64, 128)),
    ("avx512", {"tile": "7x4", "group": 2, "fixed": True},
     (1, 3, 16, 5, 128 + 64 + 9)),
    ("avx512", {"tile": "7x4", "fixed": False}, (2, 2, 9, 3, 70)),
    ("avx2", {"tile": "7x2", "group": 1, "fixed": True, "packed": True,
              "kc": 32, "par": "blocks", "prefetch": True},
     (1, 7, 7, 64, 64)),
    ("avx2", {"tile": "7x2", "group": 2, "fixed": True},
     (1, 3, 16, 5, 45)),
]

#: (flags for the assembly check: a machine-independent build with the
#: instruction set's registers, 32 zmm / 16 ymm; the weight register that
#: stays, the narrower tile that keeps all its weight registers)
FULL_TILE_CHECK = {
    "avx512": (("-O3", "-march=x86-64-v4", "-mtune=znver3"),
               "W_reg: f32[3, 16] @ AVX512", "7x2"),
    "avx2": (("-O3", "-march=haswell"), "W_reg: f32[1, 8] @ AVX2", "7x1"),
}


@pytest.mark.parametrize("isa_name,params,sizes", FULL_TILES)
def test_full_register_tile_reads_weights_from_memory(tmp_path, threads,
                                                      isa_name, params,
                                                      sizes):
    """A tile that fills every vector register (AVX-512 7x4: 28
    accumulators and 4 registers of weights; AVX2 7x2 with 16 ymm
    registers: 14 + 2), none left for the input's broadcast, stages all
    but one register of weights and reads the last from the packed
    weights in each of its FMAs (``fma_bmem``): no FMA reads the stack
    (GCC 12 kept an accumulator there, a load and a store per k step:
    2.4-2.8% slower on 7x7x512 with AVX-512, 0.6x with AVX2 built for
    Haswell), and the kernel equals numpy exactly (compiled, 1 and 2
    threads). Narrower tiles keep every register of weights."""
    from asm_checks import fma_stack_operands
    from apps.conv import tuning
    flags, staged, narrower = FULL_TILE_CHECK[isa_name]
    p = tuning.build(isa_name, params, sizes)
    text = str(p)
    bmem = ISAS[isa_name].fma_bmem.name()
    assert staged in text and f"{bmem}(" in text
    assert f"{bmem}(" not in str(
        tuning.build(isa_name, dict(params, tile=narrower), sizes))
    spilled, fmas = fma_stack_operands(p, tmp_path, flags=flags)
    assert fmas > 0 and spilled == 0, (spilled, fmas)
    k = api.RawKernel(p.compile())
    rng = np.random.default_rng(5)
    inp, wt, bias = _layer(rng, *sizes)
    want = reference(inp, wt, bias)
    for n in (1, 2):
        threads(n)
        out = np.full(want.shape, np.nan, np.float32)
        k(sizes, inp, k.prepare(wt), bias, out)
        np.testing.assert_array_equal(out, want)


def _with_specials(rng, x, p):
    """``x`` with a fraction ``p`` of its elements +-inf or NaN."""
    hit = rng.random(x.shape) < p
    x[hit] = rng.choice(np.array([np.inf, -np.inf, np.nan], np.float32),
                        int(hit.sum()))
    return x


def _ieee_conv(inp, wt, bias):
    """relu(bias + conv3x3) in float64 with every product summed (inf -
    inf and 0 * inf are NaN whatever the order) and the algorithm's relu
    (``relu``: NaN and -0 to +0)."""
    N, H2, W2, _ = inp.shape
    H, W = H2 - 2, W2 - 2
    acc = 0.0
    with np.errstate(all="ignore"):
        for ky in range(3):
            for kx in range(3):
                x = inp[:, ky:ky + H, kx:kx + W, :].astype(np.float64)
                acc = acc + (x[..., :, None] * wt[ky, kx]).sum(axis=-2)
        v = acc + bias
        return np.where(np.isnan(v), 0.0, np.maximum(v, 0.0))


@pytest.mark.parametrize("isa_name", ["avx2", "avx512"])
def test_entry_point_touches_only_its_arrays(isa_name):
    """``api.conv`` on arrays flush against an inaccessible page after
    them, then before them (``tests/guard_pages``): a read or write past
    a tail of channels or columns would crash here. 1 and 2 threads.
    Some inputs are +-inf or NaN: a padded or masked channel tail that
    multiplied them by zero would show."""
    from tests.guard_pages import guarded
    rng = np.random.default_rng(13)
    for threads, at in ((1, "end"), (2, "end"), (2, "start")):
        assert set_openmp_threads(threads)
        for i, (N, H, W, IC, OC) in enumerate((
                (1, 1, 1, 1, 1), (1, 2, 3, 2, 5), (2, 3, 9, 3, 17),
                (1, 2, 15, 4, 75), (1, 1, 7, 1, 129))):
            p = (0.0, 0.02, 0.1)[i % 3]
            inp, wt, bias = (guarded(x.shape, np.float32, at,
                                     _with_specials(rng, x, p))
                             for x in _layer(rng, N, H, W, IC, OC))
            out = guarded((N, H, W, OC), np.float32, at, np.nan)
            api.conv(inp, wt, bias, out, isa=isa_name)
            assert np.array_equal(out, _ieee_conv(inp, wt, bias)), \
                (threads, at, (N, H, W, IC, OC))
    set_openmp_threads(os.cpu_count() or 1)
