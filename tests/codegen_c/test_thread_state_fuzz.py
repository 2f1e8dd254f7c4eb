"""Random procedures over thread-local hardware state: C generation either
refuses them or the C computes what ``interpret()`` says, on two threads.

Three generators, one per class of defect met before (docs/semantics.md,
"Per-thread config in par loops" and "Hardware-defined config"); each
builds procedures as source text with a fixed seed, and an independent
rule, computed from what the generator chose (not from exo_hl), says
which are refused and at which stage:

1. ``PerThreadGen`` (per-thread config): a toy device whose state is a C
   ``_Thread_local`` (``Dev``, declared ``@config(thread_entry=...)``;
   ``dev_get``'s C reads the running thread's copy; ``dev_ready`` names
   ``Dev`` only in its precondition) and shared config (``Sh``, no
   thread_entry, read in conditions and by an instruction whose C reads the
   context). Writes by instruction, by hand, by a callee's instruction and
   by hand in a callee, before, between and inside loops that are ``seq``,
   ``par`` in the source or parallelized by ``parallelize`` (every other
   one ``par_dynamic`` / ``dynamic=True``); loops nested
   in a seq loop that re-writes the config, par loops inside par loops, a
   callee's par loop. Rule: a config write inside a par loop is a race
   (refused by the checks); else a hand write of ``Dev`` (direct or in a
   callee) is refused at C generation; else accepted.
2. ``RegisterGen`` (per-thread registers): a buffer in ``REG``, an
   ``exclusive`` memory whose C is a ``static _Thread_local`` array (each
   thread's own register), allocated at nesting level 0, 1 or 2 of two
   loops (each seq, par or parallelized), filled and used at the same or
   deeper levels, directly, through a window made at any level between,
   through a callee, or by a callee whose own par loop uses it; then maybe
   moved by ``lift_alloc`` or ``sink_alloc``, or allocated in DRAM and
   moved to ``REG`` by ``set_memory``. Rule, at the level the allocation
   ends at: a fill inside a par loop the buffer is allocated outside is a
   race; else a use inside such a par loop (or the callee's par loop) is
   refused at C generation; else accepted.
3. ``HardwareFieldGen`` (hardware-defined fields): ``HW.vmax`` declared
   ``hardware_fields={'vmax': 'hw_query'}`` (the toy machine's value is 8).
   Writes by ``hw_query`` (direct, in a loop, in a callee: allowed), by
   hand at the top, in a loop, in a branch never taken, in a callee, by
   another instruction writing the field (direct or in a callee), and
   inserted by ``configwrite_at``, ``write_config`` or ``bind_config``; the
   plain field ``HW.vl`` written by hand, in a loop and by
   ``configwrite_at``; a loop (seq, par or parallelized) reads both. Rule:
   any write of ``vmax`` other than ``hw_query`` in compiled code is
   refused at C generation; else accepted (``configwrite_at`` may refuse a
   write that later code reads; one at the end, which nothing reads, must
   be accepted).

The oracle: the verdict and its stage equal the rule's; the accepted
procedures of a generator are called from one procedure (one C build),
compiled with OpenMP and run on two threads for several argument values,
and their outputs equal ``interpret()``'s (five (n, c) pairs, each c other
than the one before, so a thread's stale hardware shows). Each generator must
give accepted and refused procedures and meet each of its cases with the
verdicts listed in its test (counts asserted). ``test_*_oracle_*``
switch the library's check off and show the oracle then fails, so a
regression of the class cannot pass unseen. On the code before they were
added, the generators found two defects, fixed in the library with
regression tests: a hand write of per-thread config (``AmxConfig``) was
accepted, and the tile load after it aborted (#UD); a window of an
exclusive-memory buffer made outside a par loop was accepted inside it.
Cost: about 15 s of CPU for the six tests (loaded machine).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from exo_hl import (DRAM, BoundsError, ExoTypeError, Memory, MemGenError,
                    SchedulingError, config, f32, index, instr, par, proc,
                    seq, size)
from exo_hl.core_ir.interpret import ConfigState
from exo_hl.frontend.decorators import parse_procs_source

pytestmark = pytest.mark.no_c_audit(
    "random procedures: their batch is built with -Wall -Wextra -Werror "
    "and run here")

SEED = 20261128
N_PROCS = 30            # generated per generator (default)

# ----------------------------------------------------------------------
# the toy hardware

_DEV = ("#ifndef TSF_DEV\n#define TSF_DEV\n"
        "static _Thread_local int_fast32_t tsf_dev_m = -7;\n#endif\n")


def _dev_entry(fields):
    return f"tsf_dev_m = {fields['m']};"


@config(thread_entry=_dev_entry)
class Dev:
    """A device mode each thread's hardware keeps (``tsf_dev_m``)."""
    m: index


