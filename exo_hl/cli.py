"""``exo-hl compile FILE.py -o OUT_DIR``: procedures to C from the shell.

Writes ``NAME.c``, ``NAME.h`` and a Make-style ``NAME.d`` that lists the
user's Python files the compilation depended on (the file itself, the user
modules it imported from its directory, and every module, wherever it lives,
that defines a procedure, instr, config, memory or extern the output uses),
so a Makefile rebuilds the C when any of them changes. User mistakes (errors
in procedures, Python syntax errors, missing files) are reported as one
``file:line: message`` line on stderr with exit status 1, never as a
traceback (``--debug`` prints the whole message and the traceback).

Which procedures: those FILE.py defines or schedules (its ``__all__`` when
it has one), not those it only imports; ``--proc NAME`` names any.
``exo-hl show FILE.py [--proc NAME]`` prints the procedures;
``exo-hl compile FILE.py --cpu-features`` prints the CPU features each
public procedure needs; ``--target aarch64`` (or ``aarch64-fp16``,
``riscv64``) also builds ``NAME.o`` with that cross compiler. ``exo-hl --cmake-dir`` prints where the CMake
module (``exo_hl_add_kernels``) is.

``exo-hl tune APP`` searches a schedule's parameters with
``exo_hl.tune.tune`` and stores the best in this machine's tuning
database. ``APP`` is a Python file, a module name, or the name of an app
of the repository (``sgemm``: ``apps/sgemm/tuning.py`` under the current
directory); it defines ``tune_spec(options) -> dict`` with ``template``,
``space``, ``bench``, ``key`` and optionally ``units``, ``initial``,
``compile`` and ``about`` (``options``: ``--isa``, ``--threads`` and
``--option NAME=VALUE``).

``exo-hl validate FILE.py --proc NAME --against NAME`` checks that one
procedure computes what another does (``exo_hl.validate``): exit status 0
proven, 1 refuted, 3 unknown.
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
from .cli_common import UserError
from .cli_tune import add_tune_parser, tune_command
from .cli_validate import add_validate_parser, validate_command
from .errors import ExoError, ExoSyntaxError




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


def _imported(module, var, obj):
    """Is the global ``var`` of ``module`` a procedure it only imported: one
    another loaded module holds too, written in another file?"""
    here = os.path.realpath(getattr(module, "__file__", "") or "")
    si = obj.ir().srcinfo
    if si is not None and si.filename and \
            os.path.realpath(si.filename) == here:
        return False
    for name, m in list(sys.modules.items()):
        if m is module or m is None:
            continue
        try:
            if vars(m).get(var) is obj:
                return True
        except TypeError:
            continue
    return False


def public_procs(module, wanted=None):
    """The procedures (not instrs) to compile or show: those named in
    ``wanted``, among every module-level one; else those in ``__all__``
    when the module defines it; else the public ones it defines or
    schedules itself (not those it only imports)."""
    found = [(var, obj) for var, obj in vars(module).items()
             if isinstance(obj, Procedure) and not obj.is_instr() and
             not var.startswith("_")]
    if not wanted:
        names = getattr(module, "__all__", None)
        if names is not None:
            keep = [p for var, p in found if var in set(names)]
        else:
            keep = [p for var, p in found if not _imported(module, var, p)]
        out = []
        for p in keep:          # one procedure bound to two names: once
            if all(p is not q for q in out):
                out.append(p)
        return out
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
    if args.target:
        from .codegen_c.cross import check_target_features
        from .core_ir.cpu_features import proc_features
        for p in procs:
            try:
                check_target_features(p.name(), proc_features(p.ir()),
                                      args.target)
            except RuntimeError as e:
                raise UserError(str(e))
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
    if args.target:
        from .codegen_c.cross import build_object
        try:
            obj, cmd = build_object(c_out, args.target)
        except RuntimeError as e:
            raise UserError(str(e))
        print(f"{_dep_path(obj)}: built for {args.target} with "
              f"{' '.join(cmd[:-4])}")
    elif feats:
        from .codegen_c.cross import build_hint
        print(f"{c_out}: needs CPU features {', '.join(feats)} at run time "
              f"({build_hint(feats)})")
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


def cmake_dir() -> str:
    """The directory holding ``ExoHL.cmake`` (``exo_hl_add_kernels``) and
    ``ExoHLConfig.cmake`` (for ``find_package(ExoHL)``)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmake")


class _PrintCMakeDir(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(cmake_dir())
        parser.exit()


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
    ap.add_argument("--cmake-dir", action=_PrintCMakeDir, nargs=0,
                    help="print the directory of the CMake module "
                    "(ExoHL.cmake, ExoHLConfig.cmake: "
                    "-DExoHL_DIR=\"$(exo-hl --cmake-dir)\") and exit")
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
    c.add_argument("--target", choices=("aarch64", "aarch64-fp16",
                                         "riscv64", "riscv64-vlen256",
                                         "riscv64-vlen512"),
                   help="also build NAME.o with this cross target's "
                   "compiler (docs/arm_riscv.md); a procedure needing a "
                   "feature the target lacks is an error")
    add_tune_parser(sub, common)
    add_validate_parser(sub, common)
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


def _silence_stdout():
    """Point stdout at /dev/null so the interpreter's final flush of the
    unread output raises no second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass   # a stdout without a descriptor (captured): nothing to flush


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
            status = compile_command(args)
        elif args.command == "show":
            status = show_command(args)
        elif args.command == "tune":
            status = tune_command(args)
        elif args.command == "validate":
            status = validate_command(args, load_user_module, public_procs)
        else:  # pragma: no cover - argparse requires a command
            return 2
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader stopped (``exo-hl show FILE | head``): stop quietly,
        # with the status of a process that SIGPIPE ended, as cat does
        _silence_stdout()
        return 128 + 13
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
