"""The C backend: procedures -> a readable ``.c`` / ``.h`` pair (docs/api.md §5).

One ``_Program`` (here) collects whole-program facts (reached procedures,
configs, window struct types, helpers needed) and lays out the two files;
one ``ProcEmitter`` per procedure (``proc_emit``, with the expression
printer ``expr_emit``) prints its body; ``checks`` holds the names C may
use and every refusal. Memories, instructions and externs are user
libraries: we only call their C-text hooks. Index arithmetic is printed so
that it cannot overflow for any in-bounds access (offsets are formed in
``ptrdiff_t``) and integer floor division/modulo of possibly-negative
values go through small helpers. Data arithmetic follows docs/semantics.md
(``arith.py`` prints it without undefined behaviour), and every control
expression is evaluated where the IR evaluates it, once (``once``).
"""
from __future__ import annotations

import os
import re

from ..core_ir.cpu_features import proc_features, target_attribute_text
from ..core_ir.types import (C_TYPES, TYPE_NAMES, basetype, is_real_scalar,
                             is_tensor_or_window, is_window)
from ..core_ir.buffers import written_buffers
from ..errors import MemGenError, located
from . import arith as A
from .analysis import (aliased_params, as_ir, configs_used,
                       all_procs_incl_instrs, reached_procs)
from .c_reserved import program_names
from .fp_mode import FP_MODE_CHECKS
from .checks import (check_basename, fresh_c_name, param_c_names,
                     public_fn_names)
from .openmp import OPENMP_FLAG, has_par_loops
from .proc_emit import ProcEmitter as _ProcEmitter
from .hardware_fields import check_hardware_fields
from .memory_rules import check_memory_rules
from .stack import check_stack

# ----------------------------------------------------------------------------
# public entry points


def compile_procs(procs, out_dir, basename):
    """Write ``basename.c`` and ``basename.h`` into ``out_dir``.

    >>> compile_procs([sgemm, saxpy], "build", "kernels")   # kernels.c, .h
    """
    header, source = generate(procs, basename)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, basename + ".h"), "w") as f:
        f.write(header)
    with open(os.path.join(out_dir, basename + ".c"), "w") as f:
        f.write(source)


def c_code_str(procs, basename=None) -> str:
    """Header then source, as one string (what ``compile_procs`` writes)."""
    irs = [as_ir(p) for p in procs]
    if basename is None:
        # the first procedure's name, as compile() uses it, when it can
        # name files too (not 'café': C accepts it, file stems here not)
        name = irs[0].name if irs else ""
        basename = name if re.fullmatch(r"[A-Za-z_]\w*", name, re.ASCII) \
            else "exo_out"
    header, source = generate(irs, basename)
    return header + "\n" + source


def generate(procs, basename):
    """(header text, source text) for ``procs`` and everything they call."""
    check_basename(basename)
    return _Program([as_ir(p) for p in procs], basename).emit()


_ASSUME_MACRO = """\
/* Preconditions are promises to the optimizer, not run-time checks. */
#ifndef EXO_ASSUME
#if defined(__clang__)
#define EXO_ASSUME(cond) __builtin_assume(cond)
#elif defined(__GNUC__)
#define EXO_ASSUME(cond) do { if (!(cond)) __builtin_unreachable(); } while (0)
#else
#define EXO_ASSUME(cond) ((void)(cond))
#endif
#endif
"""

#: the helpers are marked side-effect free, so that a precondition using
#: them can still be an optimizer assumption (clang's -Wassume)
_FLOOR_COMMENT = """\
/* Floor division / modulo by a positive constant (Python semantics). */
#ifndef EXO_CONST_FN
#if defined(__GNUC__)
#define EXO_CONST_FN __attribute__((const))
#else
#define EXO_CONST_FN
#endif
#endif"""

#: emitted only when a par loop is outlined (outline.py)
_OMP_PROTOTYPES = """\
#ifdef _OPENMP
/* The OpenMP runtime functions used (declared here: <omp.h> is not always
   installed where the compiler accepts -fopenmp). */
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
#endif
"""

