"""CPU features as data: declared by instructions and memories, collected
per procedure, carried into the C as target attributes, and checked against
the host before compiled code runs."""
from __future__ import annotations

import subprocess
import tempfile

import numpy as np
import pytest

from exo_hl import DRAM, Memory, compile_procs, f32, instr, proc, seq
from exo_hl.codegen_c import host_cpu
from exo_hl.hw_libs.avx2 import AVX2, mm256_fmadd_ps, mm256_loadu_ps, \
    mm256_storeu_ps
from exo_hl.hw_libs.avx512 import AVX512, mm512_loadu_ps, mm512_storeu_ps


@proc
def copy512(x: f32[16] @ DRAM, y: f32[16] @ DRAM):
    r: f32[16] @ AVX512
    mm512_loadu_ps(r, x[0:16])
    mm512_storeu_ps(y[0:16], r)


@proc
def fma256(x: f32[8] @ DRAM, y: f32[8] @ DRAM):
    a: f32[8] @ AVX2
    c: f32[8] @ AVX2
    mm256_loadu_ps(a, x[0:8])
    mm256_loadu_ps(c, y[0:8])
    mm256_fmadd_ps(c, a, a)
    mm256_storeu_ps(y[0:8], c)


@proc
def caller(x: f32[16] @ DRAM, y: f32[16] @ DRAM, u: f32[8] @ DRAM,
           v: f32[8] @ DRAM):
    copy512(x, y)
    fma256(u, v)


@proc
def plain(x: f32[4] @ DRAM):
    for i in seq(0, 4):
        x[i] = 1.0


def test_features_are_the_union_through_calls_and_memories():
    assert copy512.cpu_features() == frozenset({"avx512f"})
    assert fma256.cpu_features() == frozenset({"avx2", "fma"})
    assert caller.cpu_features() == frozenset({"avx512f", "avx2", "fma"})
    assert plain.cpu_features() == frozenset()
    assert mm256_fmadd_ps.cpu_features() == frozenset({"avx2", "fma"})


def test_memory_alone_contributes_its_features():
    class VEC(Memory):
        cpu_features = frozenset({"sse4.2"})

        @classmethod
        def alloc(cls, new_name, prim_type, shape, srcinfo):
            return f"{prim_type} {new_name}[{shape[0]}];"

    @proc
    def uses_mem(x: f32[4] @ DRAM):
        t: f32[4] @ VEC
        for i in seq(0, 4):
            t[i] = x[i]
        for i in seq(0, 4):
            x[i] = t[i]
    assert uses_mem.cpu_features() == frozenset({"sse4.2"})


def test_instr_declaration_round_trips_and_validates():
    text = str(mm256_fmadd_ps)
    assert 'cpu_features={"avx2", "fma"}' in text
    with pytest.raises(TypeError, match="feature"):
        instr("x;", cpu_features={"AVX 2"})
    with pytest.raises(TypeError, match="feature"):
        instr("x;", cpu_features=3)


def test_make_instr_carries_features():
    i = plain.make_instr("/* {x_data} */", cpu_features={"avx2"})
    assert i.cpu_features() == frozenset({"avx2"})
    assert i.ir().instr.cpu_features == ("avx2", )


def test_each_function_carries_its_own_target():
    c = caller.c_code_str()
    assert 'EXO_HL_TARGET("avx512f")\nstatic void copy512(' in c
    assert 'EXO_HL_TARGET("avx2,fma")\nstatic void fma256(' in c
    assert 'EXO_HL_TARGET("avx2,avx512f,fma")\nvoid caller(' in c
    assert "CPU features needed: avx2, avx512f, fma" in c
    assert "EXO_HL_TARGET" not in plain.c_code_str()
    assert "#pragma GCC target" not in c


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_plain_cc_O2_builds_the_emitted_c(cc):
    """No -m flags: the target attributes alone make the intrinsics legal."""
    if subprocess.run(["which", cc], capture_output=True).returncode:
        pytest.fail(f"{cc} is not installed (.ci/run installs it)")
    with tempfile.TemporaryDirectory() as d:
        compile_procs([caller], d, "feat")
        r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra",
                            "-Werror", "-c", "feat.c"], cwd=d,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_host_detection_reads_the_override(monkeypatch):
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2, fma")
    assert host_cpu.host_features({"avx2", "fma", "avx512f"}) == \
        frozenset({"avx2", "fma"})
    assert host_cpu.missing_features({"avx512f", "fma"}) == \
        frozenset({"avx512f"})


def test_cpuinfo_names_map_to_gcc_names(monkeypatch):
    monkeypatch.delenv("EXO_HL_HOST_CPU", raising=False)
    monkeypatch.setattr(host_cpu, "_cpuinfo_flags",
                        lambda: frozenset({"sse4_1", "avx2", "avx512_vnni"}))
    assert host_cpu.host_features({"sse4.1", "avx2", "avx512vnni",
                                   "avx512f"}) == \
        frozenset({"sse4.1", "avx2", "avx512vnni"})


def test_missing_feature_raises_before_any_c_runs(monkeypatch):
    """An AVX-512 kernel on an AVX2-only host, without emulation."""
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    fn = copy512.compile(emulate=False)
    assert fn.missing_features == frozenset({"avx512f"})
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    with pytest.raises(RuntimeError, match="lacks avx512f") as e:
        fn(x, y)
    assert "emulate=True" in str(e.value)
    assert not y.any()          # nothing was executed


def test_emulation_runs_what_the_host_lacks(monkeypatch):
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    fn = caller.compile(emulate=True)
    assert fn.emulated == frozenset({"avx512f"})
    assert not fn.missing_features
    assert 'EXO_HL_TARGET("avx2,fma")' in fn.source      # avx512f dropped
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    u = np.arange(8, dtype=np.float32)
    v = np.ones(8, dtype=np.float32)
    fn(x, y, u, v)
    assert np.array_equal(y, x)
    assert np.array_equal(v, 1 + u * u)


def test_emulation_off_by_default_outside_the_suite(monkeypatch):
    monkeypatch.delenv("EXO_HL_EMULATE", raising=False)
    assert host_cpu.emulation_wanted(None) is False
    monkeypatch.setenv("EXO_HL_EMULATE", "1")
    assert host_cpu.emulation_wanted(None) is True
    assert host_cpu.emulation_wanted(False) is False


def test_no_features_needed_runs_anywhere(monkeypatch):
    monkeypatch.setenv("EXO_HL_HOST_CPU", "")
    fn = plain.compile(emulate=False)
    x = np.zeros(4, dtype=np.float32)
    fn(x)
    assert np.array_equal(x, np.ones(4, dtype=np.float32))
