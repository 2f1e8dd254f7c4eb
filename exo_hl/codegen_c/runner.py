"""``p.compile()``: build the generated C as a shared library and call it.

The library is cached by a hash of everything that determines it (C text,
compiler, flags), under a per-user cache directory; builds write to a temp
file and ``os.replace`` it into place, so concurrent test workers never see
a half-written library. Arguments are validated in Python (types, shapes,
contiguity, preconditions) before any C runs, because the C code trusts its
preconditions (they are optimizer assumptions, not checks).
"""
from __future__ import annotations

import ctypes
import hashlib
import numbers
import os
import shlex
import subprocess
import tempfile

import numpy as np

from ..core_ir.buffers import written_buffers
from ..core_ir.nodes import IR
from ..core_ir.types import (NUMPY_DTYPES, TYPE_NAMES, is_real_scalar,
                             is_tensor_or_window, is_window)
from ..core_ir.cpu_features import proc_features
from .analysis import as_ir
from .host_cpu import emulation_flags, emulation_wanted, missing_features
from .emit import _Program

DEFAULT_CFLAGS = "-O3 -march=native"
FALLBACK_CFLAGS = "-O3"

_PROBE = """\
#include <stddef.h>
#include "{base}.h"
size_t exo_hl_sizeof_context(void) {{ return sizeof({base}_Context); }}
size_t exo_hl_sizeof_fast32(void) {{ return sizeof(int_fast32_t); }}
"""

_CTYPES = {
    IR.F32: ctypes.c_float, IR.Num: ctypes.c_float, IR.F64: ctypes.c_double,
    IR.F16: ctypes.c_uint16, IR.I8: ctypes.c_int8, IR.UI8: ctypes.c_uint8,
    IR.I16: ctypes.c_int16, IR.UI16: ctypes.c_uint16, IR.I32: ctypes.c_int32,
    IR.Bool: ctypes.c_bool,
}


