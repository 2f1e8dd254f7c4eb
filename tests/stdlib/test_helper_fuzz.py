"""Random stdlib helpers on random targets of random procedures (audit 15b).

Each procedure is two to four *nests* (a nest writes a buffer of its own,
``o{k}`` or ``s{k}``) that share their loop and buffer names: elementwise
and reduction nests, sums over two loops into one location (into an
integer: no reordering allowed), a stage with a producer loop and a buffer
``t``, a scalar ``c`` assigned in the loop (``hoist``), literals
(``bind_const``), a loop shadowing another of its name, a triangle, lower
bounds above zero, a guarded body; at the top, in a loop, split between
the branches of an ``if``, or repeated in both branches (the same patterns
match twice); in ``f32`` or another precision.

A helper is pointed at one nest by a pattern (``'i #k'``, ``'c = _ #k'``),
by a cursor, or by a *stale* cursor: one taken before another helper or a
primitive rewrote another nest (it must be forwarded to its image, checked
by the markers of ``test_cursor_forwarding``), or one into code that a
rewrite removed (unrolled, or a producer inlined): then the helper must
refuse. When it accepts,

- every other nest prints as before (what ``test_target_fuzz`` checks;
  a hoisted or bound scalar at the top is not part of a nest; names are
  compared modulo the naming rule's respelling), and the named one
  changed (for a twin, the other copy did not);
- every cursor of the procedure forwards to its image through the
  helper's steps (``forwarding_failures``);
- the result computes what the procedure computes, in ``interpret()`` on
  small integers (exactly) and on special values (NaN, infinities, signed
  zeros, subnormals, large values: bit for bit, any two NaNs equal; a
  float location summed into with a reordered ``+=`` only up to rounding
  and the sign of a zero, which the semantics allow; an FMA instruction's
  single rounding in compiled code), and for a sample compiled too.

Three more generators: chains of helpers named by cursors of the first
procedure; Halide-style helpers on one of two look-alike pipelines; and
``vectorize`` of random lane-wise bodies (f32, 16-bit) compiled and run
on special values, masked tails included.

``EXO_HL_HELPER_FUZZ_S`` (budget in seconds) and ``EXO_HL_HELPER_FUZZ_SEED``
for longer runs offline (clean at the time of writing: about 5000 cases,
1500 chains, 3000 pipelines and 350 compiled vectorizations).
"""
from __future__ import annotations

import os
import random
import re
import time

import numpy as np

from exo_hl import SchedulingError
from exo_hl.core_ir import types as T
from exo_hl.core_ir.nodes import IR
from exo_hl.hw_libs.avx2 import AVX2, INSTRS
from exo_hl.hw_libs.avx512 import AVX512
from exo_hl.hw_libs.avx512 import INSTRS as INSTRS_512
from exo_hl.stdlib import (bind_const, compute_at, compute_root, hoist,
                           inline_producer, pack, parallel_outer, store_at,
                           tile, unroll_and_jam, vectorize,
                           vectorize_reduction, vectorize_reduction_rows)
from source_modules import load_source

# kind: (lines of the nest, {k}: its number; {T}: its precision), what it
# writes; loops: the loop names of the nest, outermost first
_KINDS = {
    "scale": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
               "        o{k}[i, j] = x[i, j] * 2.0"], "o", "ij"),
    "add": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
             "        o{k}[i, j] = x[i, j] + x[j, i]"], "o", "ij"),
    "relu": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
              "        o{k}[i, j] = relu(x[i, j])"], "o", "ij"),
    "sum": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
             "        s{k}[i] += x[i, j] * x[i, j]"], "s", "ij"),
    "dot": (["for j in seq(0, {hi}):",
             "    s{k}[0] += x[0, j] * x[1, j]"], "s", "j"),
    "row": (["for j in seq(0, {hi}):",
             "    o{k}[0, j] = x[1, j] * 2.0"], "o", "j"),
    "fma": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
             "        o{k}[i, j] += x[i, j] * x[i + 1, j]"], "o", "ij"),
    "scalar": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
                "        c: f32", "        c = 0.5",
                "        o{k}[i, j] = x[i, j] * c"], "o", "ij"),
    "stage": (["t: f32[17]", "for i in seq(0, 17):",
               "    t[i] = x[i, 1] * 3.0", "for i in seq(0, {hi}):",
               "    o{k}[0, i] = t[i] + t[i + 1]"], "o", "ii"),
    "shadow": (["for i in seq(0, 4):", "    for i in seq(0, {hi}):",
                "        o{k}[i, 2] = x[i, 3] - 1.0"], "o", "ii"),
    # edge shapes: a triangle, lower bounds above 0, a guarded body
    "tri": (["for i in seq(0, 8):", "    for j in seq(0, i + 1):",
             "        o{k}[i, j] = x[i, j] * 2.0"], "o", "ij"),
    "lo": (["for i in seq(1, 8):", "    for j in seq(2, {hi} + 2):",
            "        o{k}[i, j - 2] = x[i - 1, j] + x[i, j - 2]"], "o", "ij"),
    "guard": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
               "        if i < j:", "            o{k}[i, j] = x[i, j]"],
              "o", "ij"),
    # sums whose order the loops around them set: into one location
    # (reordering them is allowed into a float), and an f32 value into a
    # location of the procedure's precision (into an integer, truncated
    # and saturated at each step: no order but the program's)
    "total": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
               "        s{k}[0] += x[i, j]"], "s", "ij"),
    "mixed": (["for i in seq(0, 8):", "    for j in seq(0, {hi}):",
               "        s{k}[j] += xf[i, j] * 0.5"], "s", "ij"),
}
_SUMS = ("sum", "dot", "fma", "total", "mixed")

