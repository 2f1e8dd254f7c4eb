"""``compile(target='aarch64' | 'riscv64' ...)``: build for another CPU and
run the code under qemu-user.

A cross build is a static executable (the generated C plus a generic
``main``) built with the target's cross compiler; a call checks its
arguments in Python exactly as a native compiled callable does
(``CallPlan``), then sends the bytes of every argument to the executable
running under ``qemu-<arch>`` in a child process and copies back what the
procedure wrote. ``interpret()`` and the target can so be compared bit for
bit on this x86 machine. Many calls go to one child process
(``run_many``), since starting qemu costs tens of milliseconds.

The wire format (little-endian, both ends 64-bit): the host sends the
context struct's bytes; the memory regions of all the calls' arguments
(each a length and its bytes; overlapping arguments share one region, so
aliasing is as in native calls and a call sees what the calls before it
wrote); then per call the procedure's number and per parameter a control
value (int64), or a region number and byte offset (and a window's element
strides); -1 ends. The child answers ``sizeof`` its context, each call's
status (it stops at the first failing one), then the context and every
region, which the host copies back into the arrays that were written.

CPU features: each target provides a set (``TARGETS``); a procedure that
needs a feature its target lacks (an AVX2 kernel for aarch64, an fp16 one
for plain ``aarch64``) is refused at ``compile()`` with the target to use.

Why one module of this size: the wire format is written twice, by the
host side in Python and by the generated ``main`` in C; keeping both in
one module keeps them in step.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import struct
import subprocess
import tempfile

from ..core_ir.buffers import written_buffers
from ..core_ir.call_args import CallPlan
from ..core_ir.cpu_features import proc_features
from ..core_ir.types import (C_TYPES, TYPE_NAMES, basetype, is_control,
                             is_window)
from . import build_cache
from .analysis import as_ir
from .emit import _Program
from .runner import (CompileError, ConfigState, cache_dir, context_struct,
                     fp_checked_flags, status_error)


class CrossTarget:
    """One cross target: compilers to try, flags, the qemu command, and
    the CPU features its code may use."""

    def __init__(self, name, compilers, flags, qemu, features, about,
                 needs=()):
        self.name = name
        #: other tools the build needs (clang links RISC-V programs with
        #: the GNU cross toolchain's C library and start files)
        self.needs = tuple(needs)
        self.compilers = compilers
        self.flags = flags
        self.qemu = qemu
        self.features = frozenset(features)
        self.about = about

    def compiler(self, cc=None):
        """The first available compiler command (a list), or None."""
        for c in ([cc] if cc else self.compilers):
            words = shlex.split(c)
            if shutil.which(words[0]):
                return words
        return None

    def missing_tools(self, cc=None):
        """The tools this machine lacks to build and run for the target."""
        out = []
        if self.compiler(cc) is None:
            out.append(cc or " or ".join(c.split()[0]
                                         for c in self.compilers))
        if not shutil.which(self.qemu[0]):
            out.append(self.qemu[0])
        out += [n for n in self.needs if not shutil.which(n)]
        return out


_RV_CPU = "rv64,v=true,vlen={},elen=64,vext_spec=v1.0"
_RV_CC = ["clang-19 --target=riscv64-linux-gnu",
          "clang --target=riscv64-linux-gnu"]

#: the cross targets: NEON on ARMv8-A (``aarch64``), with ARMv8.2-A's
#: half-precision arithmetic (``aarch64-fp16``); RVV 1.0 at a vector
#: length of 128 bits (``riscv64``), 256 bits (``riscv64-vlen256``) and
#: 512 bits (``riscv64-vlen512``): the same executable, CPUs with longer
#: registers.
TARGETS = {
    "aarch64": CrossTarget(
        "aarch64", ["aarch64-linux-gnu-gcc"], ["-march=armv8-a"],
        ["qemu-aarch64", "-cpu", "cortex-a57"], {"neon"},
        "ARMv8-A with NEON (qemu's Cortex-A57)"),
    "aarch64-fp16": CrossTarget(
        "aarch64-fp16", ["aarch64-linux-gnu-gcc"], ["-march=armv8.2-a+fp16"],
        ["qemu-aarch64", "-cpu", "max"], {"neon", "fp16"},
        "ARMv8.2-A with NEON and FP16 arithmetic (qemu's max CPU)"),
    "riscv64": CrossTarget(
        "riscv64", _RV_CC, ["-march=rv64gcv"],
        ["qemu-riscv64", "-cpu", _RV_CPU.format(128)], {"rvv"},
        "RV64GCV, RVV 1.0 with VLEN=128", needs=["riscv64-linux-gnu-gcc"]),
    "riscv64-vlen256": CrossTarget(
        "riscv64-vlen256", _RV_CC, ["-march=rv64gcv"],
        ["qemu-riscv64", "-cpu", _RV_CPU.format(256)], {"rvv"},
        "RV64GCV, RVV 1.0 with VLEN=256", needs=["riscv64-linux-gnu-gcc"]),
    "riscv64-vlen512": CrossTarget(
        "riscv64-vlen512", _RV_CC, ["-march=rv64gcv"],
        ["qemu-riscv64", "-cpu", _RV_CPU.format(512)], {"rvv"},
        "RV64GCV, RVV 1.0 with VLEN=512", needs=["riscv64-linux-gnu-gcc"]),
}

#: features that only cross targets have: a procedure using them cannot be
#: built for the x86 host
CROSS_FEATURES = frozenset().union(*(t.features for t in TARGETS.values()))

_CFLAGS = ["-O2", "-static", "-D", "EXO_HL_TARGET(features)=",
           "-Wall", "-Wextra"]


class CrossToolsMissing(RuntimeError):
    """The cross compiler or qemu-user for a target is not installed."""


def build_hint(feats) -> str:
    """How to build C that needs ``feats``: x86 functions carry target
    attributes; ARM and RISC-V code needs its target's ``-march``."""
    if not CROSS_FEATURES & set(feats):
        return ("each function carries its target attribute: no -m flags "
                "are needed to build it")
    for name, t in TARGETS.items():
        if set(feats) <= t.features:
            return (f"ARM and RISC-V code takes them from -march: build it "
                    f"with {t.compilers[0]} {' '.join(t.flags)}, or here "
                    f"with --target {name}")
    return "no cross target has them all"


