"""``exo-hl validate FILE --proc NAME --against NAME``: translation
validation of one procedure against another from the shell
(docs/validate.md). Exit status 0 when proven, 1 when refuted or on an
error, 3 when unknown.
"""
from __future__ import annotations


def add_validate_parser(sub, common):
    v = sub.add_parser("validate", parents=[common],
                       help="check that a scheduled procedure computes what "
                       "its algorithm computes (proven / refuted / unknown)")
    v.add_argument("file", help="the Python file defining both procedures")
    v.add_argument("--proc", required=True, metavar="NAME",
                   help="the scheduled procedure")
    v.add_argument("--against", required=True, metavar="NAME",
                   help="the algorithm (original) procedure")
    v.add_argument("--max-sizes", type=int, default=3,
                   help="size assignments to check symbolically (default 3)")
    v.add_argument("--seed", type=int, default=0)


def validate_command(args, load_user_module, public_procs):
    from .validate import validate
    module, _ = load_user_module(args.file)
    sched, = public_procs(module, [args.proc])
    orig, = public_procs(module, [args.against])
    v = validate(orig, sched, max_sizes=args.max_sizes, seed=args.seed)
    print(f"{sched.name()} against {orig.name()}: {v}")
    if v.sizes:
        print(f"sizes checked symbolically: {v.sizes}")
    print(f"({v.seconds:.2f} s)")
    return {"proven": 0, "refuted": 1}.get(v.status, 3)
