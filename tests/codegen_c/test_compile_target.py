"""``compile(target=...)`` and the documented default flags: what reaches
the compiler (logged under ``EXO_HL_LOG=debug``), and the code it builds."""
from __future__ import annotations

import logging
import subprocess

import numpy as np
import pytest

from exo_hl import f32, proc, seq, size
from exo_hl.codegen_c import runner


@proc
def saxpy_t(n: size, a: f32, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a * x[i]


def _commands(caplog):
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("compile saxpy_t")]


def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.delenv("CFLAGS", raising=False)


def test_default_flags_are_logged(caplog, monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    with caplog.at_level(logging.DEBUG, logger="exo_hl"):
        saxpy_t.compile()
    cmds = _commands(caplog)
    assert cmds and "-O3 -march=native" in cmds[0], cmds
    assert runner.DEFAULT_CFLAGS == "-O3 -march=native"
    with caplog.at_level(logging.DEBUG, logger="exo_hl"):
        saxpy_t.compile()                     # the cached build, logged
    assert any("cached" in c for c in _commands(caplog))


def test_env_log_level_debug_prints_the_command(tmp_path):
    """``EXO_HL_LOG=debug`` in a fresh process prints the compiler command
    on stderr."""
    import os
    import sys
    code = ("from exo_hl import f32, proc, seq, size\n"
            "@proc\n"
            "def k(n: size, x: f32[n]):\n"
            "    for i in seq(0, n):\n"
            "        x[i] = 2.0\n"
            "k.compile()\n")
    src = tmp_path / "k.py"
    src.write_text("from __future__ import annotations\n" + code)
    env = dict(os.environ, EXO_HL_LOG="debug",
               EXO_HL_CACHE=str(tmp_path / "cache"))
    env.pop("CFLAGS", None)
    r = subprocess.run([sys.executable, str(src)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "compile k:" in r.stderr and "-O3 -march=native" in r.stderr


@pytest.mark.parametrize("target,march", [("avx2", "-march=haswell"),
                                          ("x86-64", "-march=x86-64")])
def test_named_target_builds_for_that_isa(target, march, caplog,
                                          monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    with caplog.at_level(logging.DEBUG, logger="exo_hl"):
        f = saxpy_t.compile(target=target)
    cmds = _commands(caplog)
    assert cmds and f"-O3 {march}" in cmds[0] and "native" not in cmds[0]
    x = np.arange(37, dtype=np.float32)
    y = np.ones(37, np.float32)
    f(37, 2.0, x, y)
    assert np.array_equal(y, 1 + 2 * x)
    assert f.target == target


def test_target_code_differs_by_isa(monkeypatch, tmp_path):
    """The baseline build has no ymm register; the AVX2 build does (gcc
    vectorizes the loop with 256-bit registers at -O3)."""
    _fresh(monkeypatch, tmp_path)
    text = {}
    for t in ("x86-64", "avx2"):
        lib = saxpy_t.compile(target=t).library_path
        text[t] = subprocess.run(["objdump", "-d", lib], capture_output=True,
                                 text=True).stdout
    assert "ymm" not in text["x86-64"]
    assert "ymm" in text["avx2"]


def test_cflags_combine_with_target(caplog, monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    with caplog.at_level(logging.DEBUG, logger="exo_hl"):
        saxpy_t.compile(target="avx2", cflags="-O2")
    assert "-O2 -march=haswell" in _commands(caplog)[0]


def test_unknown_target_and_missing_host_features(monkeypatch):
    with pytest.raises(ValueError, match="unknown target 'avx9'"):
        saxpy_t.compile(target="avx9")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "sse2")     # a CPU without AVX2
    f = saxpy_t.compile(target="avx2")
    y = np.zeros(4, np.float32)
    with pytest.raises(RuntimeError, match="target 'avx2', which needs avx2, fma"):
        f(4, 1.0, np.ones(4, np.float32), y)
    assert not y.any()
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    g = saxpy_t.compile(target="avx2")
    g(4, 1.0, np.ones(4, np.float32), y)
    assert (y == 1).all()


def test_sanitized_build_takes_the_target(caplog, monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match="unknown target"):
        saxpy_t.compile(sanitize=True, target="avx9")
    monkeypatch.setenv("EXO_HL_HOST_CPU", "sse2")
    with pytest.raises(RuntimeError, match="lacks avx2, fma"):
        saxpy_t.compile(sanitize=True, target="avx2")
    monkeypatch.delenv("EXO_HL_HOST_CPU")
    f = saxpy_t.compile(sanitize=True, target="x86-64")
    y = np.zeros(5, np.float32)
    f(5, 3.0, np.ones(5, np.float32), y)
    assert (y == 3).all()


@pytest.mark.parametrize("opt, value", [
    ("openmp", "no"), ("emulate", "false"), ("emulate", 0), ("cflags", 3),
    ("cc", ["gcc"]), ("sanitize", 1), ("target", 64)])
def test_compile_options_of_the_wrong_type_are_refused(opt, value):
    """``openmp="no"`` and ``emulate="false"`` were taken as true."""
    @proc
    def opt_probe(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = 1.0
    with pytest.raises(TypeError, match=f"option '{opt}'"):
        opt_probe.compile(**{opt: value})