_FLOAT = ("f32", "f64", "f16", "bf16")


def _source(rng, n_nests):
    """The text of a random procedure ``f``, its nests' kinds, and the
    precision of its data."""
    kinds = [rng.choice(sorted(_KINDS)) for _ in range(n_nests)]
    prec = "f32" if rng.random() < 0.7 else rng.choice(
        ["f64", "f16", "i32", "i16", "ui16", "i8"])
    wrap = rng.choice(["top", "loop", "if", "twin"])
    args = ["n: size", f"x: {prec}[18, 18]", f"z: {prec}[1]",
            "xf: f32[18, 18]"]
    nests = []
    for k, kind in enumerate(kinds):
        lines, out, _ = _KINDS[kind]
        args.append(f"s{k}: {prec}[16]" if out == "s" else
                    f"o{k}: {prec}[16, 16]")
        pre = ["z[0] = 1.0"] if rng.random() < 0.3 else []
        hi = rng.choice(["8", "n", "16", "n - 1"])
        body = [ln.format(k=k, hi=hi) for ln in lines]
        if kind == "stage":
            # its own scope: the stages of two nests may both say `t`
            body = ["for r in seq(0, 1):"] + ["    " + ln for ln in body]
        nests.append(pre + body)
    body = ["assert n <= 16"]
    if wrap == "if":
        cut = rng.randint(1, n_nests - 1)
        body.append("if n > 4:")
        body += ["    " + ln for nest in nests[:cut] for ln in nest]
        body.append("else:")
        body += ["    " + ln for nest in nests[cut:] for ln in nest]
    elif wrap == "twin":
        # every nest twice, once in each branch: the same patterns match
        # in both
        for branch in ("if n > 4:", "else:"):
            body.append(branch)
            body += ["    " + ln for nest in nests for ln in nest]
    elif wrap == "loop":
        body.append("for r in seq(0, 2):" if "stage" not in kinds
                    else "for w in seq(0, 2):")
        body += ["    " + ln for nest in nests for ln in nest]
    else:
        body += [ln for nest in nests for ln in nest]
    if prec not in _FLOAT:
        body = [ln.replace("relu(x[i, j])", "x[i, j]")
                .replace("2.0", "2").replace("3.0", "3").replace("1.0", "1")
                .replace("0.5", "5").replace("c: f32", f"c: {prec}")
                .replace("t: f32[", f"t: {prec}[") for ln in body]
    elif prec != "f32":
        body = [ln.replace("c: f32", f"c: {prec}")
                .replace("t: f32[", f"t: {prec}[") for ln in body]
    text = ("from __future__ import annotations\n"
            "from exo_hl import *\n\n\n@proc\n"
            f"def f({', '.join(args)}):\n"
            + "".join(f"    {ln}\n" for ln in body))
    return text, kinds, prec, wrap == "twin"


def _write_of(kind, k, occ=None):
    """The pattern of nest ``k``'s write (its ``occ``-th copy: a nest
    repeated in both branches of an ``if``)."""
    out = _KINDS[kind][1]
    op = "+=" if kind in _SUMS else "="
    return f"{out}{k}[_] {op} _" + ("" if occ is None else f" #{occ}")


def _depth(kind):
    """How many statements enclose the nest's write, up to the nest."""
    return 2 if kind == "stage" else len(_KINDS[kind][2]) + (
        kind == "guard")


def nest_texts(p, kinds):
    """The text of each nest (the outermost statement of the nest around
    its write), None where the write is not found (now a call) or not as
    deep."""
    out = []
    for k, kind in enumerate(kinds):
        try:
            copies = []
            for c in p.find(_write_of(kind, k), many=True):
                for level in range(_depth(kind)):
                    c = c.parent()
                    # a nest is loops around its write (and the guard's
                    # if): a write of another shape (pack's copy-out of
                    # the buffer) has no nest, not the if around it all
                    if c.is_if() and not (kind == "guard" and level == 0):
                        c = None
                        break
                if c is None:
                    copies.append(None)
                    continue
                # modulo the naming rule's renaming (a scalar hoisted to
                # the top renames the other nests' scalars of its name)
                copies.append(re.sub(r"\b([a-z])_[0-9]+\b", r"\1",
                                     c.text()))
            out.append(copies)
        except SchedulingError:
            out.append(None)
    return out


