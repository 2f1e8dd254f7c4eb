"""apps/conv/tuning.py: points of the conv tuning space (register tile,
channel groups, fixed or general sizes) give kernels exactly equal to
numpy on odd layers (small-integer data: every partial sum is an exact
integer), compiled, on 2 threads; refused points raise SchedulingError;
the model's default and the tuning database key. AVX-512 points run
through the emulation layer on hosts without it."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import set_openmp_threads  # noqa: E402
from apps.conv import tuning  # noqa: E402
from exo_hl import SchedulingError  # noqa: E402


def _numpy_conv(inp, wt, bias):
    """relu(bias + conv3x3) in float64 with einsum (independent of the
    app's reference)."""
    N, H2, W2, IC = inp.shape
    H, W = H2 - 2, W2 - 2
    acc = np.zeros((N, H, W, wt.shape[3]))
    for ky in range(3):
        for kx in range(3):
            acc += np.einsum("nhwc,co->nhwo",
                             inp[:, ky:ky + H, kx:kx + W].astype(np.float64),
                             wt[ky, kx].astype(np.float64))
    return np.maximum(acc + bias, 0.0)


@pytest.fixture
def two_threads():
    assert set_openmp_threads(2)
    yield
    set_openmp_threads(os.cpu_count() or 1)


# (isa, params, sizes N,H,W,IC,OC): odd layers reaching the tails of
# each tile (W not a multiple of the columns, OC not of the block, of a
# register, or of the group)
POINTS = [
    ("avx2", {"tile": "7x2", "group": 2, "fixed": True}, (1, 2, 9, 3, 75)),
    ("avx2", {"tile": "3x3", "group": 1, "fixed": False}, (2, 1, 5, 2, 29)),
    ("avx2", {"tile": "14x1", "group": 1, "fixed": True}, (1, 3, 15, 2, 19)),
    ("avx512", {"tile": "7x4", "group": 1, "fixed": True},
     (1, 2, 8, 3, 64 + 16 + 5)),
    ("avx512", {"tile": "7x3", "group": 2, "fixed": True},
     (1, 1, 7, 2, 2 * 48 + 48 + 17)),
    # OC % 48 = 32: whole registers of tail channels, no scalar ones
    ("avx512", {"tile": "7x3", "group": 1, "fixed": True}, (1, 2, 7, 2, 80)),
]


@pytest.mark.parametrize("isa_name,params,sizes", POINTS)
def test_tuning_points_equal_numpy(isa_name, params, sizes, two_threads):
    isa = tuning.variant(isa_name, params)
    p = tuning.template(dict(params, isa=isa_name,
                             sizes=",".join(map(str, sizes))))
    text = str(p)
    acc = f"acc: f32[{isa.cols}, {isa.regs}, {isa.lanes}]"
    assert acc in text, (acc, text[:2000])
    if params["group"] > 1:
        assert f"W_pack: f32[{params['group']}, 3, 3" in text
    N, H, W, IC, OC = sizes
    rng = np.random.default_rng(3)
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = np.full((N, H, W, OC), np.nan, np.float32)
    args = dict(inp=inp, wt=wt, bias=bias, out=out)
    if not params["fixed"]:
        args.update(N=N, H=H, W=W, IC=IC, OC=OC)
    p.compile()(**args)
    assert np.array_equal(out, _numpy_conv(inp, wt, bias))


def test_refused_points():
    with pytest.raises(SchedulingError, match="vector registers"):
        tuning.variant("avx512", {"tile": "8x4"})     # 36 registers
    with pytest.raises(SchedulingError, match="vector registers"):
        tuning.variant("avx2", {"tile": "7x3"})       # 24 registers
    with pytest.raises(SchedulingError, match="fixed sizes"):
        tuning.variant("avx2", {"group": 2, "fixed": False})
    with pytest.raises(SchedulingError):
        tuning.variant("avx2", {"tile": "5by2"})
    with pytest.raises(SchedulingError):
        tuning.template({"isa": "avx512", "tile": "16x2",
                         "sizes": "1,1,3,1,1", "group": 1, "fixed": True})
    # every listed tile fits its registers
    for isa_name, tiles in tuning.TILES.items():
        for t in tiles:
            tuning.variant(isa_name, {"tile": t})


def test_model_default_and_key():
    # ResNet-50 layers: 7 columns divide W = 56, 28, 14, 7 (no tail)
    for hw, c in tuning.RESNET:
        m = tuning.model_params("avx512", (1, hw, hw, c, c))
        cols = int(m["tile"].split("x")[0])
        assert hw % cols == 0 and m["fixed"], m
        tuning.variant("avx512", m)
    # Halide's layer: W = 100, the default 5-column tile
    assert tuning.model_params("avx2", tuning.HALIDE_SIZES)["tile"] == "5x2"
    assert tuning.key("avx2", "5,80,100,128,128") == \
        tuning.key("avx2", tuning.HALIDE_SIZES) == \
        f"conv.avx2.5x80x100x128x128.v{tuning.SCHEDULE_VERSION}"
    assert tuning.parse_sizes("resnet14:5") == \
        {"N": 5, "H": 14, "W": 14, "IC": 256, "OC": 256}
    with pytest.raises(ValueError):
        tuning.parse_sizes("resnet13")


def test_configured_uses_the_model_without_a_record(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.delenv("EXO_HL_TUNING_DB")   # the default place
    params, isa, note = tuning.configured("avx2", (1, 7, 7, 512, 512))
    assert "from the model" in note
    assert params == tuning.model_params("avx2", (1, 7, 7, 512, 512))
    # AVX2 has no broadcast operand in its FMA: 7x2 (14 accumulators + 2
    # weight registers) leaves none for the broadcast, 6x2 does
    assert params["tile"] == "6x2" and params["packed"]
    _, isa, note = tuning.configured("avx2", (1, 7, 7, 512, 512), "fixed")
    assert "fixed schedule" in note and isa.cols == 5


def test_recorded_rows_make_a_conv_table(tmp_path):
    """A conv bench row recorded per machine becomes a README table row
    with its ratio to ONNX Runtime and where its parameters came from."""
    from apps.common.report import report
    from apps.common.results import record_run
    row = {"threads": 1, "isa": "avx2", "size": [1, 14, 14, 256, 256],
           "exo_hl_gflops": 50.0, "onnxruntime_gflops": 40.0,
           "im2col_blas_gflops": 30.0, "ratio_onnxruntime": 1.25,
           "peak_pct": 40.0, "params_source": "AVX2 7x16 from the model"}
    record_run("conv", "avx2", [row], {"params_source": "auto"}, tmp_path)
    text = report("conv", tmp_path)
    assert ("| 1,14,14,256,256 | 1 | 50.0 | 40.0 | 1.25 | 30.0 | 40% | "
            "AVX2 7x16 from the model |") in text


def test_python_entry_point_with_configured_parameters(two_threads):
    """api.conv(params='model') runs the model's kernel for the layer's
    sizes (odd ones here), exact against numpy."""
    from apps.conv import api
    rng = np.random.default_rng(5)
    N, H, W, IC, OC = 1, 3, 9, 2, 21
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = api.conv(inp, wt, bias, isa="avx2", params="model")
    assert np.array_equal(out, _numpy_conv(inp, wt, bias))
    _, note = api.configured_kernel("avx2", (N, H, W, IC, OC), "model")
    assert "from the model" in note
    # a layer whose channel block divides OC: the model's kernel takes
    # pre-packed weights, which api.conv packs for it
    N, H, W, IC, OC = 1, 2, 7, 2, 16
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = api.conv(inp, wt, bias, isa="avx2", params="model")
    assert np.array_equal(out, _numpy_conv(inp, wt, bias))
    kernel, note = api.configured_kernel("avx2", (N, H, W, IC, OC), "model")
    assert kernel.packed_ob == 16 and "pre-packed" in note
    with pytest.raises(ValueError):
        api.conv(inp, wt, bias, isa="avx2", params="tuned")


# pre-packed weights, the loop order of the groups, rows on threads and
# the reduction blocked over input channels (kc), on layers that reach a
# group's left-over block, the channel tail and several kc blocks
PACKED_POINTS = [
    ("avx512", {"tile": "5x4", "group": 2, "packed": True, "par": "rows"},
     (1, 3, 10, 3, 3 * 64)),
    ("avx512", {"tile": "7x2", "group": 1, "packed": True, "kc": 4},
     (2, 2, 14, 8, 64)),
    ("avx512", {"tile": "7x2", "group": 1, "packed": True, "kc": 4,
                "kc_at": "row", "par": "rows"}, (1, 3, 7, 12, 32)),
    ("avx2", {"tile": "5x2", "group": 1, "par": "rows"}, (1, 3, 7, 3, 21)),
    # tiles of 2 rows: one pair and a last row in a 1-row tile
    ("avx2", {"tile": "5x1", "group": 1, "packed": True, "rows": 2},
     (1, 3, 10, 2, 16)),
    # rows of every image shared at once (n and y collapsed), packed per
    # call: a group, its left-over block and the channel tail, each an
    # n, y nest of its own (pre-packed: test_new_variants_interpreted)
    ("avx2", {"tile": "5x2", "group": 2, "par": "rows"}, (2, 3, 6, 2, 53)),
    # the next kc block's weights prefetched (the last block's index
    # wraps around IC), partial sums per image and per row
    ("avx512", {"tile": "7x2", "group": 1, "packed": True, "kc": 4,
                "prefetch": True}, (2, 2, 7, 12, 64)),
    ("avx2", {"tile": "5x2", "group": 1, "packed": True, "kc": 4,
              "kc_at": "row", "prefetch": True}, (1, 3, 10, 8, 16)),
    # the par loops shared out one iteration at a time (par_dynamic):
    # the rows of a group and of its left-over block (two loops, one
    # region); the channel blocks of a kc-blocked kernel
    ("avx2", {"tile": "5x2", "group": 2, "par": "rows", "dynamic": True},
     (2, 2, 5, 2, 48)),
    ("avx512", {"tile": "7x2", "group": 1, "packed": True, "kc": 4,
                "dynamic": True}, (2, 2, 14, 8, 64)),
    # the channel blocks (groups) and the rows of every image in one par
    # loop (par='split'): 3 blocks of 6 rows on 2 threads, so a thread's
    # share ends inside a block; a column tail; two groups of two blocks,
    # taken one row at a time
    ("avx512", {"tile": "5x2", "group": 1, "packed": True, "par": "split"},
     (2, 3, 6, 2, 3 * 32)),
    ("avx2", {"tile": "5x2", "group": 2, "packed": True, "par": "split",
              "dynamic": True}, (1, 3, 5, 2, 64)),
    # bands of rows outside the groups (par='bands'): 7 rows in bands of
    # 4 and 3 (the guard); 5 rows in 3 bands of 2, 2 and 1, taken one at
    # a time
    ("avx512", {"tile": "5x2", "group": 1, "packed": True, "par": "bands",
                "bands": 2}, (1, 7, 6, 2, 3 * 32)),
    ("avx2", {"tile": "5x2", "group": 2, "packed": True, "par": "bands",
              "bands": 3, "dynamic": True}, (1, 5, 5, 2, 64)),
]


@pytest.mark.parametrize("isa_name,params,sizes", PACKED_POINTS)
def test_packed_and_blocked_points_equal_numpy(isa_name, params, sizes,
                                               two_threads):
    from apps.conv.api import RawKernel
    p = tuning.build(isa_name, dict(params, fixed=True), sizes)
    text = str(p)
    assert ("wp: f32[" in text) == bool(params.get("packed"))
    assert "W_pack" not in text or not params.get("packed")
    if params.get("kc"):
        assert f"for ici in seq(0, {params['kc']})" in text
    par = "par_dynamic" if params.get("dynamic") else "par"
    assert f" in {par}(" in text
    assert (" in par(" in text) == (par == "par")
    if params.get("par") == "rows" and sizes[0] > 1:
        # one loop over the N H rows of all images, each a par loop
        N, H = sizes[:2]
        assert f"for ny in {par}(0, {N * H})" in text
        assert "for n in" not in text and "for y in" not in text
    elif params.get("par") == "rows":
        assert f"for y in {par}(" in text
    elif params.get("par") == "split":
        N, H, OC = sizes[0], sizes[1], sizes[4]
        ob = tuning.variant(isa_name, params).ob
        assert f"for gy in {par}(0, {OC // ob // params['group'] * N * H})" \
            in text
        assert text.count(f" in {par}(") == 1          # one loop
        assert "for n in" not in text and "for y in" not in text
    elif params.get("par") == "bands":
        assert f"for band in {par}(0, {params['bands']})" in text
        assert text.count(f" in {par}(") == 1
        assert "for n in" not in text and "for y in" not in text
    isa = tuning.variant(isa_name, params)
    # one prefetch per 64-byte line of a weight row, only when asked
    assert text.count("mm_prefetch_t1(") == \
        (-(-isa.ob // 16) if params.get("prefetch") else 0)
    if params.get("rows"):
        assert f"acc: f32[{params['rows']}, {isa.cols}, {isa.regs}" in text
    k = RawKernel(p.compile())
    N, H, W, IC, OC = sizes
    rng = np.random.default_rng(7)
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = np.full((N, H, W, OC), np.nan, np.float32)
    w = k.prepare(wt)
    assert (w is wt) == (not params.get("packed"))
    k(sizes, inp, w, bias, out)
    assert np.array_equal(out, _numpy_conv(inp, wt, bias))


def test_packed_and_blocked_points_refused():
    from apps.conv.schedule import AVX512, schedule
    fixed = {"N": 1, "H": 2, "W": 14, "IC": 8, "OC": 64}
    with pytest.raises(SchedulingError, match="fixed sizes"):
        tuning.variant("avx512", {"packed": True, "fixed": False})
    with pytest.raises(SchedulingError, match="pre-packed"):
        tuning.variant("avx512", {"kc": 32, "packed": False})
    with pytest.raises(SchedulingError, match="multiple"):   # OB 48, OC 64
        tuning.build("avx512", {"tile": "7x3", "group": 1, "packed": True},
                     (1, 2, 7, 3, 64))
    with pytest.raises(SchedulingError, match="kc"):         # IC % kc
        schedule(AVX512, fixed, packed=True, kc=3)
    with pytest.raises(SchedulingError, match="kc"):         # W % cols
        schedule(AVX512, dict(fixed, W=13), packed=True, kc=4)
    with pytest.raises(SchedulingError):
        schedule(AVX512, fixed, packed=True, par="cols")
    with pytest.raises(SchedulingError):
        schedule(AVX512, fixed, packed=True, kc=4, kc_at="pixel")
    with pytest.raises(SchedulingError, match="several rows"):
        schedule(AVX512, fixed, packed=False, rows=2)
    with pytest.raises(SchedulingError, match="vector registers"):
        tuning.variant("avx512", {"tile": "7x4", "rows": 2})
    with pytest.raises(SchedulingError, match="several rows"):
        tuning.variant("avx512", {"tile": "7x2", "rows": 2, "fixed": False})
    with pytest.raises(SchedulingError, match="kc_at"):
        tuning.variant("avx512", {"packed": True, "kc_at": "row"})
    with pytest.raises(SchedulingError, match="prefetch"):
        tuning.variant("avx512", {"packed": True, "prefetch": True})
    with pytest.raises(SchedulingError, match="prefetch"):
        schedule(AVX512, fixed, packed=True, prefetch=True)
    # par='split': the group loop's body must be the rows alone (weights
    # pre-packed, not staged in it), no kc, 1-row tiles, no left-over
    # block beside the groups
    for kw in ({"packed": False}, {"packed": True, "kc": 4},
               {"packed": True, "rows": 2}):
        with pytest.raises(SchedulingError, match="split"):
            schedule(AVX512, fixed, par="split", **kw)
    import dataclasses
    with pytest.raises(SchedulingError, match="split"):   # 4 blocks of 16
        schedule(dataclasses.replace(AVX512, regs=1, group=3), fixed,
                 packed=True, par="split")
    for bad in ({"packed": False}, {"packed": True, "kc": 32},
                {"packed": True, "rows": 2, "tile": "7x2"}):
        with pytest.raises(SchedulingError, match="split"):
            tuning.variant("avx512", dict(bad, par="split"))
        with pytest.raises(SchedulingError, match="bands"):
            tuning.variant("avx512", dict(bad, par="bands", bands=2))
    # par='bands': a band count, and only with it
    with pytest.raises(SchedulingError, match="bands"):
        schedule(AVX512, fixed, packed=True, par="bands", bands=0)
    with pytest.raises(SchedulingError, match="bands"):
        tuning.variant("avx512", {"packed": True, "par": "bands"})
    with pytest.raises(SchedulingError, match="bands"):
        tuning.variant("avx512", {"packed": True, "par": "rows", "bands": 2})


def test_kc_blocks_of_partial_sums_are_not_parallel():
    """The kc blocks of one channel block add into the same partial sums:
    running them on threads is a race, which parallelize refuses, as it
    refuses the rows of the init nest moved past the reduction."""
    import dataclasses
    from apps.conv.schedule import AVX512, stages
    isa = dataclasses.replace(AVX512, cols=7, regs=2, group=1)
    fixed = {"N": 1, "H": 2, "W": 7, "IC": 8, "OC": 32}
    p = [q for what, q in stages(isa, fixed, packed=True, kc=4)
         if what.startswith("reduction in blocks")][0]
    with pytest.raises(SchedulingError):
        p.parallelize(p.find_loop('ico'))
    with pytest.raises(SchedulingError):   # the init nest after the sums
        p.reorder_stmts(p.find_loop('n'), p.find_loop('ico'))


def test_model_prefers_prepackable_blocks_and_even_threads():
    m = tuning.model_params("avx512", (1, 7, 7, 512, 512))
    ob = int(m["tile"].split("x")[1]) * 16
    assert m["packed"] and 512 % ob == 0, m
    assert tuning._par_model(1, 56, threads=2) == "rows"
    assert tuning._par_model(16, 7, threads=2) == "blocks"
    assert tuning._par_model(2, 56, threads=2) == "blocks"
    # iterations shared out one at a time on several cores, when coarse
    assert tuning._dynamic_model(4e6, threads=2)
    assert not tuning._dynamic_model(4e6, threads=1)
    assert not tuning._dynamic_model(1e4, threads=2)


@pytest.mark.parametrize("params,sizes,shows", [
    # the collapsed (n, y) par loop: images and rows recovered from ny
    # (3 images of 2 rows, a column tail)
    ({"tile": "5x2", "par": "rows"}, (3, 2, 6, 2, 32),
     "for ny in par(0, 6)"),
    # prefetch of the next kc block, wrapping around IC at the last one
    ({"tile": "7x2", "kc": 2, "prefetch": True}, (1, 1, 7, 4, 32),
     "wp[oco, ky, kx, (2 * ico + 2 + ici) % 4, 16:17]"),
])
def test_new_variants_interpreted(params, sizes, shows):
    """Small layers of the version-3 variants on the interpreter."""
    from apps.conv.schedule import pack_weights
    p = tuning.build("avx512", dict(params, group=1, fixed=True,
                                    packed=True), sizes)
    assert shows in str(p)
    N, H, W, IC, OC = sizes
    rng = np.random.default_rng(5)
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = np.full((N, H, W, 1, OC), np.nan, np.float32)
    p.interpret(inp=inp, wp=pack_weights(wt, OC), bias=bias.reshape(1, OC),
                out=out)
    assert np.array_equal(out.reshape(N, H, W, OC),
                          _numpy_conv(inp, wt, bias))


@pytest.mark.parametrize("par,sizes,shows", [
    ({"par": "split"}, (2, 2, 5, 3, 3 * 32), "for gy in par(0, 12)"),
    ({"par": "bands", "bands": 2}, (1, 3, 5, 3, 3 * 32),
     "if 2 * band + ny < 3:"),
    # more bands than cores, taken dynamically (the tuning space has
    # them): 5 rows in bands of 2, the last guarded
    ({"par": "bands", "bands": 4, "dynamic": True}, (1, 5, 5, 3, 3 * 32),
     "for band in par_dynamic(0, 3):"),
])
def test_split_and_bands_interpreted_equal_compiled(par, sizes, shows,
                                                    two_threads):
    """par='split' and 'bands' on small layers of 3 channel blocks (2
    images of 2 rows: 12 iterations of (block, image, row) recovered from
    one index; or 3 rows in 2 bands, the second guarded): the
    interpreter and the compiled kernel on 2 threads give numpy's
    result."""
    from apps.conv.api import RawKernel
    from apps.conv.schedule import pack_weights
    p = tuning.build("avx512", dict(par, tile="5x2", group=1, fixed=True,
                                    packed=True), sizes)
    assert shows in str(p)
    N, H, W, IC, OC = sizes
    rng = np.random.default_rng(11)
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    want = _numpy_conv(inp, wt, bias)
    out = np.full((N, H, W, 3, 32), np.nan, np.float32)
    p.interpret(inp=inp, wp=pack_weights(wt, 32), bias=bias.reshape(3, 32),
                out=out)
    assert np.array_equal(out.reshape(N, H, W, OC), want)
    k = RawKernel(p.compile())
    got = np.full((N, H, W, OC), np.nan, np.float32)
    k(sizes, inp, k.prepare(wt), bias, got)
    assert np.array_equal(got, want)


def test_par_model_from_the_l2_and_the_cores(monkeypatch):
    """Groups to the threads when a thread's pass over one fits its L2,
    else the rows; 'split' when the groups do not divide evenly."""
    pm = tuning._par_model
    assert pm(4, 70, 2, own_bytes=1 << 20, shared_bytes=1 << 19,
              l2=2 << 20) == "blocks"
    assert pm(4, 70, 2, own_bytes=3 << 20, shared_bytes=1 << 20,
              l2=2 << 20) == "bands"
    assert pm(4, 70, 2, own_bytes=5 << 20, shared_bytes=3 << 20,
              l2=2 << 20) == "blocks"          # neither fits: own groups
    assert pm(3, 14, 2, own_bytes=1, shared_bytes=1, l2=2) == "split"
    assert pm(2, 56, 4, own_bytes=1, shared_bytes=1, l2=2) == "split"
    assert pm(1, 56, 2, own_bytes=1, shared_bytes=1, l2=2) == "rows"
    # packed per call (no 'split'): the more even of the two
    assert pm(3, 14, 2, prepacked=False) == "rows"
    assert pm(4, 14, 2, prepacked=False) == "blocks"
    assert pm(3, 14, 1, own_bytes=1, shared_bytes=1, l2=2) == "blocks"
    # the layers: 5x14x14x256 (4 groups, 1.3 MB of input, 0.6 MB of a
    # group's weights) overflows a 2 MiB L2 per group and thread, so a
    # band of rows per core; 1x14x14x256 fits (groups); on 3 cores its 4
    # groups are split
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: 2 << 20)
    monkeypatch.setattr(tuning, "_cores", lambda: 2)
    m = tuning.model_params("avx512", (5, 14, 14, 256, 256))
    assert m["par"] == "bands" and m["bands"] == 2 and not m["dynamic"], m
    tuning.variant("avx512", m)
    assert tuning.model_params("avx512", (1, 14, 14, 256, 256))["par"] == \
        "blocks"
    monkeypatch.setattr(tuning, "_cores", lambda: 3)
    m = tuning.model_params("avx512", (1, 14, 14, 256, 256))
    assert m["par"] == "split" and not m["dynamic"], m
    tuning.variant("avx512", m)


@pytest.mark.parametrize("cores", [2, 3])
def test_model_points_are_in_the_tuning_space(cores, monkeypatch):
    """The tuner starts from the model's point: every value of it (the
    band count is the core count) must be in the space, and the point
    must be one the schedule accepts; the start points name ``bands``
    (a point without it would have it drawn from the space, and refused
    unless par='bands')."""
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: 2 << 20)
    monkeypatch.setattr(tuning, "_cores", lambda: cores)
    layers = [(n, hw, hw, c, c) for n in (1, 5) for hw, c in tuning.RESNET]
    for isa_name in ("avx512", "avx2"):
        sp = tuning.space(isa_name)
        for sizes in layers + [tuple(tuning.HALIDE_SIZES.values())]:
            m = tuning.model_params(isa_name, sizes)
            assert all(v in sp[k] for k, v in m.items()), (sizes, m)
            tuning.variant(isa_name, m)
        # bands of a few per core (taken dynamically) are searched too
        assert {cores, 2 * cores, 4 * cores} <= set(sp["bands"])
    spec = tuning.tune_spec({"sizes": "resnet14:5"})
    for point in spec["initial"]:
        assert point["bands"] in spec["space"]["bands"]
        assert all(point[k] in spec["space"][k] for k in point), point
        tuning.variant(point["isa"], point)


def test_model_blocks_the_reduction_when_the_weights_leave_the_l2(
        monkeypatch):
    """7x7x512 (9.4 MB of weights): kc blocks of 32 input channels, on
    the channel blocks; 14x14x256 (2.4 MB) and smaller: channel groups."""
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: 2 << 20)
    for n in (1, 5):
        m = tuning.model_params("avx512", (n, 7, 7, 512, 512))
        assert m["kc"] == tuning.KC_MODEL and m["group"] == 1, m
        assert m["packed"] and m["par"] == "blocks" and m["prefetch"]
        tuning.variant("avx512", m)
        m = tuning.model_params("avx512", (n, 14, 14, 256, 256))
        assert "kc" not in m, m
    # the kc blocks' tile: the most accumulators with no column tail and
    # a block dividing OC (7x4 on AVX-512: 28 + 4 weight registers)
    assert tuning.model_params("avx512", (1, 7, 7, 512, 512))["tile"] == \
        "7x4"
    assert tuning._kc_tile("avx512", 7, 512) == "7x4"
    assert tuning._kc_tile("avx512", 7, 96) == "7x3"     # 96 % 64 != 0
    assert tuning._kc_tile("avx2", 7, 512) is None       # 7x2: no spare
    # a larger L2 holds them: no kc
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: 8 << 20)
    assert "kc" not in tuning.model_params("avx512", (1, 7, 7, 512, 512))


