"""apps/sgemm: one schedule, parametrized by an instruction-set description,
yields an AVX2 6x16 and an AVX-512 6x64 micro-kernel, each a chain of
checked rewrites equal to numpy (interpreted and compiled; AVX-512 runs
through the emulation layer on hosts without it, as the suite sets
EXO_HL_EMULATE=1); run.py reports against OpenBLAS and the FMA peak."""
from __future__ import annotations

import dataclasses
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

from apps.common.peak import (CHAINS, PeakUnavailable, fma_peak,  # noqa: E402
                              probe_source)
from apps.sgemm.schedule import AVX2, AVX512, ISAS, Isa, stages  # noqa: E402
from exo_hl import SchedulingError  # noqa: E402

RUN = REPO / "apps" / "sgemm" / "run.py"

# one schedule per ISA and module: every procedure a test makes is also
# audited (round trip + C compile) by tests/conftest.py, so build each
# chain once
STAGES = {isa.name: stages(isa) for isa in (AVX2, AVX512)}
FAST = {name: st[-1][1] for name, st in STAGES.items()}
BOTH = pytest.mark.parametrize("isa", [AVX2, AVX512], ids=lambda i: i.name)


def _problem(rng, m, n, k):
    A = rng.integers(-4, 5, (m, k)).astype(np.float32)
    B = rng.integers(-4, 5, (k, n)).astype(np.float32)
    C = rng.integers(-4, 5, (m, n)).astype(np.float32)
    return A, B, C


def _stage(isa, prefix):
    """The procedure after the schedule's step group named ``prefix``."""
    return next(p for what, p in STAGES[isa.name] if what.startswith(prefix))


def _host_has(flag):
    with open("/proc/cpuinfo") as f:
        return any(flag in line.split() for line in f
                   if line.startswith("flags"))


# ---------------------------------------------------------------------------
# the schedules

@BOTH
def test_schedule_shape(isa):
    fast = FAST[isa.name]
    text = str(fast)
    mem, R, L = isa.mem.__name__, isa.regs, isa.lanes
    assert f"C_reg: f32[6, {R}, {L}] @ {mem}" in text
    assert f"B_reg: f32[{R}, {L}] @ {mem}" in text
    # B packed per k block as N / NR contiguous KC x NR panels
    assert f"B_pack: f32[N / {isa.nr}, {isa.kc}, {isa.nr}] @ DRAM" in text
    assert f"B_pack[jo, k, {L}:{2 * L}]" in text
    assert f"R_reg: f32[{R}, {L}] @ {mem}" in text     # the remainder rows
    # the instructions: only the description's three, the FMA once per
    # accumulator of the 6-row kernel and of the remainder kernel
    calls = set(re.findall(r"(\w+)\(", text)) - {"seq", isa.kernel_name}
    assert calls == {isa.load.name(), isa.store.name(), isa.fma.name()}
    assert text.count(f"{isa.fma.name()}(") == (isa.mr + 1) * R
    assert fast.cpu_features() == isa.cpu_features()
    # the C keeps the tile in registers; codegen succeeding also proves no
    # statement reads a register buffer directly
    c = fast.c_code_str()
    reg = {"avx2": "__m256", "avx512": "__m512"}[isa.name]
    fma = {"avx2": "_mm256_fmadd_ps(", "avx512": "_mm512_fmadd_ps("}[isa.name]
    assert f"{reg} C_reg[{isa.mr * R}];" in c and fma in c
    # every stage is derived from the algorithm by checked rewrites
    assert fast.derivation()[0][1].ir() is isa.algorithm.ir()
    assert len(fast.derivation()) > 50


def test_descriptions():
    assert (AVX2.mr, AVX2.nr, AVX2.lanes, AVX2.regs) == (6, 16, 8, 2)
    assert AVX2.mr * AVX2.regs == 12                    # accumulators
    assert (AVX512.mr, AVX512.nr, AVX512.lanes, AVX512.regs) == (6, 64, 16, 4)
    assert AVX2.cpu_features() == {"avx2", "fma"}
    assert AVX512.cpu_features() == {"avx512f"}
    assert list(ISAS) == ["avx512", "avx2"]             # best first
    # an algorithm whose preconditions do not match the tile is refused
    with pytest.raises(ValueError, match="K % 128 == 0"):
        dataclasses.replace(AVX2, kc=128)
    with pytest.raises(ValueError, match="multiple of 16 lanes"):
        dataclasses.replace(AVX512, nr=40)


