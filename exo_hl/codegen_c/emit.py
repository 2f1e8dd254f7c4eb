"""The C backend: procedures -> a readable ``.c`` / ``.h`` pair (docs/api.md §5).

One ``_Program`` collects whole-program facts (reached procedures, configs,
window struct types, helpers needed); one ``_ProcEmitter`` per procedure
prints its body. Memories, instructions and externs are user libraries: we
only call their C-text hooks. Index arithmetic is printed so that it cannot
overflow for any in-bounds access (offsets are formed in ``ptrdiff_t``) and
integer floor division/modulo of possibly-negative values go through small
helpers. Data arithmetic follows docs/semantics.md (``arith.py`` prints it
without undefined behaviour), and every control expression is evaluated
where the IR evaluates it, once (``once``).
"""
from __future__ import annotations

import os
import re

from ..core_ir.cpu_features import proc_features, target_attribute_text
from ..core_ir.memory import DRAM, CExpr, Memory
from ..core_ir.nodes import IR
from ..core_ir.types import (C_TYPES, TYPE_NAMES, basetype, is_control,
                             is_data, is_real_scalar, is_tensor_or_window,
                             is_window, shape as type_shape)
from ..errors import ExoTypeError, MemGenError, located
from ..core_ir.traversal import walk
from ..core_ir.buffers import written_buffers
from ..core_ir.state import config_reads, config_writes
from ..core_ir.syms import Sym
from . import arith as A
from ..core_ir import datasem as D
from .analysis import (aliased_params, as_ir, configs_used,
                       all_procs_incl_instrs, reached_procs)
from .openmp import OPENMP_FLAG, has_par_loops

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
        basename = irs[0].name if irs else "exo_out"
    header, source = generate(irs, basename)
    return header + "\n" + source


def generate(procs, basename):
    """(header text, source text) for ``procs`` and everything they call."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", basename):
        raise ValueError(f"basename {basename!r} is not a valid C identifier")
    return _Program([as_ir(p) for p in procs], basename).emit()


# ----------------------------------------------------------------------------
# C naming

_C_RESERVED = set("""
auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while _Bool _Complex
_Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert
_Thread_local bool true false NULL main malloc calloc realloc free abort exit
printf fprintf stdin stdout stderr memcpy memset sin cos tan sqrt exp log fabs
fmin fmax floor ceil pow sinf cosf sqrtf expf fabsf fminf fmaxf int8_t uint8_t
int16_t uint16_t int32_t uint32_t int64_t uint64_t int_fast32_t int_fast64_t
size_t ptrdiff_t asm typeof class new delete this template namespace operator
private public protected virtual friend try catch throw ctxt
trunc truncf round roundf lround rint nearbyint floorf ceilf powf logf log2
log10 exp2 expm1 log1p sinh cosh tanh asin acos atan atan2 cbrt hypot fma fmaf
fmod remainder copysign erf tgamma abs labs strlen strcmp puts putchar exit
""".split())

def _fresh_c_name(base: str, in_use) -> str:
    """A C identifier for ``base`` that is neither reserved nor in use."""
    return _fresh_c_name_k(base, in_use)[0]


def _fresh_c_name_k(base: str, in_use, first_k: int = 1):
    """(name, base, k): ``base`` itself (k = 0) or the first free
    ``base_k`` with k >= ``first_k`` (every ``base_j``, j < first_k, must
    be taken)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        base = "v"
    name, k = base, 0
    if name in in_use or name in _C_RESERVED:
        k = first_k
        name = f"{base}_{k}"
        while name in in_use or name in _C_RESERVED:
            k += 1
            name = f"{base}_{k}"
    return name, base, k


def param_c_names(proc, taken) -> dict:
    """{arg Sym: C parameter name}: the same names the body emitter binds,
    since it binds the arguments first, in order, avoiding ``taken``
    (the file's function names)."""
    names, in_use = {}, set(taken)
    for a in proc.args:
        names[a.name] = _fresh_c_name(a.name.name, in_use)
        in_use.add(names[a.name])
    return names


_PREC_OR, _PREC_AND, _PREC_EQ, _PREC_CMP, _PREC_ADD, _PREC_MUL = 1, 2, 3, 4, 5, 6
_PREC_UNARY, _PREC_ATOM = 7, 8
_BIN_PREC = {"or": _PREC_OR, "and": _PREC_AND, "==": _PREC_EQ, "!=": _PREC_EQ,
             "<": _PREC_CMP, "<=": _PREC_CMP, ">": _PREC_CMP, ">=": _PREC_CMP,
             "+": _PREC_ADD, "-": _PREC_ADD, "*": _PREC_MUL, "/": _PREC_MUL,
             "%": _PREC_MUL}
_C_OP = {"or": "||", "and": "&&"}
#: integer element types by width (all narrower than C's int, or int itself)
_INT_BITS = {IR.I8: 8, IR.UI8: 8, IR.I16: 16, IR.UI16: 16, IR.I32: 32}

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


def _uses_default_window(mem) -> bool:
    """Memories that keep the flat-array window() get our readable indexing."""
    return getattr(mem.window, "__func__", None) is getattr(
        Memory.window, "__func__", None)


def ctype(t) -> str:
    return C_TYPES[basetype(t)]