# ----------------------------------------------------------------------
# the loops and statements of a nest
def nest_loops(p, kinds, t, occ=0):
    """The loops of nest ``t`` (cursors of ``p``), outermost first; for a
    stage, its producer loop and its consumer loop."""
    w = p.find(_write_of(kinds[t], t, occ))
    if kinds[t] == "stage":
        scope = w.parent().parent()             # for r
        loops = [s for s in scope.body() if s.is_loop()]
        if len(loops) != 2:         # (the producer was inlined)
            raise SchedulingError("not a stage any more")
        return loops
    if kinds[t] == "guard":
        w = w.parent()
    loops = [w.parent()]
    if len(_KINDS[kinds[t]][2]) == 2:
        loops.insert(0, loops[0].parent())
    return loops


def _loop_pattern(p, c, rng):
    """A pattern naming the loop cursor ``c``: ``'name #k'`` (``'name'``
    for the first)."""
    name = c.name()
    k = [x.path() for x in p.find_loop(name, many=True)].index(c.path())
    return name if k == 0 and rng.random() < 0.5 else f"{name} #{k}"


def _stmt_pattern(p, c, pattern):
    """``'pattern #k'`` naming the statement ``c`` among the matches."""
    k = [x.path() for x in p.find(pattern, many=True)].index(c.path())
    return f"{pattern} #{k}"


def _literal(p, kinds, t, occ=0):
    """The literal in the right-hand side of nest ``t``'s write, or None."""
    w = p.find(_write_of(kinds[t], t, occ))
    found = []
    stack = [w.rhs()]
    while stack:
        e = stack.pop()
        if type(e.node()).__name__ == "Const":
            found.append(e)
        elif type(e.node()).__name__ != "Read":
            stack.extend(e.args())
    return found[0] if found else None


_HELPERS = ["tile", "unroll_and_jam", "parallel_outer", "vectorize",
            "vectorize_reduction", "vectorize_reduction_rows", "hoist",
            "bind_const", "compute_at", "inline_producer", "compute_root",
            "store_at", "pack"]


# the helpers most likely to accept a nest of each kind
_FITS = {
    "sum": ["vectorize_reduction", "vectorize_reduction_rows", "tile",
            "unroll_and_jam"],
    "dot": ["vectorize_reduction", "pack"],
    "scalar": ["hoist", "bind_const", "tile"],
    "stage": ["compute_at", "inline_producer", "store_at", "compute_root",
              "vectorize"],
    "scale": ["vectorize", "bind_const", "tile", "parallel_outer"],
    "row": ["vectorize", "bind_const", "pack"],
    "fma": ["vectorize", "unroll_and_jam", "parallel_outer"],
    "total": ["tile", "unroll_and_jam", "parallel_outer",
              "vectorize_reduction"],
    "mixed": ["tile", "unroll_and_jam", "parallel_outer",
              "vectorize_reduction_rows"],
    "relu": ["vectorize", "pack", "parallel_outer"],
    "tri": ["tile", "unroll_and_jam", "parallel_outer", "bind_const"],
    "lo": ["tile", "vectorize", "unroll_and_jam", "pack"],
    "guard": ["tile", "parallel_outer", "unroll_and_jam", "compute_root"],
}


def _isa(rng, prec):
    """A vector library and the lanes of one of its registers for
    ``prec`` (16-bit integers have twice the lanes of ``f32``)."""
    mem, instrs, lanes = rng.choice([(AVX2, INSTRS, 8),
                                     (AVX512, INSTRS_512, 16)])
    return mem, instrs, lanes * (2 if prec in ("i16", "ui16") else 1)


