"""Every AVX2 and AVX-512 instruction against its body with its sizes and
window offsets known only at run time.

tests/hw_libs/test_edge_values.py calls each instruction with literal
sizes (a mask of 1, lanes - 1 and all lanes) on windows that start at
element 0 of arrays of exactly their size. Here each instruction gets one
wrapper whose mask count or shift (``m``, ``k``) is a ``size`` argument
of the wrapper (the C computes the mask from a variable: no constant
folding), and whose memory operands are windows starting at an ``index``
argument ``o`` (every alignment of 4- and 2-byte elements within a cache
line, and past it) of larger arrays, 2-d operands at row ``r`` of arrays
whose rows are wider than the window where the instruction allows it (a
run-time row stride). Every mask length from 1 to all lanes is run. After
each call *whole* arrays are compared, bit for bit (NaNs equal), between
``interpret()`` and the C: so an element outside a window, past a mask or
beside a packed panel that the C writes and the body does not is caught
too. The AVX-512 instructions also run through the emulation layer as
on a host of AVX2 only (SIMDe's masked operations, the layer's own
masked loads and stores). The inputs mix the edge values of
test_edge_values with random ones (its exceptions kept: exact factors
for the fused multiply-adds and the bf16 dot products, no f32 denormal
for ``vcvtne2ps2bf16``); the BF16 and VNNI instructions also run through
the layer with only them emulated.
"""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.types import basetype, shape as type_shape
from exo_hl.frontend.decorators import parse_proc_source

from .emulation_tools import compile_emulated
from .test_edge_values import (LIBS, _TNAME, _bits, _emulated,
                               _inputs, _is_dpbf16, _is_fma, _lowp, _value)

#: offsets of 1-d windows tried (``o``), rows of 2-d ones (``r``)
OFFSETS = (0, 1, 3, 7, 8, 15, 16, 17)
ROWS = (0, 1, 3)
MAX_O, MAX_R = max(OFFSETS), max(ROWS)


def _bounds(instr) -> dict:
    """{size argument: largest value its preconditions admit}, from the
    ``s <= c`` preconditions (each size argument has one)."""
    out = {}
    for e in instr.ir().preds:
        if (isinstance(e, IR.BinOp) and e.op == "<="
                and isinstance(e.lhs, IR.Read) and not e.lhs.idx
                and isinstance(e.rhs, IR.Const)):
            out[e.lhs.name.name] = e.rhs.val
    sizes = [a.name.name for a in instr.ir().args if a.type is IR.Size]
    assert set(sizes) <= set(out), (instr.name(), sizes, out)
    return {s: out[s] for s in sizes}


def _fixed_row_stride(instr, name) -> int | None:
    """The row stride a 2-d operand's preconditions fix, if any."""
    for e in instr.ir().preds:
        if (isinstance(e, IR.BinOp) and e.op == "=="
                and isinstance(e.lhs, IR.StrideExpr)
                and e.lhs.name.name == name and e.lhs.dim == 0
                and isinstance(e.rhs, IR.Const)):
            return e.rhs.val
    return None


def _wrapper(lib_name, instr):
    """(source, {array: (type, shape)}, size bounds): ``instr`` called on
    windows at offset ``o`` (rows at ``r``), its sizes the wrapper's."""
    lib, mem, moves = LIBS[lib_name]
    bounds = _bounds(instr)
    top = dict(bounds)                   # shapes at the largest sizes
    args = [f"{s}: size" for s in bounds] + ["o: index", "r: index"]
    body = [f"    assert {s} <= {b}" for s, b in bounds.items()]
    body += [f"    assert o >= 0", f"    assert o <= {MAX_O}",
             f"    assert r >= 0", f"    assert r <= {MAX_R}"]
    after, call, arrays = [], [], {}
    sym = {s: s for s in bounds}
    for a in instr.ir().args:
        nm = a.name.name
        if a.type is IR.Size:
            call.append(nm)
            continue
        t = basetype(a.type)
        tn = _TNAME[t]
        dims = [_value(h, top) for h in type_shape(a.type)]
        ext = [_extent(h, sym) for h in type_shape(a.type)]
        if not dims:                         # a scalar argument
            arrays[f"x_{nm}"] = (t, (MAX_O + 1,))
            body += [f"    s_{nm}: {tn} @ DRAM", f"    s_{nm} = x_{nm}[o]"]
            call.append(f"s_{nm}")
            continue
        if len(dims) == 2:                   # a panel in memory
            d0, d1 = dims
            fixed = _fixed_row_stride(instr, nm)
            width = d1 if fixed == d1 else d1 + 5
            arrays[f"x_{nm}"] = (t, (d0 + MAX_R, width))
            call.append(f"x_{nm}[r:r + {ext[0]}, 0:{ext[1]}]")
            continue
        n = dims[0]
        arrays[f"x_{nm}"] = (t, (n + MAX_O,))
        if a.mem is mem:                     # a register: load, store back
            load, store = moves[t]
            arrays[f"y_{nm}"] = (t, (n + MAX_O,))
            body += [f"    v_{nm}: {tn}[{n}] @ {mem.__name__}",
                     f"    {load}(v_{nm}, x_{nm}[o:o + {n}])"]
            call.append(f"v_{nm}")
            after.append(f"    {store}(y_{nm}[o:o + {n}], v_{nm})")
        else:
            call.append(f"x_{nm}[o:o + {ext[0]}]")
    sig = args + [f"{k}: {_TNAME[t]}[{', '.join(map(str, s))}] @ DRAM"
                  for k, (t, s) in arrays.items()]
    body.append(f"    {instr.name()}({', '.join(call)})")
    src = (f"def rw_{instr.name()}({', '.join(sig)}):\n"
           + "\n".join(body + after) + "\n")
    return src, arrays, bounds


