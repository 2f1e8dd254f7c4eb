"""The traversal toolkit: dispatch by node kind, every access to a buffer."""
from __future__ import annotations

from exo_hl import f32, proc, seq, size, stride
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.paths import walk_with_paths
from exo_hl.core_ir.printer import stmt_to_str
from exo_hl.core_ir.traversal import walk
from exo_hl.core_ir.visitors import Mutator, Visitor, map_accesses


@proc
def prog(n: size, x: f32[n, 4], y: f32[n, 4]):
    assert stride(x, 1) == 1
    for i in seq(0, n):
        for j in seq(0, 4):
            x[i, j] = y[i, j] + x[i, j]
        if i < 2:
            y[i, 0] += x[i, 1]


def test_visitor_dispatches_by_kind_and_can_skip_children():
    class Count(Visitor):
        def __init__(self):
            self.loops, self.reads = 0, 0

        def visit_For(self, node):
            self.loops += 1

        def visit_Read(self, node):
            self.reads += 1

    c = Count()
    for s in prog.ir().body:
        c.visit(s)
    reads = sum(isinstance(n, IR.Read) for s in prog.ir().body
                for n in walk(s))
    assert c.loops == 2 and c.reads == reads > 0

    class Shallow(Count):
        def visit_If(self, node):
            return False   # nothing inside the if is seen

    d = Shallow()
    for s in prog.ir().body:
        d.visit(s)
    assert d.loops == 2 and d.reads < c.reads


def test_mutator_rewrites_bottom_up_and_shares_unchanged_subtrees():
    class Swap(Mutator):
        def mutate_Reduce(self, node):
            return IR.Assign(node.name, node.type, node.idx, node.rhs,
                             srcinfo=node.srcinfo)

    loop = prog.ir().body[0]
    new = Swap().mutate(loop)
    assert "+=" not in stmt_to_str(new) and "+=" in stmt_to_str(loop)
    assert new.body[0] is loop.body[0]   # the inner loop has no Reduce


def test_map_accesses_touches_only_the_named_buffer():
    x = prog.ir().args[1].name
    seen = []
    new = map_accesses(prog.ir().body[0], x,
                       write=lambda s: seen.append("write"),
                       read=lambda e: seen.append("read"),
                       stride=lambda e: seen.append("stride"))
    assert new is prog.ir().body[0]   # every callback kept its node
    assert sorted(seen) == ["read", "read", "write"]
    paths = [p for p, _ in walk_with_paths(prog.ir().body)]
    assert paths[:3] == [(("body", 0), ), (("body", 0), ("body", 0)),
                         (("body", 0), ("body", 0), ("body", 0))]