def check_target_features(name, needed, target):
    """Refuse (``RuntimeError``) a procedure needing features the target
    lacks, naming a target that has them."""
    t = TARGETS[target]
    lack = frozenset(needed) - t.features
    if not lack:
        return
    better = [n for n, o in TARGETS.items() if frozenset(needed) <= o.features]
    hint = (f"compile(target={better[0]!r}) has them" if better else
            "no target has them all: x86 features run on the host "
            "(target='host')")
    raise RuntimeError(
        f"{name}: target {target!r} ({t.about}) lacks "
        f"{', '.join(sorted(lack))}, which the procedure needs (it uses "
        f"{', '.join(sorted(needed))}); {hint}")


def check_host_target(name, needed, target):
    """A host (x86) build of a procedure that uses NEON or RVV is refused
    with the target to use, before any C compiler sees ``arm_neon.h``."""
    cross = frozenset(needed) & CROSS_FEATURES
    if not cross:
        return
    better = [n for n, o in TARGETS.items() if frozenset(needed) <= o.features]
    raise RuntimeError(
        f"{name} uses {', '.join(sorted(cross))}, which this x86 host "
        f"cannot run; build it with compile(target="
        f"{(better or ['aarch64'])[0]!r}) (cross-compiled, run under "
        f"qemu-user: docs/arm_riscv.md)")


# ----------------------------------------------------------------------------
# the executable


def _win_struct(elem, ndim, const):
    return f"struct exo_win_{ndim}{TYPE_NAMES[elem].replace('R', 'f32')}" \
           f"{'c' if const else ''}"