def test_prepacked_weights_and_new_outputs_start_on_a_cache_line():
    """The kernels read the pre-packed weights with full-width vector
    loads: numpy's 16-byte alignment made every AVX-512 load of them
    straddle two cache lines (Halide's layer ran 18-20% slower). Every
    block size and layer, large (mmap'd by malloc) and small, and the
    output ``api.conv`` allocates."""
    from apps.common.aligned import aligned_empty
    from apps.conv.schedule import pack_weights
    rng = np.random.default_rng(3)
    for ic, oc, ob in ((3, 16, 16), (5, 48, 48), (64, 64, 32),
                       (128, 128, 64), (256, 256, 32)):
        wt = rng.standard_normal((3, 3, ic, oc)).astype(np.float32)
        for _ in range(3):
            w = pack_weights(wt, ob)
            assert w.ctypes.data % 64 == 0, (ic, oc, ob)
            assert w.flags.c_contiguous and w.dtype == np.float32
            assert np.array_equal(
                w, wt.reshape(3, 3, ic, oc // ob, ob).transpose(3, 0, 1, 2,
                                                                4))
    for shape in ((1, 1, 1, 1), (5, 28, 28, 128), 7):
        a = aligned_empty(shape)
        assert a.ctypes.data % 64 == 0 and a.flags.c_contiguous
        assert a.shape == ((7,) if shape == 7 else shape)