@config
class Sh:
    """Ordinary (shared) config."""
    k: index


@config(hardware_fields={"vmax": "hw_query"})
class HW:
    """``vmax``: the machine's value (8 in C); ``vl``: a plain field."""
    vmax: size
    vl: size


@instr("{Dev.m} = {v}; tsf_dev_m = {v};", c_global=_DEV)
def dev_set(v: index):
    assert 0 <= v and v < 4
    Dev.m = v


@instr("{dst_data} = (float)tsf_dev_m;", c_global=_DEV)
def dev_get(dst: [f32][1] @ DRAM):
    assert 0 <= Dev.m and Dev.m < 4
    if Dev.m == 0:
        dst[0] = 0.0
    else:
        if Dev.m == 1:
            dst[0] = 1.0
        else:
            if Dev.m == 2:
                dst[0] = 2.0
            else:
                dst[0] = 3.0


@instr("{dst_data} = (float)(tsf_dev_m >= 0);", c_global=_DEV)
def dev_ready(dst: [f32][1] @ DRAM):
    assert 0 <= Dev.m and Dev.m < 4     # names Dev in its precondition only
    dst[0] = 1.0


@instr("{dst_data} = (float)({Sh.k} == 2);")
def sh_get(dst: [f32][1] @ DRAM):
    if Sh.k == 2:
        dst[0] = 1.0
    else:
        dst[0] = 0.0


@instr("{HW.vmax} = 8;  /* the toy machine's */")
def hw_query():
    if HW.vmax < 4:
        HW.vmax = 4
    if HW.vmax > 16:
        HW.vmax = 16


@instr("{HW.vmax} = 8;")
def fake_vmax():
    HW.vmax = 8


class REG(Memory):
    """One register of each thread: a thread-local array, C reads it."""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        return f"static _Thread_local {prim_type} {new_name}[4];"

    @classmethod
    def exclusive(cls):
        return True


@proc
def use_dev(y: [f32][1] @ DRAM):
    assert 0 <= Dev.m and Dev.m < 4
    dev_get(y)


@proc
def set_dev_hand(v: index):
    assert 0 <= v and v < 4
    Dev.m = v


@proc
def set_dev(v: index):
    assert 0 <= v and v < 4
    dev_set(v)


@proc
def dev_rows(n: size, y: [f32][n, 1] @ DRAM):
    assert 0 <= Dev.m and Dev.m < 4
    for i in par(0, n):
        dev_get(y[i, 0:1])


@proc
def reg_row(t: [f32][4] @ REG, x: [f32][4] @ DRAM, y: [f32][4] @ DRAM):
    for k in seq(0, 4):
        y[k] = t[k] + x[k]


@proc
def reg_rows(n: size, t: [f32][4] @ REG, y: [f32][n, 4] @ DRAM):
    for i in par(0, n):
        for k in seq(0, 4):
            y[i, k] = t[k] * 3.0


@proc
def query_hw():
    hw_query()


@proc
def set_vmax_hand():
    HW.vmax = 12


@proc
def fake_in_callee():
    fake_vmax()


SCOPE = dict(Dev=Dev, Sh=Sh, HW=HW, REG=REG, dev_set=dev_set,
             dev_get=dev_get, dev_ready=dev_ready, sh_get=sh_get,
             hw_query=hw_query, fake_vmax=fake_vmax, use_dev=use_dev,
             set_dev=set_dev, set_dev_hand=set_dev_hand, dev_rows=dev_rows,
             reg_row=reg_row, reg_rows=reg_rows, query_hw=query_hw,
             set_vmax_hand=set_vmax_hand, fake_in_callee=fake_in_callee)

SIG = "(n: size, c: index, x: [f32][n, 4] @ DRAM, y: [f32][n, 4] @ DRAM)"
PRE = "    assert 0 <= c and c < 4"
CHECK_ERRORS = (BoundsError, ExoTypeError, SchedulingError)