# ---------------------------------------------------------------------------
# numbers

SHAPES = {
    "avx2": [(6, 16, 64), (4 * 6, 2 * 16, 2 * 64), (2 * 6 + 5, 3 * 16, 64),
             (1, 16, 3 * 64), (7, 16, 64)],
    # emulated on hosts without AVX-512: small
    "avx512": [(6, 64, 128), (2 * 6 + 5, 2 * 64, 2 * 128), (1, 64, 128)],
}


@pytest.mark.parametrize("name,m,n,k", [(name, *s) for name, shapes
                                        in SHAPES.items() for s in shapes])
def test_compiled_equals_numpy_exactly(name, m, n, k):
    rng = np.random.default_rng(m + n + k)
    A, B, C = _problem(rng, m, n, k)
    want = C + A @ B
    FAST[name].compile()(m, n, k, A, B, C)
    assert np.array_equal(C, want)


def test_float_data_close_to_numpy():
    rng = np.random.default_rng(3)
    m, n, k = 2 * 6 + 3, 2 * 16, 4 * 64
    A = rng.standard_normal((m, k), dtype=np.float32)
    B = rng.standard_normal((k, n), dtype=np.float32)
    C = rng.standard_normal((m, n), dtype=np.float32)
    want = C.astype(np.float64) + A.astype(np.float64) @ B
    FAST["avx2"].compile()(m, n, k, A, B, C)
    assert np.max(np.abs(C - want)) / np.max(np.abs(want)) < 1e-5


@BOTH
def test_interpreted_equals_numpy(isa):
    rng = np.random.default_rng(1)
    m, n, k = isa.mr + 1, isa.nr, isa.kc      # a block and a remainder row
    A, B, C = _problem(rng, m, n, k)
    want = C + A @ B
    FAST[isa.name].interpret(M=m, N=n, K=k, A=A, B=B, C=C)
    assert np.array_equal(C, want)


def test_every_stage_agrees_on_the_interpreter():
    """The intermediate procedures compute the same (AVX2: fastest)."""
    rng = np.random.default_rng(2)
    A, B, C0 = _problem(rng, 7, 16, 64)
    want = C0 + A @ B
    for what, p in STAGES["avx2"][1:-1]:
        C = C0.copy()
        p.interpret(M=7, N=16, K=64, A=A, B=B, C=C)
        assert np.array_equal(C, want), what


@BOTH
def test_preconditions_are_enforced(isa):
    f = FAST[isa.name].compile()
    m, n, k = 6, isa.nr, isa.kc
    for bad_n, bad_k in ((n + isa.lanes, k), (n, k + 16)):
        A, B, C = (np.zeros((m, bad_k), np.float32),
                   np.zeros((bad_k, bad_n), np.float32),
                   np.zeros((m, bad_n), np.float32))
        with pytest.raises(ValueError, match="precondition"):
            f(m, bad_n, bad_k, A, B, C)


def test_unsafe_steps_are_rejected():
    tiled = _stage(AVX2, "tile")             # ko, jo, io, k, ii, jt, ji
    # a register tile that does not cover the accesses in the k block
    with pytest.raises(SchedulingError, match="cover"):
        tiled.stage_mem(tiled.find_loop('k'),
                        'C[6*io:6*io+6, 16*jo:16*jo+8]', 'C_reg')
    # N % 16 == 0 is what the precondition says, not N % 12 == 0
    with pytest.raises(SchedulingError, match="divisible"):
        AVX2.algorithm.split('j', 12, 'a', 'b', tail='perfect')
    # the row-block loop runs M / 6 times: not a constant, not unrollable
    with pytest.raises(SchedulingError):
        tiled.unroll('io')
    staged = _stage(AVX2, "pack")            # everything staged, in DRAM
    assert "C_reg: f32[6, 2, 8] @ DRAM" in str(staged)
    # a register instruction over a DRAM buffer: memories must match
    with pytest.raises(SchedulingError, match="memory AVX2"):
        staged.replace(staged.find_loop('cli'), AVX2.load)
    # 16-lane registers cannot hold rows of 8
    with pytest.raises(SchedulingError, match="last dimension of 16"):
        staged.set_memory('C_reg', AVX512.mem)
    # the other ISA's instruction: its 16 lanes do not match a loop of 8
    regs = staged.set_memory('C_reg', AVX2.mem)
    with pytest.raises(SchedulingError, match="does not match"):
        regs.replace(regs.find_loop('cli'), AVX512.load)