def test_model_takes_the_wider_channel_block_when_the_input_leaves_l1(
        monkeypatch):
    """A tile with no register left for the broadcast (7x4 on AVX-512)
    is ranked below one with a spare (14x2), unless the input rows a
    14-column tile reads (3 x 16 pixels x IC channels) fill half the L1:
    then 7x4 (64 channels per broadcast pixel) is taken; AVX2 keeps the
    spare register (its FMA cannot take the broadcast from memory)."""
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: 2 << 20)
    monkeypatch.setattr(tuning, "_l1_bytes", lambda: 48 << 10)
    monkeypatch.setattr(tuning, "_zen", lambda: False)   # the Xeon's rule
    for n in (1, 5):
        assert tuning.model_params("avx512", (n, 56, 56, 64, 64))["tile"] \
            == "14x2"                            # 12 KiB: half of L1 free
        m = tuning.model_params("avx512", (n, 28, 28, 128, 128))
        assert (m["tile"], m["group"]) == ("7x4", 2), m  # 24 KiB
        m = tuning.model_params("avx512", (n, 14, 14, 256, 256))
        assert (m["tile"], m["group"]) == ("7x4", 1), m  # 2 blocks: 1.2 MB
        tuning.variant("avx512", m)
    # Halide's W = 100: 7 columns leave a tail, the 5x4 tile stays
    assert tuning.model_params("avx512", tuning.HALIDE_SIZES)["tile"] == \
        "5x4"
    # a larger L1 keeps the 14-column tile's input: the spare register
    monkeypatch.setattr(tuning, "_l1_bytes", lambda: 128 << 10)
    assert tuning.model_params("avx512", (1, 28, 28, 128, 128))["tile"] == \
        "14x2"
    monkeypatch.setattr(tuning, "_l1_bytes", lambda: 48 << 10)
    assert tuning.model_params("avx2", (1, 28, 28, 128, 128))["tile"] != \
        "7x2"
    # on AMD (Zen 5: 14x2 6-7% faster on 5x28x28x128) the spare register
    monkeypatch.setattr(tuning, "_zen", lambda: True)
    assert tuning.model_params("avx512", (5, 28, 28, 128, 128))["tile"] \
        == "14x2"