class _Base:
    def __init__(self, rng):
        self.rng = rng
        self.k = 0
        self.sched = []         # loops to parallelize after parsing
        self.tags = set()       # the cases drawn (for coverage counts)

    def it(self, base="i"):
        self.k += 1
        return f"{base}{self.k}"

    def mode(self):
        return self.rng.choice(["seq", "par", "sched"])

    def header(self, it, mode, lo_hi):
        if mode == "sched":
            self.sched.append(it)
            self.tags.add("parallelize")
        kw = "par" if mode == "par" else "seq"
        if kw == "par" and int(it.lstrip("ij")) % 2:
            # every other par loop shares its iterations dynamically in C
            # (same rules; drawn without the rng, so the seeds' cases stay)
            kw = "par_dynamic"
            self.tags.add("par_dynamic")
        return f"for {it} in {kw}({lo_hi}):"


# ----------------------------------------------------------------------
# generator 1: per-thread config across par loops
class PerThreadGen(_Base):
    """See the module docstring (1)."""

    def program(self, name):
        self.meta = dict(race=False, hand=False, pars=0)
        body = self.dev_write("c", "    ", False, shared=False)
        body.append("    Sh.k = (c + 1) % 4")
        for s in range(self.rng.randint(1, 3)):
            self.in_loop = False
            body += self.segment(s)
            # after a loop that writes Dev the checker knows no value of
            # Dev.m (for dev_get's precondition): write it again
            if self.in_loop or self.rng.random() < 0.5:
                body += self.dev_write(f"(c + {s + 1}) % 4", "    ", False,
                                       shared=False)
        return "\n".join([f"def {name}{SIG}:", PRE] + body)

    def dev_write(self, v, ind, in_par, shared=True):
        r = self.rng.random()
        self.meta["race"] |= in_par
        if in_par:
            self.tags.add("write_in_par")
        if r < 0.07:
            self.meta["hand"] = True
            self.tags.add("hand")
            return [f"{ind}Dev.m = {v}"]
        if r < 0.14:
            self.meta["hand"] = True
            self.tags.add("hand_callee")
            return [f"{ind}set_dev_hand({v})"]
        if r < 0.2 and shared:
            return [f"{ind}Sh.k = {v}"]
        if r < 0.3:
            self.tags.add("set_in_callee")
            return [f"{ind}set_dev({v})"]
        return [f"{ind}dev_set({v})"]

    def reads(self, it, col, ind):
        r = self.rng
        out = []
        for _ in range(r.randint(1, 2)):
            w = r.choice(["get", "get", "callee", "pre", "sh", "if"])
            cell = f"y[{it}, {col}:{col} + 1]"
            self.tags.add(f"read_{w}")
            if w == "get":
                out.append(f"{ind}dev_get({cell})")
            elif w == "pre":
                out.append(f"{ind}dev_ready({cell})")
            elif w == "callee":
                out.append(f"{ind}use_dev({cell})")
            elif w == "sh":
                out.append(f"{ind}sh_get({cell})")
            else:
                out += [f"{ind}if Sh.k == {r.randint(0, 3)}:",
                        f"{ind}    y[{it}, {col}] = x[{it}, {col}] + 1.0",
                        f"{ind}else:",
                        f"{ind}    y[{it}, {col}] = -1.0"]
        return out

    def loop(self, col, ind, mode=None):
        mode = mode or self.mode()
        it = self.it()
        self.meta["pars"] += mode != "seq"
        body = self.reads(it, col, ind + "    ")
        if self.rng.random() < 0.25:
            self.in_loop = True
            body = self.dev_write(f"({it} + c) % 4", ind + "    ",
                                  mode != "seq") + body
        return [ind + self.header(it, mode, "0, n")] + body

    def segment(self, s):
        r = self.rng
        kind = r.choice(["loop", "loop", "reconf", "nested", "nested",
                         "callee"])
        col = s % 4
        if kind == "loop":
            return self.loop(col, "    ")
        if kind == "reconf":
            # the value at each par loop's entry changes per j
            j = self.it("j")
            self.in_loop = True
            write = self.dev_write(f"(c + {j}) % 4", "        ", False)
            mode = self.mode()
            if mode != "seq":
                self.tags.add("reconfigured_par")
            return ([f"    for {j} in seq(0, 2):"] + write +
                    self.loop(col, "        ", mode))
        if kind == "nested":
            i, j = self.it(), self.it("j")
            m1, m2 = self.mode(), self.mode()
            self.meta["pars"] += (m1 != "seq") + (m2 != "seq")
            if "seq" not in (m1, m2):
                self.tags.add("par_in_par")
            return ["    " + self.header(i, m1, "0, n"),
                    "        " + self.header(j, m2, "0, 2"),
                    f"            dev_get(y[{i}, {j} + 2:{j} + 3])"]
        self.meta["pars"] += 1
        self.tags.add("callee_par")
        return [f"    dev_rows(n, y[0:n, {col}:{col} + 1])"]

    def expected(self):
        m = self.meta
        return "check" if m["race"] else "cgen" if m["hand"] else "ok"