def helper_call(rng, kinds, t, view, how=None, prec="f32", occ=0):
    """``(description, f)``: ``f(p, name)`` applies a random helper to
    nest ``t`` of ``p``, where ``name(cursor)`` gives the helper's
    argument for a cursor (itself, a pattern, or a stale cursor of an
    older procedure); the cursors are found in ``view[0]`` (``p``, or the
    older procedure)."""
    kind = kinds[t]
    two = _depth(kind) == 2 or kind == "stage"
    if how is None and rng.random() < 0.6:
        how = rng.choice(_FITS.get(kind, _HELPERS))
    how = how or rng.choice(_HELPERS)
    mem, instrs, width = _isa(rng, prec)
    tail = rng.choice(["perfect", "cut", "mask"])

    def loops(_):
        return nest_loops(view[0], kinds, t, occ)

    def write(_):
        return view[0].find(_write_of(kind, t, occ))

    def lit(_):
        return _literal(view[0], kinds, t, occ)

    if how == "tile" and two:
        tl = rng.choice(["perfect", "cut", "guard"])
        return f"tile({tl})", lambda p, nm: tile(
            p, nm(loops(p)[0]), nm(loops(p)[1]), 4, rng.choice([2, 4, 3]),
            tail=tl)
    if how == "unroll_and_jam" and two:
        return how, lambda p, nm: unroll_and_jam(p, nm(loops(p)[0]), 2)
    if how == "parallel_outer":
        return how, lambda p, nm: parallel_outer(p, nm(loops(p)[-1]))
    if how == "vectorize_reduction":
        return how, lambda p, nm: vectorize_reduction(
            p, nm(loops(p)[-1]), width, mem, instrs)
    if how == "vectorize_reduction_rows" and two:
        return how, lambda p, nm: vectorize_reduction_rows(
            p, nm(loops(p)[0]), rng.choice([2, 3]), nm(loops(p)[1]), width,
            mem, instrs)
    if how == "hoist" and kind == "scalar":
        return how, lambda p, nm: hoist(p, nm(write(p).prev()))
    if how == "bind_const":
        return how, lambda p, nm: bind_const(
            p, nm(lit(p)), rng.choice(["c", "h", "x"]),
            precision=rng.choice(["f32", "f64", "i32"]))
    if how == "compute_at" and kind == "stage":
        return how, lambda p, nm: compute_at(
            p, nm(loops(p)[0]), nm(loops(p)[1]))
    if how == "inline_producer" and kind == "stage":
        return how, lambda p, nm: inline_producer(p, nm(loops(p)[0]))
    if how == "compute_root":
        return how, lambda p, nm: compute_root(p, nm(write(p)))
    if how == "store_at" and kind == "stage":
        return how, lambda p, nm: store_at(
            p, nm(write(p).parent().parent().body()[0]), None,
            size=rng.choice([17, 18]))
    if how == "pack":
        win = rng.choice(["x[0:18, 0:18]", "x[0:17, 0:16]",
                          "o{k}[0:16, 0:16]".format(k=t),
                          "s{k}[0:16]".format(k=t)])
        lay = rng.choice(["row", "transposed"])
        # the block: a loop (cursor or pattern), a block cursor of one
        # statement, or the pair (write, write)
        how_block = rng.choice(["loop", "loop", "block", "pair"])

        def block(p, nm):
            if how_block == "block":
                return nm(loops(p)[0].as_block())
            if how_block == "pair":
                return (nm(write(p)), nm(write(p)))
            return nm(loops(p)[0])
        return f"pack({lay})", lambda p, nm: pack(p, win, block(p, nm),
                                                  lay)
    return f"vectorize({tail})", lambda p, nm: vectorize(
        p, nm(loops(p)[-1]), width, mem, instrs, tail=tail)


def namer(p, mode, rng, write_patterns):
    """``name(cursor)`` for the helper's arguments: the cursor, or a
    pattern that names it in ``p``."""
    def name(c):
        if c is None:
            raise SchedulingError("no such target")
        if mode == "cursor" or type(c).__name__ == "BlockCursor":
            return c
        if type(c).__name__ == "ExprCursor":
            lit = c.text()
            k = [x.expr_path() == c.expr_path()
                 and x.stmt_path() == c.stmt_path()
                 for x in p.find(lit, many=True)].index(True)
            return f"{lit} #{k}"
        if c.is_loop():
            return _loop_pattern(p, c, rng)
        for pat in write_patterns + ["t : _", "c = _"]:
            try:
                return _stmt_pattern(p, c, pat)
            except (ValueError, SchedulingError):
                continue
        return c
    return name


# ----------------------------------------------------------------------
# running both procedures
_SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0,
                     -1.0, 0.5, 3.0, 1e-40, -1e-40, 6e4, -7e4, 1e30,
                     0.1], dtype=np.float64)


def _shape(t, sizes):
    return tuple(int(h.val) if isinstance(h, IR.Const) else sizes[h.name.name]
                 for h in t.hi)


def make_args(p, sizes, rng, special):
    """Arguments of ``p``: small integers, or (``special``) values drawn
    from ``_SPECIAL`` (floats) or the whole range (integers)."""
    out = {}
    for a in p.ir().args:
        name, t = a.name.name, a.type
        if T.is_control(t):
            out[name] = sizes[name]
            continue
        if isinstance(t, IR.Tensor):
            dt, shape = np.dtype(T.NUMPY_DTYPES[t.type]), _shape(t, sizes)
        else:                       # a scalar: one element
            dt, shape = np.dtype(T.NUMPY_DTYPES[t]), (1, )
        if not special:
            out[name] = rng.integers(-4, 5, size=shape).astype(dt)
        elif dt.kind == "f":
            with np.errstate(over="ignore"):
                out[name] = rng.choice(_SPECIAL, size=shape).astype(dt)
        else:
            info = np.iinfo(dt)
            out[name] = rng.integers(info.min, info.max, size=shape,
                                     endpoint=True).astype(dt)
    return out


def _run(p, args, fn=None):
    a = {k: (v.copy() if isinstance(v, np.ndarray) else v)
         for k, v in args.items()}
    pos = [a[x.name.name] for x in p.ir().args]
    with np.errstate(all="ignore"):
        (fn or p.interpret)(*pos)
    return a