# ---------------------------------------------------------------------------
# run.py and the peak probe

def _run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, str(RUN), *args],
                          capture_output=True, text=True, timeout=300, env=e)


def test_run_script_prints_table():
    r = _run("--isa", "avx2", "--sizes", "64", "--reps", "1",
             env={"OPENBLAS_CORETYPE": "Haswell"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("ISA: avx2 (requested)")
    assert "unset OPENBLAS_CORETYPE=Haswell" in out
    assert "1 thread" in out
    assert "interpret: equal to numpy" in out
    assert out.count("compiled C: equal to numpy") == 3
    assert re.search(r"avx2 FMA peak, 1 core \(measured\): \d+\.\d GFLOP/s",
                     out)
    head = next(ln for ln in out.splitlines() if ln.startswith("| size"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    assert cols[0] == "size" and cols[1] == "exo_hl GFLOP/s"
    assert cols[2].endswith("BLAS GFLOP/s") and cols[3] == "ratio"
    assert cols[4] == "exo_hl % peak" and cols[5].endswith("% peak")
    row = next(ln for ln in out.splitlines() if ln.startswith("|   64 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    ours, blas, ratio = (float(c) for c in cells[1:4])
    assert ours > 0 and blas > 0
    assert ratio == pytest.approx(ours / blas, rel=0.05, abs=0.01)
    assert cells[4].endswith("%") and cells[5].endswith("%")


def test_run_script_without_the_isa_exits_2():
    r = _run("--isa", "avx512", env={"EXO_HL_HOST_CPU": "avx2,fma",
                                     "EXO_HL_EMULATE": "0"})
    assert r.returncode == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "avx512f" in err and err.startswith("run.py:")


def test_peak_probe():
    src = probe_source("avx2")
    assert src.count("_mm256_fmadd_ps(") == CHAINS
    assert '__attribute__((target("avx2,fma")' in src
    assert "printf" in src              # the sums are printed: not dead code
    assert fma_peak("avx2", runs=3) > 0
    if _host_has("avx512f"):
        assert fma_peak("avx512", runs=3) > 0
    else:
        with pytest.raises(PeakUnavailable, match="avx512f"):
            fma_peak("avx512", runs=1)


def test_one_schedule_for_both():
    """Both kernels come from the same rewrites, in the same order; only
    the description's numbers, memory and instructions differ."""
    ops = {name: [op for op, _ in FAST[name].derivation()] for name in FAST}
    assert ops["avx2"] == ops["avx512"]
    assert [w for w, _ in STAGES["avx2"]][1:] != [w for w, _ in
                                                  STAGES["avx512"]][1:]
    assert isinstance(AVX2, Isa) and isinstance(AVX512, Isa)


def test_auto_picks_the_best_isa_the_host_has(monkeypatch):
    saved = dict(os.environ)
    try:                         # run.py sets the BLAS environment on import
        import apps.sgemm.run as run
    finally:
        os.environ.clear()
        os.environ.update(saved)
    monkeypatch.setenv("EXO_HL_EMULATE", "0")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    isa, emulated, note = run.choose_isa("auto")
    assert isa is AVX2 and not emulated and "avx512f" in note
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma,avx512f")
    assert run.choose_isa("auto")[:2] == (AVX512, False)
    monkeypatch.setenv("EXO_HL_HOST_CPU", "sse4.2")
    isa, _, msg = run.choose_isa("auto")
    assert isa is None and "avx2+fma" in msg
    # an explicit ISA the host lacks: refused, or emulated when asked
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    isa, _, msg = run.choose_isa("avx512")
    assert isa is None and "avx512f" in msg and "auto picks avx2" in msg
    monkeypatch.setenv("EXO_HL_EMULATE", "1")
    assert run.choose_isa("avx512")[:2] == (AVX512, True)
