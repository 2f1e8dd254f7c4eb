"""``exo-hl compile FILE.py -o OUT_DIR``: procedures to C from the shell.

Writes ``NAME.c``, ``NAME.h`` and a Make-style ``NAME.d`` that lists the
user's Python files the compilation depended on (the file itself, the user
modules it imported from its directory, and every module, wherever it lives,
that defines a procedure, instr, config, memory or extern the output uses),
so a Makefile rebuilds the C when any of them changes. User mistakes (errors
in procedures, Python syntax errors, missing files) are reported as one
``file:line: message`` line on stderr with exit status 1, never as a
traceback (``--debug`` prints the whole message and the traceback).

``exo-hl show FILE.py [--proc NAME]`` prints the procedures;
``exo-hl compile FILE.py --cpu-features`` prints the CPU features each
public procedure needs.

``exo-hl tune APP`` searches a schedule's parameters with
``exo_hl.tune.tune`` and stores the best in this machine's tuning
database. ``APP`` is a Python file, a module name, or the name of an app
of the repository (``sgemm``: ``apps/sgemm/tuning.py`` under the current
directory); it defines ``tune_spec(options) -> dict`` with ``template``,
``space``, ``bench``, ``key`` and optionally ``units``, ``initial``,
``compile`` and ``about`` (``options``: ``--isa``, ``--threads`` and
``--option NAME=VALUE``).
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
from .core_ir.nodes import IR
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


def _stdlib_dirs():
    import sysconfig
    paths = sysconfig.get_paths()
    return {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")
            if paths.get(k)}


def _library_file(path, pkg_dir, stdlib):
    """Is ``path`` a Python file of user code (or of a library of procedures
    such as exo_hl's own hw_libs), rather than the stdlib or the compiler?"""
    if not path or not path.endswith(".py") or not os.path.isfile(path):
        return False
    if any(_under(path, d) for d in stdlib):
        return False
    return not _under(path, pkg_dir) or \
        _under(path, os.path.join(pkg_dir, "hw_libs"))


def _object_file(obj):
    import inspect
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        return None


def dependency_files(procs):
    """Source files of everything the C for ``procs`` is made from: every
    procedure and instr reached (where it was written, and every module
    binding it), every config, memory and extern they use; neither the
    stdlib nor the compiler itself."""
    from .codegen_c.analysis import all_procs_incl_instrs
    from .core_ir.memory import Memory
    from .core_ir.traversal import walk
    from .core_ir.config import Config
    from .core_ir.extern import Extern
    irs = all_procs_incl_instrs([p.ir() for p in procs])
    files, objs = [], set()

    def add(path):
        if path and path not in files:
            files.append(path)

    for p in irs:
        add(p.srcinfo.filename if p.srcinfo is not None else None)
        objs.update(a.mem for a in p.args if a.mem is not None)
        for root in tuple(p.body) + tuple(p.preds):
            for n in walk(root):
                if isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                    objs.add(n.config)
                elif isinstance(n, IR.Alloc):
                    objs.add(n.mem)
                elif isinstance(n, IR.Extern):
                    objs.add(n.f)
    pkg_dir = os.path.dirname(os.path.abspath(__file__))
    stdlib = _stdlib_dirs()
    for o in list(objs):
        if isinstance(o, Config):
            f = o.srcinfo.filename if o.srcinfo is not None else None
        elif isinstance(o, Extern):
            f = _object_file(getattr(o, "_interpret", None))
        else:
            f = _object_file(o)
        if _library_file(f, pkg_dir, stdlib):
            add(f)
        else:  # built in (DRAM, sqrt...): no module of the user's holds it
            objs.discard(o)
    # the modules that hold these objects (a scheduled procedure lives in
    # the module that scheduled it, not where its algorithm was written)
    ir_set = set(irs)
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f or f in files:
            continue
        try:
            values = list(vars(mod).values())
        except TypeError:
            continue
        for v in values:
            try:
                hit = (isinstance(v, Procedure) and v.ir() in ir_set) or \
                    (isinstance(v, (Config, Extern)) and v in objs) or \
                    (isinstance(v, type) and issubclass(v, Memory)
                     and v in objs)
            except Exception:  # an exotic module attribute
                hit = False
            if hit:
                add(f)
                break
    return sorted({os.path.abspath(f) for f in files
                   if _library_file(f, pkg_dir, stdlib)})


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
    from .codegen_c.openmp import OPENMP_FLAG, has_par_loops
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
    for f in dependency_files(procs):
        if f not in deps:
            deps.append(f)
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
    if has_par_loops(procs):
        print(f"exo-hl: {_dep_path(c_out)} has OpenMP parallel loops: build "
              f"it with {OPENMP_FLAG} to run them in parallel (without it "
              f"they run serially)")
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
    t = sub.add_parser("tune", parents=[common],
                       help="tune an app's schedule parameters on this "
                       "machine and store them in the tuning database")
    t.add_argument("app", help="a Python file, a module, or an app of the "
                   "repository (e.g. sgemm)")
    t.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                   help="time budget of the search (default 600)")
    t.add_argument("--trials", type=int, default=None,
                   help="at most this many candidates")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--workers", type=int, default=2,
                   help="candidates built at once (default 2)")
    t.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="a candidate's benchmark is killed after this long")
    t.add_argument("--db", metavar="DIR", default=None,
                   help="the tuning database directory (default: "
                   "<cache>/tuning)")
    t.add_argument("--isa", default=None, help="option isa")
    t.add_argument("--threads", default=None, help="option threads")
    t.add_argument("--option", action="append", default=[],
                   metavar="NAME=VALUE", help="an option of the app's "
                   "tune_spec (repeatable)")
    t.add_argument("--no-store", action="store_true",
                   help="search, print, but store nothing")
    s = sub.add_parser("show", parents=[common],
                       help="print the @procs of a Python file")
    s.add_argument("file", help="the Python file defining the procedures")
    s.add_argument("--proc", action="append", metavar="NAME",
                   help="print only this procedure (repeatable)")
    s.add_argument("--color", choices=("auto", "always", "never"),
                   default="auto",
                   help="syntax colours (auto: when printing to a terminal)")
    return ap


