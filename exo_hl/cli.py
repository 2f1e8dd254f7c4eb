"""``exo-hl compile FILE.py -o OUT_DIR``: procedures to C from the shell.

Writes ``NAME.c``, ``NAME.h`` and a Make-style ``NAME.d`` that lists the
user's Python files the compilation depended on, so a Makefile rebuilds the
C when any of them changes. User mistakes (errors in procedures, Python
syntax errors, missing files) are reported as one ``file:line: message``
line on stderr with exit status 1, never as a traceback (``--debug`` prints
the whole message and the traceback).

``exo-hl show FILE.py [--proc NAME]`` prints the procedures;
``exo-hl compile FILE.py --cpu-features`` prints the CPU features each
public procedure needs.
"""
from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import os
import re
import sys
import traceback

from .api import Procedure
from .errors import ExoError, ExoSyntaxError


class UserError(Exception):
    """A problem to report to the user as a one-line (or few-line) message."""


def _under(path, root):
    try:
        return os.path.commonpath([os.path.realpath(path),
                                   os.path.realpath(root)]) == \
            os.path.realpath(root)
    except ValueError:
        return False


def _is_user_file(path, roots, pkg_dir):
    if not path or not path.endswith(".py"):
        return False
    if _under(path, pkg_dir) or "site-packages" in path.split(os.sep) or \
            "dist-packages" in path.split(os.sep):
        return False
    return any(_under(path, r) for r in roots)


def _user_location(exc, roots, pkg_dir):
    """file:line of the innermost traceback frame in the user's files."""
    loc = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if _is_user_file(fr.filename, roots, pkg_dir):
            loc = f"{fr.filename}:{fr.lineno}"
    return loc


def load_user_module(path):
    """Import ``path`` as a fresh module; returns (module, user files used)."""
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory, not a Python file")
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file")
    path = os.path.abspath(path)
    roots = [os.path.dirname(path), os.getcwd()]
    pkg_dir = os.path.dirname(os.path.abspath(__file__))
    before = set(sys.modules)
    name = "exo_hl_user_" + re.sub(r"\W", "_", os.path.splitext(
        os.path.basename(path))[0])
    # an explicit loader: a file not named .py is still read as Python
    spec = importlib.util.spec_from_file_location(
        name, path, loader=importlib.machinery.SourceFileLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (ExoError, ExoSyntaxError) as e:
        raise UserError(str(e))
    except SyntaxError as e:  # plain Python syntax error in the user's file
        where = e.filename or path
        if e.lineno:
            where += f":{e.lineno}"
        raise UserError(f"{where}: SyntaxError: {e.msg}")
    except Exception as e:  # the user's module failed while importing
        loc = _user_location(e, roots, pkg_dir) or path
        raise UserError(f"{loc}: {type(e).__name__}: {e}")
    finally:
        sys.path.remove(os.path.dirname(path))
    deps = [path]
    for mname in sorted(set(sys.modules) - before):
        f = getattr(sys.modules.get(mname), "__file__", None)
        if f and _is_user_file(f, roots, pkg_dir) and \
                os.path.abspath(f) not in deps:
            deps.append(os.path.abspath(f))
    return module, deps


def public_procs(module, wanted=None):
    """Module-level public procedures (not instrs), or those named."""
    found = []
    for var, obj in vars(module).items():
        if isinstance(obj, Procedure) and not obj.is_instr() and \
                not var.startswith("_") and obj not in found:
            found.append((var, obj))
    if not wanted:
        return [p for _, p in found]
    out = []
    for w in wanted:
        hits = [p for var, p in found if var == w or p.name() == w]
        if not hits:
            raise UserError(f"no public procedure named '{w}' in "
                            f"{module.__file__} (have: "
                            f"{', '.join(v for v, _ in found) or 'none'})")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def _dep_path(p):
    rel = os.path.relpath(p)
    p = rel if not rel.startswith("..") else p
    return p.replace(" ", "\\ ")


def compile_command(args):
    from .codegen_c.emit import compile_procs
    module, deps = load_user_module(args.file)
    stem = args.stem or os.path.splitext(os.path.basename(args.file))[0]
    if not re.fullmatch(r"[A-Za-z_]\w*", stem):
        raise UserError(f"--stem {stem!r} is not a valid C identifier "
                        f"(use --stem NAME)")
    procs = public_procs(module, args.proc)
    if not procs:
        raise UserError(f"{args.file}: no public @proc to compile")
    if args.cpu_features:
        print_cpu_features(procs)
        if args.o is None:
            return 0
    try:
        compile_procs(procs, args.o, stem)
    except ExoError as e:
        raise UserError(str(e))
    c_out = os.path.join(args.o, stem + ".c")
    h_out = os.path.join(args.o, stem + ".h")
    with open(os.path.join(args.o, stem + ".d"), "w") as f:
        f.write(f"{_dep_path(c_out)} {_dep_path(h_out)}: "
                + " ".join(_dep_path(d) for d in deps) + "\n")
    feats = sorted(frozenset().union(*(p.cpu_features() for p in procs)))
    if feats:
        print(f"{c_out}: needs CPU features {', '.join(feats)} at run time "
              f"(each function carries its target attribute: no -m flags "
              f"are needed to build it)")
    return 0


def print_cpu_features(procs):
    """One line per procedure: ``name: feature, feature`` (or ``none``)."""
    width = max(len(p.name()) for p in procs)
    for p in procs:
        feats = sorted(p.cpu_features())
        print(f"{p.name() + ':':<{width + 1}} "
              f"{', '.join(feats) if feats else 'none'}")


def show_command(args):
    module, _ = load_user_module(args.file)
    procs = public_procs(module, args.proc) if args.proc else \
        public_procs(module)
    if not procs:
        raise UserError(f"{args.file}: no public @proc to show")
    color = args.color == "always" or (args.color == "auto"
                                       and sys.stdout.isatty())
    texts = [str(p) for p in procs]
    if color:
        texts = [_terminal_colors(t) for t in texts]
    print("\n\n".join(t.rstrip("\n") for t in texts))
    return 0


def _terminal_colors(text):
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments is a dependency
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())


