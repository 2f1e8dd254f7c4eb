"""Compiler options that change what the generated C computes are refused
(codegen_c/fp_mode.py, docs/semantics.md "Compiler options").

Before: ``compile(cflags="-O3 -ffast-math")`` built and ran, ``fmin`` of a
NaN and ``(a + b) - b`` differed from ``interpret()``, and loading the
library (GCC 12 links ``crtfastmath.o`` into it) turned on flush-to-zero
in the whole Python process; ``-fsingle-precision-constant`` made the
``f64`` literal ``1e300`` infinity; clang's ``-ffp-contract=fast`` fused
``a*b + c`` despite the file's pragma.

The generator draws option sets from meaning-changing and harmless
options; an independent rule (a meaning-changing option present, not
undone later) says which must be refused; the others must run and agree
with ``interpret()`` bit for bit, and no build may change the process's
floating-point mode.
"""
from __future__ import annotations

import random
import shutil
import subprocess

import numpy as np
import pytest

from exo_hl import f32, f64, proc, seq, size
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.codegen_c.runner import CompileError

from cg_helpers import WARN_FLAGS


@proc
def ieee_probe(n: size, a: f32[n], b: f32[n], c: f32[n], d: f64[n],
               y: f32[n], z: f64[n]):
    for i in seq(0, n):
        y[i] = fmin(a[i], b[i]) + ((a[i] + b[i]) - b[i]) + a[i] * b[i] + c[i]
        z[i] = d[i] * 0.1 + 1e300


def _inputs(seed, n=64):
    rng = np.random.default_rng(seed)
    a = (1 + rng.random(n)).astype(np.float32)
    b = (a * np.float32(0.75) + np.float32(0.3)).astype(np.float32)
    c = -(a * b)
    a[:4] = [np.nan, 1e30, 1e-40, 2.0]
    b[:4] = [1.0, -1e30, 0.0, np.nan]
    d = rng.random(n) * 2.0
    return dict(n=n, a=a, b=b, c=c, d=d, y=np.zeros(n, np.float32),
                z=np.zeros(n, np.float64))


def _flushes_denormals() -> bool:
    """Is flush-to-zero / denormals-are-zero on in this process?"""
    tiny = np.array([1e-40], np.float32)
    return float((tiny * np.float32(1.0))[0]) == 0.0


def _run_both(cc, cflags, seed=0):
    """(interpret()'s outputs, the compiled outputs) or CompileError."""
    args = _inputs(seed)
    ref = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    ieee_probe.interpret(**ref)
    fast = ieee_probe.compile(cc=cc, cflags=cflags, openmp=False)
    fast(**args)
    return ref, args


def _same_bits(ref, got):
    for k in ("y", "z"):
        assert np.array_equal(ref[k].view(np.uint8), got[k].view(np.uint8)), \
            (k, ref[k][:6], got[k][:6])


def _compilers():
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


# --------------------------------------------------------------------------
# the option sets: an option, and the rule's verdict on it

#: options that change the meaning of C arithmetic, per compiler
BAD = {
    "gcc": ["-ffast-math", "-Ofast", "-ffinite-math-only",
            "-funsafe-math-optimizations", "-fno-signed-zeros",
            "-freciprocal-math",
            "-fassociative-math -fno-signed-zeros -fno-trapping-math",
            "-fsingle-precision-constant"],
    "clang": ["-ffast-math", "-Ofast", "-ffinite-math-only",
              "-ffp-model=fast", "-fno-honor-nans",
              "-funsafe-math-optimizations",
              "-fdenormal-fp-math=preserve-sign"],
}
#: options that must not change it (refusing them would be over-strict)
GOOD = {
    "gcc": ["-O0", "-O1", "-O2", "-O3", "-fno-math-errno",
            "-fno-trapping-math", "-frounding-math", "-ffp-contract=fast",
            "-ffp-contract=on", "-fexcess-precision=fast", "-funroll-loops",
            "-fno-strict-aliasing", "-std=c11", "-std=gnu17", "-fno-fast-math"],
    "clang": ["-O0", "-O1", "-O2", "-O3", "-fno-math-errno",
              "-fno-trapping-math", "-ffp-contract=fast", "-ffp-contract=on",
              "-funroll-loops", "-std=c11", "-std=gnu17", "-fno-fast-math"],
}


