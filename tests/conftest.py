"""Project-wide test fixtures (add to this file additively).

``assert_roundtrip(p)``: ``str(p)`` reparsed by the frontend gives an
alpha-equal procedure that prints identically (API.md §5 round trip).
"""
from __future__ import annotations

import pytest


def roundtrip_scope(proc_ir) -> dict:
    """Names the printed text of ``proc_ir`` needs to parse again.

    The public ``exo_hl`` names, plus every callee (as the same IR, wrapped
    in a ``Procedure``), config, extern and memory the procedure mentions.
    """
    import exo_hl
    from exo_hl.api import Procedure
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.printer import mem_name
    from exo_hl.core_ir.traversal import walk

    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    seen = set()

    def visit(p):
        if id(p) in seen:
            return
        seen.add(id(p))
        for a in p.args:
            if a.mem is not None:
                scope[mem_name(a.mem)] = a.mem
        for root in tuple(p.body) + tuple(p.preds):
            for n in walk(root):
                if isinstance(n, IR.Call):
                    scope[n.f.name] = Procedure(n.f)
                    visit(n.f)
                elif isinstance(n, IR.Extern):
                    scope[n.f.name()] = n.f
                elif isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                    scope[n.config.name()] = n.config
                elif isinstance(n, IR.Alloc):
                    scope[mem_name(n.mem)] = n.mem
    visit(proc_ir)
    return scope


def reparse(p):
    """``str(p)`` parsed back into a ``Procedure``."""
    from exo_hl.frontend.decorators import parse_proc_source
    return parse_proc_source(str(p), roundtrip_scope(p.ir()))


def check_roundtrip(p):
    from exo_hl.core_ir.printer import alpha_equal
    text = str(p)
    q = reparse(p)
    assert alpha_equal(p.ir(), q.ir()), (
        f"reparsed procedure differs structurally:\n{text}\n---\n{q}")
    assert str(q) == text
    return q


@pytest.fixture
def assert_roundtrip():
    """A function ``assert_roundtrip(p)`` checking the printer round trip."""
    return check_roundtrip
