"""The backend's checks: which C names a program may use, and what it
refuses to compile.

Everything here either picks a C identifier or raises an exo_hl error
(``MemGenError`` / ``ExoTypeError``) naming the procedure and, where the
IR has one, the source line; the emitters only print.
"""
from __future__ import annotations

import re

from ..core_ir.typerules import c_precision_problem
from ..errors import ExoTypeError, MemGenError, located
from .c_reserved import (is_reserved, program_names, reserved_pattern,
                         reserved_why)


# ----------------------------------------------------------------------------
# C naming

# one reserved-name set for everything the backend prints (c_reserved.py)


def fresh_c_name(base: str, in_use) -> str:
    """A C identifier for ``base`` that is neither reserved nor in use."""
    return fresh_c_name_k(base, in_use)[0]


def fresh_c_name_k(base: str, in_use, first_k: int = 1):
    """(name, base, k): ``base`` itself (k = 0) or the first free
    ``base_k`` with k >= ``first_k`` (every ``base_j``, j < first_k, must
    be taken)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        base = "v"
    elif reserved_pattern(base):
        # a suffix would not leave the reserved pattern (``_x``, ``EPS``)
        base = "v" + base if base.startswith("_") else "v_" + base
    name, k = base, 0
    if name in in_use or is_reserved(name):
        k = first_k
        name = f"{base}_{k}"
        while name in in_use or is_reserved(name):
            k += 1
            name = f"{base}_{k}"
    return name, base, k


def param_c_names(proc, taken) -> dict:
    """{arg Sym: C parameter name}: the same names the body emitter binds,
    since it binds the arguments first, in order, avoiding ``taken``
    (the file's function names)."""
    names, in_use = {}, set(taken)
    for a in proc.args:
        names[a.name] = fresh_c_name(a.name.name, in_use)
        in_use.add(names[a.name])
    return names




# ----------------------------------------------------------------------------
# refusals


def check_basename(basename):
    """The file stem names the header, its guard and the context type."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", basename):
        raise ValueError(f"basename {basename!r} is not a valid C identifier")


def public_fn_names(publics, basename):
    """{proc: C function name} for the public procedures, which keep their
    own names (they are the C ABI), or an error naming the one that can't."""
    own = program_names(basename)
    names, by_name = {}, {}
    for p in publics:
        if p.name in by_name:
            raise MemGenError(located(
                f"two different public procedures are named '{p.name}' "
                f"(the other is from {_where(by_name[p.name])}); rename one "
                f"with p.rename(...)", p.srcinfo, p.name))
        if is_reserved(p.name, own):
            raise MemGenError(located(
                f"procedure '{p.name}' cannot be exported to C: its name "
                f"is reserved there ({reserved_why(p.name, own)}); give it "
                f"another with p.rename(...)", p.srcinfo, p.name))
        names[p] = by_name[p.name] = p
    return {p: p.name for p in names}


def _where(proc):
    s = proc.srcinfo
    if s is not None and s.lineno:
        return f"{s.filename}:{s.lineno}"
    return "an unknown location"


def check_arg_precision(f, fa, a, node, fail):
    """A data buffer argument has the C element type of its parameter
    (``c_precision_problem``; ``replace`` refuses such a call already)."""
    why = c_precision_problem(f, fa, a)
    if why:
        fail(ExoTypeError, why, node)


def check_readable(buf, node, fail):
    """C may touch a buffer directly only if its memory allows it."""
    if not buf.mem.can_read():
        fail(MemGenError,
             f"cannot read or write '{buf.cname}' directly: memory "
             f"{buf.mem.name()} is not readable from C (use an "
             f"instruction)", node)