# ----------------------------------------------------------------------
# generator 2: register (exclusive memory) buffers and par loops
class RegisterGen(_Base):
    """See the module docstring (2)."""

    def program(self, name):
        r = self.rng
        a = r.randint(0, 2)                    # allocation level
        f = r.randint(a, 2)                    # fill level
        u = r.randint(max(f, 1), 2)            # use level
        route = r.choice(["direct", "window", "callee"])
        if route == "callee" and f == 2:
            route = "direct"        # reg_row takes the whole row
        wl = r.randint(a, u)                   # where a window is made
        callee_par = a == 0 and f == 0 and r.random() < 0.3
        m1, m2 = self.mode(), self.mode()
        self.meta = dict(a=a, f=f, u=u, m=(None, m1, m2), route=route,
                         callee_par=callee_par)
        self.tags |= {route, f"alloc{a}"} | (
            {"callee_par"} if callee_par else set())
        if route == "window" and any(
                m != "seq" and a <= wl < d <= u
                for d, m in ((1, m1), (2, m2))):
            self.tags.add("window_outside_par")
        i, j = self.it(), self.it("j")
        lv = {0: [], 1: [], 2: []}
        # the allocation may be moved by a rewrite once built: out of its
        # loop, into the loop after it, or made in DRAM and set to REG
        move = r.choice([None, None, None, "lift", "sink", "set_memory"])
        if move == "set_memory" and (route == "callee" or callee_par):
            move = None             # reg_row(s) take a REG buffer only
        self.meta.update(move=move, iters=(i, j))
        lv[a].append("t: f32[4]" if move == "set_memory" else
                     "t: f32[4] @ REG")
        if f == 2:
            lv[2].append(f"t[{j}] = x[{i}, {j}] * 2.0")
        else:
            src = "0" if f == 0 else i
            lv[f] += ["for k in seq(0, 4):",
                      f"    t[k] = x[{src}, k] * 2.0 + 1.0"]
        buf = "t"
        if route == "window":
            lv[wl].append("w = t[0:4]")
            buf = "w"
        if u == 2:
            if route == "callee":
                lv[2].append(f"reg_row({buf}, x[{i}, 0:4], y[{i}, 0:4])")
            else:
                lv[2].append(f"y[{i}, {j}] = {buf}[{j}] - x[{i}, {j}]")
        else:
            lv[2].append(f"y[{i}, {j}] = x[{i}, {j}] * 0.5")
            if route == "callee":
                lv[1].append(f"reg_row({buf}, x[{i}, 0:4], y[{i}, 0:4])")
            else:
                lv[1] += ["for k in seq(0, 4):",
                          f"    y[{i}, k] = {buf}[k] + y[{i}, k]"]
        if u == 2 and route == "callee":
            # reg_row writes the whole row: only one j may run it
            lv[2][-1:] = [f"if {j} == 0:", "    " + lv[2][-1]]
        # the L2 loop goes after the level-1 statements that feed it, and
        # before a level-1 use
        pre1 = [s for s in lv[1]]
        post1 = []
        if u == 1:
            n_use = 1 if route == "callee" else 2
            pre1, post1 = lv[1][:-n_use], lv[1][-n_use:]
        body = ["    " + s for s in lv[0]]
        body.append("    " + self.header(i, m1, "0, n"))
        body += ["        " + s for s in pre1]
        body.append("        " + self.header(j, m2, "0, 4"))
        body += ["            " + s for s in lv[2]]
        body += ["        " + s for s in post1]
        if callee_par:
            body.append("    reg_rows(n, t, y)")
        return "\n".join([f"def {name}{SIG}:", PRE] + body)

    def schedule(self, p):
        """The move drawn; ``meta['a']`` becomes the level the allocation
        ends at (counted in the result). A refused move keeps ``p``."""
        move = self.meta["move"]
        if move is None:
            return p
        try:
            q = (p.set_memory("t", REG) if move == "set_memory" else
                 getattr(p, f"{move}_alloc")("t : _"))
        except SchedulingError:
            self.tags.add(f"{move}_refused")
            return p
        a = _alloc_level(q.ir().body, self.meta["iters"])
        self.tags.add(move if move == "set_memory" else
                      f"{move}_{self.meta['a']}_to_{a}")
        self.meta["a"] = a
        return q

    def expected(self):
        m = self.meta
        pars = [d for d in (1, 2) if m["m"][d] != "seq"]
        # a fill of all of t inside a par loop t is outside of; a fill of
        # t[j] in the j loop writes distinct elements
        if any(m["a"] < d <= m["f"] and not (d == 2 and m["f"] == 2)
               for d in pars):
            return "check"
        if any(m["a"] < d <= m["u"] for d in pars) or m["callee_par"]:
            return "cgen"
        return "ok"


