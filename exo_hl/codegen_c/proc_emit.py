"""One procedure's C body: statements, calls and memory access.

The expression printer is the ``ExprEmitter`` base; names and refusals
come from ``checks``.

Why one module of this size: statements, calls and memory access all read
and update the one scope the emitter keeps (bound names, buffers, hoisted
locals), so they stay in one class.
"""
from __future__ import annotations

import re

from ..core_ir.memory import DRAM, DRAM_STATIC, CExpr, Memory
from ..core_ir.nodes import IR
from ..core_ir.control_ranges import wide_config_writes
from ..core_ir.operators import is_parallel
from ..core_ir.types import (C_TYPES, basetype, is_control, is_data,
                             is_real_scalar, is_tensor_or_window, is_window,
                             shape as type_shape)
from ..errors import MemGenError, located
from ..core_ir.traversal import used_syms, walk
from ..core_ir.buffers import (written_buffers, zero_start_read,
                               zero_start_refusal)
from ..core_ir.state import (config_reads, config_writes,
                              instr_config_fields, per_thread_configs)
from ..core_ir.syms import Sym
from ..core_ir import datasem as D
from . import arith as A
from .checks import (check_arg_precision, check_readable,
                     fresh_c_name, fresh_c_name_k)
from .outline import outlined_proc, window_param_type
from .expr_emit import (ExprEmitter, _PREC_ADD, _PREC_ATOM, _PREC_MUL,
                        _PREC_UNARY, _c_data_type, _is_const_int)


def _uses_default_window(mem) -> bool:
    """Memories that keep the flat-array window() get our readable indexing."""
    return getattr(mem.window, "__func__", None) is getattr(
        Memory.window, "__func__", None)


class _ConfigLvalues:
    """``{Cfg.field}`` in an instr template: the C lvalue of the field in
    the context struct (``str.format`` resolves the attribute)."""

    def __init__(self, members):
        self._members = members

    def __getattr__(self, name):
        try:
            return self.__dict__["_members"][name]
        except KeyError:
            raise AttributeError(name) from None


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


