"""``@config``: configuration state declared as a Python class.

Kept apart from ``decorators.py`` (the function decorators) because a
config is read from a *class* body (annotations, not statements) and
carries its own options (per-thread state, hardware-defined fields).
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap

from ..core_ir import types as T
from ..core_ir.config import Config, hardware_fields_spec
from ..core_ir.nodes import IR
from ..core_ir.srcinfo import SrcInfo
from ..errors import ExoSyntaxError, ExoTypeError, located
from ..feedback import debug_tracebacks, for_user
from . import surface
from .decorators import _find_def, _source_of, defining_scope
from .parser import SourceMap, _MISSING, resolve_dotted

__all__ = ["config"]


def config(cls=None, *, thread_entry=None, hardware_fields=None):
    """``@config class C: field: type``: configuration state.

    Field annotations are read as strings (or marker objects when a module
    does not use postponed annotations) and resolved in the class's scope.

    ``@config(thread_entry=f)`` declares *per-thread* state (hardware each
    thread keeps for itself, as AMX's tile configuration): ``f`` maps
    ``{field: C lvalue}`` to a C statement that puts those values into the
    running thread's hardware. The C backend runs it at the start of every
    iteration of a ``par`` loop whose body uses the config, so every
    thread starts with the value the config had at the loop's entry
    (docs/semantics.md).

    ``@config(hardware_fields={field: instr name(s)})``: fields whose value
    is the machine's; C generation refuses writes to them other than calls
    of those instructions (docs/semantics.md, "Hardware-defined config").

    >>> @config
    ... class ConfigLoad:
    ...     src_stride: stride
    >>> p = p.configwrite_at(p.find_loop('i0'), ConfigLoad, 'src_stride',
    ...                      'stride(A, 0)', before=True)

    Errors name the config and the field's line.
    """
    frame = sys._getframe(1)
    if thread_entry is not None and not callable(thread_entry):
        raise TypeError("@config(thread_entry=...) takes a function "
                        "{field: C lvalue} -> C statement")
    hardware = hardware_fields_spec(hardware_fields)

    def make(cls):
        if not inspect.isclass(cls):
            raise TypeError("@config decorates a class")
        scope = defining_scope(cls, frame)
        try:
            return _config_from_class(cls, scope, frame, thread_entry,
                                      hardware)
        except ExoTypeError as e:
            __tracebackhide__ = not debug_tracebacks()  # noqa: F841
            raise for_user(e)  # exo_hl's frames: set EXO_HL_DEBUG=1
    return make if cls is None else make(cls)


def _class_source_in_frame(cls, frame):
    """(dedented source, SourceMap) of the class ``cls`` being defined by
    the code of ``frame``, read from that code's file. ``inspect`` finds a
    class's file through ``sys.modules``, which a module loaded by
    ``spec_from_file_location`` + ``exec_module`` is not in; the defining
    frame knows its file. Of the classes of that name in the file, the
    one whose lines hold the frame's line (else the last before it)."""
    import linecache
    filename = frame.f_code.co_filename
    lines = linecache.getlines(filename, frame.f_globals)
    if not lines:
        raise ExoSyntaxError(f"cannot read the source of '{cls.__name__}'")
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        raise ExoSyntaxError(
            f"cannot read the source of '{cls.__name__}'") from None
    here = frame.f_lineno
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef) and n.name == cls.__name__:
            start = min([n.lineno] + [d.lineno for d in n.decorator_list])
            if start <= here <= n.end_lineno:
                best = (n, start)
                break
            if start <= here and (best is None or start > best[1]):
                best = (n, start)
    if best is None:
        raise ExoSyntaxError(f"cannot read the source of '{cls.__name__}'")
    n, start = best
    raw = "".join(lines[start - 1:n.end_lineno])
    src = textwrap.dedent(raw)
    first_line = raw.splitlines()[0] if raw else ""
    shift = len(first_line) - len(src.splitlines()[0]) if src else 0
    return src, SourceMap(filename, raw.splitlines(), start, shift)


def _config_from_class(cls, scope, frame=None, thread_entry=None,
                       hardware_fields=None):
    name = cls.__name__
    field_si = {}
    try:
        try:
            src, srcmap = _source_of(cls)
        except ExoSyntaxError:
            if frame is None:
                raise
            src, srcmap = _class_source_in_frame(cls, frame)
        cdef = _find_def(ast.parse(src), (ast.ClassDef, ), name)
        si = srcmap(cdef) if cdef is not None else srcmap(ast.parse("x"))
        for n in (cdef.body if cdef is not None else ()):
            if isinstance(n, ast.AnnAssign) and isinstance(n.target,
                                                            ast.Name):
                field_si[n.target.id] = srcmap(n)
    except (ExoSyntaxError, SyntaxError):
        si = SrcInfo("<unknown>", 0)
    anns = cls.__dict__.get("__annotations__", {})
    if not anns:
        raise ExoTypeError(located(
            f"in config '{name}': it declares no fields; a config is a class "
            f"body of 'name: type' lines", si))
    fields = []
    for fname, ann in anns.items():
        typ = _config_field_type(name, fname, ann, scope,
                                 field_si.get(fname, si))
        fields.append((fname, typ))
    cfg = Config(name, fields, si, thread_entry, hardware_fields)
    if cls.__doc__:
        cfg.__doc__ = inspect.cleandoc(cls.__doc__)
    return cfg


def _config_field_type(cname, fname, ann, scope, si):
    def bad(msg):
        return ExoTypeError(located(
            f"in config '{cname}': field '{fname}': {msg}", si))
    if isinstance(ann, str):
        try:
            node = ast.parse(ann, mode="eval").body
        except SyntaxError:
            raise bad(f"cannot parse type {ann!r}") from None
        if isinstance(node, ast.Subscript):
            raise bad(f"{ann!r} is a tensor type; config fields are scalars "
                      f"(a control type or a data type such as f32)")
        obj = resolve_dotted(node, scope)
        if isinstance(node, ast.Name) and node.id in ("bool", "int") and \
                (obj is _MISSING or obj in (bool, int)):
            return IR.Bool if node.id == "bool" else IR.Int
    else:
        obj = {bool: IR.Bool, int: IR.Int}.get(ann, ann)
        if obj in (IR.Bool, IR.Int):
            return obj
    if isinstance(obj, surface.TypeMarker):
        typ = obj.ir_type
        if T.is_control(typ) or T.is_real_scalar(typ):
            return typ
    if obj is _MISSING:
        raise bad(f"unknown type {ann!r}")
    raise bad(f"{ann!r} is not a scalar control or data type")
