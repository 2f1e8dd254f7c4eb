"""Helpers for the C backend tests: run compilers with warnings on."""
from __future__ import annotations

import shutil
import subprocess

WARN_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
#: with _Float16 (the C ABI's one ISO C extension), see ``f16_flags``
F16_FLAGS = ["-Wno-error=pedantic"]


def c_compilers(float16=True):
    """gcc always; clang too when installed (never a failure if absent).

    ``float16``: the code uses ``_Float16``, which clang < 15 rejects on
    x86-64; such a clang is left out rather than failing the test."""
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)
            and (not float16 or supports_float16(cc))]


def supports_float16(cc) -> bool:
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-x", "c", "-"],
                       input="_Float16 h;\n", capture_output=True, text=True)
    return r.returncode == 0


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    return r.stdout


#: flags of sanitized test builds (ASan + UBSan, any report is fatal; also
#: out-of-range float -> int conversions, which -fsanitize=undefined leaves
#: out)
SAN_FLAGS = ["-fsanitize=address,undefined,float-cast-overflow",
             "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer", "-g", "-O1", "-std=c11", "-Wall",
             "-Wextra", "-Werror"]


def sanitized_run(tmp_path, p, args, extra_flags=()):
    """Build ``p`` with the standalone driver (exo_hl.codegen_c.driver)
    under ASan/UBSan, run it on ``args`` and return what it printed:
    {written buffer name: list of values}."""
    from exo_hl import compile_procs
    from exo_hl.codegen_c.driver import driver_source, parse_driver_output
    base = p.name() + "_k"
    compile_procs([p], tmp_path, base)
    (tmp_path / "main.c").write_text(driver_source(p, args, base))
    run(["gcc", *SAN_FLAGS, *extra_flags, "-o", "prog", "main.c",
         f"{base}.c", "-lm"], tmp_path)
    out = run(["./prog"], tmp_path,
              env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
                   "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"})
    return parse_driver_output(out)