def cache_dir() -> str:
    """$EXO_HL_CACHE, else $XDG_CACHE_HOME/exo_hl, else ~/.cache/exo_hl."""
    d = os.environ.get("EXO_HL_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "exo_hl")
    os.makedirs(d, exist_ok=True)
    return d


class CompileError(RuntimeError):
    """The system C compiler rejected the generated code."""


def _run_cc(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stderr


def build_shared(header, source, basename, cc=None, cflags=None,
                 extra_flags=(), link_flags=("-lm", )):
    """Compile to a cached shared library; returns its path."""
    cc = cc or os.environ.get("CC") or "cc"
    user_flags = cflags if cflags is not None else os.environ.get("CFLAGS")
    candidates = ([user_flags] if user_flags is not None
                  else [DEFAULT_CFLAGS, FALLBACK_CFLAGS])
    probe = _PROBE.format(base=basename)
    last_err = ""
    for flags in candidates:
        flag_list = shlex.split(flags) + list(extra_flags)
        key = hashlib.sha256("\0".join(
            [header, source, probe, cc, " ".join(flag_list),
             " ".join(link_flags)]).encode()).hexdigest()[:24]
        d = cache_dir()
        lib = os.path.join(d, f"{basename}_{key}.so")
        if os.path.exists(lib):
            return lib
        with tempfile.TemporaryDirectory(dir=d, prefix="build_") as tmp:
            for name, text in ((basename + ".h", header),
                               (basename + ".c", source),
                               ("exo_hl_probe.c", probe)):
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            out = os.path.join(tmp, "lib.so")
            cmd = ([*shlex.split(cc)] + flag_list +
                   ["-shared", "-fPIC", "-o", out, basename + ".c",
                    "exo_hl_probe.c"] + list(link_flags))
            rc, err = _run_cc(cmd, tmp)
            if rc == 0:
                os.replace(out, lib)
                return lib
            last_err = f"$ {' '.join(cmd)}\n{err}"
    raise CompileError(f"C compilation of '{basename}' failed:\n{last_err}")


# ----------------------------------------------------------------------------
# evaluating control expressions (shapes, preconditions) in Python


def _floordiv(a, b):
    return a // b


def eval_control(e, env, strides, ctx):
    """Value of a control expression given argument values."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name]
    if isinstance(e, IR.USub):
        return -eval_control(e.arg, env, strides, ctx)
    if isinstance(e, IR.Not):
        return not eval_control(e.arg, env, strides, ctx)
    if isinstance(e, IR.StrideExpr):
        return strides[e.name][e.dim]
    if isinstance(e, IR.ReadConfig):
        return getattr(ctx, e.config.c_struct_field(e.field))
    if isinstance(e, IR.BinOp):
        a = eval_control(e.lhs, env, strides, ctx)
        if e.op == "and":
            return a and eval_control(e.rhs, env, strides, ctx)
        if e.op == "or":
            return a or eval_control(e.rhs, env, strides, ctx)
        b = eval_control(e.rhs, env, strides, ctx)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a // b, "%": lambda: a % b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b,
                ">=": lambda: a >= b, "==": lambda: a == b,
                "!=": lambda: a != b}[e.op]()
    raise TypeError(f"cannot evaluate {type(e).__name__} in Python")


def expr_text(e) -> str:
    """A control expression as the user wrote it, for messages."""
    from ..core_ir.printer import expr_to_str
    return expr_to_str(e)


# ----------------------------------------------------------------------------
# the callable


class CompiledProcedure:
    """A procedure compiled to C and loaded; call it like the procedure.

    ``context`` is this callable's config state (a ctypes struct, zeroed at
    creation and kept across calls); read it with ``get_config``.
    """

    def __init__(self, procedure, **opts):
        ir = as_ir(procedure)
        if ir.instr is not None:
            raise TypeError(f"'{ir.name}' is an @instr: it has no C function "
                            f"of its own to compile")
        self.proc = ir
        self.name = ir.name
        self.cpu_features = proc_features(ir)
        missing = missing_features(self.cpu_features)
        emulate = emulation_wanted(opts.pop("emulate", None))
        #: features supplied by the emulation layer in this build
        self.emulated = missing if emulate else frozenset()
        #: features this build needs natively but the host lacks
        self.missing_features = missing - self.emulated
        prog = _Program([ir], ir.name, emulated=self.emulated)
        self.header, self.source = prog.emit()
        self.configs = prog.configs
        self.written = written_buffers(ir)
        self.restrict = set(a.name for a in ir.args) - prog.aliased.get(ir, set())
        extra = emulation_flags() if self.emulated else []
        sanitize = opts.pop("sanitize", False)
        if sanitize:
            kinds = "address,undefined" if sanitize is True else sanitize
            extra += [f"-fsanitize={kinds}", "-fno-omit-frame-pointer", "-g",
                      "-fno-sanitize-recover=all"]
        if opts.pop("openmp", False):
            extra.append("-fopenmp")
        cc = opts.pop("cc", None)
        cflags = opts.pop("cflags", None)
        if opts:
            raise TypeError(f"compile() got unknown options: "
                            f"{', '.join(sorted(opts))}")
        self.library_path = build_shared(self.header, self.source, ir.name,
                                         cc=cc, cflags=cflags,
                                         extra_flags=extra)
        try:
            self._lib = ctypes.CDLL(self.library_path)
        except OSError as e:
            hint = (" (an ASan-instrumented library can only be loaded when "
                    "libasan is preloaded: LD_PRELOAD=$(cc "
                    "-print-file-name=libasan.so); or use "
                    "exo_hl.codegen_c.driver for a standalone sanitized run)"
                    if sanitize else "")
            raise RuntimeError(f"cannot load {self.library_path}: {e}{hint}") \
                from None
        for probe in ("exo_hl_sizeof_context", "exo_hl_sizeof_fast32"):
            getattr(self._lib, probe).restype = ctypes.c_size_t
        fast = self._lib.exo_hl_sizeof_fast32()
        self._fast32 = {8: ctypes.c_int64, 4: ctypes.c_int32}[fast]
        self._fast32_bits = 8 * fast
        fields = []
        for cfg in self.configs:
            for f, t in cfg.fields():
                fields.append((cfg.c_struct_field(f),
                               _CTYPES.get(t, self._fast32)))
        if not fields:
            fields = [("unused_", ctypes.c_char)]
        self._ctx_type = type(f"{ir.name}_Context", (ctypes.Structure, ),
                              {"_fields_": fields})
        if ctypes.sizeof(self._ctx_type) != self._lib.exo_hl_sizeof_context():
            raise RuntimeError("context struct layout mismatch between ctypes "
                               "and the C compiler")
        self.context = self._ctx_type()
        self._win_types = {}
        self._fn = getattr(self._lib, ir.name)
        self._fn.restype = None
        self._fn.argtypes = [ctypes.c_void_p] + [self._argtype(a)
                                                for a in ir.args]

    def __repr__(self):
        how = (f", emulating {', '.join(sorted(self.emulated))}"
               if self.emulated else "")
        return f"<compiled procedure {self.name} ({self.library_path}{how})>"

    # -- config state
    def get_config(self, config, field):
        return getattr(self.context, config.c_struct_field(field))

    def set_config(self, config, field, value):
        setattr(self.context, config.c_struct_field(field), value)

    # -- ctypes plumbing
    def _win_struct(self, ndim):
        t = self._win_types.get(ndim)
        if t is None:
            t = type(f"exo_win_{ndim}", (ctypes.Structure, ),
                     {"_fields_": [("data", ctypes.c_void_p),
                                   ("strides", self._fast32 * ndim)]})
            self._win_types[ndim] = t
        return t

    def _argtype(self, a):
        t = a.type
        if is_window(t):
            return self._win_struct(len(t.hi))
        if is_tensor_or_window(t) or is_real_scalar(t):
            return ctypes.c_void_p
        if t is IR.Bool:
            return ctypes.c_bool
        return self._fast32

    # -- calling
    def _bind(self, args, kwargs):
        params = self.proc.args
        if len(args) > len(params):
            raise TypeError(f"{self.name}() takes {len(params)} arguments, "
                            f"got {len(args)}")
        values = {}
        for a, v in zip(params, args):
            values[a.name.name] = v
        for k, v in kwargs.items():
            if k not in {a.name.name for a in params}:
                raise TypeError(f"{self.name}() got an unexpected argument "
                                f"'{k}'")
            if k in values:
                raise TypeError(f"{self.name}() got multiple values for "
                                f"argument '{k}'")
            values[k] = v
        missing = [a.name.name for a in params if a.name.name not in values]
        if missing:
            raise TypeError(f"{self.name}() missing arguments: "
                            f"{', '.join(missing)}")
        return [values[a.name.name] for a in params]

    def _control(self, a, v):
        nm = a.name.name
        if a.type is IR.Bool:
            if not isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{self.name}(): argument '{nm}' must be a "
                                f"bool, got {type(v).__name__}")
            return bool(v)
        if isinstance(v, (bool, np.bool_)) or not isinstance(
                v, numbers.Integral):
            raise TypeError(f"{self.name}(): argument '{nm}' "
                            f"({TYPE_NAMES[a.type]}) must be an int, got "
                            f"{type(v).__name__}")
        v = int(v)
        lim = 1 << (self._fast32_bits - 1)
        if not -lim <= v < lim:
            raise ValueError(f"{self.name}(): argument '{nm}' = {v} does not "
                             f"fit int_fast32_t")
        if a.type is IR.Size and v <= 0:
            raise ValueError(f"{self.name}(): size argument '{nm}' must be "
                             f"positive, got {v}")
        return v

    def _array(self, a, v, env):
        nm = a.name.name
        t = a.type
        elem = t if is_real_scalar(t) else t.type
        want = np.dtype(NUMPY_DTYPES[elem])
        written = a.name in self.written
        if is_real_scalar(t) and not isinstance(v, np.ndarray):
            if written:
                raise TypeError(
                    f"{self.name}(): data scalar '{nm}' is written by the "
                    f"procedure; pass a 0-d or 1-element numpy array of "
                    f"{want} so it can be updated in place")
            if not isinstance(v, numbers.Number):
                raise TypeError(f"{self.name}(): argument '{nm}' must be a "
                                f"number or a numpy array")
            return np.array(v, dtype=want)
        if not isinstance(v, np.ndarray):
            raise TypeError(f"{self.name}(): argument '{nm}' must be a numpy "
                            f"array of {want}, got {type(v).__name__}")
        if v.dtype != want:
            raise TypeError(f"{self.name}(): argument '{nm}' must have dtype "
                            f"{want} ({TYPE_NAMES[elem]}), got {v.dtype}")
        if written and not v.flags.writeable:
            raise ValueError(f"{self.name}(): argument '{nm}' is written but "
                             f"the array is read-only")
        if is_real_scalar(t):
            if v.size != 1:
                raise ValueError(f"{self.name}(): data scalar '{nm}' must be "
                                 f"a 0-d or 1-element array, got shape "
                                 f"{v.shape}")
            if not v.flags.c_contiguous:
                raise ValueError(f"{self.name}(): '{nm}' must be contiguous")
            return v
        dims = [eval_control(h, env, {}, self.context) for h in t.hi]
        if tuple(v.shape) != tuple(dims):
            raise ValueError(f"{self.name}(): argument '{nm}' must have shape "
                             f"{tuple(dims)} (from {[expr_text(h) for h in t.hi]}"
                             f"), got {v.shape}")
        if not is_window(t) and not v.flags.c_contiguous:
            raise ValueError(f"{self.name}(): tensor argument '{nm}' must be "
                             f"C-contiguous (row-major, dense); pass "
                             f"np.ascontiguousarray(...) or declare a window")
        if is_window(t):
            for s in v.strides:
                if s % v.itemsize or s < 0:
                    raise ValueError(f"{self.name}(): window argument '{nm}' "
                                     f"has strides {v.strides} that are not "
                                     f"non-negative multiples of the element "
                                     f"size")
        return v

    def _check_host(self):
        if self.missing_features:
            need = ", ".join(sorted(self.missing_features))
            raise RuntimeError(
                f"{self.name}(): this CPU lacks {need}, which the compiled "
                f"code needs (it uses {', '.join(sorted(self.cpu_features))});"
                f" nothing was run. Run it on a CPU with {need}, schedule it "
                f"for another instruction set, or compile(emulate=True) to "
                f"run it slowly through an emulation layer")

    def __call__(self, *args, **kwargs):
        self._check_host()
        params = self.proc.args
        vals = self._bind(args, kwargs)
        env, strides, c_args, keep = {}, {}, [ctypes.addressof(self.context)], []
        for a, v in zip(params, vals):
            if not (is_tensor_or_window(a.type) or is_real_scalar(a.type)):
                env[a.name] = self._control(a, v)
        for a, v in zip(params, vals):
            if is_tensor_or_window(a.type) or is_real_scalar(a.type):
                arr = self._array(a, v, env)
                keep.append((a, arr))
                strides[a.name] = tuple(s // arr.itemsize for s in arr.strides)
        for pred in self.proc.preds:
            if not eval_control(pred, env, strides, self.context):
                raise ValueError(f"{self.name}(): precondition "
                                 f"'{expr_text(pred)}' does not hold for the "
                                 f"given arguments")
        self._check_overlap(keep)
        arrays = dict((a.name, arr) for a, arr in keep)
        for a in params:
            if a.name in arrays:
                arr = arrays[a.name]
                if is_window(a.type):
                    w = self._win_struct(len(a.type.hi))()
                    w.data = arr.ctypes.data
                    for d, s in enumerate(strides[a.name]):
                        w.strides[d] = s
                    c_args.append(w)
                else:
                    c_args.append(arr.ctypes.data)
            else:
                c_args.append(env[a.name])
        self._fn(*c_args)

    def _check_overlap(self, keep):
        """restrict pointers must not overlap when one of them is written."""
        for i, (a, x) in enumerate(keep):
            for b, y in keep[i + 1:]:
                if not (a.name in self.written or b.name in self.written):
                    continue
                if a.name in self.restrict or b.name in self.restrict:
                    try:
                        overlap = np.shares_memory(x, y, max_work=10**5)
                    except RuntimeError:  # numpy gave up (TooHardError)
                        overlap = False
                    if overlap:
                        raise ValueError(
                            f"{self.name}(): arguments '{a.name.name}' and "
                            f"'{b.name.name}' overlap in memory, but one is "
                            f"written (pass distinct arrays)")


def compile_callable(procedure, **opts):
    """``Procedure.compile``: see ``CompiledProcedure``."""
    return CompiledProcedure(procedure, **opts)
