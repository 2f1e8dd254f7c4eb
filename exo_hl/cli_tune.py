"""``exo-hl tune APP``: search an app's schedule parameters with
``exo_hl.tune.tune`` and store the best in this machine's tuning database.

Its own module so that the CLI's file handling (cli.py) stays apart from
the search, which it imports only when the command runs.
"""
from __future__ import annotations

import os
import sys

from .cli_common import UserError


def add_tune_parser(sub, common):
    """The ``tune`` subcommand's arguments."""
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
    t.add_argument("--confirm", type=int, default=3, metavar="ROUNDS",
                   help="after the search, time the initial points and the "
                   "best others again in this many alternating rounds and "
                   "keep the best median (default 3; 0: keep the search's "
                   "single best measurement)")
    t.add_argument("--confirm-top", type=int, default=3, metavar="N",
                   help="how many of the search's best points the "
                   "confirmation re-times besides the initial ones "
                   "(default 3)")
    t.add_argument("--db", metavar="DIR", default=None,
                   help="the tuning database directory (default: "
                   "$EXO_HL_TUNING_DB, else <cache>/tuning)")
    t.add_argument("--isa", default=None, help="option isa")
    t.add_argument("--threads", default=None, help="option threads")
    t.add_argument("--option", action="append", default=[],
                   metavar="NAME=VALUE", help="an option of the app's "
                   "tune_spec (repeatable)")
    t.add_argument("--no-store", action="store_true",
                   help="search, print, but store nothing")


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
    for name in spec.get("unset_env", ()):
        # before the workers start: they inherit this environment
        value = os.environ.pop(name, None)
        if value is not None:
            print(f"unset {name}={value} (the app's tune_spec: its "
                  f"benchmark must not see it)")
    print(f"machine: {signature_label(machine_signature())}")
    print(f"space: {spec['space']}")
    result = tune(spec["template"], spec["space"], spec["bench"],
                  budget_s=args.budget, n_trials=args.trials,
                  seed=args.seed, workers=args.workers,
                  timeout_s=args.timeout, units=spec.get("units", ""),
                  initial=spec.get("initial", ()),
                  valid=spec.get("valid"),
                  compile=spec.get("compile", True),
                  compile_opts=spec.get("compile_opts"),
                  n_startup=spec.get("n_startup", 10),
                  confirm=args.confirm, confirm_top=args.confirm_top,
                  db=None if args.no_store else db, key=spec["key"])
    for t in result.trials:
        what = (f"{t.value:.4g}" if t.ok else
                (t.message.strip().splitlines() or [""])[0][:100])
        rep = f" (= #{t.repeat_of})" if t.repeat_of is not None else ""
        print(f"  #{t.number:<3} {t.status:<8} {what:<12} {t.params}"
              f" build {t.build_s:.0f} s{rep}")
    if result.confirmation is not None:
        for c in result.confirmation.finalists:
            vals = (", ".join(f"{v:.4g}" for v in c.values) if c.values
                    else c.message)
            first = "-" if c.first is None else f"{c.first:.4g}"
            print(f"  confirm #{c.number:<3} {c.source:<8} first {first:<7}"
                  f" rounds [{vals}] {c.params}")
    print(result.summary())
    if result.record_path:
        print(f"stored: {result.record_path}")
    return 0 if result.best_params is not None else 1
