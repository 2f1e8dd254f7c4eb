"""User names never collide with C: keywords, the backend's own identifiers
and the macros and names of every header the generated C includes.

Public procedures keep their names (the C ABI), so a reserved one is
refused with a located error; every other name is renamed in C.
"""
from __future__ import annotations

import importlib.util
import keyword
import re

import numpy as np
import pytest

from exo_hl import MemGenError, compile_procs
from exo_hl.codegen_c.c_reserved import (BACKEND_NAMES, HEADER_NAMES,
                                         KEYWORDS, program_names)

#: every reserved spelling Python also accepts as a parameter name
SPELLINGS = sorted(n for n in (HEADER_NAMES | KEYWORDS | BACKEND_NAMES
                               | program_names("lib")
                               | {"EXO_ASSUME", "exo_floor_div",
                                  "exo_win_1f32", "_priv", "__x"})
                   if not keyword.iskeyword(n) and n.isidentifier())


def _import_source(tmp_path, stem, text):
    path = tmp_path / f"{stem}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


_HEAD = """from __future__ import annotations
from exo_hl import config, f32, proc, seq, size, i32
"""


def _kernel_using(names, k):
    """A procedure with every name in ``names`` as a size argument and as a
    local buffer of an inner scope."""
    args = ", ".join(f"{n}: size" for n in names)
    body = []
    for j, n in enumerate(names):
        body += [f"    for i in seq(0, {n}):",
                 f"        x[{j}] += 1.0"]
    body.append("    for q in seq(0, 1):")
    for j, n in enumerate(names):
        body += [f"        {n}: f32",
                 f"        {n} = x[{j}]",
                 f"        y[{j}] = {n} * 2.0"]
    m = len(names)
    return (f"@proc\ndef names_{k}(x: f32[{m}], y: f32[{m}], {args}):\n"
            + "\n".join(body) + "\n")


@pytest.mark.parametrize("chunk", range(4))
def test_reserved_names_as_arguments_and_locals(tmp_path, warn_compile,
                                                chunk):
    names = SPELLINGS[chunk::4]
    mod, _ = _import_source(tmp_path, f"names{chunk}",
                            _HEAD + _kernel_using(names, chunk))
    p = getattr(mod, f"names_{chunk}")
    compile_procs([p], tmp_path, "lib")
    warn_compile("lib")
    src = (tmp_path / "lib.c").read_text()
    assert not re.search(r"\bint_fast32_t EOF\b", src)
    m = len(names)
    x = np.arange(m, dtype=np.float32)
    y = np.zeros(m, dtype=np.float32)
    sizes = {n: 2 for n in names}
    p.compile()(x, y, **sizes)
    want_x = np.arange(m, dtype=np.float32) + 2
    assert (x == want_x).all() and (y == 2 * want_x).all()


REFUSED = ["lib_Context", "LIB_H", "EXO_ASSUME", "EXO_HL_TARGET", "main",
           "INT32_MAX", "EOF", "sin", "exo_floor_div", "exo_win_1f32",
           "_Bool", "__x", "int", "argv", "GOMP_parallel", "GOMP_barrier",
           "omp_set_num_threads", "LONG_MAX", "errno"]


@pytest.mark.parametrize("name", REFUSED)
def test_reserved_public_procedure_names_are_refused(tmp_path, name):
    text = _HEAD + f"""
@proc
def {name}(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
"""
    mod, path = _import_source(tmp_path, "pub", text)
    p = getattr(mod, name)
    with pytest.raises(MemGenError) as e:
        compile_procs([p], tmp_path, "lib")
    msg = str(e.value)
    assert msg.startswith(f"{path}:5: in procedure '{name}': ")
    assert "cannot be exported to C" in msg and "p.rename(" in msg
    # renamed, it compiles
    ok = p.rename("fine")
    compile_procs([ok], tmp_path, "lib")