#: emitted only when a par loop is outlined (outline.py)
_SHARE_HELPER = """\
/* The first iteration of block t of T nearly equal consecutive blocks of
   [lo, hi) (OpenMP's static schedule): a par loop's share for thread t. */
static inline int_fast32_t exo_hl_share(int_fast32_t lo, int_fast32_t hi,
                                        int_fast32_t t, int_fast32_t T) {
    if (hi <= lo)
        return lo;
    return (int_fast32_t)(lo + ((int64_t)hi - lo) * t / T);
}
"""

#: emitted only when a par_dynamic loop is outlined (outline.py)
_CLAIM_HELPER = """\
/* The next iteration of a par_dynamic loop, counted from 0: the threads
   running it share *next and each takes the next one it finds (OpenMP's
   dynamic schedule, written out; serial code without OpenMP). */
static inline int64_t exo_hl_claim(int64_t *next) {
    int64_t k;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
    k = (*next)++;
    return k;
}
"""

#: emitted only when used (clang warns on unused static functions)
_FLOOR_HELPERS = {
    "exo_floor_div": """\
EXO_CONST_FN static inline int_fast32_t exo_floor_div(int_fast32_t a, int_fast32_t b) {
    int_fast32_t q = a / b;
    return (a % b < 0) ? q - 1 : q;
}
""",
    "exo_floor_mod": """\
EXO_CONST_FN static inline int_fast32_t exo_floor_mod(int_fast32_t a, int_fast32_t b) {
    int_fast32_t r = a % b;
    return (r < 0) ? r + b : r;
}
"""}



def ctype(t) -> str:
    return C_TYPES[basetype(t)]


def _type_tag(t) -> str:
    return TYPE_NAMES[basetype(t)].replace("R", "f32")


# ----------------------------------------------------------------------------
# the program


_TARGET_MACRO = """\
/* Functions that use CPU-specific instructions carry their own target, so a
   plain `cc -O2` build compiles them; run them only on CPUs that have it.
   Other CPUs (ARM, RISC-V) take their features from the build's -march. */
#ifndef EXO_HL_TARGET
#if (defined(__GNUC__) || defined(__clang__)) && \\
    (defined(__x86_64__) || defined(__i386__))
#define EXO_HL_TARGET(features) __attribute__((target(features)))
#else
#define EXO_HL_TARGET(features)
#endif
#endif
"""


#: first in every source file: a*b + c is two roundings, as interpret()
#: computes it (docs/semantics.md, "Contraction"). gcc ignores (and warns
#: about) the standard pragma, and fuses by default in its GNU modes, so it
#: gets its own; fused multiply-adds remain where an instruction asks.
_NO_CONTRACT = """\
/* No floating-point contraction: a*b + c rounds twice, as exo_hl computes it. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#else
#pragma STDC FP_CONTRACT OFF
#endif
"""


#: emitted when a heap allocation uses it (DRAM.alloc)
_HEAP_HELPER = """\
/* n = dims[0] * ... * dims[k-1] elements of elem bytes on the heap, or NULL
   with *status |= 1 when the byte count overflows size_t, |= 2 when malloc
   fails (the caller frees what it holds and returns *status). The block
   starts on a 64-byte cache line (aligned_alloc, the size rounded up to a
   multiple of 64 as C11 asks): malloc's 16 bytes made every other vector
   load of a buffer read with 64-byte loads straddle two lines. */
static inline void *exo_hl_malloc(int *status, size_t elem, int k,
                                  const size_t *dims) {
    size_t bytes = elem;
    for (int i = 0; i < k; i++) {
        if (dims[i] != 0 && bytes > SIZE_MAX / dims[i]) {
            *status |= 1;
            return NULL;
        }
        bytes *= dims[i];
    }
    if (bytes > SIZE_MAX - 63) {    /* no block that large exists */
        *status |= 2;
        return NULL;
    }
    void *p = aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
    if (p == NULL)
        *status |= 2;
    return p;
}
"""


def _too_deep(p):
    """(the frontend keeps expressions shallow; IR built by hand or by a
    rewrite may not be)"""
    return MemGenError(located(
        "an expression is nested too deeply to compile; split it with "
        "intermediate variables", p.srcinfo, p.name))


