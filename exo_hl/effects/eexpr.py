"""Effect expressions (paper §3.5.2, §3.10): ternary int/bool terms with ⊥.

An effect expression is a plain tagged tuple, so it is immutable, hashable
and compares structurally (cheap memo keys):

    ('var', key, sort)        a variable (key: Sym, GVar or StrideVar)
    ('const', value, sort)    an int or bool literal
    ('bot', sort)             the unknown value ⊥
    ('op', op, a, b)          binary op: + - * / % < <= > >= == and or
    ('op', 'neg', a)          unary minus;  ('op', 'not', a)
    ('ite', c, t, e)          c ? t else e
    ('forall', key, body)     ∀ key:int. body     (body of sort bool)
    ('exists', key, body)     sugar for ¬∀key.¬body

``sort`` is 'int' or 'bool'. Variables are always defined; ⊥ enters only
through ``bot`` (unknown config values after loops, lifted data reads).
The smart constructors below fold constants and ⊥ so that trees stay small.
``eval3`` is the reference three-valued semantics (None is ⊥) used by tests
to check the two-valued SMT encoding in ``smt.py``.
"""
from __future__ import annotations

from typing import Dict

from ..core_ir import operators as OPS
from ..caches import container

INT, BOOL = "int", "bool"

TRUE = ("const", True, BOOL)
FALSE = ("const", False, BOOL)


class GVar:
    """A configuration field ``Cfg.field`` viewed as a global variable."""

    __slots__ = ("config", "field")

    def __init__(self, config, field):
        self.config = config
        self.field = field

    def __eq__(self, other):
        return (isinstance(other, GVar) and self.config is other.config
                and self.field == other.field)

    def __hash__(self):
        return hash((id(self.config), self.field))

    def __repr__(self):
        return f"{self.config.name()}.{self.field}"


class StrideVar:
    """``stride(buf, dim)``: an uninterpreted positive int per (buffer, dim)."""

    __slots__ = ("buf", "dim")

    def __init__(self, buf, dim):
        self.buf = buf
        self.dim = dim

    def __eq__(self, other):
        return (isinstance(other, StrideVar) and self.buf == other.buf
                and self.dim == other.dim)

    def __hash__(self):
        return hash(("stride", self.buf, self.dim))

    def __repr__(self):
        return f"stride({getattr(self.buf, 'name', self.buf)}, {self.dim})"


# ---------------------------------------------------------------------------
# constructors

def var(key, sort=INT):
    return ("var", key, sort)


def const(v):
    if isinstance(v, bool):
        return TRUE if v else FALSE
    return ("const", int(v), INT)


def bot(sort=INT):
    return ("bot", sort)


def sort_of(e) -> str:
    tag = e[0]
    if tag in ("var", "const"):
        return e[2]
    if tag == "bot":
        return e[1]
    if tag == "ite":
        return sort_of(e[2])
    if tag in ("forall", "exists"):
        return BOOL
    op = e[1]
    if op in OPS.ARITH_OPS or op == "neg":
        return INT
    return BOOL


def is_const(e, v=None) -> bool:
    return e[0] == "const" and (v is None or (e[1] is v if isinstance(v, bool)
                                              else e[1] == v))


# values of the operators on constants: core_ir.operators
_ARITH = {o: OPS.CONTROL_EVAL[o] for o in OPS.ARITH_OPS}
_CMP = {o: OPS.CONTROL_EVAL[o] for o in OPS.CMP_OPS}


def op(o, a, b=None):
    """Build an operator node, folding constants and strict ⊥ propagation."""
    if o == "not":
        return not_(a)
    if o == "neg":
        if a[0] == "const":
            return const(-a[1])
        if a[0] == "bot":
            return a
        return ("op", "neg", a)
    if o == "and":
        return and_(a, b)
    if o == "or":
        return or_(a, b)
    if o in _ARITH:
        if a[0] == "bot" or b[0] == "bot":
            return bot(INT)
        if a[0] == "const" and b[0] == "const":
            if o in "/%" and b[1] == 0:
                return bot(INT)
            return const(_ARITH[o](a[1], b[1]))
        if o == "+" and is_const(a, 0):
            return b
        if o in "+-" and is_const(b, 0):
            return a
        if o == "*" and (is_const(a, 1)):
            return b
        if o in "*/" and is_const(b, 1):
            return a
        return ("op", o, a, b)
    if o in _CMP:
        if a[0] == "bot" or b[0] == "bot":
            return bot(BOOL)
        if a[0] == "const" and b[0] == "const":
            if sort_of(a) == BOOL or sort_of(b) == BOOL:
                return const(a[1] == b[1]) if o == "==" else bot(BOOL)
            return const(_CMP[o](a[1], b[1]))
        if o == "==" and a == b and a[0] == "var":
            return TRUE
        return ("op", o, a, b)
    raise ValueError(f"unknown effect operator {o!r}")


