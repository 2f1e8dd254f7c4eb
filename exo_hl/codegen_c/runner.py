"""``p.compile()``: build the generated C as a shared library and call it.

The library is cached by a hash of everything that determines it (C text,
compiler, flags), under a per-user cache directory; builds write to a temp
file and ``os.replace`` it into place, so concurrent test workers never see
a half-written library; an entry whose content no longer matches what was
built (truncated or corrupted on disk) is rebuilt (``build_cache``).
Arguments are validated in Python (types, shapes, contiguity,
preconditions) before any C runs, because the C code trusts its
preconditions (they are optimizer assumptions, not checks).
"""
from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shlex
import subprocess
import tempfile

import numpy as np

from ..core_ir.buffers import written_buffers
from ..core_ir.call_args import CallPlan
from ..core_ir.config_values import config_value
from ..core_ir.nodes import IR
from ..core_ir.types import is_real_scalar, is_tensor_or_window, is_window
from . import build_cache
from .analysis import as_ir
from .host_cpu import FeaturePlan, check_host, missing_features, native_key
from .emit import _Program
from .fp_mode import CONTRACT_OFF, meaning_changing
from .openmp import openmp_flags
from ..progress import Progress, statement_count

#: the flags of ``compile()`` when neither ``cflags=`` nor ``$CFLAGS`` is
#: given: optimised for the host CPU (``-march=native``); if the compiler
#: refuses ``-march=native``, plain ``-O3``.
DEFAULT_CFLAGS = "-O3 -march=native"
FALLBACK_CFLAGS = "-O3"

#: ``compile(target=...)``: the instruction set the whole .so is built for
#: (GCC/Clang ``-march``), and the host features it then needs to run.
#: ``'host'`` (the default) is ``DEFAULT_CFLAGS``.
TARGETS = {
    "x86-64": ("-march=x86-64", frozenset()),
    "x86-64-v3": ("-march=x86-64-v3", frozenset({"avx2", "fma"})),
    "avx2": ("-march=haswell", frozenset({"avx2", "fma"})),
    "avx512": ("-march=skylake-avx512",
               frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl",
                          "avx2", "fma"})),
    "x86-64-v4": ("-march=x86-64-v4",
                  frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl",
                             "avx2", "fma"})),
}

_log = logging.getLogger("exo_hl")


def flag_candidates(cflags=None, target=None) -> list:
    """The compiler flag strings ``compile()`` tries, in order: ``cflags``
    (else ``$CFLAGS``) as given; else ``DEFAULT_CFLAGS`` then
    ``FALLBACK_CFLAGS``. A named ``target`` adds its ``-march`` to
    ``cflags``/``$CFLAGS`` (``-O3`` when neither is set), with no
    fallback: a compiler that cannot build for it is an error."""
    user = cflags if cflags is not None else os.environ.get("CFLAGS")
    if target in (None, "host"):
        return [user] if user is not None else [DEFAULT_CFLAGS,
                                                FALLBACK_CFLAGS]
    if target not in TARGETS:
        raise ValueError(
            f"compile(): unknown target {target!r}; expected 'host' or one "
            f"of {', '.join(sorted(TARGETS))} (or a cross target: "
            f"aarch64, aarch64-fp16, riscv64, riscv64-vlen256, "
            f"riscv64-vlen512)")
    return [f"{user if user is not None else FALLBACK_CFLAGS} "
            f"{TARGETS[target][0]}"]


def target_features(target) -> frozenset:
    """The CPU features a build for ``target`` needs on the host."""
    return frozenset() if target in (None, "host") else TARGETS[target][1]

_PROBE = """\
#include <stddef.h>
#include "{base}.h"
size_t exo_hl_sizeof_context(void) {{ return sizeof({base}_Context); }}
size_t exo_hl_sizeof_fast32(void) {{ return sizeof(int_fast32_t); }}
"""