class _Program:
    def __init__(self, publics, basename, emulated=frozenset()):
        """``emulated``: CPU features supplied by an emulation layer at
        build time; they are left out of target attributes so the compiler
        never emits those instructions natively."""
        self.basename = basename
        self.emulated = frozenset(emulated)
        self.ctx_name = f"{basename}_Context"
        self.publics = []
        for p in publics:
            if p.instr is None and p not in self.publics:
                self.publics.append(p)
        try:
            self.order = reached_procs(self.publics)
            self.everything = all_procs_incl_instrs(self.publics)
            self.aliased = aliased_params(self.order)
            self.configs = configs_used(self.everything)
        except RecursionError:
            raise _too_deep(self.publics[0]) from None
        self.win_structs = {}       # name -> (elem ctype, ndim, const)
        self.claimed = set()        # outlined par_dynamic functions: they
        #                             take a counter (outline.py)
        self.globals = {}           # ordered set of C text emitted once
        self.need_assume = False
        self.need_floor = False
        self.need_math = False
        self.need_stddef = False
        # C function names: publics keep theirs, static helpers get unique ones
        self.fn_names = public_fn_names(self.publics, basename)
        taken = set(self.fn_names.values()) | program_names(basename)
        for p in self.order:
            if p in self.fn_names:
                continue
            self.fn_names[p] = fresh_c_name(p.name, taken)
            taken.add(self.fn_names[p])
        self.fn_name_set = taken
        # context struct members: macros apply to them too, and two configs
        # may share a name
        self.config_fields = {}     # (config, field) -> C member name
        for cfg in self.configs:
            for f, _ in cfg.fields():
                self.config_fields[cfg, f] = fresh_c_name(
                    cfg.c_struct_field(f), set(self.config_fields.values()))
        self._may_fail = {}
        self.features = {p: proc_features(p) for p in self.order}
        self.all_features = frozenset().union(*self.features.values())

    def may_fail(self, proc) -> bool:
        """Whether ``proc``'s C function returns a status: its C tests one
        (a checked heap allocation, DRAM's, or a call of such a function;
        docs/api.md, C ABI). Known once its body is printed, which is
        before any caller's (callees are printed first)."""
        return self._may_fail.get(proc, False)

    def target_prefix(self, proc) -> str:
        """``EXO_HL_TARGET("...")`` on its own line, for a function that
        needs CPU features; empty otherwise."""
        feats = self.features.get(proc, frozenset()) - self.emulated
        if not feats:
            return ""
        return f'EXO_HL_TARGET("{target_attribute_text(feats)}")\n'

    # -- window struct types
    def win_struct(self, elem_t, ndim, const) -> str:
        name = f"exo_win_{ndim}{_type_tag(elem_t)}{'c' if const else ''}"
        self.win_structs[name] = (C_TYPES[basetype(elem_t)], ndim, const)
        return f"struct {name}"

    def add_global(self, text):
        if text and text.strip():
            self.globals.setdefault(text.strip("\n") + "\n", None)

    # -- signatures
    def param_decl(self, proc, a, in_header):
        t = a.type
        const = a.name not in written_buffers(proc)
        restrict = "" if in_header or a.name in self.aliased.get(proc, ()) \
            else "restrict "
        name = param_c_names(proc, self.fn_name_set)[a.name]
        if is_window(t):
            return f"{self.win_struct(t.type, len(t.hi), const)} {name}"
        if is_tensor_or_window(t) or is_real_scalar(t):
            q = "const " if const else ""
            return f"{q}{ctype(t)} *{restrict}{name}"
        return f"{C_TYPES[t]} {name}"

    def signature(self, proc, in_header):
        params = [f"{self.ctx_name} *ctxt"]
        params += [self.param_decl(proc, a, in_header) for a in proc.args]
        if proc in self.claimed:
            params.append("int64_t *exo_hl_next")
        static = "" if proc in self.publics or in_header else "static "
        target = "" if in_header else self.target_prefix(proc)
        ret = "int" if self.may_fail(proc) else "void"
        head = f"{static}{ret} {self.fn_names[proc]}("
        one_line = head + ", ".join(params) + ")"
        if len(one_line) <= 80:
            return target + one_line
        # one parameter per line keeps long signatures readable
        pad = " " * len(head)
        return target + head + (",\n" + pad).join(params) + ")"

    # -- output
    def emit(self, progress=None):
        """(header, source); ``progress``: a ``progress.Progress`` to
        advance by each procedure's statement count (else one of its own:
        a bar on a terminal when the procedures are large)."""
        from ..progress import Progress, statement_count
        check_stack(self.publics)
        check_memory_rules(self.order)
        check_hardware_fields(self.order)
        sizes = [statement_count(p) for p in self.order]
        bar = progress or Progress(sum(sizes), f"exo_hl: C for {self.basename}")
        bodies = []
        try:
            for p, n in zip(self.order, sizes):
                try:
                    e = _ProcEmitter(self, p)
                    body = e.emit()
                    bodies += e.outlined + [body]
                except RecursionError:
                    raise _too_deep(p) from None
                bar.advance(n, f"exo_hl: C for {p.name}")
        finally:
            if progress is None:
                bar.close()
        protos = [self.signature(p, True) + ";" for p in self.publics]
        header = self._header(protos)
        return header, self._source(bodies)

    def _context_struct(self):
        fields = []
        for cfg in self.configs:
            for f, t in cfg.fields():
                fields.append(f"    {C_TYPES[t]} {self.config_fields[cfg, f]};")
        if not fields:
            fields.append("    char unused_;  /* no config state; C forbids "
                          "empty structs */")
        return (f"typedef struct {self.ctx_name} {{\n" + "\n".join(fields)
                + f"\n}} {self.ctx_name};\n")

    def _header(self, protos):
        guard = re.sub(r"[^A-Za-z0-9]", "_", self.basename).upper() + "_H"
        out = ["/* Generated by exo_hl. Do not edit. */"]
        if has_par_loops(self.order):
            out.append(f"/* Has OpenMP parallel loops: build with "
                       f"{OPENMP_FLAG} to run them in parallel (without it "
                       f"they run serially). */")
        out += [f"#ifndef {guard}", f"#define {guard}", "",
                *self._features_comment(),
                "#include <stdint.h>", "#include <stdbool.h>", "",
                "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
        for name, (ct, n, const) in sorted(self.win_structs.items()):
            g = name.upper() + "_DEFINED"
            q = "const " if const else ""
            out += [f"#ifndef {g}", f"#define {g}",
                    f"struct {name} {{", f"    {q}{ct} *data;",
                    f"    int_fast32_t strides[{n}];", "};", "#endif", ""]
        out.append(self._context_struct())
        if protos:
            out.append("/* Pointer arguments of one call must not overlap "
                       "(they are restrict). */")
        out += protos
        out += ["", "#ifdef __cplusplus", "}", "#endif", "",
                f"#endif  /* {guard} */", ""]
        return "\n".join(out)

    def _features_comment(self):
        if not self.all_features:
            return []
        return [f"/* CPU features needed: "
                f"{', '.join(sorted(self.all_features))}. On x86 the "
                f"functions that use them",
                "   carry target attributes, so no -m flags are needed to "
                "build; ARM and RISC-V",
                "   builds take them from -march (docs/arm_riscv.md). Call "
                "them only on CPUs",
                "   that have these features. */"]

    def _source(self, bodies):
        out = [_NO_CONTRACT, FP_MODE_CHECKS,
               f'#include "{self.basename}.h"', ""]
        # a library's helper (a global) may carry a target of its own
        if any(self.target_prefix(p) for p in self.order) or any(
                "EXO_HL_TARGET(" in g for g in self.globals):
            out.append(_TARGET_MACRO)
        incs = []
        if self.need_stddef:
            incs.append("#include <stddef.h>")
        if self.need_math:
            incs.append("#include <math.h>")
        if incs:
            out += incs + [""]
        outlined = any("exo_hl_share(" in b or "exo_hl_claim(" in b
                       for b in bodies)
        if outlined:
            out.append(_OMP_PROTOTYPES)
        for g in self.globals:
            out.append(g)
        if self.need_assume:
            out.append(_ASSUME_MACRO)
        if self.need_floor:
            out.append(_FLOOR_COMMENT)
            out += [h for fn, h in _FLOOR_HELPERS.items()
                    if any(f"{fn}(" in b for b in bodies)]
        if any("exo_hl_share(" in b for b in bodies):
            out.append(_SHARE_HELPER)
        if any("exo_hl_claim(" in b for b in bodies):
            out.append(_CLAIM_HELPER)
        if any("exo_hl_malloc(" in b for b in bodies):
            out.append(_HEAP_HELPER)
        out += A.helper_texts(bodies)
        out += bodies
        return "\n".join(out).rstrip("\n") + "\n"


