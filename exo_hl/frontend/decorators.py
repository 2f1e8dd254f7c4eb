"""``@proc``, ``@instr``, ``@config`` and ``extern``: the user's entry points.

Each decorator reads the function's *source* (never runs it), parses it in
the scope where it is defined, and returns the compiler's object. The
defining scope is captured at decoration time: the function's module globals,
the caller frame's locals (so procedures may be written inside functions and
tests), and the function's closure cells.

All problems surface at decoration time as ``ExoSyntaxError`` /
``ExoTypeError`` (or ``BoundsError`` from the static checks), located at the
offending line; an unexpected internal failure is wrapped so the user still
sees the procedure and location first.
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from typing import Optional

from ..core_ir.cpu_features import normalize_features
from ..core_ir.extern import Extern
from ..core_ir.names import respell
from ..core_ir.nodes import IR
from ..core_ir.srcinfo import SrcInfo
from ..errors import ExoError, ExoSyntaxError, ExoTypeError, \
    located
from ..feedback import debug_tracebacks, for_user
from . import surface
from ..effects.wellformed import run_static_checks
from .arg_dims import check_arg_dims
from .parser import (ProcParser, SourceMap, _MISSING, check_instr_template,
                     resolve_dotted)


# ----------------------------------------------------------------------
# scope and source
def defining_scope(fn, frame) -> dict:
    """Names visible where ``fn`` is defined: globals < caller locals <
    closure cells."""
    mod = sys.modules.get(getattr(fn, "__module__", None) or "")
    scope = dict(getattr(fn, "__globals__", None)
                 or (frame.f_globals if frame is not None else None)
                 or (vars(mod) if mod else {}))
    # the caller's locals, and those of the functions lexically enclosing it
    # that are still running (a name used only in an annotation is not a
    # closure cell of the inner function); an unrelated caller is skipped
    frames = []
    f = frame
    while f is not None:
        frames.append(f)
        outer = f.f_back
        if outer is None or f.f_code not in outer.f_code.co_consts:
            break
        f = outer
    for f in reversed(frames):
        scope.update(f.f_locals)
    code = getattr(fn, "__code__", None)
    if code is not None and fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:  # cell not yet assigned
                pass
    return scope


def _source_of(obj):
    """(dedented source, SourceMap) of a function or class."""
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as e:
        raise ExoSyntaxError(
            f"cannot read the source of '{getattr(obj, '__name__', obj)}' "
            f"({e}); procedures must be defined in a file") from None
    raw = "".join(lines)
    src = textwrap.dedent(raw)
    first_line = raw.splitlines()[0] if raw else ""
    shift = len(first_line) - len(src.splitlines()[0]) if src else 0
    return src, SourceMap(filename, raw.splitlines(), first, shift)


def parse_python(text, filename="<unknown>"):
    """``ast.parse`` with room for long expressions: CPython bounds the depth
    of the syntax tree it builds by the recursion limit (a 3,000-term sum is
    already too deep), though each level costs little C stack. The limit is
    raised for this call only; the frontend walks long chains iteratively
    and refuses what it cannot, with a location."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _AST_RECURSION_LIMIT))
    try:
        return ast.parse(text, filename)
    finally:
        sys.setrecursionlimit(old)


#: enough for a 100,000-term chain
_AST_RECURSION_LIMIT = 200_000


def _find_def(tree, kinds, name):
    for n in tree.body:
        if isinstance(n, kinds) and n.name == name:
            return n
    for n in ast.walk(tree):
        if isinstance(n, kinds) and n.name == name:
            return n
    return None


def _guard(name, srcinfo, fn):
    """Run ``fn``; wrap unexpected internal exceptions as located errors."""
    try:
        return fn()
    except (ExoError, ExoSyntaxError):
        raise
    except Exception as e:  # an internal bug must not surface as a traceback
        raise ExoTypeError(located(
            f"internal error while processing this procedure "
            f"({type(e).__name__}: {e})", srcinfo, name)) from e


def _build(fdef, scope, srcmap, instr: Optional[IR.Instr]):
    """Parse + type check + static checks; returns a ``Procedure``."""
    from ..api import Procedure

    def go():
        ir = ProcParser(fdef, scope, srcmap, instr).parse()
        if instr is not None:
            check_instr_template(ir, instr.c_template)
        check_arg_dims(ir)
        run_static_checks(ir)
        return Procedure(respell(ir))
    return _guard(fdef.name, srcmap(fdef), go)