def _machine(monkeypatch, l1, l2, cores=2, amd=False):
    """The model's view of a machine, given explicitly (not this one)."""
    monkeypatch.setattr(tuning, "_l1_bytes", lambda: l1)
    monkeypatch.setattr(tuning, "_l2_bytes", lambda: l2)
    monkeypatch.setattr(tuning, "_cores", lambda: cores)
    monkeypatch.setattr(tuning, "_zen", lambda: amd)


def _picks(isa_name, sizes):
    m = tuning.model_params(isa_name, sizes)
    tuning.variant(isa_name, m)
    return m["tile"], m["group"], m.get("kc", 0)


def test_model_keeps_the_input_in_a_1mib_l2(monkeypatch):
    """On a 1 MiB L2 (AMD Zen 5: L1d 48 KiB, 2 cores) a layer whose input
    would stay in L2 takes the tile whose block leaves room for it (14x2,
    group 1: 1x28x28x128, 1x14x14x256), and 14x14x256's 2.4 MB of weights
    (2.25 L2s) get no kc blocks; where the input leaves the L2 anyway
    (5x28x28x128) 14x2 too (AMD: ``_zen``), and 7x7x512 (9 L2s) keeps
    kc. The Intel Xeon's picks (2 MiB L2) are what they were before the
    rule."""
    _machine(monkeypatch, 48 << 10, 1 << 20, amd=True)
    assert _picks("avx512", (1, 28, 28, 128, 128)) == ("14x2", 1, 0)
    for n in (1, 5):
        assert _picks("avx512", (n, 14, 14, 256, 256)) == ("14x2", 1, 0)
        assert _picks("avx512", (n, 7, 7, 512, 512)) == ("7x4", 1, 32)
    assert _picks("avx512", (5, 28, 28, 128, 128))[0] == "14x2"
    # the rule itself: input 460 KB with a 7x4 block's weights (295 KB)
    # and output (200 KB) is more than 7/8 of 1 MiB, with 14x2's not;
    # 2 MiB holds both; an input over half the L2 is never kept
    inp = 4 * 30 * 30 * 128
    assert tuning._input_leaves_l2(inp, 9 * 128 * 64 * 4,
                                   4 * 28 * 28 * 64, 1 << 20)
    assert not tuning._input_leaves_l2(inp, 9 * 128 * 32 * 4,
                                       4 * 28 * 28 * 32, 1 << 20)
    assert not tuning._input_leaves_l2(inp, 9 * 128 * 64 * 4,
                                       4 * 28 * 28 * 64, 2 << 20)
    assert not tuning._input_leaves_l2(5 * inp, 0, 0, 1 << 20)
    # the Intel Xeon (L1d 48 KiB, L2 2 MiB, 2 cores): as measured there
    # (apps/conv/README.md), unchanged by the rule
    _machine(monkeypatch, 48 << 10, 2 << 20)
    xeon = {(1, 56): ("14x2", 2, 0), (1, 28): ("7x4", 2, 0),
            (1, 14): ("7x4", 1, 0), (1, 7): ("7x4", 1, 32),
            (5, 56): ("14x2", 2, 0), (5, 28): ("7x4", 2, 0),
            (5, 14): ("7x4", 1, 0), (5, 7): ("7x4", 1, 32)}
    for (n, hw), want in xeon.items():
        c = dict(tuning.RESNET)[hw]
        assert _picks("avx512", (n, hw, hw, c, c)) == want, (n, hw)
    assert _picks("avx512", tuning.HALIDE_SIZES) == ("5x4", 2, 0)
    assert _picks("avx2", (5, 7, 7, 512, 512)) == ("6x2", 2, 0)