def _alloc_level(stmts, iters, depth=0):
    """How many of the loops ``iters`` enclose the allocation of 't'."""
    for s in stmts:
        if type(s).__name__ == "Alloc" and s.name.name == "t":
            return depth
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if inner:
                d = depth + (getattr(s, "iter", None) is not None and
                             s.iter.name in iters and field == "body")
                got = _alloc_level(inner, iters, d)
                if got is not None:
                    return got
    return None


# ----------------------------------------------------------------------
# generator 3: hardware-defined config fields
class HardwareFieldGen(_Base):
    """See the module docstring (3)."""

    ROUTES = ["query_loop", "query_callee", "hand_top", "hand_loop",
              "hand_dead", "hand_callee", "fake_instr", "fake_callee",
              "cw_vmax", "cw_vl", "wc_vmax", "bind_vmax", "plain_vl"]
    INSERTED = ("cw_vmax", "cw_vl", "wc_vmax", "bind_vmax")

    def program(self, name):
        r = self.rng
        self.meta = dict(hand=False, cw=None)
        routes = r.sample(self.ROUTES, r.randint(0, 3))
        ins = [rt for rt in routes if rt in self.INSERTED]
        for rt in ins[1:]:
            routes.remove(rt)               # one inserted write each
        self.tags |= set(routes)
        body = ["    hw_query()"]
        for rt in routes:
            body += self.route(rt)
        i = self.it()
        body += ["    " + self.header(i, r.choice(["seq", "par", "sched"]),
                                      "0, n"),
                 f"        if {i} < HW.vmax - 6:",
                 f"            y[{i}, 0] = x[{i}, 0] * 2.0",
                 f"        if {i} < HW.vl:",
                 f"            y[{i}, 1] = x[{i}, 1] + 3.0"]
        t = self.meta["tail"] = self.it("t")
        body += [f"    for {t} in seq(0, n):",
                 f"        y[{t}, 3] = x[{t}, 3] + 1.0"]
        return "\n".join([f"def {name}{SIG}:", PRE, "    HW.vl = 2"] +
                         body)

    def route(self, rt):
        m = self.meta
        if rt in self.INSERTED:
            # (rewrite, field, value, at the end: nothing reads it after)
            op, field = rt.split("_")
            at_end = op != "cw" or self.rng.random() < 0.5
            m["cw"] = (op, field, self.rng.choice(["5", "8", "12"]), at_end)
            m["hand"] |= field == "vmax"
            return []
        m["hand"] |= rt in ("hand_top", "hand_loop", "hand_dead",
                            "hand_callee", "fake_instr", "fake_callee")
        k = self.it("k")
        return {
            "query_loop": [f"    for {k} in seq(0, 2):",
                           "        hw_query()"],
            "query_callee": ["    query_hw()"],
            "hand_top": ["    HW.vmax = 12"],
            "hand_loop": [f"    for {k} in seq(0, 2):",
                          f"        if {k} == 1:",
                          "            HW.vmax = 5",
                          "    hw_query()"],
            "hand_dead": ["    if n < 1:", "        HW.vmax = 5"],
            "hand_callee": ["    set_vmax_hand()"],
            "fake_instr": ["    fake_vmax()"],
            "fake_callee": ["    fake_in_callee()"],
            "plain_vl": [f"    for {k} in seq(0, 2):",
                         f"        HW.vl = {k} + 1"],
        }[rt]

    def schedule(self, p):
        cw = self.meta["cw"]
        if cw is None:
            return p
        op, field, val, at_end = cw
        last = p.body()[len(p.ir().body) - 1]
        if op == "bind":       # the tail loop's bound becomes HW.vmax
            return p.bind_config(p.find_loop(self.meta["tail"]).hi(), HW,
                                 field)
        if op == "wc":         # Exo's spelling, at a gap
            return p.write_config(last.after(), HW, field, val)
        anchor = last if at_end else p.body()[1]
        return p.configwrite_at(anchor, HW, field, val, before=not at_end)

    def expected(self):
        return "cgen" if self.meta["hand"] else "ok"