def _main_source(prog, stem, procs) -> str:
    lines = ["#include <stdint.h>", "#include <stdio.h>",
             "#include <stdlib.h>", "#include <string.h>",
             f'#include "{stem}.h"', "",
             "static void rd(void *p, size_t n) {",
             "    if (n && fread(p, 1, n, stdin) != n) exit(3);", "}",
             "static void wr(const void *p, size_t n) {",
             "    if (n && fwrite(p, 1, n, stdout) != n) exit(4);", "}",
             "static int64_t rd64(void) { int64_t v; rd(&v, 8); return v; }",
             "", "int main(void) {",
             f"    static {stem}_Context ctx;",
             "    int64_t v = (int64_t)sizeof ctx;", "    wr(&v, 8);",
             "    rd(&ctx, sizeof ctx);",
             "    int64_t nreg = rd64();",
             "    unsigned char **reg = calloc((size_t)nreg + 1, "
             "sizeof *reg);",
             "    int64_t *len = calloc((size_t)nreg + 1, sizeof *len);",
             "    if (!reg || !len) exit(5);",
             "    for (int64_t r = 0; r < nreg; r++) {",
             "        len[r] = rd64();",
             "        reg[r] = aligned_alloc(64, ((size_t)len[r] + 64) "
             "/ 64 * 64);",
             "        if (!reg[r]) exit(5);",
             "        rd(reg[r], (size_t)len[r]);", "    }",
             "    int64_t which, st = 0;",
             "    while (st == 0 && (which = rd64()) >= 0) {",
             "        int64_t st = 0;", "        switch (which) {"]
    for k, p in enumerate(procs):
        written = written_buffers(p)
        lines.append(f"        case {k}: {{")
        call = ["&ctx"]
        for j, a in enumerate(p.args):
            t = a.type
            v = f"a{j}"
            if is_control(t):
                ct = C_TYPES[t]
                lines.append(f"            {ct} {v} = ({ct})rd64();")
            else:
                elem = basetype(t)
                ct = C_TYPES[elem]
                lines.append(f"            int64_t r{j} = rd64(), "
                             f"o{j} = rd64();")
                ptr = f"({ct} *)(void *)(reg[r{j}] + o{j})"
                if is_window(t):
                    nd = len(t.hi)
                    ws = _win_struct(elem, nd, a.name not in written)
                    lines.append(f"            {ws} {v};")
                    lines.append(f"            {v}.data = {ptr};")
                    for d in range(nd):
                        lines.append(f"            {v}.strides[{d}] = "
                                     f"(int_fast32_t)rd64();")
                else:
                    lines.append(f"            {ct} *{v} = {ptr};")
            call.append(v)
        fn = prog.fn_names[p]
        invoke = f"{fn}({', '.join(call)})"
        if prog.may_fail(p):
            lines.append(f"            st = {invoke};")
        else:
            lines.append(f"            {invoke};")
        lines += ["            break;", "        }"]
    lines += ["        default: exit(6);", "        }",
              "        wr(&st, 8);", "    }",
              "    wr(&ctx, sizeof ctx);",
              "    for (int64_t r = 0; r < nreg; r++)",
              "        wr(reg[r], (size_t)len[r]);",
              "    return 0;", "}", ""]
    return "\n".join(lines)


