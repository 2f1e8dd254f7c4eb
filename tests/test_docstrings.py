"""Every public name has a docstring with an example.

Public names: what ``exo_hl`` (and ``exo_hl.stdlib`` when present) exports,
the shipped hardware libraries' instructions, memories, configs and
helpers, the error classes, and every public method of ``Procedure`` and
of the cursor classes. An example is a ``>>>`` line or a code block (an
``Example::`` paragraph, or an indented block after ``::``).

An instruction's or procedure's docstring is the one written in its
``def``; ``help(mm256_loadu_ps)`` shows it.
"""
from __future__ import annotations

import importlib
import inspect
import re

import exo_hl
from exo_hl import Procedure, errors
from exo_hl import cursors
from exo_hl.core_ir.config import Config
from exo_hl.core_ir.extern import Extern

HW_LIBS = ("exo_hl.hw_libs.amx", "exo_hl.hw_libs.avx2", "exo_hl.hw_libs.avx512",
           "exo_hl.hw_libs.gemmini", "exo_hl.hw_libs.vector_registers")


def _own_doc(obj) -> str:
    """The docstring written for ``obj`` itself (for a procedure, config or
    extern object, its own; never its class's)."""
    if isinstance(obj, (Procedure, Config, Extern)):
        return obj.__doc__ if obj.__doc__ is not type(obj).__doc__ else ""
    return inspect.getdoc(obj) or ""


def _has_example(doc: str) -> bool:
    return ">>>" in doc or bool(re.search(r"::\s*\n\s*\n?\s{4,}\S", doc))


def _module_names(modname):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n, v in vars(mod).items() if not n.startswith("_")
                 and getattr(v, "__module__", modname) == modname
                 and (inspect.isclass(v) or inspect.isfunction(v))]
    return [(f"{modname}.{n}", getattr(mod, n)) for n in names]


def _documentable(obj) -> bool:
    """Names that can carry a docstring (not plain constants or lists)."""
    return not isinstance(obj, (int, float, str, list, tuple, dict,
                                frozenset, set))


def public_names():
    out = _module_names("exo_hl")
    try:
        out += _module_names("exo_hl.stdlib")
    except ModuleNotFoundError as e:
        assert e.name == "exo_hl.stdlib", e
    for lib in HW_LIBS:
        out += _module_names(lib)
    out += _module_names("exo_hl.tune")
    out += [(f"exo_hl.errors.{n}", c) for n, c in vars(errors).items()
            if inspect.isclass(c) and issubclass(c, BaseException)
            and c.__module__ == errors.__name__]
    out.append(("exo_hl.cursors.InvalidCursorError",
                cursors.InvalidCursorError))
    classes = [Procedure, cursors.Cursor, cursors.StmtCursor,
               cursors.BlockCursor, cursors.GapCursor, cursors.ExprCursor,
               cursors.ArgCursor]
    for cls in classes:
        out.append((f"{cls.__module__}.{cls.__qualname__}", cls))
        for n, f in vars(cls).items():
            if n.startswith("_") or not callable(f) and not isinstance(
                    f, property):
                continue
            out.append((f"{cls.__qualname__}.{n}", getattr(cls, n)))
    return [(n, o) for n, o in out if _documentable(o)]


def test_the_list_covers_every_kind_of_public_name():
    names = dict(public_names())
    for n in ("exo_hl.proc", "exo_hl.f32", "exo_hl.seq",
              "exo_hl.hw_libs.avx2.mm256_loadu_ps",
              "exo_hl.hw_libs.avx512.AVX512",
              "exo_hl.hw_libs.gemmini.ConfigLoad",
              "exo_hl.hw_libs.gemmini.clamp_i8",
              "exo_hl.errors.SchedulingError", "Procedure.stage_mem",
              "StmtCursor.parent", "BlockCursor.expand"):
        assert n in names, n
    assert len(names) > 150


def test_every_public_name_has_a_docstring():
    missing = [n for n, o in public_names() if not _own_doc(o).strip()]
    assert missing == []


def test_every_public_docstring_shows_an_example():
    missing = [n for n, o in public_names() if not _has_example(_own_doc(o))]
    assert missing == []


def test_help_shows_an_instructions_own_docstring():
    from exo_hl.hw_libs.avx2 import mm256_loadu_ps
    from exo_hl.hw_libs.gemmini import ConfigLoad
    text = inspect.getdoc(mm256_loadu_ps)
    assert "8 floats" in text and ">>>" in text
    assert "stride" in inspect.getdoc(ConfigLoad)
    # the class keeps its own docstring
    assert Procedure.__doc__ and "procedure" in Procedure.__doc__.lower()
    assert inspect.getdoc(Procedure) != text


def test_rewritten_procedures_do_not_claim_the_originals_docstring():
    from exo_hl.hw_libs.avx2 import mm256_loadu_ps
    p = mm256_loadu_ps.rename("my_load")
    assert p.__doc__ is Procedure.__doc__