def _tuning_module(app):
    """The module behind ``exo-hl tune APP``."""
    import importlib
    if app.endswith(".py") or os.path.sep in app:
        # imported under its own name from its directory (not as a
        # private copy): the candidates' processes import its template
        # and bench by that name
        if not os.path.isfile(app):
            raise UserError(f"{app}: no such file")
        folder, stem = os.path.split(os.path.abspath(app))
        if folder not in sys.path:
            sys.path.insert(0, folder)
        app = os.path.splitext(stem)[0]
        try:
            return importlib.import_module(app)
        except Exception as e:  # noqa: BLE001 - the user's module failed
            raise UserError(f"{folder}/{stem}: {type(e).__name__}: {e}")
    local = os.path.join(os.getcwd(), "apps", app, "tuning.py")
    name = f"apps.{app}.tuning" if os.path.isfile(local) else app
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise UserError(f"tune: no app, module or file {app!r} ({e})")


def tune_command(args) -> int:
    from .tune import TuningDB, machine_signature, signature_label, tune
    mod = _tuning_module(args.app)
    if not hasattr(mod, "tune_spec"):
        raise UserError(f"tune: {args.app} defines no tune_spec(options)")
    options = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"tune: --option {item!r}: write NAME=VALUE")
        options[name.strip()] = value.strip()
    for name in ("isa", "threads"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    try:
        spec = mod.tune_spec(options)
    except ValueError as e:
        raise UserError(f"tune: {e}")
    db = TuningDB(args.db)
    print(f"tuning {spec.get('about', spec['key'])}")
    print(f"machine: {signature_label(machine_signature())}")
    print(f"space: {spec['space']}")
    result = tune(spec["template"], spec["space"], spec["bench"],
                  budget_s=args.budget, n_trials=args.trials,
                  seed=args.seed, workers=args.workers,
                  timeout_s=args.timeout, units=spec.get("units", ""),
                  initial=spec.get("initial", ()),
                  compile=spec.get("compile", True),
                  db=None if args.no_store else db, key=spec["key"])
    for t in result.trials:
        what = (f"{t.value:.4g}" if t.ok else
                (t.message.strip().splitlines() or [""])[0][:100])
        rep = f" (= #{t.repeat_of})" if t.repeat_of is not None else ""
        print(f"  #{t.number:<3} {t.status:<8} {what:<12} {t.params}"
              f" build {t.build_s:.0f} s{rep}")
    print(result.summary())
    if result.record_path:
        print(f"stored: {result.record_path}")
    return 0 if result.best_params is not None else 1


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
        if args.command == "tune":
            return tune_command(args)
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