_CTYPES = {
    IR.F32: ctypes.c_float, IR.Num: ctypes.c_float, IR.F64: ctypes.c_double,
    IR.F16: ctypes.c_uint16, IR.BF16: ctypes.c_uint16, IR.I8: ctypes.c_int8, IR.UI8: ctypes.c_uint8,
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


def status_error(name: str, status: int) -> Exception:
    """The exception of a C function's nonzero status (bits: 1 a heap
    allocation's size overflows, 2 malloc failed, 4 a control config
    field was written a value outside 32 bits), as ``interpret()`` raises
    it (numpy refuses an array too big to address with ValueError, one it
    cannot allocate with MemoryError)."""
    if status & 4:
        return ValueError(f"'{name}': a config field was written a value "
                          f"outside the 32-bit range of control values")
    if status & 1:
        return ValueError(f"'{name}': a heap allocation's size overflows "
                          f"the address space")
    return MemoryError(f"'{name}': a heap allocation failed (malloc "
                       f"returned NULL)")


class CompileError(RuntimeError):
    """The system C compiler rejected the generated code."""


def context_struct(name, configs, config_fields, int_type):
    """The ctypes struct of a build's context (config state), member for
    member as the generated C declares it; an integer field is
    ``int_type``, the size of the target's ``int_fast32_t``. Shared by the
    native and the cross callables, whose C structs are the same."""
    fields = [(config_fields[cfg, f], _CTYPES.get(t, int_type))
              for cfg in configs for f, t in cfg.fields()]
    return type(f"{name}_Context", (ctypes.Structure, ),
                {"_fields_": fields or [("unused_", ctypes.c_char)]})


class ConfigState:
    """``get_config``/``set_config`` on ``self.context`` (a
    ``context_struct``) through ``self._fields``, the C member names; for
    the native and the cross callables alike."""

    def get_config(self, config, field):
        v = getattr(self.context, self._fields[config, field])
        if config.lookup_type(field) is IR.F16:
            # ctypes has no half type: the member holds the bits
            return float(np.array(v, np.uint16).view(np.float16))
        return v

    def set_config(self, config, field, value):
        # checked and typed as interpret()'s config_state values are
        # (core_ir/config_values.py): ctypes wrapped 300 into an i8 to 44
        value = config_value(config, field, value)
        if config.lookup_type(field) is IR.F16:
            value = int(np.array(value, np.float16).view(np.uint16))
        elif isinstance(value, np.generic):
            value = value.item()
        setattr(self.context, self._fields[config, field], value)


def fp_checked_flags(name, flags) -> list:
    """``flags`` (a list, command-line order) with ``-ffp-contract=off``
    last (clang's ``-ffp-contract=fast`` ignores the file's pragma), after
    raising CompileError when they change what floating-point arithmetic
    computes (``fp_mode``: the generated C would compute other values than
    ``interpret()``; clang hides some of them from the file's checks)."""
    out = list(flags) + [CONTRACT_OFF]
    bad = meaning_changing(out)
    if bad is not None:
        raise CompileError(
            f"exo_hl: cannot build '{name}' with {bad}: it changes what "
            f"floating-point arithmetic computes, and the results would "
            f"differ from interpret() (docs/semantics.md, \"Compiler "
            f"options\")")
    return out


def _run_cc(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stderr


def load_shared(build, basename):
    """(path, ``ctypes.CDLL``) of the library ``build(rebuild)`` returns:
    one that still cannot be loaded (``build_shared`` already skips entries
    whose content is damaged) is deleted and built again, once."""
    lib = build(False)
    try:
        return lib, ctypes.CDLL(lib)
    except OSError:
        pass
    build_cache.discard(lib)
    lib = build(True)
    try:
        return lib, ctypes.CDLL(lib)
    except OSError as e:
        raise RuntimeError(f"cannot load the library built for "
                           f"'{basename}' ({lib}): {e}") from None


def build_shared(header, source, basename, cc=None, cflags=None,
                 extra_flags=(), link_flags=("-lm", ), rebuild=False,
                 target=None):
    """Compile to a cached shared library; returns its path. ``rebuild``:
    ignore (and replace) an existing cache entry. The command is logged at
    debug level (``EXO_HL_LOG=debug``)."""
    cc = cc or os.environ.get("CC") or "cc"
    candidates = flag_candidates(cflags, target)
    probe = _PROBE.format(base=basename)
    last_err = ""
    for flags in candidates:
        # last: clang's -ffp-contract=fast ignores the file's pragma
        flag_list = fp_checked_flags(
            basename, shlex.split(flags) + list(extra_flags))
        key = hashlib.sha256("\0".join(
            [header, source, probe, cc, " ".join(flag_list),
             " ".join(link_flags), native_key(flag_list)]
        ).encode()).hexdigest()[:24]
        d = cache_dir()
        lib = build_cache.cached_file(d, basename, key, ".so")
        if not rebuild and build_cache.is_valid(lib):
            _log.debug("compile %s: %s %s (cached: %s)", basename, cc,
                       " ".join(flag_list), lib)
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
            _log.debug("compile %s: %s", basename, " ".join(cmd))
            rc, err = _run_cc(cmd, tmp)
            if rc == 0:
                build_cache.store(out, lib)
                return lib
            last_err = f"$ {' '.join(cmd)}\n{err}"
    raise CompileError(f"C compilation of '{basename}' failed:\n{last_err}")


# ----------------------------------------------------------------------------
# the callable


class CompiledProcedure(ConfigState):
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
        self._plan = CallPlan(ir)
        self.name = ir.name
        plan = FeaturePlan(ir, opts.pop("emulate", None))
        self.cpu_features = plan.needed
        self.emulated = plan.emulated
        self.missing_features = plan.missing
        stem = build_cache.build_stem(ir.name)   # names the build's files
        prog = _Program([ir], stem, emulated=self.emulated)
        # on a terminal, a large procedure shows a bar: its statements as
        # C is generated, then a share for the C compiler
        stmts = sum(statement_count(p) for p in prog.order)
        cc_share = max(1, stmts // 2)
        with Progress(stmts + cc_share, f"exo_hl: C for {ir.name}") as bar:
            self.header, self.source = prog.emit(progress=bar)
            bar.advance(0, f"exo_hl: cc {ir.name}")
            self.configs = prog.configs
            self._fields = prog.config_fields
            self.written = written_buffers(ir)
            self.restrict = (set(a.name for a in ir.args)
                             - prog.aliased.get(ir, set()))
            cc = opts.pop("cc", None)
            # par loops run in parallel where the compiler supports OpenMP
            extra = openmp_flags(ir, cc or os.environ.get("CC") or "cc",
                                 opts.pop("openmp", None))
            extra = list(extra) + plan.flags()
            cflags = opts.pop("cflags", None)
            self.target = opts.pop("target", None) or "host"
            flag_candidates(cflags, self.target)       # a known target
            self.target_missing = missing_features(
                target_features(self.target))
            if opts:
                raise TypeError(f"compile() got unknown options: "
                                f"{', '.join(sorted(opts))}")
            self.library_path, self._lib = load_shared(
                lambda rebuild: build_shared(self.header, self.source,
                                             stem, cc=cc, cflags=cflags,
                                             extra_flags=extra,
                                             rebuild=rebuild,
                                             target=self.target),
                ir.name)
            bar.advance(cc_share)
        for probe in ("exo_hl_sizeof_context", "exo_hl_sizeof_fast32"):
            getattr(self._lib, probe).restype = ctypes.c_size_t
        fast = self._lib.exo_hl_sizeof_fast32()
        self._fast32 = {8: ctypes.c_int64, 4: ctypes.c_int32}[fast]
        self._fast32_bits = 8 * fast
        self._ctx_type = context_struct(ir.name, self.configs, self._fields,
                                        self._fast32)
        if ctypes.sizeof(self._ctx_type) != self._lib.exo_hl_sizeof_context():
            raise RuntimeError("context struct layout mismatch between ctypes "
                               "and the C compiler")
        self.context = self._ctx_type()
        self._win_types = {}
        self._fn = getattr(self._lib, ir.name)
        # a function that allocates on the heap returns a status
        self._status = prog.may_fail(ir)
        self._fn.restype = ctypes.c_int if self._status else None
        self._fn.argtypes = [ctypes.c_void_p] + [self._argtype(a)
                                                for a in ir.args]

    def __repr__(self):
        how = (f", emulating {', '.join(sorted(self.emulated))}"
               if self.emulated else "")
        return f"<compiled procedure {self.name} ({self.library_path}{how})>"

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
    def _check_host(self):
        check_host(self.name, self.cpu_features, self.missing_features,
                   self.emulated)
        if self.target_missing:
            need = ", ".join(sorted(self.target_missing))
            raise RuntimeError(
                f"{self.name}(): built for target {self.target!r}, which "
                f"needs {need}; this CPU lacks it, so nothing was run "
                f"(compile for target='host' to run here)")

    def __call__(self, *args, **kwargs):
        c_args, _held = self._c_args(args, kwargs)
        self._raise_status(self._fn(*c_args))

    @property
    def returns_status(self) -> bool:
        """Whether the C function returns exo_hl's allocation status (it
        has a heap buffer): a caller going straight through ctypes must
        pass the result to ``check_status``."""
        return self._status

    def check_status(self, status):
        """Raise the C function's nonzero status as ``__call__`` does."""
        self._raise_status(status)

    def _raise_status(self, status):
        """The C function's status as the interpreter's exception (numpy
        refuses an array too big to address with ValueError, and one it
        cannot allocate with MemoryError)."""
        if status:
            raise status_error(self.name, status)

    def bind(self, *args, **kwargs):
        """A callable of no arguments that runs the C on these arguments.

        The arguments are checked here, once, as a call checks them; each
        run of the result then goes straight to the C function (a few
        microseconds of Python instead of tens), which matters when a
        sub-millisecond kernel runs in a loop or is timed. The arrays are
        held, and updated in place on every run; do not resize them. A
        procedure whose preconditions or shapes read config state, which
        may change between runs, is checked again on every run."""
        if self._plan.reads_config:
            return lambda: self(*args, **kwargs)
        c_args, held = self._c_args(args, kwargs)
        fn, check_host = self._fn, self._check_host

        raise_status = self._raise_status

        def run():
            check_host()
            raise_status(fn(*c_args))
        run.arguments = held    # the arrays stay alive while ``run`` does
        return run

    def _c_args(self, args, kwargs):
        """The checked arguments of one call as the C function takes them,
        and the arrays they point into (keep them alive while it runs)."""
        self._check_host()
        checked = self._plan.check(args, kwargs,
                                   int_bits=self._fast32_bits,
                                   read_config=self.get_config)
        c_args = [ctypes.addressof(self.context)]
        for p, v, addr in zip(self._plan.params, checked.values,
                              checked.addresses):
            if p.control:
                c_args.append(v)
            elif p.window:
                w = self._win_struct(len(p.dims))()
                w.data = addr
                for d, s in enumerate(checked.strides[p.sym]):
                    w.strides[d] = s
                c_args.append(w)
            else:
                c_args.append(addr)
        return c_args, checked.values
