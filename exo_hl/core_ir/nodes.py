"""Generate immutable IR node classes from ``loopir.asdl``.

The grammar file is the single source of truth for the IR's shape; this module
only turns it into Python classes. Every generated node is immutable, hashable
(the hash is cached) and compares structurally. Source locations (``srcinfo``)
never take part in equality or hashing, so a reparsed procedure compares equal
to the original. Literals compare by their bits where Python's ``==``
would not tell values apart or not tell a value from itself: ``-0.0`` is
not ``0.0`` and a NaN is itself (``constant_identity``;
docs/semantics.md, "constants are identified by their bits").
"""
from __future__ import annotations

import math
import numbers
import operator
import struct
import tokenize as _std_tokenize
from pathlib import Path
from types import SimpleNamespace

# pyasdl patches the stdlib tokenizer's regex at import time to accept ``--``
# comments. That patch would leak into every later use of ``tokenize`` (and so
# ``inspect.getsource``), so keep it only for the duration of our one parse.
_ORIGINAL_PSEUDO = _std_tokenize.PseudoToken
import pyasdl  # noqa: E402

_ASDL_PSEUDO = _std_tokenize.PseudoToken
_std_tokenize.PseudoToken = _ORIGINAL_PSEUDO


def _parse_grammar(text: str):
    _std_tokenize.PseudoToken = _ASDL_PSEUDO
    try:
        return pyasdl.parse(text)
    finally:
        _std_tokenize.PseudoToken = _ORIGINAL_PSEUDO


#: fields whose value is irrelevant to a node's meaning
_NON_SEMANTIC = frozenset({"srcinfo"})


def constant_identity(v):
    """What a literal value is compared and hashed by: the value itself,
    except a float zero with its sign bit set and a NaN, which are their
    bits. Python's ``==`` takes ``-0.0`` for ``0.0`` (they differ:
    ``1 / -0.0`` is ``-inf``) and a NaN for no value at all (not even
    itself); an integer and a float of equal value stay one value (a data
    literal ``2`` means the number 2.0)."""
    if isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral):
        f = float(v)
        if f != f:
            return ("nan", struct.pack("<d", f))
        if f == 0.0 and math.copysign(1.0, f) < 0:
            return ("-0.0", )
    return v


def same_constant(a, b) -> bool:
    """Whether two literal values are the same value (by their bits:
    ``constant_identity``)."""
    return constant_identity(a) == constant_identity(b)


#: per constructor, fields whose value is compared through a function
_IDENTITY = {"Const": {"val": constant_identity}}


class Node:
    """Base of every generated IR node."""

    __slots__ = ("_hash",)
    _fields: tuple = ()
    _attributes: tuple = ()
    _seq_fields: frozenset = frozenset()
    _opt_fields: frozenset = frozenset()

    def __init__(self, *args, **kwargs):
        # (every IR node is made here: written for speed, with the checks
        # and messages of a plain field-by-field version)
        cls = type(self)
        names = cls._fields + cls._attributes
        n = len(args)
        if n > len(names):
            raise TypeError(f"{cls.__name__} takes at most "
                            f"{len(names)} arguments")
        seq = cls._seq_fields
        setattr_ = object.__setattr__
        for name, v in zip(names, args):
            if name in seq and not isinstance(v, tuple):
                v = () if v is None else tuple(v)
            setattr_(self, name, v)
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{cls.__name__} has no field {k!r}")
            if k in names[:n]:
                raise TypeError(f"{cls.__name__}: {k!r} given twice")
            if k in seq and not isinstance(v, tuple):
                v = () if v is None else tuple(v)
            setattr_(self, k, v)
        if n + len(kwargs) < len(names):
            for name in names[n:]:
                if name in kwargs:
                    continue
                if name in cls._attributes or name in cls._opt_fields:
                    v = None
                elif name in seq:
                    v = ()
                else:
                    raise TypeError(
                        f"{cls.__name__} is missing field {name!r}")
                setattr_(self, name, v)
        setattr_(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError(f"IR nodes are immutable; use .update({name}=...)")

    def __delattr__(self, name):
        raise AttributeError("IR nodes are immutable")

    def update(self, **changes):
        """A copy of this node with some fields replaced."""
        cls = type(self)
        names = cls._fields + cls._attributes
        for k in changes:
            if k not in names:
                raise TypeError(f"{cls.__name__} has no field {k!r}")
        # what __init__ does, for a node whose other fields are valid already
        new = object.__new__(cls)
        seq = cls._seq_fields
        for n in names:
            if n in changes:
                v = changes[n]
                if n in seq:
                    if v is None:
                        v = ()
                    elif not isinstance(v, tuple):
                        v = tuple(v)
            else:
                v = getattr(self, n)
            object.__setattr__(new, n, v)
        object.__setattr__(new, "_hash", None)
        return new

    #: the semantic fields' values as a tuple (srcinfo excluded); set per
    #: generated class to an ``operator.attrgetter``
    _key_of = staticmethod(lambda node: ())

    def _key(self):
        return self._key_of(self)

    def __eq__(self, other):
        if self is other:
            return True
        if type(self) is not type(other):
            return NotImplemented if not isinstance(other, Node) else False
        # (hot: the cached hashes and keys read without a method call each)
        h = self._hash
        if h is None:
            h = self.__hash__()
        g = other._hash
        if g is None:
            g = other.__hash__()
        if h != g:
            return False
        return self._key_of(self) == other._key_of(other)

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        h = self._hash
        if h is None:
            h = hash((type(self).__name__, self._key()))
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self):
        parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({parts})"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Singleton(Node):
    """A constructor with no fields (e.g. a scalar type): one shared value."""

    __slots__ = ()
    _instance = None

    def __new__(cls, *args, **kwargs):
        # one shared value per constructor, so ``is`` comparisons are safe
        inst = cls.__dict__.get("_instance")
        if inst is None:
            inst = super().__new__(cls)
            inst._init_singleton()
            cls._instance = inst
        return inst

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__} has no fields")

    def _init_singleton(self):
        Node.__init__(self)

    def __repr__(self):
        return type(self).__name__

    def update(self, **changes):
        if changes:
            raise TypeError(f"{type(self).__name__} has no fields")
        return self