def _extent(h, sym):
    if isinstance(h, IR.Const):
        return str(h.val)
    if isinstance(h, IR.Read) and not h.idx:
        return sym[h.name.name]
    raise NotImplementedError(f"size expression {h}")


def _random_inputs(instr, arrays, rng):
    """Arrays of edge and random values (test_edge_values' exceptions)."""
    out = {}
    for nm, (t, shp) in arrays.items():
        n = int(np.prod(shp))
        arg = nm[2:]
        if nm.startswith("y_"):
            out[nm] = _inputs(t, n, rng, 0).reshape(shp)   # garbage: kept
            continue                                       # outside windows
        if _is_dpbf16(instr):
            factor = 3 if arg == "dst" else 1
        elif "cvtne2ps" in instr.ir().instr.c_template:
            factor = 4
        elif _is_fma(instr) and arg != "dst":
            factor = 1 if arg == "a" else 2
        else:
            factor = 0
        v = _inputs(t, n, rng, factor)
        if t is IR.F32 and not factor:       # and random finite values
            mix = rng.integers(2, size=n).astype(bool)
            v = np.where(mix, rng.standard_normal(n).astype(np.float32)
                         * np.float32(10.0) ** rng.integers(-3, 4, n)
                         .astype(np.float32), v).astype(np.float32)
        if t is IR.UI16 and not factor:
            mix = rng.integers(2, size=n).astype(bool)
            v = np.where(mix, rng.integers(0, 65536, n), v).astype(np.uint16)
        out[nm] = v.reshape(shp)
    return out


def _cases():
    for lib_name, (lib, _, _) in LIBS.items():
        for instr in lib.INSTRS:
            yield pytest.param(lib_name, instr,
                               id=f"{lib_name}-{instr.name()}")


@pytest.mark.parametrize("lib_name,instr", list(_cases()))
def test_instruction_equals_its_body_at_run_time_sizes_and_offsets(
        lib_name, instr):
    lib, _, _ = LIBS[lib_name]
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    scope.update({n: getattr(lib, n) for n in lib.__all__})
    src, arrays, bounds = _wrapper(lib_name, instr)
    p = parse_proc_source(src, scope)
    runs = [p.compile()]
    if _lowp(instr):
        runs += _emulated(p)
    if "avx512f" in instr.ir().instr.cpu_features:
        # and on a host of AVX2 only (CI's may be one): AVX-512 through
        # the emulation layer (SIMDe, and its own masked loads/stores)
        f = compile_emulated(p, host="avx,avx2,fma,f16c")
        assert "avx512f" in f.emulated, f.emulated
        runs.append(f)
    rng = np.random.default_rng(sum(map(ord, instr.name())))
    # every value of each size (1 .. its bound), each at two offsets
    names = list(bounds)
    points = []
    for s in names:
        for v in range(1, bounds[s] + 1):
            points.append({**{x: bounds[x] for x in names}, s: v})
    points = points or [{}]
    calls = 0
    for sizes in points:
        for _ in range(2):
            o, r = int(rng.choice(OFFSETS)), int(rng.choice(ROWS))
            args = _random_inputs(instr, arrays, rng)
            want = {k: v.copy() for k, v in args.items()}
            with np.errstate(all="ignore"):
                p.interpret(**sizes, o=o, r=r, **want)
            for f in runs:
                got = {k: v.copy() for k, v in args.items()}
                f(**sizes, o=o, r=r, **got)
                for nm, (t, _) in arrays.items():
                    assert np.array_equal(_bits(got[nm], t),
                                          _bits(want[nm], t)), (
                        f"{instr.name()} {sizes} o={o} r={r} ({f}): {nm}"
                        f"\nC         {got[nm]}\ninterpret {want[nm]}\non "
                        f"{ {k: v for k, v in args.items()} }")
            calls += 1
    assert calls >= 2


def test_the_wrappers_cover_every_kind_of_operand():
    """Masks, shifts, scalars, registers, 1-d and 2-d memory operands (one
    with a free row stride) are all among the wrappers."""
    seen = set()
    for lib_name, (lib, _, _) in LIBS.items():
        for instr in lib.INSTRS:
            src, arrays, bounds = _wrapper(lib_name, instr)
            seen |= set(bounds)
            seen |= {len(s) for _, s in arrays.values()}
            if any(len(s) == 2 and s[1] > 4 for _, s in arrays.values()):
                seen.add("free row stride")
            if "s_" in src:
                seen.add("scalar")
            if "y_" in src:
                seen.add("register")
    assert {"m", "k", 1, 2, "free row stride", "scalar",
            "register"} <= seen, seen
