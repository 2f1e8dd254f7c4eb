"""Configuration state (``@config`` classes): global, mutable control/data.

A ``Config`` is identified by object identity; fields keep declaration order
so the C context struct is laid out deterministically.
"""
from __future__ import annotations


class Config:
    def __init__(self, name: str, fields, srcinfo=None, thread_entry=None,
                 hardware_fields=None):
        self._name = name
        self._fields = tuple(fields)  # ((field_name, IR type), ...)
        self._types = dict(self._fields)
        self.srcinfo = srcinfo
        # per-thread state (hardware each thread keeps, as AMX's tile
        # configuration): ``{field: C lvalue} -> C statement`` putting the
        # values of those fields into this thread's hardware; None for
        # state shared by all threads (docs/semantics.md, "par loops")
        self._thread_entry = thread_entry
        # hardware-defined fields (a value the machine has, as RVV's
        # VLMAX): ``{field: (instruction name, ...)}``, the instructions
        # whose C reads it from the machine; compiled code may write the
        # field only by calling one of them (codegen_c/hardware_fields.py)
        self._hardware = hardware_fields_spec(hardware_fields)
        unknown = [f for f in self._hardware if f not in self._types]
        if unknown:
            raise TypeError(f"@config(hardware_fields=...): config "
                            f"'{name}' has no field {unknown[0]!r}")

    @property
    def thread_entry(self):
        return self._thread_entry

    @property
    def hardware_fields(self):
        """``{field: (instruction name, ...)}`` of the fields whose value
        comes from the machine (empty for ordinary config)."""
        return dict(self._hardware)

    def hardware_writers(self, f: str):
        """The names of the instructions that may write field ``f`` in
        compiled code, or None when ``f`` is not hardware-defined."""
        return self._hardware.get(f)

    def name(self) -> str:
        return self._name

    def fields(self):
        return self._fields

    def has_field(self, f: str) -> bool:
        return f in self._types

    def lookup_type(self, f: str):
        return self._types[f]

    def c_struct_field(self, f: str) -> str:
        return f"{self._name}_{f}"

    def __getattr__(self, attr):
        # ``Cfg.field`` outside a procedure: a handle naming the field
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr in self.__dict__.get("_types", {}):
            return ConfigField(self, attr)
        raise AttributeError(f"config {self._name} has no field {attr!r}")

    def __repr__(self):
        return f"<config {self._name}>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def hardware_fields_spec(spec):
    """``{field: name or (name, ...)}`` checked and normalized to tuples of
    instruction names (names: the instructions are defined after the
    config they write)."""
    if spec is None:
        return {}
    usage = ("@config(hardware_fields=...) takes {field: instruction "
             "name or tuple of names}")
    if not isinstance(spec, dict):
        raise TypeError(usage)
    out = {}
    for f, ws in spec.items():
        ws = (ws, ) if isinstance(ws, str) else ws
        if not isinstance(f, str) or not isinstance(ws, (tuple, list)) \
                or not ws or not all(isinstance(w, str) for w in ws):
            raise TypeError(usage)
        out[f] = tuple(ws)
    return out


class ConfigField:
    """``Cfg.field`` named from Python (e.g. as a scheduling argument)."""

    __slots__ = ("config", "field")

    def __init__(self, config, field):
        self.config = config
        self.field = field

    def __repr__(self):
        return f"{self.config.name()}.{self.field}"