# ----------------------------------------------------------------------
# running a generator
def build(gen, name):
    """(procedure or None, stage of refusal or 'ok', source)."""
    src = gen.program(name)
    try:
        (p, ) = parse_procs_source(src, dict(SCOPE), filename=f"<{name}>")
        for n, it in enumerate(gen.sched):
            p = p.parallelize(p.find_loop(it), dynamic=bool(n % 2))
    except CHECK_ERRORS:
        return None, "check", src
    if hasattr(gen, "schedule"):
        try:
            p = gen.schedule(p)
        except SchedulingError:
            return None, "sched", src
    try:
        p.c_code_str()
    except MemGenError as e:
        return p, ("cgen", str(e)), src
    return p, "ok", src


def run_generator(cls, seed, count=N_PROCS):
    """Generate ``count`` procedures; (accepted procedures, counts of
    verdicts and of (case, verdict), disagreements with the rule)."""
    rng = random.Random(seed)
    accepted, counts, bad = [], {}, []
    for k in range(count):
        gen = cls(rng)
        name = f"{cls.__name__.lower()}_{k}"
        p, got, src = build(gen, name)
        want = gen.expected()
        stage = got if isinstance(got, str) else got[0]
        for key in [stage] + [(t, stage) for t in gen.tags]:
            counts[key] = counts.get(key, 0) + 1
        if stage == "sched" and want != "check":
            # configwrite_at refuses a write some later code reads; the
            # rule predicts only a write at the end (nothing reads after)
            assert not gen.meta["cw"][3], src
            continue
        if stage != want:
            bad.append(f"{name}: rule says {want}, exo_hl says {got}:\n{src}")
        if stage == "ok":
            accepted.append(p)
    return accepted, counts, bad


def batch(procs, name):
    """One procedure calling each of ``procs`` on its own slice of y."""
    lines = [f"def {name}(n: size, c: index, x: [f32][n, 4] @ DRAM, "
             f"y: f32[{len(procs)}, n, 4] @ DRAM):", PRE]
    lines += [f"    {p.name()}(n, c, x, y[{k}, 0:n, 0:4])"
              for k, p in enumerate(procs)]
    scope = dict(SCOPE, **{p.name(): p for p in procs})
    (b, ) = parse_procs_source("\n".join(lines), scope, filename=f"<{name}>")
    return b


def run_both(b, count, two_threads):
    """Compile ``b`` and run it on two threads for several (n, c); the
    differences from ``interpret()`` (list of str)."""
    from apps.common.blas_env import openmp_threads, set_openmp_threads
    # gcc: its OpenMP is always there (a clang without libomp would build
    # the par loops serially, and the two-thread oracle would see nothing)
    f = b.compile(cc="gcc", cflags="-O1 -Wall -Wextra -Werror")
    diffs = []
    before = openmp_threads()
    try:
        assert set_openmp_threads(2) or not two_threads
        for n, c in ((5, 0), (3, 1), (4, 2), (5, 3), (6, 1)):
            x = np.arange(n * 4, dtype=np.float32).reshape(n, 4) - 3.0
            y0 = np.full((count, n, 4), 9.0, np.float32)
            want, got = y0.copy(), y0.copy()
            st = ConfigState({HW.vmax: 8})
            st.race_check = True    # and no two par iterations conflict
            b.interpret(n, c, x, want, config_state=st)
            f(n, c, x, got)
            for k in range(count):
                if not np.array_equal(want[k], got[k]):
                    diffs.append(f"n={n} c={c} proc {k}: interpret "
                                 f"{want[k].tolist()} C {got[k].tolist()}")
    finally:
        set_openmp_threads(before or 1)
    return diffs