def _version():
    from . import __version__
    try:
        from importlib.metadata import version
        return version("exo_hl")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return __version__


def build_parser():
    # --debug is accepted before or after the command
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        default=argparse.SUPPRESS,
                        help="on an error, print the whole message and the "
                        "traceback (exo_hl's own frames included)")
    ap = argparse.ArgumentParser(
        prog="exo-hl", parents=[common],
        description="Compile exo_hl procedures to C: "
        "exo-hl compile FILE.py -o OUT_DIR; print them: exo-hl show FILE.py")
    ap.add_argument("--version", action="version",
                    version=f"exo-hl {_version()}")
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", parents=[common],
                       help="compile the @procs of a Python file "
                       "to C (NAME.c, NAME.h, NAME.d)")
    c.add_argument("file", help="the Python file defining the procedures")
    c.add_argument("-o", metavar="OUT_DIR",
                   help="output directory (created if missing); required "
                   "unless --cpu-features is given")
    c.add_argument("--stem", metavar="NAME",
                   help="base name of the outputs (default: FILE's stem)")
    c.add_argument("--proc", action="append", metavar="NAME",
                   help="compile only this procedure (repeatable)")
    c.add_argument("--cpu-features", action="store_true",
                   help="print the CPU features each procedure needs "
                   "(with -o, also compile)")
    s = sub.add_parser("show", parents=[common],
                       help="print the @procs of a Python file")
    s.add_argument("file", help="the Python file defining the procedures")
    s.add_argument("--proc", action="append", metavar="NAME",
                   help="print only this procedure (repeatable)")
    s.add_argument("--color", choices=("auto", "always", "never"),
                   default="auto",
                   help="syntax colours (auto: when printing to a terminal)")
    return ap


def _report(e, debug):
    """The error as one line on stderr (everything, with --debug)."""
    if debug:
        traceback.print_exception(e, file=sys.stderr)
        print(f"exo-hl: error: {e}", file=sys.stderr)
        return
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    print(f"exo-hl: error: {first}", file=sys.stderr)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = getattr(args, "debug", False)
    if args.command == "compile" and args.o is None and \
            not args.cpu_features:
        parser.error("compile: -o OUT_DIR is required "
                     "(or --cpu-features to only list the features)")
    if debug:
        os.environ["EXO_HL_DEBUG"] = "1"  # keep exo_hl's own frames
    try:
        if args.command == "compile":
            return compile_command(args)
        if args.command == "show":
            return show_command(args)
    except (UserError, OSError) as e:
        _report(e, debug)
        return 1
    except Exception as e:  # noqa: BLE001 - an internal failure
        if debug:
            traceback.print_exception(e, file=sys.stderr)
        print(f"exo-hl: internal error: {type(e).__name__}: "
              f"{(str(e).strip().splitlines() or [''])[0]}"
              + ("" if debug else " (run with --debug for the traceback)"),
              file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