def differs(ref, got, summed):
    """Where ``got`` differs from ``ref`` (one buffer): bit for bit with
    any two NaNs equal; for a buffer ``summed`` into with a reordered
    ``+=``, up to rounding and the sign of a zero; ``summed='fused'`` (an
    FMA instruction's one rounding), up to rounding where both are
    finite. None if they agree."""
    if ref.dtype.kind != "f":
        bad = ref != got
    else:
        r, g = ref.astype(np.float64), got.astype(np.float64)
        rn, gn = np.isnan(r), np.isnan(g)
        same_bits = ref.view(f"u{ref.itemsize}") == got.view(
            f"u{ref.itemsize}")
        bad = ~(same_bits | (rn & gn))
        if summed:
            with np.errstate(all="ignore"):
                close = (r == g) | (np.abs(r - g) <= 1e-3 * np.maximum(
                    np.abs(r), np.abs(g)))
            bad &= ~(close & ~rn & ~gn)
        if summed == "fused":
            # a product that overflows when rounded alone may not when
            # fused: inf + -inf (NaN) against -inf, an infinity against
            # a large finite value
            bad &= np.isfinite(r) & np.isfinite(g)
    if not bad.any():
        return None
    k = tuple(int(v) for v in np.argwhere(bad)[0])
    return f"at {k}: {ref[k]!r} vs {got[k]!r}"


def check_agree(p, q, sizes_list, rng, summed=(), compiled=False):
    """``q`` computes what ``p`` computes on each size, on small integers
    and on special values (``interpret()``, and compiled C)."""
    fp = p.compile() if compiled else None
    fq = q.compile() if compiled else None
    fused = "fmadd" in str(q)
    for sizes in sizes_list:
        for special in (False, True):
            args = make_args(p, sizes, rng, special)
            ref = _run(p, args)
            runs = [("interpret", _run(q, args))]
            if compiled:
                runs += [("C of p", _run(p, args, fp)),
                         ("C of q", _run(q, args, fq))]
            for what, got in runs:
                for k, v in ref.items():
                    if not isinstance(v, np.ndarray):
                        continue
                    # an FMA instruction rounds once where its body
                    # (and interpret()) rounds twice (docs/semantics.md)
                    lax = special and (k in summed and what != "C of p"
                                       or what == "C of q" and fused)
                    if lax and what == "C of q" and fused:
                        lax = "fused"
                    d = differs(v, got[k], lax)
                    assert d is None, (
                        f"{what}: buffer {k} differs {d}, sizes={sizes}, "
                        f"special={special}")


# ----------------------------------------------------------------------
# the property
def _pre_rewrite(rng, p0, kinds, u, prec):
    """``p0`` with nest ``u`` rewritten (a helper or a primitive), or
    None."""
    lp = rng.choice(nest_loops(p0, kinds, u))
    steps = [lambda: p0.split(lp, 2, "pa", "pb", tail="cut"),
             lambda: p0.cut_loop(lp, 3),
             lambda: p0.unroll(lp),
             lambda: p0.add_guard(lp, "n > 2"),
             lambda: p0.fission_after(lp.body()[0])]
    for _ in range(2):
        _, f = helper_call(rng, kinds, u, [p0], prec=prec)
        steps.insert(0, lambda f=f: f(p0, lambda c: c))
    for step in steps:
        try:
            q = step()
        except SchedulingError:
            continue
        if q is not None:
            return q
    return None


def _deleting(rng, p0, kinds, t, occ):
    """``p0`` with a loop of nest ``t`` unrolled, or its producer inlined
    (the cursors into it have no image), or None."""
    loops = nest_loops(p0, kinds, t, occ)
    rng.shuffle(loops)
    if kinds[t] == "stage" and rng.random() < 0.5:
        try:
            return inline_producer(p0, nest_loops(p0, kinds, t, occ)[0])
        except SchedulingError:
            pass
    for lp in loops:
        try:
            return p0.unroll(lp)
        except SchedulingError:
            continue
    return None


def _summed(kinds, prec, hows):
    """The buffers whose float sums the helpers ``hows`` may reorder:
    every ``+=`` into a float after ``vectorize_reduction``; one location
    summed over two loops (``total``, ``mixed``) after any helper. A sum
    into an integer location is never among them."""
    if prec not in _FLOAT:
        return ()
    vr = any("reduction" in h for h in hows)
    return {_KINDS[kd][1] + str(k) for k, kd in enumerate(kinds)
            if kd in ("total", "mixed") or (vr and kd in _SUMS)}


