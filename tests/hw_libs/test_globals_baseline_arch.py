"""Every x86 hardware library's C globals (instruction ``c_global``s,
memories' ``global_()``, externs' helpers, the module's helper texts)
compile with ``-march=x86-64`` under gcc and clang (clang when present):
a generated file's functions carry their own ``EXO_HL_TARGET``, so a
plain ``cc -O2`` build must compile on any x86 CPU, and a helper that
uses an intrinsic without its own target breaks that build (the AMX
``exo_hl_amx_ldtilecfg`` did: ``_tile_storeconfig`` inlined into a
function compiled for plain x86-64). The helpers are ``static inline``
and a compiler only checks the targets of a function it emits, so each
helper's address is taken: every function the text defines is emitted.
NEON and RVV helpers take their features from the build's ``-march``
(``EXO_HL_TARGET`` is empty there) and are checked by the cross tests."""
from __future__ import annotations

import importlib
import pkgutil
import re
import shutil
import subprocess

import pytest

import exo_hl.hw_libs as hw_libs
from exo_hl.api import Procedure
from exo_hl.core_ir.extern import Extern
from exo_hl.core_ir.memory import Memory
from exo_hl.codegen_c import emit

#: libraries whose helpers take their target from -march, not their own
_CROSS = ("neon", "rvv")

#: a function definition's name: an identifier, its parameter list, '{'
_DEF = re.compile(r"(?=\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{)")
_COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_NOT_NAMES = {"if", "for", "while", "switch", "__attribute__", "target",
              "EXO_HL_TARGET",
              "defined", "sizeof", "return"}


def _x86_modules():
    return [m.name for m in pkgutil.walk_packages(hw_libs.__path__,
                                                  "exo_hl.hw_libs.")
            if not any(c in m.name for c in _CROSS)]


def _globals(modname):
    """{C text: where it comes from} for one library module."""
    out = {}
    for name, v in vars(importlib.import_module(modname)).items():
        text = ""
        if isinstance(v, Procedure) and v.is_instr():
            text = v.ir().instr.c_global
        elif isinstance(v, type) and issubclass(v, Memory):
            text = v.global_()
        elif isinstance(v, Extern):
            text = v.c_global("float")
        elif isinstance(v, str) and "#include" in v:
            text = v
        if text and text.strip():
            out.setdefault(text, f"{modname}.{name}")
    return out


def _all_globals():
    out = {}
    for mod in _x86_modules():
        for text, where in _globals(mod).items():
            out.setdefault(text, where)
    return out


def _defined(text):
    """The names of the functions ``text`` defines (at brace depth 0)."""
    text = _DIRECTIVE.sub(" ", _COMMENT.sub(" ", text))
    names = set()
    for m in _DEF.finditer(text):
        before = text[:m.start()]
        if before.count("{") == before.count("}"):
            names.add(m.group(1))
    return sorted(names - _NOT_NAMES)


def _source(text):
    names = _defined(text)
    keep = ("void *exo_hl_keep[] = {%s};\n" % ", ".join(
        f"(void *)&{n}" for n in names)) if names else ""
    return (emit._TARGET_MACRO + "#include <stdint.h>\n" + text + "\n"
            + keep + "int exo_hl_globals_probe;\n"), names


def _compilers():
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def test_the_probe_sees_every_library_and_a_helper_function():
    """The harvest is not empty: each x86 library has globals, and the
    helpers it finds define functions (so the address trick has work)."""
    texts = _all_globals()
    where = " ".join(texts.values())
    for lib in ("amx", "avx2", "avx512", "gemmini"):
        assert f"hw_libs.{lib}" in where, lib
    names = {n for t in texts for n in _source(t)[1]}
    for fn in ("exo_hl_amx_ldtilecfg", "exo_hl_mm256_tail_mask",
               "exo_hl_mm512_reduce_add_ps", "exo_hl_mm512_dpbf16_ps",
               "gemm_matmul"):
        assert fn in names, fn
    assert "gcc" in _compilers()


def test_a_helper_without_its_target_is_caught(tmp_path):
    """The oracle: an AVX2 helper stripped of its target fails this
    compile (so a pass below means something)."""
    bad = ("#include <immintrin.h>\nstatic inline __m256 f(__m256 a) "
           "{ return _mm256_fmadd_ps(a, a, a); }\n")
    src, names = _source(bad)
    assert names == ["f"]
    path = tmp_path / "bad.c"
    path.write_text(src)
    r = subprocess.run(["gcc", "-march=x86-64", "-O2", "-c", str(path),
                        "-o", str(tmp_path / "bad.o")], capture_output=True)
    assert r.returncode != 0


@pytest.mark.parametrize("cc", _compilers())
def test_globals_compile_for_plain_x86_64(cc, tmp_path):
    failures = []
    for i, (text, where) in enumerate(_all_globals().items()):
        src, _ = _source(text)
        path = tmp_path / f"g{i}.c"
        path.write_text(src)
        r = subprocess.run([cc, "-march=x86-64", "-O2", "-c", str(path),
                            "-o", str(tmp_path / f"g{i}.o")],
                           capture_output=True, text=True)
        if r.returncode:
            failures.append(f"{where}: {r.stderr.strip()[:400]}")
    assert not failures, "\n".join(failures)