def test_reserved_callee_names_are_renamed(tmp_path, warn_compile):
    text = _HEAD + """
@proc
def EOF(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0


@proc
def lib_Context(n: size, x: f32[n]):
    EOF(n, x)


@proc
def top(n: size, x: f32[n]):
    lib_Context(n, x)
"""
    mod, _ = _import_source(tmp_path, "callees", text)
    compile_procs([mod.top], tmp_path, "lib")
    warn_compile("lib")
    x = np.zeros(3, dtype=np.float32)
    mod.top.compile()(3, x)
    assert (x == 1).all()


def test_config_fields_spelling_macros(tmp_path, warn_compile):
    text = _HEAD + """
@config
class INT32:
    MAX: i32
    C: size


@proc
def cfg_use(x: i32[2]):
    INT32.MAX = x[0]
    INT32.C = 3
    x[1] = INT32.MAX
"""
    mod, _ = _import_source(tmp_path, "cfgs", text)
    compile_procs([mod.cfg_use], tmp_path, "lib")
    warn_compile("lib")
    hdr = (tmp_path / "lib.h").read_text()
    assert not re.search(r"\bINT32_MAX;", hdr) and not re.search(
        r"\bINT32_C;", hdr)
    x = np.array([7, 0], dtype=np.int32)
    f = mod.cfg_use.compile()
    f(x)
    assert x[1] == 7 and f.get_config(mod.INT32, "MAX") == 7


def test_two_public_procedures_with_one_name(tmp_path):
    text = _HEAD + """
@proc
def twin(x: f32[2]):
    x[0] = 1.0
"""
    a, _ = _import_source(tmp_path, "twin_a", text)
    b, path_b = _import_source(tmp_path, "twin_b", "\n\n" + text)
    with pytest.raises(MemGenError) as e:
        compile_procs([a.twin, b.twin], tmp_path, "lib")
    msg = str(e.value)
    assert msg.startswith(f"{path_b}:7: in procedure 'twin': ")
    assert "two different public procedures are named 'twin'" in msg


#: object-like macros of standard headers the generated C does not
#: include, which a program may include before the generated header
OTHER_MACROS = ["I", "complex", "CHAR_BIT", "LONG_MAX", "FLT_EPSILON",
                "CLOCKS_PER_SEC", "WEOF", "errno", "DBL_MAX", "SHRT_MIN",
                "ULLONG_MAX"]


def test_macros_of_other_standard_headers_are_renamed(tmp_path):
    """A parameter named LONG_MAX broke the generated header in a program
    that includes <limits.h> first (errno quietly changed the prototype):
    such names are renamed in C like the generated C's own headers'."""
    mod, _ = _import_source(tmp_path, "others",
                            _HEAD + _kernel_using(OTHER_MACROS, 9))
    p = mod.names_9
    compile_procs([p], tmp_path, "lib")
    includes = "".join(f"#include <{h}>\n" for h in (
        "limits.h", "float.h", "complex.h", "errno.h", "time.h", "wchar.h"))
    (tmp_path / "user.c").write_text(
        includes + '#include "lib.h"\nint main(void) { return 0; }\n')
    import subprocess
    for cc in ("gcc", "clang"):
        r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                            "-c", "user.c", "-o", f"user_{cc}.o"],
                           cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    x = np.zeros(len(OTHER_MACROS), np.float32)
    y = np.zeros(len(OTHER_MACROS), np.float32)
    p.compile()(x, y, **{n: 1 for n in OTHER_MACROS})
    assert (x == 1).all() and (y == 2).all()


def test_long_and_unicode_procedure_names(tmp_path):
    """A 240-character name overflowed the 255-byte file name of the build
    cache (OSError); c_code_str() refused a name C accepts ('café') as its
    file stem (ValueError). Both run now, as compile() always did."""
    long_name = "k" * 240
    mod, _ = _import_source(tmp_path, "long_names", _HEAD + f"""
@proc
def {long_name}(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0

@proc
def café(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 2.0
""")
    for p, want in ((getattr(mod, long_name), 1.0), (mod.café, 2.0)):
        x = np.zeros(3, np.float32)
        p.compile()(3, x)
        assert (x == want).all()
        assert p.name() in p.c_code_str()
    assert "#ifndef EXO_OUT_H" in mod.café.c_code_str()