def _not_a_function(fn):
    """A located error for ``@proc`` on something that is not a plain
    function (a class, an ``async def``, a procedure already made)."""
    from ..api import Procedure
    what = "@proc/@instr"
    if isinstance(fn, Procedure):
        ir = fn.ir()
        return ExoSyntaxError(
            f"in procedure '{ir.name}': {what} applied to a procedure "
            f"('{ir.name}' is already one); decorate the function once",
            ir.srcinfo)
    name = getattr(fn, "__name__", type(fn).__name__)
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        kind = "an 'async def'"
    elif inspect.isclass(fn):
        kind = "a class"
    else:
        return TypeError(f"@proc/@instr decorate a function, not "
                         f"{type(fn).__name__}")
    try:
        _, srcmap = _source_of(fn)
        si = srcmap(ast.parse("x").body[0])
    except ExoSyntaxError:
        si = None
    return ExoSyntaxError(f"in procedure '{name}': procedures are plain "
                          f"'def' functions, not {kind}", si)


def _proc_from_function(fn, frame, instr=None):
    if not inspect.isfunction(fn) or inspect.iscoroutinefunction(fn) or \
            inspect.isasyncgenfunction(fn):
        raise _not_a_function(fn)
    scope = defining_scope(fn, frame)
    src, srcmap = _source_of(fn)
    tree = parse_python(src, srcmap.filename)
    fdef = _find_def(tree, (ast.FunctionDef, ), fn.__name__)
    if fdef is None:  # pragma: no cover - getsource returned the def itself
        raise ExoSyntaxError(f"cannot find the definition of {fn.__name__}")
    p = _build(fdef, scope, srcmap, instr)
    if fn.__doc__:  # help(p) shows the docstring of its def
        object.__setattr__(p, "_doc", inspect.cleandoc(fn.__doc__))
    return p


# ----------------------------------------------------------------------
# the decorators
def proc(fn):
    """``@proc``: a procedure (docs/api.md §1).

    >>> @proc
    ... def scale(n: size, x: f32[n]):
    ...     for i in seq(0, n):
    ...         x[i] = 2.0 * x[i]
    >>> print(scale)                       # the checked procedure
    """
    try:
        return _proc_from_function(fn, sys._getframe(1))
    except (ExoError, ExoSyntaxError) as e:
        __tracebackhide__ = not debug_tracebacks()  # noqa: F841
        raise for_user(e)  # exo_hl's frames: set EXO_HL_DEBUG=1


def instr(c_template: str, c_global: str = "", cpu_features=()):
    """``@instr(template, c_global="", cpu_features=())``: a procedure whose
    body specifies the semantics and whose calls compile to ``template``.

    ``cpu_features`` names the CPU features the template's intrinsics need
    (GCC names, e.g. ``{"avx2", "fma"}``): the C function that uses the
    instruction gets a matching target attribute, and compiled callables
    check the host CPU before running it.

    >>> @instr("{dst_data} = _mm256_loadu_ps(&{src_data});",
    ...        "#include <immintrin.h>\\n", cpu_features={"avx"})
    ... def load8(dst: [f32][8] @ AVX2, src: [f32][8] @ DRAM):
    ...     assert stride(src, 0) == 1
    ...     for i in seq(0, 8):
    ...         dst[i] = src[i]
    """
    if not isinstance(c_template, str):
        raise TypeError("@instr needs a C template string: "
                        "@instr(\"foo({x});\")")
    feats = normalize_features(cpu_features, "@instr cpu_features")
    frame = sys._getframe(1)

    def wrap(fn):
        try:
            return _proc_from_function(fn, frame,
                                       IR.Instr(c_template, c_global, feats))
        except (ExoError, ExoSyntaxError) as e:
            __tracebackhide__ = not debug_tracebacks()  # noqa: F841
            raise for_user(e)  # exo_hl's frames: set EXO_HL_DEBUG=1
    return wrap




