"""``p.compile(sanitize=True)``: run the generated C under ASan/UBSan.

A sanitizer runtime cannot be loaded into a running Python (ASan insists on
being the first library of the process and aborts it otherwise), so a
sanitized build is a small *executable*: the generated code plus a ``main()``
that reads the arguments from files, calls the procedure once and writes
back what it wrote. Each call of the returned callable checks its arguments
in Python exactly as ``compile()`` does (``core_ir.call_args``), runs that
executable in a child process on copies of the arrays, and then either
copies the results into the caller's arrays or, when the sanitizer reported
something (or the child died), raises ``SanitizerError`` carrying the report;
the caller's arrays are then left untouched. The Python process is never
at risk.

Where the compiler cannot build or run sanitized programs (no sanitizer
runtime installed, LeakSanitizer unusable...), ``compile(sanitize=...)``
refuses with a ``CompileError`` that says so, before any call.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile

import numpy as np

from ..core_ir.buffers import written_buffers
from ..core_ir.call_args import CallPlan
from ..core_ir.config_values import config_value
from ..core_ir.types import (C_TYPES, is_control, is_real_scalar, is_window)
from ..errors import SanitizerError
from . import build_cache
from .analysis import as_ir
from .emit import _Program
from .host_cpu import FeaturePlan, check_host, missing_features, native_key
from .openmp import openmp_flags
from .runner import (CompileError, cache_dir, flag_candidates,
                     fp_checked_flags, status_error, target_features)

#: ASan/UBSan settings of the child (the user's $ASAN_OPTIONS/$UBSAN_OPTIONS
#: come after, so they win)
_ASAN = "halt_on_error=1:abort_on_error=0:detect_leaks={leaks}"
_UBSAN = "halt_on_error=1:print_stacktrace=1"

_DRIVER_HEAD = r"""/* exo_hl sanitized-run driver: reads the arguments of one call from the
 * directory argv[1], calls the procedure, writes back what it wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "{base}.h"

static const char *exo_dir;

static FILE *exo_open(const char *name, const char *mode) {{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", exo_dir, name);
    FILE *f = fopen(path, mode);
    if (!f) {{
        fprintf(stderr, "exo_hl driver: cannot open %s\n", path);
        exit(3);
    }}
    return f;
}}

static void exo_bad_input(void) {{
    fprintf(stderr, "exo_hl driver: malformed input\n");
    exit(3);
}}

static long long exo_int(FILE *f) {{
    long long v;
    if (fscanf(f, "%lld", &v) != 1) exo_bad_input();
    return v;
}}

static double exo_real(FILE *f) {{
    double v;
    if (fscanf(f, "%la", &v) != 1) exo_bad_input();
    return v;
}}

/* exactly n bytes on the heap (so ASan sees any access outside them) */
static void *exo_load(const char *name, size_t n) {{
    void *p = malloc(n ? n : 1);
    FILE *f = exo_open(name, "rb");
    if (!p || (n && fread(p, 1, n, f) != n)) exo_bad_input();
    fclose(f);
    return p;
}}

static void exo_store(const char *name, const void *p, size_t n) {{
    FILE *f = exo_open(name, "wb");
    if (n && fwrite(p, 1, n, f) != n) exit(3);
    fclose(f);
}}