def not_(a):
    if a[0] == "const":
        return const(not a[1])
    if a[0] == "bot":
        return a
    if a[0] == "op" and a[1] == "not":
        return a[2]
    return ("op", "not", a)


def and_(a, b):
    # a false conjunct is defined-false even next to ⊥ (short circuit)
    if is_const(a, False) or is_const(b, False):
        return FALSE
    if is_const(a, True):
        return b
    if is_const(b, True):
        return a
    if a == b:
        return a
    return ("op", "and", a, b)


def or_(a, b):
    if is_const(a, True) or is_const(b, True):
        return TRUE
    if is_const(a, False):
        return b
    if is_const(b, False):
        return a
    if a == b:
        return a
    return ("op", "or", a, b)


def ands(xs):
    out = TRUE
    for x in xs:
        out = and_(out, x)
    return out


def ors(xs):
    out = FALSE
    for x in xs:
        out = or_(out, x)
    return out


def implies(a, b):
    return or_(not_(a), b)


def ite(c, t, e):
    if c[0] == "const":
        return t if c[1] else e
    if c[0] == "bot":
        return bot(sort_of(t))
    if t == e and t[0] != "bot":
        # still ⊥ when c is ⊥, but c is not ⊥ syntactically here; c could
        # evaluate to ⊥ only through ⊥ leaves, which we keep visible
        if not _may_be_bot(c):
            return t
    return ("ite", c, t, e)


def forall(key, body):
    if body[0] in ("const", "bot") or key not in free_keys(body):
        return body
    return ("forall", key, body)


def exists(key, body):
    if body[0] in ("const", "bot") or key not in free_keys(body):
        return body
    return ("exists", key, body)


def eq(a, b):
    return op("==", a, b)


def _may_be_bot(e) -> bool:
    """Whether ``e`` may evaluate to ⊥: it has a ⊥ leaf (in an operand, a
    quantifier's body, or an ``ite``'s condition or branches: an ``ite`` is
    ⊥ when its condition is), or a ``/`` or ``%`` whose divisor is not a
    nonzero constant (division by zero is ⊥). Each shared subterm is
    visited once: the values after a loop nest are DAGs whose tree size is
    exponential in their depth."""
    seen, todo = set(), [e]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        tag = x[0]
        if tag == "bot":
            return True
        if tag in ("var", "const"):
            continue
        if tag == "op" and x[1] in ("/", "%") and not (
                x[3][0] == "const" and x[3][1] != 0):
            return True
        todo.extend(y for y in (x[1:] if tag == "ite" else x[2:])
                    if isinstance(y, tuple))
    return False


may_be_bot = _may_be_bot


# ---------------------------------------------------------------------------
# structure

#: id(node) -> (node, free keys): the quantifier builders ask for the free
#: keys of the same (shared, deep) bodies again and again; the entry holds
#: its node, so an id is never reused while its entry lives. Bounded.
_FREE_KEYS = container("exo_hl.effects.eexpr.free_keys", {})
_FREE_KEYS_MAX = 1 << 17


def free_keys(e) -> frozenset:
    if len(_FREE_KEYS) > _FREE_KEYS_MAX:
        _FREE_KEYS.clear()
    return _free_keys(e, _FREE_KEYS)


def _free_keys(e, seen):
    """Free keys of ``e``; ``seen`` (id -> (node, keys)) visits each shared
    sub-expression once."""
    hit = seen.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    tag = e[0]
    if tag == "var":
        out = frozenset((e[1], ))
    elif tag in ("const", "bot"):
        out = frozenset()
    elif tag in ("forall", "exists"):
        out = _free_keys(e[2], seen) - {e[1]}
    else:
        out = frozenset()
        for x in e[2:] if tag == "op" else e[1:]:
            out |= _free_keys(x, seen)
    seen[id(e)] = (e, out)
    return out


def subst(e, env: Dict, seen=None):
    """Replace free variables by effect expressions (rebuilding with folding).

    Expressions share sub-expressions: a config value after a loop nest
    names the value before it several times, so substituting the values of
    the enclosing levels into each other gives DAGs of a few hundred nodes
    whose tree size is in the millions. The walk visits each shared node
    once (per binder scope), and a node none of whose operands changed is
    kept, so the result shares as much as its input.

    ``seen``: a dict to share between calls with the same ``env`` (the
    caller holds every expression passed meanwhile, so no id is reused):
    sub-expressions common to them are rewritten once, to one object."""
    if not env:
        return e
    return _subst(e, env, {} if seen is None else seen)


