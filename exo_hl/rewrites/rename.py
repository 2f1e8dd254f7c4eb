"""``rename(new_name)``: the same procedure under a new name.

The simplest rewrite, and a model of the locate -> check -> build -> record
shape (see ``_common``): nothing to locate, the check is that the name is a
valid C/Python identifier, and no statement moves (``forward=None``).
"""
from __future__ import annotations

from ..provenance import derive
from . import _common as C


def rename(proc, new_name):
    C.check_identifier(proc, new_name, "rename", "procedure name")
    return derive(proc, proc.ir().update(name=new_name), "rename")