int main(int argc, char **argv) {{
    if (argc != 2) return 2;
    if (strcmp(argv[1], "--probe") == 0) {{
        void *p = malloc(16);
        free(p);
        printf("%d\n", (int)sizeof(int_fast32_t));
        return 0;
    }}
    exo_dir = argv[1];
    FILE *exo_in = exo_open("scalars", "r");
    {base}_Context exo_ctx;
    memset(&exo_ctx, 0, sizeof exo_ctx);
"""


def _is_real_c(ct) -> bool:
    return ct in ("float", "double", "_Float16")


def driver_source(ir, prog, basename) -> str:
    """The C ``main()`` of a sanitized run of ``ir`` (see the module doc).

    Input ``scalars`` (text, one value per line): every config field, then
    per parameter in order: a control value, or a buffer's byte size followed
    by its element strides when it is a window. Buffer ``k`` is the raw file
    ``b<k>``; written buffers come back as ``b<k>.out``, config fields as
    ``scalars.out``.
    """
    written = written_buffers(ir)
    out = [_DRIVER_HEAD.format(base=basename)]
    fields = [(prog.config_fields[cfg, f], C_TYPES[t])
              for cfg in prog.configs for f, t in cfg.fields()]
    for name, ct in fields:
        read = "exo_real(exo_in)" if _is_real_c(ct) else "exo_int(exo_in)"
        out.append(f"    exo_ctx.{name} = ({ct}){read};")
    call, after = ["&exo_ctx"], []
    for k, a in enumerate(ir.args):
        t = a.type
        if is_control(t):
            ct = C_TYPES[t]
            out.append(f"    {ct} exo_a{k} = ({ct})exo_int(exo_in);")
            call.append(f"exo_a{k}")
            continue
        elem = t if is_real_scalar(t) else t.type
        ct = C_TYPES[elem]
        out.append(f"    size_t exo_n{k} = (size_t)exo_int(exo_in);")
        out.append(f"    {ct} *exo_p{k} = ({ct} *)exo_load(\"b{k}\", exo_n{k});")
        if is_window(t):
            nd = len(t.hi)
            struct = prog.win_struct(elem, nd, a.name not in written)
            out.append(f"    {struct} exo_a{k};")
            out.append(f"    exo_a{k}.data = exo_p{k};")
            for d in range(nd):
                out.append(f"    exo_a{k}.strides[{d}] = "
                           f"(int_fast32_t)exo_int(exo_in);")
            call.append(f"exo_a{k}")
        else:
            call.append(f"exo_p{k}")
        if a.name in written:
            after.append(f"    exo_store(\"b{k}.out\", exo_p{k}, exo_n{k});")
        after.append(f"    free(exo_p{k});")
    out.append("    fclose(exo_in);")
    # a function that may fail returns its status (runner.status_error)
    status = "int exo_status = " if prog.may_fail(ir) else ""
    out.append(f"    {status}{ir.name}({', '.join(call)});")
    out += after
    out.append('    FILE *exo_res = exo_open("scalars.out", "w");')
    out.append(f'    fprintf(exo_res, "%d\\n", '
               f'{"exo_status" if status else "0"});')
    for name, ct in fields:
        if _is_real_c(ct):
            out.append(f'    fprintf(exo_res, "%a\\n", (double)exo_ctx.{name});')
        else:
            out.append(f'    fprintf(exo_res, "%lld\\n", (long long)exo_ctx.{name});')
    out += ["    fclose(exo_res);", "    return 0;", "}", ""]
    return "\n".join(out)


def _child_env(leaks: bool) -> dict:
    env = dict(os.environ)
    ours = _ASAN.format(leaks=1 if leaks else 0)
    env["ASAN_OPTIONS"] = ":".join(
        x for x in (ours, os.environ.get("ASAN_OPTIONS")) if x)
    env["UBSAN_OPTIONS"] = ":".join(
        x for x in (_UBSAN, os.environ.get("UBSAN_OPTIONS")) if x)
    return env


def _build_executable(files: dict, basename, cc, cflags, extra, name,
                      rebuild=False, target=None):
    """Compile ``files`` ({file name: text}; the .c ones are sources) into a
    cached executable; returns its path. Raises CompileError. ``rebuild``:
    replace an existing cache entry (one that cannot run)."""
    candidates = flag_candidates(cflags, target)
    errors = []
    for flags in candidates:
        flag_list = fp_checked_flags(name, shlex.split(flags) + list(extra))
        key = hashlib.sha256("\0".join(
            [*(f"{k}\0{v}" for k, v in sorted(files.items())), cc,
             " ".join(flag_list), native_key(flag_list)]
        ).encode()).hexdigest()[:24]
        d = cache_dir()
        exe = build_cache.cached_file(d, name, key, ".san")
        if not rebuild and build_cache.is_valid(exe):
            return exe
        with tempfile.TemporaryDirectory(dir=d, prefix="build_") as tmp:
            for fname, text in files.items():
                with open(os.path.join(tmp, fname), "w") as f:
                    f.write(text)
            out = os.path.join(tmp, "prog")
            cmd = ([*shlex.split(cc)] + flag_list + ["-o", out] +
                   sorted(f for f in files if f.endswith(".c")) + ["-lm"])
            r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            if r.returncode == 0:
                build_cache.store(out, exe)
                return exe
            errors.append(f"$ {' '.join(cmd)}\n{r.stderr}")
    raise CompileError(
        f"sanitized build of '{basename}' failed: the C compiler '{cc}' "
        f"cannot build it with {' '.join(extra[:1])} (is the sanitizer "
        f"runtime installed? pass cc=... to use another compiler, or "
        f"compile without sanitize):\n{errors[-1]}")


class SanitizedProcedure:
    """A procedure compiled with sanitizers; call it like the procedure.

    Every call runs in a child process (see the module doc). Config state
    is kept here between calls (``get_config``/``set_config``), as in a
    ``CompiledProcedure``.
    """

    def __init__(self, procedure, **opts):
        sanitize = opts.pop("sanitize", True)
        openmp = opts.pop("openmp", None)
        cc = opts.pop("cc", None) or os.environ.get("CC") or "cc"
        cflags = opts.pop("cflags", None)
        emulate = opts.pop("emulate", None)
        target = opts.pop("target", None) or "host"
        flag_candidates(cflags, target)                 # a known target
        lacking = missing_features(target_features(target))
        if lacking:     # each call runs the build: it must run here
            raise RuntimeError(
                f"compile(sanitize=..., target={target!r}): the build runs "
                f"on this CPU, which lacks {', '.join(sorted(lacking))}")
        if opts:
            raise TypeError(f"compile() got unknown options: "
                            f"{', '.join(sorted(opts))}")
        ir = as_ir(procedure)
        if ir.instr is not None:
            raise TypeError(f"'{ir.name}' is an @instr: it has no C function "
                            f"of its own to compile")
        self.proc = ir
        self._plan = CallPlan(ir)
        self.name = ir.name
        plan = FeaturePlan(ir, emulate)
        self.cpu_features = plan.needed
        self.emulated = plan.emulated
        self.missing_features = plan.missing
        stem = build_cache.build_stem(ir.name)   # names the build's files
        prog = _Program([ir], stem, emulated=self.emulated)
        self.header, self.source = prog.emit()
        self.driver = driver_source(ir, prog, stem)
        self.configs = prog.configs
        self._config = {(cfg, f): 0 for cfg in self.configs
                        for f, _ in cfg.fields()}
        self._written = written_buffers(ir)
        kinds = "address,undefined" if sanitize is True else str(sanitize)
        self.sanitizers = kinds
        extra = [f"-fsanitize={kinds}", "-fno-sanitize-recover=all",
                 "-fno-omit-frame-pointer", "-g"]
        extra += openmp_flags(ir, cc, openmp)
        extra += plan.flags()
        files = {stem + ".h": self.header, stem + ".c": self.source,
                 "exo_hl_driver.c": self.driver}
        self.executable_path = _build_executable(files, ir.name, cc, cflags,
                                                 extra, ir.name,
                                                 target=target)
        try:
            self._leaks, self._int_bits = self._probe(cc)
        except (OSError, CompileError):
            # a cache entry that cannot be executed (truncated, corrupted):
            # build it again, once
            self.executable_path = _build_executable(
                files, ir.name, cc, cflags, extra, ir.name, rebuild=True,
                target=target)
            self._leaks, self._int_bits = self._probe(cc)

    def __repr__(self):
        return (f"<sanitized procedure {self.name} ({self.sanitizers}; "
                f"{self.executable_path})>")

    def _probe(self, cc):
        """Can the executable run here? LeakSanitizer needs ptrace-like
        access some sandboxes deny: then run without leak checking."""
        problems = []
        for leaks in (True, False):
            r = subprocess.run([self.executable_path, "--probe"],
                               capture_output=True, text=True,
                               env=_child_env(leaks))
            if r.returncode == 0:
                return leaks, 8 * int(r.stdout.split()[0])
            problems.append(r.stderr.strip())
        raise CompileError(
            f"the sanitized build of '{self.name}' (compiled with '{cc}') "
            f"cannot run on this machine:\n{problems[-1]}")

    # -- config state
    def get_config(self, config, field):
        return self._config[(config, field)]

    def set_config(self, config, field, value):
        if (config, field) not in self._config:
            raise KeyError(f"'{self.name}' does not use {config.name()}."
                           f"{field}")
        self._config[(config, field)] = config_value(config, field, value)

    # -- calling
    def __call__(self, *args, **kwargs):
        check_host(self.name, self.cpu_features, self.missing_features,
                   self.emulated)
        checked = self._plan.check(args, kwargs,
                                   int_bits=self._int_bits,
                                   read_config=self.get_config)
        with tempfile.TemporaryDirectory(prefix="exo_hl_san_") as tmp:
            lines = [self._scalar_text(v) for v in self._config.values()]
            staged = {}
            for k, (a, v) in enumerate(zip(self.proc.args, checked.values)):
                if is_control(a.type):
                    lines.append(str(int(v)))
                    continue
                buf, view = _stage(v)
                buf.tofile(os.path.join(tmp, f"b{k}"))
                staged[k] = (a, v, buf, view)
                lines.append(str(buf.nbytes))
                if is_window(a.type):
                    lines += [str(s // v.itemsize) for s in v.strides]
            with open(os.path.join(tmp, "scalars"), "w") as f:
                f.write("\n".join(lines) + "\n")
            r = subprocess.run([self.executable_path, tmp],
                               capture_output=True, text=True,
                               env=_child_env(self._leaks))
            if r.returncode != 0:
                report = (r.stderr or r.stdout).strip()
                how = (f"was killed by signal {-r.returncode}"
                       if r.returncode < 0
                       else f"exited with status {r.returncode}")
                raise SanitizerError(
                    f"procedure '{self.name}': the sanitized run "
                    f"({self.sanitizers}) {how}; the arguments were not "
                    f"updated. Report:\n{report}", report)
            # everything read back before anything is copied out
            results = {}
            for k, (a, v, buf, view) in staged.items():
                if a.name in self._written:
                    back = np.fromfile(os.path.join(tmp, f"b{k}.out"),
                                       dtype=buf.dtype)
                    results[k] = np.lib.stride_tricks.as_strided(
                        back, shape=view.shape, strides=view.strides)
            with open(os.path.join(tmp, "scalars.out")) as f:
                status, *cfg_vals = f.read().split()
        if int(status):
            raise status_error(self.name, int(status))
        for k, res in results.items():
            staged[k][1][...] = res
        for key, text in zip(list(self._config), cfg_vals):
            self._config[key] = self._parse_scalar(key, text)

    @staticmethod
    def _scalar_text(v):
        if isinstance(v, (float, np.floating)):
            return float(v).hex()
        return str(int(v))

    @staticmethod
    def _parse_scalar(key, text):
        cfg, field = key
        ct = C_TYPES[cfg.lookup_type(field)]
        if _is_real_c(ct):
            return float.fromhex(text.replace("-nan", "nan"))
        v = int(text)
        return bool(v) if ct == "bool" else v


def _stage(v):
    """(a fresh contiguous buffer holding every byte ``v`` spans, ``v``'s
    layout as a view of that buffer)."""
    if v.size == 0:
        buf = np.zeros(0, v.dtype)
        return buf, buf.reshape(v.shape)
    span = sum((n - 1) * s for n, s in zip(v.shape, v.strides)) + v.itemsize
    buf = np.zeros(span // v.itemsize, v.dtype)
    view = np.lib.stride_tricks.as_strided(buf, shape=v.shape,
                                           strides=v.strides)
    view[...] = v
    return buf, view