def _type_tag(t) -> str:
    return TYPE_NAMES[basetype(t)].replace("R", "f32")


# ----------------------------------------------------------------------------
# the program


_TARGET_MACRO = """\
/* Functions that use CPU-specific instructions carry their own target, so a
   plain `cc -O2` build compiles them; run them only on CPUs that have it. */
#ifndef EXO_HL_TARGET
#if defined(__GNUC__) || defined(__clang__)
#define EXO_HL_TARGET(features) __attribute__((target(features)))
#else
#define EXO_HL_TARGET(features)
#endif
#endif
"""


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
        self.order = reached_procs(self.publics)
        self.everything = all_procs_incl_instrs(self.publics)
        self.aliased = aliased_params(self.order)
        self.configs = configs_used(self.everything)
        self.win_structs = {}       # name -> (elem ctype, ndim, const)
        self.globals = {}           # ordered set of C text emitted once
        self.need_assume = False
        self.need_floor = False
        self.need_math = False
        self.need_stddef = False
        # C function names: publics keep theirs, static helpers get unique ones
        self.fn_names = {}
        taken = set()
        for p in self.publics:
            if p.name in taken:
                raise ValueError(f"two different public procedures are named "
                                 f"'{p.name}'")
            if p.name in _C_RESERVED:
                raise ValueError(
                    f"procedure '{p.name}' cannot be exported to C: its name "
                    f"is a C keyword or standard-library name; give it "
                    f"another with p.rename(...)")
            self.fn_names[p] = p.name
            taken.add(p.name)
        for p in self.order:
            if p in self.fn_names:
                continue
            name, k = p.name, 1
            while name in taken or name in _C_RESERVED:
                name, k = f"{p.name}_{k}", k + 1
            self.fn_names[p] = name
            taken.add(name)
        self.fn_name_set = taken
        self.features = {p: proc_features(p) for p in self.order}
        self.all_features = frozenset().union(*self.features.values())

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
        static = "" if proc in self.publics or in_header else "static "
        target = "" if in_header else self.target_prefix(proc)
        head = f"{static}void {self.fn_names[proc]}("
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
        sizes = [statement_count(p) for p in self.order]
        bar = progress or Progress(sum(sizes), f"exo_hl: C for {self.basename}")
        bodies = []
        try:
            for p, n in zip(self.order, sizes):
                bodies.append(_ProcEmitter(self, p).emit())
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
                fields.append(f"    {C_TYPES[t]} {cfg.c_struct_field(f)};")
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
                f"{', '.join(sorted(self.all_features))}. The functions that "
                f"use them carry",
                "   target attributes, so no -m flags are needed to build; "
                "call them only on",
                "   CPUs that have these features. */"]

    def _source(self, bodies):
        out = [f'#include "{self.basename}.h"', ""]
        if any(self.target_prefix(p) for p in self.order):
            out.append(_TARGET_MACRO)
        incs = []
        if self.need_stddef:
            incs.append("#include <stddef.h>")
        if self.need_math:
            incs.append("#include <math.h>")
        if incs:
            out += incs + [""]
        for g in self.globals:
            out.append(g)
        if self.need_assume:
            out.append(_ASSUME_MACRO)
        if self.need_floor:
            out.append(_FLOOR_COMMENT)
            out += [h for fn, h in _FLOOR_HELPERS.items()
                    if any(f"{fn}(" in b for b in bodies)]
        out += A.helper_texts(bodies)
        out += bodies
        return "\n".join(out).rstrip("\n") + "\n"


# ----------------------------------------------------------------------------
# buffers in scope


class _Buf:
    """How a buffer is reached from C: its C name, kind and layout."""

    __slots__ = ("cname", "kind", "elem", "mem", "shape", "const", "struct")

    def __init__(self, cname, kind, elem, mem, shape=(), const=False,
                 struct=None):
        self.cname = cname
        self.kind = kind          # 'tensor' | 'window' | 'scalar_ptr' | 'scalar'
        self.elem = elem          # IR element type
        self.mem = mem
        self.shape = shape        # tuple of (IR expr) sizes, for tensors
        self.const = const
        self.struct = struct      # window struct type, for windows


def _is_const_int(e):
    return isinstance(e, IR.Const) and type(e.val) is int