class ProcEmitter(ExprEmitter):
    def __init__(self, prog, proc):
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
        self.types = {}          # Sym -> (IR type, memory), for outlining
        self.outlined = []       # C bodies of loops outlined (outline.py)
        self.worksharing = None  # the outlined par loop this function runs
        self.claims = 0          # par_dynamic counters declared (outline)
        self.free_stack = []     # the frees of the blocks open, outermost first
        self.inline_par = 0      # par loops open inline (no return there)
        self.fails = False       # returns a status (fail_check)
        self.alloc_rest = ()     # the statements after the Alloc emitted
        self.wide_writes = None  # config writes checked when run (lazy)
        self.outer = None        # the emitter an outlined loop came from

    # -- errors
    def _err(self, cls, msg, node):
        raise cls(located(msg, getattr(node, "srcinfo", None), self.proc.name))

    # -- names
    def bind(self, sym) -> str:
        # next_k[base]: every base_j with j below it is taken, so binding n
        # symbols of one spelling costs O(n), not O(n^2)
        name, base, k = fresh_c_name_k(sym.name, self.in_use,
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
            self.types[a.name] = (a.type, a.mem or DRAM)
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
        self.prog._may_fail[p] = self.fails
        head = [self.prog.signature(p, False) + " {"]
        head += [f"    (void){n};" for n in unused]
        tail = []
        if self.fails:
            head.append("    int exo_hl_status = 0;")
            tail.append("    return 0;")
        return "\n".join(head + body + tail + ["}", ""])

    def line(self, depth, text):
        self.lines.append("    " * depth + text)

    # -- statements
    def block(self, stmts, depth):
        bound, frees, decls = [], [], []
        self.free_stack.append(frees)
        k = 0
        while k < len(stmts):
            group = self.outlined_run(stmts, k)
            if group:
                self.call_outlined(group, depth)
                k += len(group)
                continue
            s = stmts[k]
            if isinstance(s, IR.Alloc):
                self.check_zero_start(s, stmts[k + 1:])
                self.alloc_rest = stmts[k + 1:]
            self.stmt(s, depth, bound, frees)
            if isinstance(s, (IR.Alloc, IR.WindowStmt)):
                decls.append((s, k, self.names[s.name], len(self.lines)))
            k += 1
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
        self.free_stack.pop()

    def assign_line(self, depth, lhs, rhs):
        """``lhs = rhs;``, but a comment when the C would assign an object
        to itself (``t = t`` written or left by a rewrite: no conversion,
        so it keeps the value, and clang's -Wself-assign warns on it)."""
        if lhs == rhs:
            # (a use all the same: it may be the parameter's only one)
            self.line(depth, f"(void){lhs};  /* = itself: keeps its value */")
        else:
            self.line(depth, f"{lhs} = {rhs};")

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
            elif not D.is_int(buf.elem) and buf.elem is not IR.BF16:
                # C's ``x += e`` is ``x = x + e`` with C's conversions,
                # which are the IR's for a float x (docs/semantics.md)
                # -- once e is converted to the evaluation type of x and e
                # together: an integer e added into an f16 x is rounded to
                # f16 first (C would convert it to the float it keeps the
                # sum in, one rounding too few)
                tgt = _c_data_type(buf.elem)
                t = D.eval_type(s.rhs, tgt, D.default_leaf)
                cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
                t_all = D.eval_type(IR.BinOp("+", cur, s.rhs, type=s.type,
                                             srcinfo=s.srcinfo),
                                    tgt, D.default_leaf)
                text, prec, rng = self.dexpr(s.rhs, t)
                if t is not t_all:
                    conv = A.convert(text, prec >= _PREC_UNARY, t, t_all,
                                     rng or A.FULL)
                    text = text if conv is None else conv
                self.line(depth, f"{lhs} += {text};")
                return
            else:
                # integer or bf16 x: the addition is an operation like any
                # other (a bf16 is read as f32, the sum stored rounded)
                cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
                rhs = self.data_expr(IR.BinOp("+", cur, s.rhs, type=s.type,
                                              srcinfo=s.srcinfo), buf.elem,
                                     check=False)
            self.assign_line(depth, lhs, rhs)
        elif isinstance(s, IR.WriteConfig):
            t = s.config.lookup_type(s.field)
            field = f"ctxt->{self.prog.config_fields[s.config, s.field]}"
            if is_data(t):
                self.check_precision(s.rhs, s)
                rhs = self.data_expr(s.rhs, t)
            else:
                rhs = self.expr(s.rhs)
                if self.config_write_wide(s):
                    self.checked_config_write(field, rhs, depth, s)
                    return
            self.assign_line(depth, field, rhs)
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
            # a par loop reaching here is one ``block`` could not outline
            # (``outlined_run``): it stays inline, under omp parallel for
            spawns = self.spawns(s)
            # C tests the condition before every iteration; the IR evaluates
            # the upper bound once, at loop entry
            lo = self.expr(s.lo)
            hi = self.expr(self.once(s.hi, f"{s.iter.name}_hi", depth))
            claim = None
            if s is self.worksharing and s.mode is IR.ParDynamic:
                claim = self.claim_bounds(s, lo, hi, depth)
            elif s is self.worksharing:
                lo, hi = self.share(s, lo, hi, depth)
            it = self.bind(s.iter)
            self.types[s.iter] = (IR.Index, None)
            if self.is_nonneg(s.lo):
                self.nonneg.add(s.iter)
            pragma = "#pragma omp parallel for" + (
                " schedule(dynamic)" if s.mode is IR.ParDynamic else "")
            if spawns and self.prog.target_prefix(self.proc):
                # clang does not give the region it makes of the loop the
                # function's target attribute (outline.py), and then
                # refuses its vector code: serial under clang
                self.lines += [
                    "#if defined(_OPENMP) && !defined(__clang__)",
                    pragma, "#endif"]
            elif spawns:
                self.lines += ["#ifdef _OPENMP", pragma, "#endif"]
            if claim:
                # the iterations taken one at a time from the shared
                # counter: the k-th taken is iteration lo + k
                first, count, k = claim
                self.line(depth, f"for (int64_t {k} = exo_hl_claim("
                          f"exo_hl_next); {k} < {count}; {k} = "
                          f"exo_hl_claim(exo_hl_next)) {{")
                self.line(depth + 1, f"int_fast32_t {it} = (int_fast32_t)"
                          f"({first} + {k});")
            else:
                self.line(depth, f"for (int_fast32_t {it} = {lo}; {it} < "
                          f"{hi}; {it}++) {{")
            self.inline_par += bool(spawns)
            if is_parallel(s.mode):
                self.thread_entry(s.body, depth + 1)
            self.block(s.body, depth + 1)
            self.inline_par -= bool(spawns)
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

    def thread_entry(self, body, depth):
        """At the start of an iteration of a par loop: the per-thread
        configs the body uses (hardware state each thread keeps, as AMX's
        tile configuration) set on this thread to their values at the
        loop's entry, which the iterations only read (they may not write
        config state: ``parallelize``). Without it another thread would
        run the body with whatever its hardware last held."""
        for cfg in per_thread_configs(body):
            fields = {f: "ctxt->" + self.prog.config_fields[cfg, f]
                      for f, _ in cfg.fields()}
            self.line(depth, cfg.thread_entry(fields))

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
        self.types[sym] = (IR.Index, None)
        self.line(depth, f"int_fast32_t {name} = {self.expr(e)};")
        return IR.Read(sym, (), type=IR.Index, srcinfo=e.srcinfo)

    def share(self, loop, lo, hi, depth):
        """C names of the bounds of this thread's block of the iterations
        ``[lo, hi)`` of the outlined par ``loop`` (outline.py), bound to
        new locals; the function's last two parameters say which block."""
        thread, threads = (self.cname(a.name) for a in self.proc.args[-2:])
        names = []
        for part, t in (("begin", thread), ("end", f"{thread} + 1")):
            sym = Sym(f"{loop.iter.name}_{part}")
            name = self.bind(sym)
            self.line(depth, f"int_fast32_t {name} = exo_hl_share({lo}, {hi}, "
                      f"{t}, {threads});")
            names.append(name)
        return names

    def claim_bounds(self, loop, lo, hi, depth):
        """For the outlined par_dynamic ``loop`` (outline.py): ``(first,
        count, k)``, C names of new locals holding its first iteration
        and its trip count (in 64 bits: the shared counter, passed as
        ``exo_hl_next``, runs past it by up to the number of threads), and
        the name of the claimed-iteration variable its header declares."""
        names = [self.bind(Sym(f"{loop.iter.name}_{part}"))
                 for part in ("first", "count", "k")]
        self.line(depth, f"int_fast32_t {names[0]} = {lo};")
        self.line(depth, f"int64_t {names[1]} = (int64_t)({hi}) - "
                  f"{names[0]};")
        return names

    def spawns(self, s):
        """A par loop other than the one this outlined function runs."""
        return (isinstance(s, IR.For) and is_parallel(s.mode)
                and s is not self.worksharing)

    def outlined_run(self, stmts, k):
        """[(loop, sub, actuals)] for the consecutive par loops from
        ``stmts[k]`` on that are outlined (outline.py): they share one
        parallel region (``call_outlined``). Empty when ``stmts[k]`` is
        not one."""
        group = []
        for s in stmts[k:]:
            got = outlined_proc(self, s) if self.spawns(s) else None
            if got is None:
                break
            group.append((s, *got))
        return group

    def call_outlined(self, group, depth):
        """Emit consecutive par loops, ``group`` = [(loop, sub, actuals)],
        as calls of the static functions ``sub`` (outline.py): in one
        ``#pragma omp parallel`` region when OpenMP would run more than one
        thread, with a barrier between the loops (each loop finishes before
        the next starts, as in the IR; on the 2-core development VM a region
        costs about 0.6 us, a barrier 0.3 us, and SGEMMs of 64^3-128^3 on
        two threads ran 2-8% faster with one region per k block than with
        two); else directly, one call per loop for all its iterations."""
        calls = [self.outline(*g, depth) for g in group]
        may_fail = [self.prog.may_fail(g[1]) for g in group]
        fails = any(may_fail)
        if fails:
            # each thread's status, or'ed together (a failing share
            # returns early; the others finish theirs). Only the loops
            # that may fail return a status: the others' functions are
            # void (a loop that allocates next to one that does not).
            calls = [(lambda c: lambda part: "exo_hl_status |= "
                      + c(part))(c) if f else c
                     for c, f in zip(calls, may_fail)]
        region = ["omp_get_thread_num()", "omp_get_num_threads()"]
        self.lines.append("#ifdef _OPENMP")
        self.line(depth, "if (omp_get_max_threads() > 1) {")
        self.lines.append("#pragma omp parallel" + (
            " reduction(|: exo_hl_status)" if fails else ""))
        if len(calls) == 1:
            self.line(depth + 1, calls[0](region))
        else:
            self.line(depth + 1, "{")
            for n, call in enumerate(calls):
                if n:
                    self.lines.append("#pragma omp barrier")
                self.line(depth + 2, call(region))
            self.line(depth + 1, "}")
        self.line(depth, "} else {")
        for call in calls:
            self.line(depth + 1, call(["0", "1"]))
        self.line(depth, "}")
        self.lines.append("#else")
        for call in calls:
            self.line(depth, call(["0", "1"]))
        self.lines.append("#endif")
        if fails:
            self.fail_check(depth, group[0][0])

    def outline(self, loop, sub, actuals, depth):
        """Emit the static function ``sub`` that runs a share of the par
        ``loop`` (outline.py); returns ``call(last_args)``, the C text of a
        call of it with the given thread number and count. A par_dynamic
        ``loop``'s function also takes a pointer to the counter its
        threads share, a new local here at ``depth``, zero."""
        prog = self.prog
        counter = None
        if loop.mode is IR.ParDynamic:
            prog.claimed.add(sub)
            counter = f"exo_hl_next_{self.claims}"
            self.claims += 1
            self.line(depth, f"int64_t {counter} = 0;")
        name = fresh_c_name(sub.name, prog.fn_name_set | self.in_use)
        prog.fn_name_set.add(name)
        self.in_use.add(name)
        prog.fn_names[sub] = name
        prog.features[sub] = prog.features[self.proc]
        # no restrict on its pointers (as in the OpenMP-outlined region
        # bodies the C compiler made before): GCC 12 (-march=native on Zen
        # 4) used the no-alias promise to hoist a register tile's
        # loop-invariant loads out of the loops around it and then spilled
        # the tile's registers, every FMA reading the stack: the AVX-512
        # conv layer ran at 60 GFLOP/s instead of 112. The entry point's
        # parameters keep restrict; the SGEMM kernels run at the same speed
        # either way (tests/asm_checks.py checks the apps' tiles).
        prog.aliased[sub] = {a.name for a in sub.args
                             if is_tensor_or_window(a.type)
                             or is_real_scalar(a.type)}
        inner = ProcEmitter(prog, sub)
        inner.outer = self
        inner.worksharing = loop
        inner.nonneg |= {a.name for a in sub.args if a.name in self.nonneg}
        body = inner.emit()
        self.outlined += inner.outlined + [body]
        written = written_buffers(sub)
        args = ["ctxt"] + [self.call_arg(fa, a, fa.name not in written, loop)
                           for fa, a in zip(sub.args, actuals)]

        last = [f"&{counter}"] if counter else []

        def call(part):
            return f"{name}({', '.join(args + part + last)});"
        return call

    def alloc(self, s, depth, bound, frees):
        mem = s.mem or DRAM
        elem = basetype(s.type)
        # sizes are evaluated at the allocation; accesses use them later
        dims = tuple(self.once(h, f"{s.name.name}_n{d}", depth)
                     for d, h in enumerate(type_shape(s.type)))
        name = self.bind(s.name)
        bound.append(s.name)
        self.types[s.name] = (s.type, mem)
        shape_c = [self.c_arg(h) for h in dims]
        ct = C_TYPES[elem]
        self.prog.add_global(mem.global_())
        text = mem.alloc(name, ct, shape_c, s.srcinfo)
        if (dims and isinstance(mem, type) and issubclass(mem, DRAM_STATIC)
                and _read_first(self.alloc_rest, s.name)):
            # a stack array read before any write (a bug of the program,
            # docs/semantics.md): zeroed, so the C reads no indeterminate
            # value and gcc has no -Wmaybe-uninitialized to report
            text = re.sub(r";$", " = {0};", text.rstrip())
        for ln in text.splitlines():
            self.line(depth, ln)
        if "exo_hl_malloc(" in text:
            self.fail_check(depth, s)
        if not dims and mem.can_read():
            # a local scalar starts at zero (docs/semantics.md): no read of
            # an uninitialised local, and the interpreter's value
            self.line(depth, f"{name} = 0;")
        free = mem.free(name, ct, shape_c, s.srcinfo)
        if free:
            frees.append(free)
        kind = "tensor" if dims else "scalar"
        self.bufs[s.name] = _Buf(name, kind, elem, mem, dims, False)

    def check_zero_start(self, s, rest):
        """A local scalar starts at zero (docs/semantics.md): ``alloc``
        sets it, in a memory C may write. In another, only an instruction
        can set it, so the zero must never be read: every path through
        ``rest`` (the statements after it) must overwrite it first."""
        mem = s.mem or DRAM
        if not is_real_scalar(s.type) or mem.can_read():
            return
        reader = zero_start_read(rest, s.name)
        if reader is not None:
            self._err(MemGenError, zero_start_refusal(
                s.name.name, f"its memory {mem.name()} is not writable "
                f"from C, so the C code cannot set it to zero"), reader)

    def window_stmt(self, s, depth, bound):
        src = self.bufs.get(s.rhs.name)
        if src is None:
            self._err(MemGenError, f"'{s.rhs.name.name}' is not a buffer", s)
        data, strides, dims = self.window_parts(src, s.rhs)
        struct = self.prog.win_struct(src.elem, len(strides), src.const)
        name = self.bind(s.name)
        bound.append(s.name)
        self.types[s.name] = (window_param_type(s.rhs.type), src.mem)
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
        call = f"{self.prog.fn_names[f]}({', '.join(args)})"
        if self.prog.may_fail(f):
            self.line(depth, f"exo_hl_status = {call};")
            self.fail_check(depth, s)
        else:
            self.line(depth, call + ";")

    def config_write_wide(self, s) -> bool:
        """Whether the value of control config write ``s`` may leave 32
        bits (``wide_config_writes``, of the procedure this function's
        body comes from: an outlined loop's is its parent's)."""
        if self.outer is not None:
            return self.outer.config_write_wide(s)
        if self.wide_writes is None:
            self.wide_writes = wide_config_writes(self.proc)
        return s in self.wide_writes

    def checked_config_write(self, field, rhs, depth, node):
        """A config field is read as a 32-bit value by every procedure
        (their control arithmetic was bounded so): a value that may not
        fit is checked before it is stored, and the call fails with
        status 4 (``ValueError``, as ``interpret()`` raises)."""
        self.line(depth, f"if ({rhs} < INT32_MIN || {rhs} > INT32_MAX) "
                  f"exo_hl_status = 4;")
        self.fail_check(depth, node, "a config write checked when run")
        self.line(depth, f"{field} = {rhs};")

    def fail_check(self, depth, node, what="a heap allocation"):
        """After a heap allocation or a call that may fail: on a nonzero
        ``exo_hl_status``, free what this function holds and return it."""
        if self.inline_par:
            self._err(MemGenError, f"{what} inside a par loop that is "
                      f"not run as a function of its own cannot report a "
                      f"failure; use DRAM_STATIC, or allocate outside the "
                      f"loop" if what == "a heap allocation" else
                      f"{what} (its value may not fit 32 bits) inside a par "
                      f"loop that is not run as a function of its own "
                      f"cannot report a failure", node)
        self.fails = True
        self.line(depth, "if (exo_hl_status) {")
        for frees in reversed(self.free_stack):
            for text in reversed(frees):
                for ln in text.splitlines():
                    self.line(depth + 1, ln)
        self.line(depth + 1, "return exo_hl_status;")
        self.line(depth, "}")

    def check_arg_precision(self, f, fa, a, node):
        check_arg_precision(f, fa, a, node, self._err)

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
        cfgs = {}
        for key, (cfg, field) in instr_config_fields(f).items():
            c, fname = key.split(".")
            if c not in kw:
                member = self.prog.config_fields[cfg, field]
                cfgs.setdefault(c, {})[fname] = f"ctxt->{member}"
        for c, members in cfgs.items():
            kw[c] = _ConfigLvalues(members)
        try:
            return f.instr.c_template.format(**kw)
        except (KeyError, IndexError, AttributeError) as e:
            self._err(MemGenError, f"instruction '{f.name}' template uses "
                      f"unknown placeholder {e}", s)

    # -- memory access
    def check_readable(self, buf, node):
        check_readable(buf, node, self._err)

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


_C_WORD = re.compile(r"\w+")


def _reads_in(stmt) -> set:
    """Buffers a statement reads (stores alone do not count: gcc flags a
    local array that is only written as set-but-unused)."""
    return {n.name for n in walk(stmt)
            if isinstance(n, (IR.Read, IR.WindowExpr, IR.StrideExpr))}


def _read_first(stmts, sym):
    """Whether, in program order, the first statement of ``stmts`` touching
    ``sym`` may read it (loops and ifs looked into; a branch reading first
    counts): then C reads the array before any store, which gcc reports as
    possibly uninitialised. A call counts as a store (the callee gets the
    pointer). ``None`` when no statement touches ``sym``."""
    for s in stmts:
        if sym not in used_syms(s):
            continue
        if isinstance(s, IR.For):
            if sym in used_syms((s.lo, s.hi)):
                return True
            return bool(_read_first(s.body, sym))
        if isinstance(s, IR.If):
            if sym in used_syms(s.cond):
                return True
            r1, r2 = _read_first(s.body, sym), _read_first(s.orelse, sym)
            if r1 or r2:
                return True
            if r1 is False or r2 is False:
                return False
            continue
        if isinstance(s, IR.Call):
            return False
        return sym in _reads_in(s)
    return None
