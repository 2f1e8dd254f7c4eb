"""C text for data arithmetic: the computation ``core_ir.datasem`` defines
(docs/semantics.md), without undefined behaviour.

Integer data are computed as 32-bit values. An operation whose result
provably fits (``int_ranges`` below: the value ranges of the operands come
from their types and literals) is printed as the plain C operator, which C
computes exactly in ``int``; any other goes through a small ``static
inline`` helper computing in ``uint32_t`` (wrap-around) or testing the
divisor (no trap on ``x / 0`` or ``INT32_MIN / -1``). Conversions into
narrower integers and from floats to integers also use helpers: C leaves
out-of-range conversions undefined (float -> int) or implementation-defined
(into a signed type). Helpers are emitted only when the code uses them.
"""
from __future__ import annotations

import numpy as np

from ..core_ir import datasem as D
from ..core_ir.nodes import IR
from ..core_ir.types import C_TYPES, TYPE_NAMES

I32_MIN, I32_MAX = D.int_range(IR.I32)
FULL = (I32_MIN, I32_MAX)

_COMMENT = ("/* Data arithmetic (exo_hl docs/semantics.md): integers are "
            "computed in 32 bits\n   and wrap around; x / 0 == 0, x % 0 == x; "
            "float -> int truncates and\n   saturates, NaN -> 0. */")


def _tag(t):
    return TYPE_NAMES[t]


def _int_helpers():
    out = {}
    out["exo_wrap_i32"] = ((), """\
static inline int32_t exo_wrap_i32(uint32_t x) {
    return x <= 0x7fffffffu ? (int32_t)x
                            : (int32_t)(x - 0x80000000u) + INT32_MIN;
}""")
    for name, op in (("add", "+"), ("sub", "-"), ("mul", "*")):
        out[f"exo_{name}_i32"] = (("exo_wrap_i32", ), f"""\
static inline int32_t exo_{name}_i32(int32_t a, int32_t b) {{
    return exo_wrap_i32((uint32_t)a {op} (uint32_t)b);
}}""")
    out["exo_neg_i32"] = (("exo_wrap_i32", ), """\
static inline int32_t exo_neg_i32(int32_t a) {
    return exo_wrap_i32(0u - (uint32_t)a);
}""")
    out["exo_div_i32"] = (("exo_neg_i32", ), """\
static inline int32_t exo_div_i32(int32_t a, int32_t b) {
    return b == 0 ? 0 : b == -1 ? exo_neg_i32(a) : a / b;
}""")
    out["exo_mod_i32"] = ((), """\
static inline int32_t exo_mod_i32(int32_t a, int32_t b) {
    return b == 0 ? a : b == -1 ? 0 : a % b;
}""")
    for t, bits in ((IR.I8, 8), (IR.I16, 16)):
        ct = C_TYPES[t]
        out[f"exo_i32_to_{_tag(t)}"] = ((), f"""\
static inline {ct} exo_i32_to_{_tag(t)}(int32_t x) {{
    uint32_t u = (uint32_t)x & 0x{(1 << bits) - 1:x}u;
    return u < 0x{1 << (bits - 1):x}u ? ({ct})u : ({ct})((int32_t)u - 0x{1 << bits:x});
}}""")
    for src, sfx in ((IR.F32, "f"), (IR.F64, "")):
        fct = C_TYPES[src]
        for t in D.INT_TYPES:
            ct = C_TYPES[t]
            lo, hi = D.int_range(t)
            mn, mx = ct.replace("_t", "").upper() + "_MIN", \
                ct.replace("_t", "").upper() + "_MAX"
            if lo == 0:
                low = f"    if (x < 0.0{sfx}) return 0;"
            else:
                low = f"    if (x < {float(lo)!r}{sfx}) return {mn};"
            out[f"exo_{_tag(src)}_to_{_tag(t)}"] = ((), f"""\
static inline {ct} exo_{_tag(src)}_to_{_tag(t)}({fct} x) {{
    if (x != x) return 0;
{low}
    if (x >= {float(hi + 1)!r}{sfx}) return {mx};
    return ({ct})x;
}}""")
    out.update(_bf16_helpers())
    return out


def _bf16_helpers():
    """bf16 <-> f32 (docs/semantics.md): round to nearest even, NaN
    quieted, in portable C (a union reads the bits: no aliasing UB), so
    compiled code agrees with ``datasem.f32_to_bf16_bits``."""
    return {
        "exo_bf16_to_f32": ((), """\
static inline float exo_bf16_to_f32(uint16_t h) {
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)h << 16;
    return v.f;
}"""),
        "exo_f32_to_bf16": ((), """\
static inline uint16_t exo_f32_to_bf16(float x) {
    union { uint32_t u; float f; } v;
    v.f = x;
    if ((v.u & 0x7fffffffu) > 0x7f800000u)      /* NaN: quiet it */
        return (uint16_t)((v.u >> 16) | 0x40u);
    /* round to nearest even (denormals too); the carry may reach
       infinity */
    return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}"""),
        # a bf16 stored into a bf16: exo_f32_to_bf16(exo_bf16_to_f32(h)),
        # the same bits, in 16-bit lanes (the round trip through f32
        # vectorized at half the width: the tile-layout copy of A in the
        # bf16 AMX GEMM)
        "exo_bf16_copy": ((), """\
static inline uint16_t exo_bf16_copy(uint16_t h) {
    /* exact, so unchanged unless a NaN, which is quieted */
    return (uint16_t)((h & 0x7fffu) > 0x7f80u ? (h | 0x40u) : h);
}"""),
    }