class _ProcEmitter:
    def __init__(self, prog: _Program, proc):
        self.prog = prog
        self.proc = proc
        self.lines = []
        self.names = {}         # Sym -> C name
        self.in_use = set(prog.fn_name_set)
        self.next_k = {}        # base name -> least k whose base_k may be free
        self.suffixed = {}      # C name base_k -> (base, k)
        self.bufs = {}          # Sym -> _Buf
        self.nonneg = set()     # control syms known >= 0
        self.read_names = set()  # C names read (for unused-variable hygiene)
        self.hoisted = set()     # C names of locals made by once()

    # -- errors
    def _err(self, cls, msg, node):
        raise cls(located(msg, getattr(node, "srcinfo", None), self.proc.name))

    # -- names
    def bind(self, sym) -> str:
        # next_k[base]: every base_j with j below it is taken, so binding n
        # symbols of one spelling costs O(n), not O(n^2)
        name, base, k = _fresh_c_name_k(sym.name, self.in_use,
                                        self.next_k.get(sym.name, 1))
        if k:
            self.next_k[base] = k + 1
            self.suffixed[name] = (base, k)
        self.in_use.add(name)
        self.names[sym] = name
        return name

    def unbind(self, sym):
        name = self.names.pop(sym, None)
        if name is not None:
            self.in_use.discard(name)
            base, k = self.suffixed.pop(name, (None, 0))
            if k and k < self.next_k.get(base, 1):
                self.next_k[base] = k
        self.bufs.pop(sym, None)
        self.nonneg.discard(sym)

    def cname(self, sym, node=None):
        try:
            return self.names[sym]
        except KeyError:
            self._err(MemGenError, f"'{sym.name}' is not in scope", node)

    # -- whole procedure
    def emit(self):
        p, prog = self.proc, self.prog
        written = written_buffers(p)
        for a in p.args:
            self.bind(a.name)
        for a in p.args:
            name = self.names[a.name]
            t = a.type
            if is_window(t):
                const = a.name not in written
                self.bufs[a.name] = _Buf(
                    name, "window", t.type, a.mem or DRAM, t.hi, const,
                    prog.win_struct(t.type, len(t.hi), const))
            elif is_tensor_or_window(t):
                self.bufs[a.name] = _Buf(name, "tensor", t.type, a.mem or DRAM,
                                         t.hi, a.name not in written)
            elif is_real_scalar(t):
                self.bufs[a.name] = _Buf(name, "scalar_ptr", t, a.mem or DRAM,
                                         (), a.name not in written)
            elif t is IR.Size:
                self.nonneg.add(a.name)
        body = []
        self.lines = body
        for a in p.args:
            buf = self.bufs.get(a.name)
            if buf is not None and buf.kind == "tensor":
                # sizes as they are at entry (they may read config state)
                buf.shape = tuple(self.once(h, f"{buf.cname}_n{d}", 1)
                                  for d, h in enumerate(buf.shape))
        for pred in p.preds:
            self.check_precision(pred)
            prog.need_assume = True
            self.line(1, f"EXO_ASSUME({self.expr(pred)});")
        self.block(p.body, 1)
        for k, ln in enumerate(body):
            # a hoisted size that no access ended up using
            m = re.fullmatch(r"(\s*)int_fast32_t (\w+) = .*;", ln)
            if m and m.group(2) in self.hoisted and len(re.findall(
                    r"\b%s\b" % m.group(2), "\n".join(body))) == 1:
                body[k] = ln + f" (void){m.group(2)};"
        text = "\n".join(body)
        unused = [n for n in ["ctxt"] + [self.names[a.name] for a in p.args]
                  if not re.search(r"\b%s\b" % re.escape(n), text)]
        head = [self.prog.signature(p, False) + " {"]
        head += [f"    (void){n};" for n in unused]
        return "\n".join(head + body + ["}", ""])

    def line(self, depth, text):
        self.lines.append("    " * depth + text)

    # -- statements
    def block(self, stmts, depth):
        bound, frees, decls = [], [], []
        for k, s in enumerate(stmts):
            self.stmt(s, depth, bound, frees)
            if isinstance(s, (IR.Alloc, IR.WindowStmt)):
                decls.append((s, k, self.names[s.name], len(self.lines)))
        # keep -Wunused-variable / -Wunused-but-set-variable quiet: a buffer
        # no later statement reads, or whose name no later C line mentions
        # (an instr template may use only a window's data pointer). The
        # statements' reads and the lines' words are gathered once, from the
        # end, so this stays linear in the block.
        inserts, read_later, words_later = [], set(), set()
        k_next, at_next = len(stmts), len(self.lines)
        for s, k, cname, at in reversed(decls):
            while k_next > k + 1:
                k_next -= 1
                read_later |= _reads_in(stmts[k_next])
            while at_next > at:
                at_next -= 1
                words_later.update(_C_WORD.findall(self.lines[at_next]))
            if s.name not in read_later or cname not in words_later:
                inserts.append((at, "    " * depth + f"(void){cname};"))
        if inserts:
            inserts.reverse()
            start, prev, merged = inserts[0][0], inserts[0][0], []
            for at, text in inserts:
                merged += self.lines[prev:at]
                merged.append(text)
                prev = at
            merged += self.lines[prev:]
            self.lines[start:] = merged
        for text in reversed(frees):
            for ln in text.splitlines():
                self.line(depth, ln)
        for sym in bound:
            self.unbind(sym)

    def stmt(self, s, depth, bound, frees):
        if isinstance(s, (IR.Assign, IR.Reduce)):
            buf = self.bufs.get(s.name)
            if buf is None:
                self._err(MemGenError, f"'{s.name.name}' is not a buffer", s)
            self.check_readable(buf, s)
            self.check_precision(s.rhs, s)
            lhs = self.access(buf, s.idx, s)
            if isinstance(s, IR.Assign):
                rhs = self.data_expr(s.rhs, buf.elem)
            elif not D.is_int(buf.elem):
                # C's ``x += e`` is ``x = x + e`` with C's conversions,
                # which are the IR's for a float x (docs/semantics.md)
                tgt = _c_data_type(buf.elem)
                t = D.eval_type(s.rhs, tgt, D.default_leaf)
                self.line(depth, f"{lhs} += {self.dexpr(s.rhs, t)[0]};")
                return
            else:
                # integer x: the addition is an operation like any other
                cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
                rhs = self.data_expr(IR.BinOp("+", cur, s.rhs, type=s.type,
                                              srcinfo=s.srcinfo), buf.elem,
                                     check=False)
            self.line(depth, f"{lhs} = {rhs};")
        elif isinstance(s, IR.WriteConfig):
            t = s.config.lookup_type(s.field)
            field = f"ctxt->{s.config.c_struct_field(s.field)}"
            if is_data(t):
                self.check_precision(s.rhs, s)
                rhs = self.data_expr(s.rhs, t)
            else:
                rhs = self.expr(s.rhs)
            self.line(depth, f"{field} = {rhs};")
        elif isinstance(s, IR.Pass):
            pass
        elif isinstance(s, IR.If):
            self.line(depth, f"if ({self.expr(s.cond)}) {{")
            self.block(s.body, depth + 1)
            if s.orelse:
                self.line(depth, "} else {")
                self.block(s.orelse, depth + 1)
            self.line(depth, "}")
        elif isinstance(s, IR.For):
            # C tests the condition before every iteration; the IR evaluates
            # the upper bound once, at loop entry
            lo = self.expr(s.lo)
            hi = self.expr(self.once(s.hi, f"{s.iter.name}_hi", depth))
            it = self.bind(s.iter)
            if self.is_nonneg(s.lo):
                self.nonneg.add(s.iter)
            if s.mode is IR.Par:
                self.lines.append("#ifdef _OPENMP")
                self.lines.append("#pragma omp parallel for")
                self.lines.append("#endif")
            self.line(depth, f"for (int_fast32_t {it} = {lo}; {it} < {hi}; "
                      f"{it}++) {{")
            self.block(s.body, depth + 1)
            self.line(depth, "}")
            self.unbind(s.iter)
        elif isinstance(s, IR.Alloc):
            self.alloc(s, depth, bound, frees)
        elif isinstance(s, IR.WindowStmt):
            self.window_stmt(s, depth, bound)
        elif isinstance(s, IR.Call):
            self.call(s, depth)
        else:  # pragma: no cover - the grammar has no other statements
            self._err(MemGenError, f"cannot compile {type(s).__name__}", s)

    def once(self, e, base, depth):
        """A control expression as it evaluates *here*, for C text that
        re-evaluates it later (a loop condition, the strides of a buffer):
        ``e`` itself when its value cannot change (it reads no config
        state), else a read of a new local initialised with it now."""
        if not config_reads(e):
            return e
        sym = Sym(base)
        name = self.bind(sym)
        self.hoisted.add(name)
        self.line(depth, f"int_fast32_t {name} = {self.expr(e)};")
        return IR.Read(sym, (), type=IR.Index, srcinfo=e.srcinfo)

    def alloc(self, s, depth, bound, frees):
        mem = s.mem or DRAM
        elem = basetype(s.type)
        # sizes are evaluated at the allocation; accesses use them later
        dims = tuple(self.once(h, f"{s.name.name}_n{d}", depth)
                     for d, h in enumerate(type_shape(s.type)))
        name = self.bind(s.name)
        bound.append(s.name)
        shape_c = [self.c_arg(h) for h in dims]
        ct = C_TYPES[elem]
        self.prog.add_global(mem.global_())
        text = mem.alloc(name, ct, shape_c, s.srcinfo)
        for ln in text.splitlines():
            self.line(depth, ln)
        free = mem.free(name, ct, shape_c, s.srcinfo)
        if free:
            frees.append(free)
        kind = "tensor" if dims else "scalar"
        self.bufs[s.name] = _Buf(name, kind, elem, mem, dims, False)

    def window_stmt(self, s, depth, bound):
        src = self.bufs.get(s.rhs.name)
        if src is None:
            self._err(MemGenError, f"'{s.rhs.name.name}' is not a buffer", s)
        data, strides, dims = self.window_parts(src, s.rhs)
        struct = self.prog.win_struct(src.elem, len(strides), src.const)
        name = self.bind(s.name)
        bound.append(s.name)
        self.line(depth, f"{struct} {name} = {{ &{data}, "
                  f"{{ {', '.join(strides)} }} }};")
        self.bufs[s.name] = _Buf(name, "window", src.elem, src.mem, dims,
                                 src.const, struct)

    # -- calls
    def call(self, s, depth):
        f = s.f
        if f.instr is not None:
            self.prog.add_global(f.instr.c_global)
            text = self.instr_text(self.pin_instr_args(s, depth))
            for ln in text.splitlines():
                self.line(depth, ln)
            return
        written = written_buffers(f)
        args = ["ctxt"]
        for fa, a in zip(f.args, s.args):
            self.check_arg_precision(f, fa, a, s)
            args.append(self.call_arg(fa, a, fa.name not in written, s))
        self.line(depth, f"{self.prog.fn_names[f]}({', '.join(args)});")

    def check_arg_precision(self, f, fa, a, node):
        """A data buffer argument has the C element type of its parameter.

        The interpreter runs an ``R`` parameter at the caller's precision,
        but C has one body per callee and ``R`` is ``float`` there; passing
        e.g. an ``f64`` buffer would reinterpret its memory."""
        if not (is_tensor_or_window(fa.type) or is_real_scalar(fa.type)):
            return
        want, got = basetype(fa.type), basetype(a.type)
        if is_data(got) and C_TYPES[want] != C_TYPES[got]:
            self._err(ExoTypeError,
                      f"argument '{fa.name.name}' of '{f.name}' is "
                      f"{TYPE_NAMES[got]} but the parameter compiles as "
                      f"{C_TYPES[want]} ({TYPE_NAMES[want]}); call a copy of "
                      f"'{f.name}' made with set_precision for "
                      f"{TYPE_NAMES[got]} data", node)

    def _buf_of(self, e, node):
        buf = self.bufs.get(e.name)
        if buf is None:
            self._err(MemGenError, f"'{e.name.name}' is not a buffer", node)
        return buf

    def call_arg(self, fa, a, const, node):
        t = fa.type
        if is_window(t):
            return self.window_value(fa, a, const, node)
        if is_tensor_or_window(t):
            buf = self._buf_of(a, node)
            if isinstance(a, IR.WindowExpr):
                data, _, _ = self.window_parts(buf, a)
                return f"&{data}"
            return buf.cname if buf.kind == "tensor" else f"{buf.cname}.data"
        if is_real_scalar(t):
            buf = self._buf_of(a, node)
            return buf.cname if buf.kind == "scalar_ptr" else f"&{buf.cname}"
        return self.expr(a)

    def window_value(self, fa, a, const, node):
        """A window struct value of the callee parameter's struct type."""
        buf = self._buf_of(a, node)
        struct = self.prog.win_struct(fa.type.type, len(fa.type.hi), const)
        if isinstance(a, IR.WindowExpr):
            data, strides, _ = self.window_parts(buf, a)
            data = f"&{data}"
        elif buf.kind == "window":
            if buf.struct == struct:
                return buf.cname
            data = f"{buf.cname}.data"
            strides = [f"{buf.cname}.strides[{d}]" for d in range(len(buf.shape))]
        else:
            data = buf.cname
            strides = self.tensor_strides(buf)
        return f"({struct}){{ {data}, {{ {', '.join(strides)} }} }}"

    def pin_instr_args(self, s, depth):
        """``s`` with the control expressions of its arguments that read
        config state the instruction writes replaced by locals evaluated
        before it: a template may mention a placeholder several times, or
        after its own config writes, but the call evaluates it once."""
        risky = config_writes(s.f.body)
        if not risky:
            return s

        def pin(e, base):
            if config_reads(e) & risky:
                sym = Sym(base)
                name = self.bind(sym)
                self.hoisted.add(name)
                self.line(depth, f"int_fast32_t {name} = {self.expr(e)};")
                return IR.Read(sym, (), type=IR.Index, srcinfo=e.srcinfo)
            return e

        args = []
        for fa, a in zip(s.f.args, s.args):
            base = f"{s.f.name}_{fa.name.name}"
            if is_control(fa.type):
                a = pin(a, base)
            elif isinstance(a, IR.WindowExpr):
                idx = []
                for d, w in enumerate(a.idx):
                    if isinstance(w, IR.Interval):
                        # (C uses the start of a window, not its end)
                        idx.append(w.update(lo=pin(w.lo, f"{base}_{d}")))
                    else:
                        idx.append(w.update(pt=pin(w.pt, f"{base}_{d}")))
                a = a.update(idx=tuple(idx))
            args.append(a)
        return s.update(args=tuple(args))

    def instr_text(self, s):
        f = s.f
        written = written_buffers(f)
        kw = {}
        for fa, a in zip(f.args, s.args):
            nm = fa.name.name
            t = fa.type
            if is_tensor_or_window(t):
                buf = self._buf_of(a, s)
                const = fa.name not in written
                if is_window(t):
                    kw[nm] = self.window_value(fa, a, const, s)
                else:
                    kw[nm] = self.call_arg(fa, a, const, s)
                if isinstance(a, IR.WindowExpr):
                    kw[nm + "_data"], _, _ = self.window_parts(buf, a)
                else:
                    zeros = [IR.Const(0, type=IR.Index)] * len(buf.shape)
                    kw[nm + "_data"] = self.lvalue(buf, zeros, s)
            elif is_real_scalar(t):
                buf = self._buf_of(a, s)
                lv = f"*{buf.cname}" if buf.kind == "scalar_ptr" else buf.cname
                kw[nm] = kw[nm + "_data"] = lv
                self.read_names.add(buf.cname)
            else:
                kw[nm] = self.wrap(a, _PREC_ATOM)
        try:
            return f.instr.c_template.format(**kw)
        except (KeyError, IndexError) as e:
            self._err(MemGenError, f"instruction '{f.name}' template uses "
                      f"unknown placeholder {e}", s)

    # -- memory access
    def check_readable(self, buf, node):
        if not buf.mem.can_read():
            self._err(MemGenError,
                      f"cannot read or write '{buf.cname}' directly: memory "
                      f"{buf.mem.name()} is not readable from C (use an "
                      f"instruction)", node)

    def c_arg(self, e) -> CExpr:
        """``e`` as C text for a Memory hook, with its value if constant."""
        return CExpr(self.expr(e), e.val if _is_const_int(e) else None)

    def tensor_strides(self, buf):
        """Element strides of a dense tensor as int_fast32_t C expressions
        (``CExpr``: constant strides carry their value)."""
        out = []
        n = len(buf.shape)
        for d in range(n):
            rest = buf.shape[d + 1:]
            if all(_is_const_int(h) for h in rest):
                v = 1
                for h in rest:
                    v *= h.val
                out.append(CExpr.constant(v))
            else:
                out.append(CExpr(" * ".join(self.wrap(h, _PREC_MUL)
                                            for h in rest)))
        return out

    def offset(self, buf, idx):
        """The flat element offset of ``idx`` in ``buf``, never overflowing."""
        terms = []
        n = len(idx)
        if buf.kind == "window":
            for d, i in enumerate(idx):
                if _is_const_int(i) and i.val == 0:
                    continue
                s = f"{buf.cname}.strides[{d}]"
                self.prog.need_stddef = True
                terms.append(f"(ptrdiff_t){self.wrap(i, _PREC_UNARY)} * {s}")
            return " + ".join(terms) or "0"
        for d, i in enumerate(idx):
            rest = buf.shape[d + 1:]
            if _is_const_int(i) and i.val == 0:
                continue
            if not rest:
                terms.append(self.expr(i) if n == 1 else self.wrap(i, _PREC_ADD))
                continue
            if all(_is_const_int(h) for h in rest):
                v = 1
                for h in rest:
                    v *= h.val
                terms.append(str(i.val * v) if _is_const_int(i) else
                             f"{self.wrap(i, _PREC_MUL)} * {v}")
            else:
                self.prog.need_stddef = True
                factors = " * ".join(self.wrap(h, _PREC_MUL + 1) for h in rest)
                terms.append(f"(ptrdiff_t){self.wrap(i, _PREC_UNARY)} * {factors}")
        if len(terms) > 1 and all(t.isdigit() for t in terms):
            return str(sum(int(t) for t in terms))
        return " + ".join(terms) or "0"

    def lvalue(self, buf, idx, node):
        """A C lvalue for the element ``idx`` of ``buf`` (idx: IR exprs)."""
        if buf.kind == "scalar_ptr":
            return f"*{buf.cname}"
        if buf.kind == "scalar":
            return buf.cname
        if _uses_default_window(buf.mem):
            base = buf.cname if buf.kind == "tensor" else f"{buf.cname}.data"
            return f"{base}[{self.offset(buf, idx)}]"
        base = buf.cname if buf.kind == "tensor" else f"{buf.cname}.data"
        strides = (self.tensor_strides(buf) if buf.kind == "tensor" else
                   [CExpr(f"{buf.cname}.strides[{d}]")
                    for d in range(len(buf.shape))])
        return buf.mem.window(C_TYPES[buf.elem], base,
                              [self.c_arg(i) for i in idx], strides,
                              getattr(node, "srcinfo", None))

    def access(self, buf, idx, node):
        lv = self.lvalue(buf, idx, node)
        return lv

    def window_parts(self, buf, w):
        """(lvalue of the window's first element, strides, dims)."""
        starts, keep = [], []
        for d, acc in enumerate(w.idx):
            if isinstance(acc, IR.Interval):
                starts.append(acc.lo)
                keep.append(d)
            else:
                starts.append(acc.pt)
        data = self.lvalue(buf, starts, w)
        if buf.kind == "window":
            all_strides = [f"{buf.cname}.strides[{d}]"
                           for d in range(len(buf.shape))]
        else:
            all_strides = self.tensor_strides(buf)
        strides = [all_strides[d] for d in keep]
        dims = tuple(IR.BinOp("-", w.idx[d].hi, w.idx[d].lo, type=IR.Index)
                     for d in keep)
        return data, strides, dims

    # -- expressions
    def check_precision(self, e, stmt=None):
        """All data leaves of one expression share one precision, except
        that integers of different widths may mix (C computes them all in
        int, as the interpreter computes them exactly); returns it."""
        found = {}

        def leaves(x):
            if isinstance(x, IR.Extern) and x.f.own_arg_types:
                # a leaf of its result's precision; arguments stand alone
                if is_real_scalar(x.type) and x.type is not IR.Num:
                    found.setdefault(x.type, x)
                for a in x.args:
                    self.check_precision(a, stmt)
                return
            if isinstance(x, (IR.Read, IR.ReadConfig)) and is_real_scalar(x.type):
                if x.type is not IR.Num:
                    found.setdefault(x.type, x)
                return
            if isinstance(x, IR.Read):
                return  # control read, or index expressions: not data
            if isinstance(x, (IR.BinOp, IR.USub)) and not is_data(x.type):
                if isinstance(x, IR.BinOp) and x.op in ("<", "<=", ">", ">=",
                                                        "==", "!=", "and", "or"):
                    pass
                else:
                    return
            for c in _expr_children(x):
                leaves(c)

        leaves(e)
        if len(found) > 1 and all(t in _INT_BITS for t in found):
            # integers of every width are computed in C's int (the usual
            # arithmetic conversions), exactly as the interpreter does
            return max(found, key=lambda t: _INT_BITS[t])
        if len(found) > 1:
            names = ", ".join(TYPE_NAMES[t] for t in found)
            self._err(ExoTypeError,
                      f"mixed precisions ({names}) in one expression; "
                      f"bind a sub-expression to a buffer of one precision "
                      f"first", stmt or e)
        return next(iter(found), None)

    def data_expr(self, e, target_t, check=True):
        """``e`` printed for storing into ``target_t``: computed in its
        evaluation type, then converted (docs/semantics.md)."""
        if check:
            self.check_precision(e)
        tgt = _c_data_type(target_t)
        t = D.eval_type(e, tgt, D.default_leaf)
        text, prec, rng = self.dexpr(e, t)
        conv = A.convert(text, prec >= _PREC_UNARY, t, tgt, rng)
        return text if conv is None else conv

    def dexpr(self, e, t):
        """(text, precedence, value range) of the data expression ``e``,
        computed in its evaluation type ``t`` (the value range is that of
        the 32-bit result for integers, None for floats)."""
        rng = None
        if isinstance(e, IR.Const):
            text = A.literal(e.val, t)
            if A.needs_math(text):
                self.prog.need_math = True
            if D.is_int(t):
                v = D.literal(e.val, t)
                rng = (v, v)
            return text, (_PREC_UNARY if text.startswith(("-", "("))
                          else _PREC_ATOM), rng
        if isinstance(e, (IR.Read, IR.ReadConfig)):
            text, prec = self._expr(e, None)
            if D.is_int(t):
                lt = D.default_leaf(e)
                rng = D.int_range(lt) if D.is_int(lt) else A.FULL
            return text, prec, rng
        if isinstance(e, IR.USub):
            a, ap, ar = self.operand(e.arg, t)
            if not D.is_int(t):
                a = a if ap >= _PREC_UNARY and not a.startswith("-") \
                    else f"({a})"
                return f"-{a}", _PREC_UNARY, None
            plain, rng = A.neg_range(ar)
            if plain:
                a = a if ap >= _PREC_UNARY and not a.startswith("-") \
                    else f"({a})"
                return f"-{a}", _PREC_UNARY, rng
            return f"exo_neg_i32({a})", _PREC_ATOM, rng
        if isinstance(e, IR.BinOp):
            return self.data_binop(e, t)
        if isinstance(e, IR.Extern):
            self.prog.need_math = True
            self.prog.add_global(e.f.c_global())
            if e.f.own_arg_types:
                args = []
                for a in e.args:
                    self.check_precision(a)
                    at = D.ext_arg_context(a, D.default_leaf)
                    args.append(self.dexpr(a, at)[0])
            else:
                args = [self.operand(a, t)[0] for a in e.args]
            if D.is_int(t):
                rt = e.type if e.f.own_arg_types else IR.I32
                rng = D.int_range(rt) if D.is_int(rt) else A.FULL
            return e.f.compile(args, C_TYPES[t]), _PREC_ATOM, rng
        self._err(MemGenError, f"cannot compile data expression "
                  f"{type(e).__name__}", e)

    def operand(self, e, t):
        """``e`` as an operand of an operation of evaluation type ``t``:
        (text, precedence, range), converted to ``t`` when needed."""
        te = D.eval_type(e, t, D.default_leaf)
        text, prec, rng = self.dexpr(e, te)
        if te is t:
            return text, prec, rng
        conv = A.convert(text, prec >= _PREC_UNARY, te, t, rng or A.FULL)
        if conv is None:
            return text, prec, rng
        return conv, _PREC_UNARY if conv.startswith("(") else _PREC_ATOM, \
            (rng if D.is_int(t) else None)

    def data_binop(self, e, t):
        op = e.op
        p = _BIN_PREC[op]
        lhs, lp, lr = self.operand(e.lhs, t)
        rhs, rp, rr = self.operand(e.rhs, t)
        if D.is_int(t):
            plain, rng = A.op_range(op, lr, rr)
            if not plain:
                name = {"+": "add", "-": "sub", "*": "mul", "/": "div",
                        "%": "mod"}[op]
                return f"exo_{name}_i32({lhs}, {rhs})", _PREC_ATOM, rng
        else:
            rng = None
            if op == "%":
                self.prog.need_math = True
                if t is IR.F64:
                    return f"fmod({lhs}, {rhs})", _PREC_ATOM, None
                text = f"fmodf({lhs}, {rhs})"
                if t is IR.F16:
                    return f"(_Float16){text}", _PREC_UNARY, None
                return text, _PREC_ATOM, None
        lhs = lhs if lp >= p else f"({lhs})"
        rhs = rhs if rp >= p + 1 else f"({rhs})"
        text = f"{lhs} {op} {rhs}"
        if t is IR.F16:
            # round every half-precision operation (C may keep float range)
            return f"(_Float16)({text})", _PREC_UNARY, None
        return text, p, rng

    def expr(self, e, ctx=None):
        return self._expr(e, ctx)[0]

    def wrap(self, e, min_prec, ctx=None):
        text, prec = self._expr(e, ctx)
        return text if prec >= min_prec else f"({text})"

    def is_nonneg(self, e):
        if isinstance(e, IR.Const):
            return type(e.val) is int and e.val >= 0
        if isinstance(e, IR.Read) and not e.idx:
            return e.name in self.nonneg
        if isinstance(e, IR.BinOp) and e.op in ("+", "*", "/", "%"):
            return self.is_nonneg(e.lhs) and self.is_nonneg(e.rhs)
        return False

    @staticmethod
    def literal(v):
        """A control literal (data literals: ``arith.literal``)."""
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v)

    def _expr(self, e, ctx):
        if isinstance(e, (IR.Const, IR.USub, IR.BinOp, IR.Extern)) and (
                is_data(e.type) or e.type is IR.Num):
            dom = ctx if ctx is not None and is_data(ctx) else IR.F32
            t = D.eval_type(e, _c_data_type(dom), D.default_leaf)
            text, prec, _ = self.dexpr(e, t)
            return text, prec
        if isinstance(e, IR.Const):
            text = self.literal(e.val)
            return text, (_PREC_UNARY if text.startswith("-") else _PREC_ATOM)
        if isinstance(e, IR.Read):
            buf = self.bufs.get(e.name)
            if buf is None:
                name = self.cname(e.name, e)
                self.read_names.add(name)
                return name, _PREC_ATOM
            self.read_names.add(buf.cname)
            if is_tensor_or_window(e.type):
                self._err(MemGenError, f"whole buffer '{buf.cname}' used as a "
                          f"value", e)
            self.check_readable(buf, e)
            text = self.lvalue(buf, e.idx, e)
            return text, (_PREC_UNARY if text.startswith("*") else _PREC_ATOM)
        if isinstance(e, IR.USub):
            inner = self.wrap(e.arg, _PREC_UNARY, ctx)
            if inner.startswith("-"):
                inner = f"({inner})"
            return f"-{inner}", _PREC_UNARY
        if isinstance(e, IR.Not):
            return f"!{self.wrap(e.arg, _PREC_UNARY, ctx)}", _PREC_UNARY
        if isinstance(e, IR.BinOp):
            return self._binop(e, ctx)
        if isinstance(e, IR.StrideExpr):
            buf = self.bufs[e.name]
            if buf.kind == "window":
                return f"{buf.cname}.strides[{e.dim}]", _PREC_ATOM
            s = self.tensor_strides(buf)[e.dim]
            return s, (_PREC_ATOM if re.fullmatch(r"\w+", s) else _PREC_MUL)
        if isinstance(e, IR.ReadConfig):
            return f"ctxt->{e.config.c_struct_field(e.field)}", _PREC_ATOM
        if isinstance(e, IR.WindowExpr):
            self._err(MemGenError, "a window can only be bound or passed to a "
                      "call", e)
        self._err(MemGenError, f"cannot compile expression "
                  f"{type(e).__name__}", e)

    def _binop(self, e, ctx):
        op = e.op
        p = _BIN_PREC[op]
        control = not is_data(e.type) and not (
            is_data(e.lhs.type) or is_data(e.rhs.type))
        if control and op in ("/", "%"):
            if not _is_const_int(e.rhs) or e.rhs.val <= 0:
                self._err(ExoTypeError, "integer division/modulo needs a "
                          "positive constant divisor", e)
            if not self.is_nonneg(e.lhs):
                self.prog.need_floor = True
                fn = "exo_floor_div" if op == "/" else "exo_floor_mod"
                return f"{fn}({self.expr(e.lhs)}, {e.rhs.val})", _PREC_ATOM
        if op in ("and", "or"):
            def side(x):
                t, xp = self._expr(x, ctx)
                need = _PREC_AND if op == "and" else _PREC_OR
                if xp < need or (op == "or" and isinstance(x, IR.BinOp)
                                 and x.op == "and"):
                    return f"({t})"
                return t
            return f"{side(e.lhs)} {_C_OP[op]} {side(e.rhs)}", p
        if p <= _PREC_CMP:
            # comparisons: operands are arithmetic; never chain comparisons
            sub_ctx = ctx
            if is_data(e.lhs.type) or is_data(e.rhs.type):
                sub_ctx = next((x.type for x in (e.lhs, e.rhs)
                                if x.type is not IR.Num and is_data(x.type)),
                               ctx)
            lhs = self.wrap(e.lhs, _PREC_ADD, sub_ctx)
            rhs = self.wrap(e.rhs, _PREC_ADD, sub_ctx)
            return f"{lhs} {op} {rhs}", p
        lhs = self.wrap(e.lhs, p, ctx)
        rhs = self.wrap(e.rhs, p + 1, ctx)
        return f"{lhs} {op} {rhs}", p


_C_WORD = re.compile(r"\w+")


def _reads_in(stmt) -> set:
    """Buffers a statement reads (stores alone do not count: gcc flags a
    local array that is only written as set-but-unused)."""
    return {n.name for n in walk(stmt)
            if isinstance(n, (IR.Read, IR.WindowExpr, IR.StrideExpr))}


def _c_data_type(t):
    """The data type values of type ``t`` have in C (``R`` is float)."""
    return IR.F32 if t is IR.Num else t


def _expr_children(e):
    if isinstance(e, (IR.USub, IR.Not)):
        return (e.arg, )
    if isinstance(e, IR.BinOp):
        return (e.lhs, e.rhs)
    if isinstance(e, IR.Extern):
        return e.args
    return ()