def _check(cls, seed, count, min_ok, cases):
    """Run a generator; assert the verdicts follow its rule, ``min_ok``
    accepted, each (case, verdict) of ``cases`` met, and the accepted
    procedures compute on two threads what interpret() does."""
    accepted, counts, bad = run_generator(cls, seed, count)
    print(f"\n[{cls.__name__}] {counts}")
    assert not bad, "\n\n".join(bad[:3])
    assert len(accepted) >= min_ok, counts
    missing = [c for c in cases if not counts.get(c)]
    assert not missing, (missing, counts)
    diffs = run_both(batch(accepted, f"{cls.__name__.lower()}_all"),
                     len(accepted), True)
    assert not diffs, "\n".join(diffs[:5])


# the seeds are fixed; with them each generator meets every case listed
def test_per_thread_config_across_par_loops():
    _check(PerThreadGen, SEED + 10, 40, 15, [
        "check", "cgen", ("write_in_par", "check"), ("hand", "cgen"),
        ("hand_callee", "cgen"), ("reconfigured_par", "ok"),
        ("par_in_par", "ok"), ("callee_par", "ok"), ("parallelize", "ok"),
        ("parallelize", "check"), ("set_in_callee", "ok"),
        ("read_pre", "ok"), ("read_sh", "ok"), ("read_if", "ok"),
        ("par_dynamic", "ok"), ("par_dynamic", "check")])


def test_register_buffers_and_par_loops():
    _check(RegisterGen, SEED + 100, 40, 15, [
        "check", "cgen", ("window_outside_par", "cgen"), ("window", "ok"),
        ("direct", "cgen"), ("callee", "cgen"), ("callee", "ok"),
        ("callee_par", "cgen"), ("alloc2", "ok"), ("parallelize", "cgen"),
        ("lift_1_to_0", "cgen"), ("lift_refused", "ok"),
        ("sink_0_to_1", "ok"), ("set_memory", "cgen"),
        ("set_memory", "ok"), ("par_dynamic", "ok"),
        ("par_dynamic", "cgen")])


def test_hardware_field_writes():
    _check(HardwareFieldGen, SEED + 10, 40, 8, [
        "cgen", ("cw_vmax", "cgen"), ("cw_vl", "ok"), ("hand_top", "cgen"),
        ("hand_loop", "cgen"), ("hand_dead", "cgen"),
        ("hand_callee", "cgen"), ("fake_instr", "cgen"),
        ("fake_callee", "cgen"), ("query_callee", "ok"),
        ("query_loop", "ok"), ("plain_vl", "ok"), ("wc_vmax", "cgen"),
        ("bind_vmax", "cgen")])


# ----------------------------------------------------------------------
# the oracles fail when the library's checks are off
def test_per_thread_oracle_sees_a_missing_thread_entry(monkeypatch):
    """Without the per-iteration load (thread_entry), the second thread
    runs dev_get with its own stale mode: the two-thread run differs."""
    from exo_hl.codegen_c import proc_emit
    monkeypatch.setattr(proc_emit.ProcEmitter, "thread_entry",
                        lambda self, body, depth: None)
    accepted, counts, bad = run_generator(PerThreadGen, SEED + 10, 12)
    assert not bad and accepted
    assert run_both(batch(accepted, "tsf_no_entry"), len(accepted), True)


def test_register_oracle_sees_a_missing_par_rule(monkeypatch):
    """Without the par-loop rule of exclusive memories, the procedures the
    rule refuses are accepted (a verdict against the rule), and a buffer
    filled by one thread and read by the other gives other values."""
    from exo_hl.codegen_c import memory_rules
    monkeypatch.setattr(memory_rules._Checker, "check_par_body",
                        lambda self, s, live: None)
    accepted, counts, bad = run_generator(RegisterGen, SEED + 100, 40)
    assert any("rule says cgen, exo_hl says ok" in b for b in bad)
    assert run_both(batch(accepted, "tsf_no_par_rule"), len(accepted), True)


def test_hardware_field_oracle_sees_a_missing_check(monkeypatch):
    from exo_hl.codegen_c import emit
    monkeypatch.setattr(emit, "check_hardware_fields", lambda procs: None)
    accepted, counts, bad = run_generator(HardwareFieldGen, SEED + 10, 10)
    assert any("rule says cgen, exo_hl says ok" in b for b in bad)