def _build(header, source, main, stem, target, cc, cflags):
    """The cached executable of this build (path)."""
    t = TARGETS[target]
    words = t.compiler(cc)
    if t.missing_tools(cc):
        raise CrossToolsMissing(
            f"compile(target={target!r}) needs "
            f"{' and '.join(t.missing_tools(cc))} on PATH (Debian: apt-get "
            f"install gcc-aarch64-linux-gnu qemu-user, or clang-19 "
            f"gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user)")
    flags = fp_checked_flags(
        stem, _CFLAGS + t.flags + (shlex.split(cflags) if cflags else []))
    key = hashlib.sha256("\0".join(
        [header, source, main, " ".join(words), " ".join(flags)]
    ).encode()).hexdigest()[:24]
    d = cache_dir()
    # one file per architecture: the RVV targets (VLEN 128, 256, 512)
    # share it
    exe = build_cache.cached_file(d, stem, key, f".{target.split('-')[0]}")
    if build_cache.is_valid(exe):
        return exe
    with tempfile.TemporaryDirectory(dir=d, prefix="build_") as tmp:
        for name, text in ((stem + ".h", header), (stem + ".c", source),
                           ("exo_hl_main.c", main)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        out = os.path.join(tmp, "prog")
        cmd = words + flags + ["-o", out, stem + ".c", "exo_hl_main.c",
                               "-lm"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError(f"C compilation of '{stem}' for {target} "
                               f"failed:\n$ {' '.join(cmd)}\n{r.stderr}")
        build_cache.store(out, exe)
    return exe




def _byte_span(arr, addr):
    """[lo, hi) bytes an array (non-negative strides) can touch."""
    if arr.size == 0:
        return addr, addr
    hi = addr + sum((d - 1) * s for d, s in zip(arr.shape, arr.strides)) \
        + arr.itemsize
    return addr, hi


class CrossProgram(ConfigState):
    """Procedures built into one executable for a cross target; run calls
    of them under qemu. The procedures share one context (config state),
    as the C functions of one generated file do."""

    def __init__(self, procedures, target, cc=None, cflags=None,
                 stem=None):
        if target not in TARGETS:
            raise ValueError(f"unknown cross target {target!r}; expected "
                             f"one of {', '.join(sorted(TARGETS))}")
        irs = [as_ir(p) for p in procedures]
        for ir in irs:
            if ir.instr is not None:
                raise TypeError(f"'{ir.name}' is an @instr: it has no C "
                                f"function of its own to compile")
            check_target_features(ir.name, proc_features(ir), target)
        self.target = target
        self.procs = irs
        self.plans = {ir: CallPlan(ir) for ir in irs}
        stem = stem or build_cache.build_stem(irs[0].name)
        prog = _Program(irs, stem)
        self.header, self.source = prog.emit()
        self.main_source = _main_source(prog, stem, irs)
        self.configs = prog.configs
        self._fields = prog.config_fields
        self.executable = _build(self.header, self.source, self.main_source,
                                 stem, target, cc, cflags)
        # int_fast32_t is 64-bit on both cross targets (checked at run time)
        self._ctx_type = context_struct(stem, self.configs, self._fields,
                                        ctypes.c_int64)
        self.context = self._ctx_type()

    # -- calls
    def run_many(self, calls):
        """Run ``calls``, a list of ``(procedure, kwargs)`` (or ``(proc,
        args, kwargs)``), in order, in one qemu process; arrays are
        updated in place as by separate calls. Every call's arguments are
        checked before it runs (a call whose shapes or preconditions read
        config state is checked after the calls before it have run)."""
        todo = []
        for c in calls:
            p, args, kw = (c[0], (), c[1]) if len(c) == 2 else c
            ir = as_ir(p)
            if ir not in self.plans:
                raise ValueError(f"'{ir.name}' is not part of this cross "
                                 f"build ({', '.join(q.name for q in self.procs)})")
            if self.plans[ir].reads_config and todo:
                self._run_checked(todo)
                todo = []
            todo.append((ir, self._check(ir, args, kw)))
        if todo:
            self._run_checked(todo)

    def _check(self, ir, args, kwargs):
        return self.plans[ir].check(args, kwargs, int_bits=64,
                                    read_config=self.get_config)

    def _run_checked(self, todo):
        """Run checked calls in one process: the memory of all their
        arguments is sent once (overlapping arguments, also of different
        calls, share a region), so each call sees the ones before it."""
        spans = []
        for c, (ir, checked) in enumerate(todo):
            for k, p in enumerate(self.plans[ir].params):
                if not p.control:
                    lo, hi = _byte_span(checked.values[k],
                                        checked.addresses[k])
                    spans.append([lo, hi, [(c, k, p.written)]])
        spans.sort(key=lambda s: s[0])
        regions = []
        for s in spans:
            if regions and s[0] < regions[-1][1]:
                regions[-1][1] = max(regions[-1][1], s[1])
                regions[-1][2] += s[2]
            else:
                regions.append(s)
        where = {}
        out = [bytes(self.context), struct.pack("<q", len(regions))]
        for r, (lo, hi, uses) in enumerate(regions):
            for c, k, _ in uses:
                where[c, k] = (r, todo[c][1].addresses[k] - lo)
            out.append(struct.pack("<q", hi - lo))
            out.append(ctypes.string_at(lo, hi - lo) if hi > lo else b"")
        for c, (ir, checked) in enumerate(todo):
            out.append(struct.pack("<q", self.procs.index(ir)))
            for k, p in enumerate(self.plans[ir].params):
                if p.control:
                    out.append(struct.pack("<q", int(checked.values[k])))
                    continue
                out.append(struct.pack("<qq", *where[c, k]))
                if p.window:
                    out.append(struct.pack(f"<{len(p.dims)}q",
                                           *checked.strides[p.sym]))
        out.append(struct.pack("<q", -1))
        cmd = TARGETS[self.target].qemu + [self.executable]
        r = subprocess.run(cmd, input=b"".join(out), capture_output=True)
        res = r.stdout
        size = ctypes.sizeof(self._ctx_type)
        pos = 0

        def take(n):
            nonlocal pos
            if pos + n > len(res):
                raise RuntimeError(
                    f"the {self.target} program under qemu stopped early "
                    f"(exit status {r.returncode}): "
                    f"{r.stderr.decode(errors='replace').strip()[:500]}")
            pos += n
            return res[pos - n:pos]
        (csize, ) = struct.unpack("<q", take(8))
        if csize != size:
            raise RuntimeError("context struct layout mismatch between "
                               "ctypes and the target's C compiler")
        failed = None
        for ir, _ in todo:
            (status, ) = struct.unpack("<q", take(8))
            if status:
                failed = (ir, status)
                break
        ctypes.memmove(ctypes.addressof(self.context), take(size), size)
        for lo, hi, uses in regions:
            data = take(hi - lo)
            if hi > lo and any(w for _, _, w in uses):
                ctypes.memmove(lo, data, hi - lo)
        if failed:
            ir, status = failed
            raise status_error(ir.name, status)
        if r.returncode != 0:
            raise RuntimeError(f"the {self.target} program exited with "
                               f"status {r.returncode}: "
                               f"{r.stderr.decode(errors='replace')[:500]}")


class CrossProcedure:
    """``p.compile(target=...)`` for a cross target: call it like the
    procedure; each call runs in a fresh qemu process (``run_many`` runs
    many calls in one)."""

    def __init__(self, procedure, target, cc=None, cflags=None, **opts):
        opts.pop("openmp", None)     # a cross build is serial
        if opts.pop("emulate", None):
            raise ValueError("compile(emulate=True) emulates x86 features "
                             "on x86; a cross target runs under qemu")
        if opts:
            raise TypeError(f"compile() got unknown options: "
                            f"{', '.join(sorted(opts))}")
        self._prog = CrossProgram([procedure], target, cc=cc, cflags=cflags)
        self.proc = self._prog.procs[0]
        self.name = self.proc.name
        self.target = target
        self.cpu_features = proc_features(self.proc)
        self.header, self.source = self._prog.header, self._prog.source
        self.executable = self._prog.executable
        self.context = self._prog.context

    def __repr__(self):
        return (f"<compiled procedure {self.name} for {self.target} "
                f"({self.executable}, run under qemu)>")

    def get_config(self, config, field):
        return self._prog.get_config(config, field)

    def set_config(self, config, field, value):
        self._prog.set_config(config, field, value)

    def __call__(self, *args, **kwargs):
        self._prog.run_many([(self.proc, args, kwargs)])

    def run_many(self, calls):
        """Run many calls (each a dict of keyword arguments) in one qemu
        process."""
        self._prog.run_many([(self.proc, (), kw) for kw in calls])

    def bind(self, *args, **kwargs):
        """As ``CompiledProcedure.bind``: a callable of no arguments that
        runs this call (checked on each run; a cross call starts a
        process anyway)."""
        return lambda: self(*args, **kwargs)


def build_object(c_path, target, cc=None, cflags=None):
    """``exo-hl compile --target``: compile a written ``NAME.c`` to
    ``NAME.o`` beside it with the target's cross compiler; returns (path,
    the command) or raises ``CrossToolsMissing`` / ``CompileError``."""
    t = TARGETS[target]
    words = t.compiler(cc)
    if words is None:
        raise CrossToolsMissing(
            f"--target {target} needs {' or '.join(t.missing_tools(cc))} "
            f"on PATH")
    out = os.path.splitext(c_path)[0] + ".o"
    name = os.path.splitext(os.path.basename(c_path))[0]
    cmd = (words + fp_checked_flags(
        name, ["-O2", "-D", "EXO_HL_TARGET(features)="] + t.flags
        + (shlex.split(cflags) if cflags else [])) + ["-c", c_path, "-o", out])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"$ {' '.join(cmd)}\n{r.stderr}")
    return out, cmd
