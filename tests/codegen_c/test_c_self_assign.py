"""An assignment of a location to itself (``t = t``, written by a user or
left by a rewrite) is emitted as a comment when its C would be ``t = t;``
(no conversion: the value is kept), since clang's ``-Wself-assign`` rejects
that under ``-Wall``; the suite's C audit compiles every procedure here
warning-free with gcc and clang. With a conversion (bf16, read as f32 and
rounded back) the assignment stays. Interpret and C agree on every type,
signed zeros and NaN included."""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl
from exo_hl import config, f32, i8, proc
from exo_hl.core_ir import datasem as D
from exo_hl.frontend.decorators import parse_proc_source

SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
_NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
       "i32": np.int32, "f16": np.float16, "f32": np.float32,
       "f64": np.float64, "bf16": np.uint16}


@pytest.mark.parametrize("ty", sorted(_NP))
def test_self_assignments_of_every_type(ty):
    p = parse_proc_source(
        f"def selfs(n: size, x: {ty}[n], y: {ty}[n], s: {ty}):\n"
        f"    for i in seq(0, n):\n"
        f"        t: {ty}\n        t = x[i]\n        t = t\n"
        f"        y[i] = t\n        y[i] = y[i]\n        x[i] = x[i]\n"
        f"    s = s\n", SCOPE)
    c = p.c_code_str()
    body = c[c.rindex("void selfs("):]
    for name in ("t", "y[i]", "x[i]", "*s"):
        if ty == "bf16":        # a conversion each way: a real statement
            continue
        assert f"    {name} = {name};" not in body, body
        assert f"(void){name};  /* = itself: keeps its value */" in body, \
            body
    rng = np.random.default_rng(3)
    if ty in ("f16", "f32", "f64"):
        x = np.array([np.nan, -0.0, 0.0, np.inf, 1.5, -2.25], _NP[ty])
    elif ty == "bf16":
        x = D.f32_to_bf16_bits(np.array([np.nan, -0.0, 1.5, -3.0],
                                        np.float32))
    else:
        lo, hi = D.int_range(getattr(exo_hl.core_ir.nodes.IR, ty.upper()))
        x = np.array([lo, hi, 0, *rng.integers(lo, hi, 5)], _NP[ty])
    outs = []
    for run in (p.interpret, p.compile()):
        xx, y, s = x.copy(), np.zeros_like(x), x[:1].copy()
        run(len(x), xx, y, s)
        outs.append((xx.tobytes(), y.tobytes(), s.tobytes()))
    assert outs[0] == outs[1]
    assert outs[0][1] == x.tobytes()


@config
class SelfCfg:
    k: i8
    v: f32


@proc
def config_self(x: f32[2]):
    SelfCfg.v = x[0]
    SelfCfg.v = SelfCfg.v
    x[1] = SelfCfg.v


def test_config_field_assigned_to_itself():
    c = config_self.c_code_str()
    assert "= itself: keeps its value */" in c
    x = np.array([2.5, 0.0], np.float32)
    x2 = x.copy()
    config_self.interpret(x)
    config_self.compile()(x2)
    assert x[1] == 2.5 and x2[1] == 2.5