def one_case(rng, tmp_path, n, stats, compile_it=False):
    """One random procedure, target, mode and helper; asserts the
    property, returns a description of what was tried."""
    from test_cursor_forwarding import forwarding_failures, mark, tagged
    n_nests = rng.randint(2, 4)
    text, kinds, prec, twin = _source(rng, n_nests)
    f = load_source(tmp_path, f"helper_fuzz_{n}", text).f
    p0 = tagged(f)
    t = rng.randrange(n_nests)
    occ = rng.randrange(2) if twin else 0
    mode = rng.choice(["pattern", "cursor", "stale", "stale", "deleted"])
    p, view = p0, [p0]
    if mode == "stale" and n_nests > 1:
        u = rng.choice([k for k in range(n_nests) if k != t])
        p = _pre_rewrite(rng, p0, kinds, u, prec)
    elif mode == "deleted":
        p = _deleting(rng, p0, kinds, t, occ)
    if p is None:
        return "no pre-rewrite"
    if mode in ("pattern", "cursor"):
        view = [p]
    how, call = helper_call(rng, kinds, t, view, prec=prec, occ=occ)
    lost = []

    def name(c):
        if c is None:
            raise SchedulingError("no such target")
        if mode == "pattern":
            return namer(p, "pattern", rng, [_write_of(k_, i) for i, k_ in
                                             enumerate(kinds)])(c)
        if mode in ("stale", "deleted"):
            try:
                c2 = p.forward(c)
            except SchedulingError:
                lost.append(c)
                return c
            if type(c).__name__ == "StmtCursor":
                assert mark(c2.node()) == mark(c.node()), (
                    f"{c!r} forwarded to {c2!r}, not its image, in\n{p}")
        return c
    where = f"{how} by {mode} on nest {t} (copy {occ}) of\n{text}\n"
    try:
        q = call(p, name)
    except SchedulingError:
        stats["refused"] += 1
        return where
    assert not lost, f"{where}accepted a cursor with no image: {lost}\n{q}"
    stats["accepted"] += 1
    stats[how] = stats.get(how, 0) + 1
    before, after = nest_texts(p, kinds), nest_texts(q, kinds)
    where += f"gave\n{q}"
    for k in range(n_nests):
        if k != t and mode != "deleted":
            assert after[k] == before[k], f"nest {k} changed: {where}"
    # (compute_root splits the loops around the nest, not the nest)
    if mode != "deleted" and str(q) != str(p) and how != "compute_root":
        assert after[t] != before[t], f"nest {t} unchanged: {where}"
    if twin and mode != "deleted" and before[t] and after[t]:
        # the other branch's copy (the first, or the last) is as it was
        other = -1 if occ == 0 else 0
        assert after[t][other] == before[t][other], (
            f"the other copy of nest {t} changed: {where}")
    # every cursor of p forwards to its image through the helper's steps
    chain = [c for _, c in q.derivation()]
    chain = chain[[id(c) for c in chain].index(id(p)):]
    bad = forwarding_failures(p, q, chain)
    assert not bad, f"forwarding through {how}:\n" + "\n".join(bad[:4]) + \
        f"\n{where}"
    q.c_code_str()      # a loop left staged in vector memory: MemGenError
    summed = _summed(kinds, prec, [how])
    sizes = [{"n": v} for v in rng.sample([1, 3, 8, 13, 16], 3)]
    check_agree(p0, q, sizes, np.random.default_rng(rng.randrange(1 << 30)),
                summed, compiled=compile_it)
    return where


def _go_on(t0, budget, enough):
    """Whether a fuzz loop goes on: for its budget, and on a slow machine
    past it until it has ``enough`` accepted cases (at most 25 s)."""
    spent = time.time() - t0
    return spent < budget or (not enough and spent < 25)


def test_helpers_act_on_the_named_node_and_keep_the_result(tmp_path):
    budget = float(os.environ.get("EXO_HL_HELPER_FUZZ_S", 10))
    seed = int(os.environ.get("EXO_HL_HELPER_FUZZ_SEED", 1515))
    rng = random.Random(seed)
    stats = {"refused": 0, "accepted": 0}
    t0 = time.time()
    n = compiled = 0
    while _go_on(t0, budget, stats["accepted"] >= 5):
        compile_it = compiled < 3 and rng.random() < 0.1
        one_case(rng, tmp_path, n, stats, compile_it)
        n += 1
        compiled += compile_it
    print(f"helper fuzz: {n} cases, {stats}")
    assert stats["accepted"] >= 5


def one_chain(rng, tmp_path, n, stats, compile_it=False):
    """Two to four helpers in a row, each on a random nest of the
    procedure the one before made, named by pattern, by a cursor of that
    procedure or by a cursor of the first one (forwarded through every
    step so far); each step changes its nest only, every cursor of the
    first procedure forwards to its image through the whole chain, and
    the last procedure computes what the first does."""
    from test_cursor_forwarding import forwarding_failures, mark, tagged
    n_nests = rng.randint(2, 4)
    text, kinds, prec, twin = _source(rng, n_nests)
    p0 = tagged(load_source(tmp_path, f"helper_chain_{n}", text).f)
    p, log = p0, []
    for _ in range(rng.randint(2, 4)):
        t = rng.randrange(n_nests)
        occ = rng.randrange(2) if twin else 0
        mode = rng.choice(["pattern", "cursor", "root"])
        view = [p0 if mode == "root" else p]
        try:
            how, call = helper_call(rng, kinds, t, view, prec=prec, occ=occ)
        except SchedulingError:
            continue
        pats = [_write_of(k_, i) for i, k_ in enumerate(kinds)]

        def name(c, p=p, mode=mode):
            if c is None:
                raise SchedulingError("no such target")
            if mode == "pattern":
                return namer(p, "pattern", rng, pats)(c)
            if mode == "root" and type(c).__name__ == "StmtCursor":
                c2 = p.forward(c)
                assert mark(c2.node()) == mark(c.node()), (
                    f"{c!r} forwarded to {c2!r} after {log}")
            return c
        try:
            q = call(p, name)
        except SchedulingError:
            stats["refused"] += 1
            continue
        stats["accepted"] += 1
        log.append(f"{how} by {mode} on nest {t} (copy {occ})")
        before, after = nest_texts(p, kinds), nest_texts(q, kinds)
        where = f"{log} of\n{text}\ngave\n{q}"
        for k in range(n_nests):
            if k != t:
                assert after[k] == before[k], f"nest {k} changed: {where}"
        p = q
    if p is p0:
        return
    chain = [c for _, c in p.derivation()]
    bad = forwarding_failures(p0, p, chain)
    assert not bad, "\n".join(bad[:4]) + f"\n{log} of\n{text}\ngave\n{p}"
    p.c_code_str()
    summed = _summed(kinds, prec, log)
    sizes = [{"n": v} for v in rng.sample([1, 3, 8, 13, 16], 2)]
    try:
        check_agree(p0, p, sizes, np.random.default_rng(n), summed,
                    compiled=compile_it)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{log} of\n{text}\ngave\n{p}") from None