def _subst(e, env, seen):
    """``subst`` with ``seen`` (id(node) -> result) for the nodes already
    rewritten under ``env``. The ids are those of sub-expressions of the
    expression being rewritten, which the caller holds: none is freed (and
    its id reused) while the walk runs."""
    tag = e[0]
    if tag == "var":
        return env.get(e[1], e)
    if tag in ("const", "bot"):
        return e
    hit = seen.get(id(e))
    if hit is not None:
        return hit
    if tag in ("forall", "exists"):
        if e[1] in env:
            inner = {k: v for k, v in env.items() if k != e[1]}
            b = _subst(e[2], inner, {}) if inner else e[2]
        else:
            b = _subst(e[2], env, seen)
        if b is e[2]:
            out = e
        else:
            out = forall(e[1], b) if tag == "forall" else exists(e[1], b)
    elif tag == "ite":
        c, t, f = (_subst(e[1], env, seen), _subst(e[2], env, seen),
                   _subst(e[3], env, seen))
        out = e if (c is e[1] and t is e[2] and f is e[3]) else ite(c, t, f)
    elif len(e) == 3:
        a = _subst(e[2], env, seen)
        out = e if a is e[2] else op(e[1], a)
    else:
        a, b = _subst(e[2], env, seen), _subst(e[3], env, seen)
        out = e if (a is e[2] and b is e[3]) else op(e[1], a, b)
    seen[id(e)] = out
    return out


def rename_keys(e, ren: Dict):
    """Rename variable keys (keeps sorts)."""
    return subst(e, {k: ("var", v, s) for k, (v, s) in ren.items()})


# ---------------------------------------------------------------------------
# reference three-valued semantics (None is ⊥)

def eval3(e, env: Dict, domain=range(-3, 4)):
    """Evaluate ``e`` in three-valued logic; quantifiers range over ``domain``.

    This is the specification the SMT encoding is tested against; it is never
    used to decide anything in the compiler.
    """
    tag = e[0]
    if tag == "var":
        return env[e[1]]
    if tag == "const":
        return e[1]
    if tag == "bot":
        return None
    if tag == "ite":
        c = eval3(e[1], env, domain)
        if c is None:
            return None
        return eval3(e[2] if c else e[3], env, domain)
    if tag in ("forall", "exists"):
        vals = [eval3(e[2], {**env, e[1]: v}, domain) for v in domain]
        if tag == "exists":
            vals = [None if v is None else (not v) for v in vals]
        if any(v is False for v in vals):
            r = False
        elif all(v is True for v in vals):
            r = True
        else:
            return None
        return r if tag == "forall" else (not r)
    o = e[1]
    if o == "not":
        v = eval3(e[2], env, domain)
        return None if v is None else (not v)
    if o == "neg":
        v = eval3(e[2], env, domain)
        return None if v is None else -v
    a = eval3(e[2], env, domain)
    b = eval3(e[3], env, domain)
    if o == "and":
        if a is False or b is False:
            return False
        if a is None or b is None:
            return None
        return True
    if o == "or":
        if a is True or b is True:
            return True
        if a is None or b is None:
            return None
        return False
    if a is None or b is None:
        return None
    if o in "/%" and b == 0:
        return None
    if o in _ARITH:
        return _ARITH[o](a, b)
    return _CMP[o](a, b)


def D(v):
    """'definitely' on a ternary value."""
    return v is True


def M(v):
    """'maybe' on a ternary value."""
    return v is not False


def to_str(e, limit=None) -> str:
    """``e`` as text; with ``limit``, at most about that many characters
    (then ending in '...'): a shared sub-expression is spelled out at every
    use, so the text of a config value after a loop nest can be longer than
    any message should be (and take minutes to build)."""
    out = []
    try:
        _emit(e, out, [limit if limit is not None else -1])
    except _TooLong:
        return "".join(out)[:limit] + "..."
    return "".join(out)


class _TooLong(Exception):
    """``to_str`` went past its limit."""


def _put(out, left, text):
    out.append(text)
    if left[0] >= 0:
        left[0] -= len(text)
        if left[0] < 0:
            raise _TooLong


def _emit(e, out, left):
    tag = e[0]
    if tag == "var":
        k = e[1]
        _put(out, left, str(k) if not hasattr(k, "name") or
             isinstance(k, (GVar, StrideVar)) else k.name)
    elif tag == "const":
        _put(out, left, str(e[1]))
    elif tag == "bot":
        _put(out, left, "⊥")
    elif tag == "ite":
        _put(out, left, "(")
        _emit(e[2], out, left)
        _put(out, left, " if ")
        _emit(e[1], out, left)
        _put(out, left, " else ")
        _emit(e[3], out, left)
        _put(out, left, ")")
    elif tag in ("forall", "exists"):
        k = e[1]
        _put(out, left, f"({tag} {getattr(k, 'name', k)}. ")
        _emit(e[2], out, left)
        _put(out, left, ")")
    elif e[1] == "not":
        _put(out, left, "not ")
        _emit(e[2], out, left)
    elif e[1] == "neg":
        _put(out, left, "-")
        _emit(e[2], out, left)
    else:
        _put(out, left, "(")
        _emit(e[2], out, left)
        _put(out, left, f" {e[1]} ")
        _emit(e[3], out, left)
        _put(out, left, ")")