def _make_class(name, base, fields, attributes):
    seq = frozenset(f.name for f in fields + attributes
                    if f.qualifier == pyasdl.FieldQualifier.SEQUENCE)
    opt = frozenset(f.name for f in fields + attributes
                    if f.qualifier == pyasdl.FieldQualifier.OPTIONAL)
    names = tuple(f.name for f in fields)
    attrs = tuple(f.name for f in attributes)
    key = tuple(n for n in names + attrs if n not in _NON_SEMANTIC)
    ident = _IDENTITY.get(name)
    if ident:
        def key_of(node, key=key, ident=ident):
            return tuple(ident[k](getattr(node, k)) if k in ident
                         else getattr(node, k) for k in key)
    elif len(key) >= 2:
        key_of = operator.attrgetter(*key)
    elif key:
        one = operator.attrgetter(key[0])

        def key_of(node, one=one):
            return (one(node), )
    else:
        def key_of(node):
            return ()
    ns = {
        "__slots__": names + attrs,
        "_fields": names,
        "_attributes": attrs,
        "_seq_fields": seq,
        "_opt_fields": opt,
        "_field_kinds": {f.name: f.kind for f in fields + attributes},
        "_key_of": staticmethod(key_of),
    }
    return type(name, (base, ), ns)


def build_namespace(grammar_text: str) -> SimpleNamespace:
    module = _parse_grammar(grammar_text)
    ns = {}
    for tdef in module.body:
        value = tdef.value
        if isinstance(value, pyasdl.Product):
            # product types are snake_case in ASDL: fn_arg -> FnArg
            cname = "".join(w[:1].upper() + w[1:] for w in tdef.name.split("_"))
            ns[cname] = _make_class(cname, Node, list(value.fields),
                                    list(value.attributes))
            continue
        base = type(tdef.name, (Node, ), {"__slots__": ()})
        ns[tdef.name] = base
        for ctor in value.types:
            if not ctor.fields and not value.attributes:
                cls = type(ctor.name, (Singleton, base), {"__slots__": (),
                                                           "_instance": None})
                ns[ctor.name] = cls()
                ns[ctor.name + "_cls"] = cls
            else:
                ns[ctor.name] = _make_class(ctor.name, base, list(ctor.fields),
                                            list(value.attributes))
    return SimpleNamespace(**ns)


_GRAMMAR = (Path(__file__).with_name("loopir.asdl")).read_text()

#: The IR namespace: ``IR.For(...)``, ``IR.stmt`` (base class), ``IR.F32``...
IR = build_namespace(_GRAMMAR)