HELPERS = _int_helpers()


def helper_texts(bodies) -> list:
    """The helper definitions the C text ``bodies`` (a list of str) calls,
    dependencies first, in a fixed order; [] when none."""
    text = "\n".join(bodies)
    want = set()

    def need(name):
        if name in want:
            return
        want.add(name)
        for d in HELPERS[name][0]:
            need(d)
    for name in HELPERS:
        if f"{name}(" in text:
            need(name)
    if not want:
        return []
    return [_COMMENT] + [HELPERS[n][1] + "\n" for n in HELPERS if n in want]


# ----------------------------------------------------------------------------
# literals


def literal(v, t) -> str:
    """C text of the literal ``v`` in evaluation type ``t`` (a precise
    spelling of the value ``datasem.literal`` gives it)."""
    x = D.literal(v, t)
    if D.is_int(t):
        return "INT32_MIN" if x == I32_MIN else str(x)
    ct = C_TYPES[t]
    if np.isnan(x) or np.isinf(x):
        if np.isnan(x):   # the literal's sign is kept (-NAN: sign bit set)
            r = "-NAN" if np.signbit(x) else "NAN"
        else:
            r = "INFINITY" if x > 0 else "-INFINITY"
        return r if ct == "float" else f"({ct}){r}"
    # the shortest decimal that reads back as this value of type t
    if x == 0 or 1e-5 <= abs(float(x)) < 1e16:
        r = np.format_float_positional(x, unique=True, trim="0")
    else:
        r = np.format_float_scientific(x, unique=True, trim="0")
    if "e" not in r and "." not in r:
        r += ".0"
    if ct == "float":
        return r + "f"
    if ct == "_Float16":
        return f"(_Float16){r}"
    return r


def needs_math(text) -> bool:
    return "INFINITY" in text or "NAN" in text


# ----------------------------------------------------------------------------
# integer ranges: which operations can be printed as plain C


def _fits(lo, hi):
    return I32_MIN <= lo and hi <= I32_MAX


def op_range(op, a, b):
    """(plain, range): whether ``a op b`` on 32-bit values in ranges a, b
    is computed exactly by the plain C operator (no overflow, no division
    by zero), and the range of its (wrapped) result."""
    (al, ah), (bl, bh) = a, b
    if op in ("+", "-", "*"):
        if op == "+":
            lo, hi = al + bl, ah + bh
        elif op == "-":
            lo, hi = al - bh, ah - bl
        else:
            ps = (al * bl, al * bh, ah * bl, ah * bh)
            lo, hi = min(ps), max(ps)
        return (True, (lo, hi)) if _fits(lo, hi) else (False, FULL)
    m = max(abs(al), abs(ah))
    has0 = bl <= 0 <= bh
    hasm1 = bl <= -1 <= bh
    if op == "/":
        plain = not has0 and not (al == I32_MIN and hasm1)
        return plain, (max(-m, I32_MIN), min(m, I32_MAX))
    # %
    plain = not has0 and not (al == I32_MIN and hasm1)
    if has0:
        return plain, (max(-m, I32_MIN), min(m, I32_MAX))
    bound = min(m, max(abs(bl), abs(bh)) - 1)
    lo = 0 if al >= 0 else -bound
    hi = 0 if ah <= 0 else bound
    return plain, (lo, hi)


def neg_range(a):
    lo, hi = -a[1], -a[0]
    return (True, (lo, hi)) if _fits(lo, hi) else (False, FULL)


# ----------------------------------------------------------------------------
# conversions


def convert(text, prec_ok, src, dst, rng=FULL):
    """C text converting ``text`` (a value of evaluation type ``src``; its
    value range ``rng`` when integer) to data type ``dst``, or None when no
    conversion is needed. ``prec_ok``: ``text`` may be used as an operand
    of a cast without parentheses."""
    inner = text if prec_ok else f"({text})"
    if dst is IR.BF16:
        if src is IR.F32:
            return f"exo_f32_to_bf16({text})"
        return f"exo_f32_to_bf16((float){inner})"
    if D.is_int(src):
        if D.is_int(dst):
            lo, hi = D.int_range(dst)
            if lo <= rng[0] and rng[1] <= hi:
                return None
            if lo == 0:
                return f"({C_TYPES[dst]}){inner}"   # modular in C
            return f"exo_i32_to_{_tag(dst)}({text})"
        return f"({C_TYPES[dst]}){inner}"
    if D.is_int(dst):
        if src is IR.F16:
            return f"exo_f32_to_{_tag(dst)}((float){inner})"
        return f"exo_{_tag(src)}_to_{_tag(dst)}({text})"
    if C_TYPES[src] == C_TYPES[dst]:
        return None
    return f"({C_TYPES[dst]}){inner}"