def test_helper_chains_with_cursors_of_the_first_procedure(tmp_path):
    budget = float(os.environ.get("EXO_HL_HELPER_FUZZ_S", 6))
    seed = int(os.environ.get("EXO_HL_HELPER_FUZZ_SEED", 1515))
    rng = random.Random(seed)
    stats = {"refused": 0, "accepted": 0}
    t0 = time.time()
    n = 0
    while _go_on(t0, budget, stats["accepted"] >= 3):
        one_chain(rng, tmp_path, n, stats, compile_it=n % 12 == 5)
        n += 1
    print(f"helper chains: {n} procedures, {stats}")
    assert stats["accepted"] >= 3

# ----------------------------------------------------------------------
# Halide-style pipelines: a producer of rows t and a consumer reading
# rows at offsets, twice (each in its own ``if``, the same names), then a
# random sequence of compute_at / store_at / inline_producer /
# compute_root / tile on one of them
def _pipeline(rng, k):
    offs = sorted(rng.sample([0, 1, 2], rng.randint(1, 3)))
    a = rng.choice([0, 1])
    op = rng.choice(["x[i, c + {a}] * 2.0", "relu(x[i, c + {a}])",
                     "x[i, c + {a}] - x[i, c]"]).format(a=a)
    read = " + ".join(f"t[r + {o}, c]" for o in offs)
    return [f"if H > {k}:",
            "    t: f32[H + 2, W]",
            "    for i in seq(0, H + 2):",
            "        for c in seq(0, W):",
            f"            t[i, c] = {op}",
            "    for r in seq(0, H):",
            "        for c in seq(0, W):",
            f"            y{k}[r, c] = {read}"]


def _pipelines_source(rng):
    body = ["assert H <= 9", "assert W <= 9"]
    for k in range(2):
        body += _pipeline(rng, k)
    return ("from __future__ import annotations\n"
            "from exo_hl import *\n\n\n@proc\n"
            "def g(H: size, W: size, x: f32[11, 11], y0: f32[H, W], "
            "y1: f32[H, W]):\n" + "".join(f"    {ln}\n" for ln in body))


def _pipes(p):
    """The two pipelines (the ifs at the top) of ``p``."""
    return [s for s in p.body() if s.is_if()]


def _stage_step(rng, p, k, by_cursor, log=()):
    """A random Halide-style helper on pipeline ``k`` of ``p``."""
    block = _pipes(p)[k]

    def loop(name, nth=0):
        c = [s for s in block.find(f"for {name} in _: _", many=True)][nth]
        if by_cursor:
            return c
        k_ = [x.path() for x in p.find_loop(name, many=True)].index(
            c.path())
        return f"{name} #{k_}"

    def write(pat):
        c = block.find(pat)
        return c if by_cursor else _stmt_pattern(p, c, pat)
    how = rng.choice(["compute_at", "prologue", "store_at", "inline",
                      "root", "tile", "split"])
    if log and log[-1] in ("compute_at", "prologue") and rng.random() < 0.5:
        how = "store_at"        # a window of rows, once computed in r
    if how == "compute_at":
        prod = loop("i") if rng.random() < 0.7 else write("t[_] = _")
        width = rng.choice([None, None, 2, 3, 4])
        return how, lambda: compute_at(p, prod, loop("r"), width=width)
    if how == "prologue":
        prod = loop("i")
        return how, lambda: compute_at(p, prod, loop("c", -1),
                                       with_prologue=True)
    if how == "store_at":
        alloc = write("t : _")
        at = rng.choice([None, "r"])
        fold = rng.random() < 0.6
        size = rng.choice([None, 2, 3, 4]) if not fold else \
            rng.choice([2, 3, 4])
        offset = rng.choice([0, 0, 1]) if size else 0
        return f"store_at(fold={fold}, size={size})", lambda: store_at(
            p, alloc, loop(at) if at else None, fold=fold, dim=0,
            size=size, offset=offset)
    if how == "inline":
        return how, lambda: inline_producer(p, loop("i"))
    if how == "root":
        return how, lambda: compute_root(p, write("t[_] = _"))
    if how == "tile":
        tl = rng.choice(["perfect", "cut", "guard"])
        return how, lambda: tile(p, loop("r"), loop("c", -1), 2, 2,
                                 tail=tl)
    lp = loop("r") if rng.random() < 0.5 else loop("c", -1)
    return how, lambda: p.split(lp, 2, "so", "si", tail="cut")