def _native(cc):
    """-march=native where the host has FMA (fusing can then differ),
    else nothing (the test still runs, and agrees trivially)."""
    return ["-march=native"] if host_features({"fma"}) else []


def _draw(rng, cc):
    """(options, must be refused). A meaning-changing option goes last:
    a later ``-O3`` undoes ``-Ofast``, ``-fno-fast-math`` its parts."""
    opts = rng.sample(GOOD[cc], rng.randint(1, 3))
    bad = rng.random() < 0.5
    if bad:
        opts.append(rng.choice(BAD[cc]))
    return opts, bad


@pytest.mark.parametrize("cc", _compilers())
def test_meaning_changing_options_are_refused_the_rest_agree(cc):
    before = _flushes_denormals()
    rng = random.Random(1414)
    refused = agreed = 0
    for k in range(14):
        opts, bad = _draw(rng, cc)
        flags = " ".join(_native(cc) + opts)
        if bad:
            with pytest.raises(CompileError, match="exo_hl: "):
                _run_both(cc, flags, seed=k)
            refused += 1
        else:
            _same_bits(*_run_both(cc, flags, seed=k))
            agreed += 1
        assert _flushes_denormals() == before, flags
    assert refused and agreed


@pytest.mark.parametrize("cc", _compilers())
def test_each_meaning_changing_option_alone_is_refused(cc):
    for opt in BAD[cc]:
        with pytest.raises(CompileError):
            _run_both(cc, f"-O2 {opt}")
    assert not _flushes_denormals()


@pytest.mark.parametrize("cc", _compilers())
def test_fp_contract_fast_does_not_fuse(cc):
    """clang 14 fuses under -ffp-contract=fast despite
    ``#pragma STDC FP_CONTRACT OFF`` (on an FMA host; elsewhere there is
    nothing to fuse with and the check holds trivially); compile() passes
    -ffp-contract=off last."""
    flags = " ".join(["-O2", *_native(cc), "-ffp-contract=fast"])
    _same_bits(*_run_both(cc, flags))


def test_escape_hatch_builds_and_checks_are_warning_free(tmp_path):
    """The checks are plain C11 (no warning under -Wall -Wextra
    -pedantic); ``EXO_HL_ALLOW_FAST_MATH`` lets a user's fast-math build
    through (compiled to an object only: linking it would set
    flush-to-zero here)."""
    from exo_hl import compile_procs
    compile_procs([ieee_probe], tmp_path, "probe")
    for cc in _compilers():
        subprocess.run([cc, *WARN_FLAGS, "-c", "probe.c", "-o", "w.o"],
                       cwd=tmp_path, check=True, capture_output=True)
        r = subprocess.run([cc, "-O2", "-ffast-math", "-c", "probe.c", "-o",
                            "f.o"], cwd=tmp_path, capture_output=True,
                           text=True)
        assert r.returncode != 0 and "-ffast-math" in r.stderr
        subprocess.run([cc, "-O2", "-ffast-math", "-DEXO_HL_ALLOW_FAST_MATH",
                        "-c", "probe.c", "-o", "f.o"], cwd=tmp_path,
                       check=True, capture_output=True)


@pytest.mark.parametrize("flags, bad", [
    ("-O3 -ffast-math", "-ffast-math"), ("-ffast-math -fno-fast-math", None),
    ("-Ofast -O2", None), ("-O2 -Ofast", "-Ofast"),
    ("-fno-signed-zeros -fno-fast-math", None),
    ("-fno-fast-math -fno-signed-zeros", "-fno-signed-zeros"),
    ("-mdaz-ftz", "-mdaz-ftz"), ("-O3 -march=native -ffp-contract=fast", None),
    ("-fsingle-precision-constant -fno-single-precision-constant", None)])
def test_the_last_option_decides(flags, bad):
    from exo_hl.codegen_c.fp_mode import meaning_changing
    assert meaning_changing(flags.split()) == bad