# ----------------------------------------------------------------------
# externs
def extern(c_emit, typecheck=None, c_global: str = "", name=None):
    """A user-defined extern function, used as a decorator on a Python
    function that gives its interpreter semantics::

        @extern("fmaxf({x}, 0.0f)")          # or a fn (args, c_type) -> str
        def my_relu(x):
            return max(x, 0)

    ``c_emit``: a ``str.format`` template (placeholders: positional ``{0}``,
    the parameter names, and ``{c_type}`` for the C element type) or a
    function ``(list of C arg strings, c_type) -> str``. ``typecheck``:
    optional ``(list of arg IR types) -> result type`` (a type marker such
    as ``f32`` is accepted), raising ``TypeError`` to reject; by default all
    arguments must be data scalars and the result has the first one's type.
    Inside procedures the extern is found by the name it is bound to.
    """
    def wrap(fn):
        params = list(inspect.signature(fn).parameters)
        if isinstance(c_emit, str):
            tmpl = c_emit

            def emit(args, c_type):
                return tmpl.format(*args, c_type=c_type,
                                   **dict(zip(params, args)))
        elif callable(c_emit):
            emit = c_emit
        else:
            raise TypeError("extern needs a C template string or an emitter "
                            "function (args, c_type) -> str")
        tc = None
        if typecheck is not None:
            def tc(arg_types):
                r = typecheck(arg_types)
                return getattr(r, "ir_type", r)
        ext = Extern(name or fn.__name__, len(params), emit, fn, tc,
                     c_global)
        if fn.__doc__:
            ext.__doc__ = inspect.cleandoc(fn.__doc__)
        return ext
    if isinstance(c_emit, Extern):
        return c_emit
    return wrap


# ----------------------------------------------------------------------
# parsing text (the printer's round trip)
def _surface_scope():
    from ..core_ir.memory import DRAM, DRAM_STATIC
    names = dict(surface.TYPE_MARKERS)
    names.update(seq=surface.seq, par=surface.par,
                 par_dynamic=surface.par_dynamic, DRAM=DRAM,
                 DRAM_STATIC=DRAM_STATIC, proc=proc, instr=instr)
    return names


#: names printed text may use without the caller listing them
_SURFACE_SCOPE = _surface_scope()


def parse_procs_source(src: str, scope: dict, filename: str = "<string>"):
    """Every ``def`` in ``src``, as ``Procedure`` objects, in order.

    ``scope`` maps the names the text uses (memories, configs, callees,
    user externs) to objects; the surface names (``f32``, ``size``, ``seq``,
    ``stride``, ``DRAM``...) are there by default. Each procedure is visible
    to the later ones.
    A def decorated ``@instr("...")`` becomes an instr.
    """
    text = textwrap.dedent(src)
    try:
        tree = parse_python(text, filename)
    except SyntaxError as e:
        raise ExoSyntaxError(f"cannot parse procedure text: {e.msg}",
                             SrcInfo(filename, e.lineno or 0,
                                     (e.offset or 1) - 1, None,
                                     e.text)) from None
    srcmap = SourceMap(filename, text.splitlines(), 1, 0)
    scope = {**_SURFACE_SCOPE, **scope}
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        instr_node = _instr_decorator(node, scope, srcmap)
        p = _build(node, scope, srcmap, instr_node)
        scope[node.name] = p
        out.append(p)
    return out


def parse_proc_source(src: str, scope: dict, filename: str = "<string>"):
    """The first procedure defined in ``src`` (see ``parse_procs_source``)."""
    procs = parse_procs_source(src, scope, filename)
    if not procs:
        raise ExoSyntaxError(f"{filename}: no procedure definition found")
    return procs[0]


def _instr_decorator(fdef, scope, srcmap):
    for d in fdef.decorator_list:
        if isinstance(d, ast.Call):
            target = resolve_dotted(d.func, scope)
            named = isinstance(d.func, (ast.Name, ast.Attribute)) and \
                (d.func.id if isinstance(d.func, ast.Name)
                 else d.func.attr) == "instr"
            if target is instr or (target is _MISSING and named):
                vals = [a.value for a in d.args
                        if isinstance(a, ast.Constant)]
                kw = {k.arg: k.value.value for k in d.keywords
                      if isinstance(k.value, ast.Constant)}
                if not vals or not isinstance(vals[0], str):
                    raise ExoSyntaxError("@instr needs a template string",
                                         srcmap(d))
                feats = ()
                for k in d.keywords:
                    if k.arg == "cpu_features":
                        try:
                            feats = normalize_features(
                                ast.literal_eval(k.value),
                                "@instr cpu_features")
                        except (ValueError, TypeError) as e:
                            raise ExoSyntaxError(
                                f"@instr cpu_features must be a literal set "
                                f"of feature names ({e})", srcmap(d)) from None
                return IR.Instr(vals[0], vals[1] if len(vals) > 1
                                else kw.get("c_global", ""), feats)
    return None


__all__ = ["proc", "instr", "extern", "parse_proc_source",
           "parse_procs_source"]