def test_halide_helpers_on_one_of_two_pipelines(tmp_path):
    from test_cursor_forwarding import forwarding_failures, tagged
    budget = float(os.environ.get("EXO_HL_HELPER_FUZZ_S", 6))
    seed = int(os.environ.get("EXO_HL_HELPER_FUZZ_SEED", 1515))
    rng = random.Random(seed)
    t0 = time.time()
    n = steps = 0
    kinds = {}
    while _go_on(t0, budget, steps >= 3):
        text = _pipelines_source(rng)
        p0 = tagged(load_source(tmp_path, f"pipes_{n}", text).g)
        n += 1
        k = rng.randrange(2)
        p, log = p0, []
        for _ in range(rng.randint(1, 3)):
            try:
                how, call = _stage_step(rng, p, k, rng.random() < 0.5, log)
                q = call()
            except SchedulingError:
                continue
            log.append(how)
            kinds[how] = kinds.get(how, 0) + 1
            other = [s.text() for s in _pipes(p)]
            after = [s.text() for s in _pipes(q)]
            where = f"{log} on pipeline {k} of\n{text}\ngave\n{q}"
            assert after[1 - k] == other[1 - k], f"the other changed: {where}"
            chain = [c for _, c in q.derivation()]
            chain = chain[[id(c) for c in chain].index(id(p)):]
            bad = forwarding_failures(p, q, chain)
            assert not bad, "\n".join(bad[:4]) + f"\n{where}"
            p = q
            steps += 1
        if p is not p0:
            sizes = [{"H": h, "W": w} for h, w in ((1, 1), (4, 3), (9, 9))]
            try:
                check_agree(p0, p, sizes, np.random.default_rng(n))
            except AssertionError as e:
                raise AssertionError(f"{e}\n{log} on pipeline {k} of\n"
                                     f"{text}\ngave\n{p}") from None
    print(f"pipeline fuzz: {n} procedures, {steps} steps accepted: {kinds}")
    assert steps >= 3


# ----------------------------------------------------------------------
# vectorize on random lane-wise bodies, compiled: the instructions it
# selects (loads, arithmetic, max/relu, broadcasts, masked tails) against
# the scalar loop on special values
_LANE_OPS = ["x[j] + w[j]", "x[j] * w[j]", "relu(x[j])", "x[j] * 0.5",
             "select(w[j], x[j], x[j], w[j])", "x[j] * c", "x[j]",
             "x[j] + x[j] * w[j]", "relu(x[j] * w[j])"]


# 16-bit lanes: the wrapping add, the rounding average, a copy
_U16_OPS = ["x[j] + w[j]", "(x[j] + w[j] + 1) / 2", "x[j]", "w[j] + x[j]"]


def _lane_source(rng, prec="f32"):
    rhs = rng.choice(_LANE_OPS if prec == "f32" else _U16_OPS)
    acc = rng.random() < 0.3 and "relu" not in rhs and "select" not in rhs
    lo = rng.choice(["0", "0", "1"])
    return ("from __future__ import annotations\n"
            "from exo_hl import *\n\n\n@proc\n"
            f"def v(n: size, c: {prec}, x: {prec}[40], w: {prec}[40], "
            f"y: {prec}[40]):\n"
            "    assert n <= 38\n"
            f"    for j in seq({lo}, n):\n"
            f"        y[j] {'+=' if acc else '='} {rhs}\n")


def test_vectorize_compiled_on_special_values(tmp_path):
    budget = float(os.environ.get("EXO_HL_HELPER_FUZZ_S", 6))
    seed = int(os.environ.get("EXO_HL_HELPER_FUZZ_SEED", 1515))
    rng = random.Random(seed)
    t0 = time.time()
    n = done = 0
    while _go_on(t0, budget, done >= 1):
        prec = rng.choice(["f32", "f32", "ui16", "i16"])
        text = _lane_source(rng, prec)
        p = load_source(tmp_path, f"lanes_{n}", text).v
        n += 1
        mem, instrs, width = _isa(rng, prec)
        tail = rng.choice(["cut", "mask", "perfect"])
        try:
            q = vectorize(p, "j", width, mem, instrs, tail=tail)
        except SchedulingError:
            continue
        sizes = [{"n": v} for v in rng.sample([1, 2, 7, 8, 17, 33, 38], 3)]
        try:
            check_agree(p, q, sizes, np.random.default_rng(n),
                        compiled=True)
        except AssertionError as e:
            raise AssertionError(f"{e}\nvectorize({width}, {tail}) of\n"
                                 f"{text}\ngave\n{q}") from None
        done += 1
    print(f"vectorize compiled: {n} bodies, {done} vectorized and run")
    assert done >= 1
