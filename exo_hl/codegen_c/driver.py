"""A standalone C test driver (``main()``) for a procedure and given inputs.

Sanitizers (ASan/UBSan) cannot be loaded into a running Python via ctypes
without LD_PRELOAD tricks, so tests that want a sanitized run generate this
driver, build it into an executable with the generated code, and compare
what it prints (every written buffer, exactly, as hex floats or integers)
with a reference computed in Python.
"""
from __future__ import annotations

import numpy as np

from ..core_ir.types import (C_TYPES, NUMPY_DTYPES, is_real_scalar,
                             is_tensor_or_window, is_window)
from ..core_ir.buffers import written_buffers
from .analysis import as_ir


def _lit(v, ct):
    if ct in ("float", "double", "_Float16"):
        v = float(v)
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "-INFINITY"
        return v.hex() + ("f" if ct == "float" else "")
    return str(int(v))


def driver_source(procedure, args: dict, basename: str) -> str:
    """C text of ``main()`` calling ``procedure`` on ``args`` (numpy/ints).

    Buffers are heap copies of the given arrays (so out-of-bounds accesses
    are caught by ASan); window arguments must be given as contiguous arrays
    and are passed with dense strides. Output: one line ``name value`` per
    element of every written buffer, in row-major order.
    """
    ir = as_ir(procedure)
    written = written_buffers(ir)
    lines = ['#include <math.h>', '#include <stdio.h>',
             '#include <stdlib.h>', '#include <string.h>',
             f'#include "{basename}.h"', '',
             'int main(void) {',
             f'    {basename}_Context ctx;',
             '    memset(&ctx, 0, sizeof ctx);']
    call, prints = ["&ctx"], []
    for a in ir.args:
        nm = a.name.name
        v = args[nm]
        t = a.type
        if is_tensor_or_window(t) or is_real_scalar(t):
            elem = t if is_real_scalar(t) else t.type
            ct = C_TYPES[elem]
            arr = np.ascontiguousarray(np.asarray(v, dtype=NUMPY_DTYPES[elem]))
            flat = arr.reshape(-1)
            init = ", ".join(_lit(x, ct) for x in flat)
            lines.append(f"    static const {ct} {nm}_init[{flat.size}] = "
                         f"{{ {init} }};")
            lines.append(f"    {ct} *{nm} = malloc(sizeof {nm}_init);")
            lines.append(f"    memcpy({nm}, {nm}_init, sizeof {nm}_init);")
            if is_window(t):
                strides = [s // arr.itemsize for s in arr.strides]
                st = ", ".join(map(str, strides))
                call.append(f"(struct exo_win_{len(t.hi)}"
                            f"{_tag(elem)}{'' if a.name in written else 'c'})"
                            f"{{ {nm}, {{ {st} }} }}")
            else:
                call.append(nm)
            if a.name in written:
                fmt = "%a" if ct in ("float", "double", "_Float16") \
                    else "%lld"
                cast = "(double)" if fmt == "%a" else "(long long)"
                prints += [f"    for (size_t exo_k_ = 0; exo_k_ < "
                           f"{flat.size}; exo_k_++)",
                           f'        printf("{nm} {fmt}\\n", '
                           f'{cast}{nm}[exo_k_]);']
            prints.append(f"    free({nm});")
        else:
            call.append("true" if v is True else "false" if v is False
                        else str(int(v)))
    lines.append(f"    {ir.name}({', '.join(call)});")
    lines += prints + ["    return 0;", "}", ""]
    return "\n".join(lines)


def _tag(elem):
    from ..core_ir.types import TYPE_NAMES
    return TYPE_NAMES[elem].replace("R", "f32")


def parse_driver_output(text: str) -> dict:
    """{buffer name: list of values} from the driver's output."""
    out = {}
    for ln in text.splitlines():
        nm, val = ln.split()
        out.setdefault(nm, []).append(
            float.fromhex(val) if ("0x" in val or "nan" in val or "inf" in val)
            else int(val))
    return out
