"""Config field values given by the user: checked and typed as the field's
type holds them, one rule for ``interpret()``'s ``config_state`` and the
compiled callable's ``set_config``.

A procedure's own config writes store typed values (a data field rounds to
its type, a control field is refused past 32 bits: ``interpret``), but a
value set from Python went in as given. ``interpret()`` then read an
``i8`` field set to 300 as 300, an ``f32`` field set to 0.1 as the
double 0.1 and an ``f16`` field set to 70000 as 70000, where the compiled
callable's ctypes member wrapped 300 to 44, rounded 0.1 to ``f32`` and
70000 to infinity; an ``index`` field took 2.5 in ``interpret()`` and
raised in C. Now a value is checked as a scalar argument of the field's
type is (``call_args``): integers in their type's range, numbers in a
float type's range (rounded to it), ``bool`` for ``bool``, 32-bit
integers for control fields; a ``bf16`` field holds its bits (0..65535),
as its C member and ``interpret()`` do. Anything else is refused with the
field named.
"""
from __future__ import annotations

import numbers

import numpy as np

from .call_args import _scalar_from_number
from .nodes import IR
from .types import DATA_TYPES, NUMPY_DTYPES, TYPE_NAMES


def config_value(config, field, value):
    """``value`` as the config field ``config.field`` holds it (a numpy
    scalar of its type for a data field, an ``int`` or ``bool`` for a
    control one); ``TypeError`` / ``ValueError`` when it cannot hold it."""
    if not config.has_field(field):
        raise KeyError(f"config {config.name()} has no field {field!r}")
    t = config.lookup_type(field)
    name = f"config field {config.name()}.{field} ({TYPE_NAMES[t]})"
    if t is IR.Bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got "
                            f"{type(value).__name__}")
        return bool(value)
    if t is IR.BF16:
        t = IR.UI16             # its bits
    if t in DATA_TYPES:
        dtype = np.dtype(NUMPY_DTYPES[t])
        try:
            return _scalar_from_number("set_config", name, value, dtype)[()]
        except (TypeError, ValueError) as e:
            msg = str(e).replace("procedure 'set_config': ", "")
            raise type(e)(msg.replace(f"argument '{name}'", name)) from None
    if isinstance(value, (bool, np.bool_)) or \
            not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not -2**31 <= int(value) < 2**31:
        raise ValueError(f"{name} = {int(value)} is outside the 32-bit range "
                         f"of control values")
    return int(value)


def normalize_config_state(state) -> None:
    """Check and type every value of ``state`` (a dict keyed by
    ``(config, field)``) in place, before a run reads them."""
    for key, v in list(state.items()):
        if isinstance(key, tuple) and len(key) == 2 and \
                hasattr(key[0], "lookup_type"):
            dict.__setitem__(state, key, config_value(key[0], key[1], v))
