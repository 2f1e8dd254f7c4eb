"""Shared helpers for rewrite tests (add to this file additively).

``check_equiv(p_old, p_new, sizes_list)`` runs both procedures on the same
random small-integer data through ``interpret()`` and ``compile()`` and
asserts every output buffer matches (exactly: small integers keep float sums
exact under reordering).
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl.core_ir import types as T
from exo_hl.core_ir.nodes import IR


def _eval_ctrl(e, env):
    """Value of a control expression (sizes of argument tensors)."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name.name]
    if isinstance(e, IR.USub):
        return -_eval_ctrl(e.arg, env)
    if isinstance(e, IR.BinOp):
        a, b = _eval_ctrl(e.lhs, env), _eval_ctrl(e.rhs, env)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a // b, "%": lambda: a % b}[e.op]()
    raise NotImplementedError(f"cannot evaluate size expression {e!r}")


def make_args(p, sizes, rng):
    """Random arguments (a name -> value dict) for procedure ``p``."""
    args = {}
    for fa in p.ir().args:
        name = fa.name.name
        t = fa.type
        if T.is_control(t):
            args[name] = sizes[name]
        elif isinstance(t, IR.Tensor):
            shape = tuple(_eval_ctrl(h, args) for h in t.hi)
            dt = T.NUMPY_DTYPES[t.type]
            args[name] = rng.integers(-4, 5, size=shape).astype(dt)
        else:
            dt = T.NUMPY_DTYPES[t]
            args[name] = rng.integers(-4, 5, size=(1, )).astype(dt)
    return args


def _copy(args):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in args.items()}


def _positional(p, args):
    return [args[fa.name.name] for fa in p.ir().args]


def check_equiv(p_old, p_new, sizes_list, seed=0, compiled=True):
    """Assert ``p_old`` and ``p_new`` agree on random data for each size dict.

    Both are run through the interpreter and (``compiled=True``) through the
    compiled C; all four results must agree on every buffer argument. Sizes
    missing from ``p_new``'s signature (partial_eval) are simply dropped.
    """
    rng = np.random.default_rng(seed)
    f_old = p_old.compile() if compiled else None
    f_new = p_new.compile() if compiled else None
    for sizes in sizes_list:
        base = make_args(p_old, sizes, rng)
        new_names = {fa.name.name for fa in p_new.ir().args}
        runs = []
        for p, f in ((p_old, f_old), (p_new, f_new)):
            sub = {k: v for k, v in base.items() if k in
                   {fa.name.name for fa in p.ir().args}}
            a = _copy(sub)
            p.interpret(*_positional(p, a))
            runs.append(a)
            if f is not None:
                a = _copy(sub)
                f(*_positional(p, a))
                runs.append(a)
        ref = runs[0]
        for r in runs[1:]:
            for k, v in ref.items():
                if isinstance(v, np.ndarray) and k in r:
                    np.testing.assert_array_equal(
                        r[k], v, err_msg=f"buffer {k} differs, sizes={sizes}")
        assert new_names <= set(base)


@pytest.fixture
def equiv():
    """The ``check_equiv`` function, as a fixture."""
    return check_equiv
