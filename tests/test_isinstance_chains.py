"""A guard on hand-written dispatch over statement kinds.

A function that tests a statement's kind in four or more branches of one
``if``/``elif`` chain (or of a run of ``if isinstance(...)`` statements) is
a traversal written by hand; new code should use ``core_ir.visitors``
(``Visitor``, ``Mutator``, ``map_accesses``), ``core_ir.paths``
(``walk_with_paths``) or ``core_ir.traversal`` instead. The chains that
exist are listed below with a reason; the list may only shrink: a new chain
fails the first test, a listed one that is gone fails the second (delete
its line).

Modules are read with ``ast``; nothing is imported.
"""
from __future__ import annotations

import ast
from pathlib import Path

import exo_hl
from exo_hl.core_ir.nodes import IR

ROOT = Path(exo_hl.__file__).parent
STMT_KINDS = frozenset(c.__name__ for c in IR.stmt.__subclasses__())
LIMIT = 4

#: (module, function) -> why its chain stays. Per-kind code whose branches
#: share nothing (printing, C emission, matching, effects) is clearest as
#: one chain; these are the IR's interpreters, not traversals.
ALLOWED = {
    ("codegen_c/proc_emit.py", "ProcEmitter.stmt"): "C per statement kind",
    ("core_ir/printer.py", "_stmt"): "text per statement kind",
    ("core_ir/simplify.py", "_Simplifier.stmt"):
        "loop ranges enter the environment of the body",
    ("core_ir/traversal.py", "_free"): "binders per statement kind",
    ("effects/bounds.py", "_Walker.stmt"): "bounds per statement kind",
    ("effects/effects.py", "_eff_stmt"): "effects per statement kind",
    ("effects/lift.py", "_valg"): "config values per statement kind",
    ("patterns.py", "stmt_expr_fields"):
        "the expression fields of each statement kind",
    ("rewrites/_buffer_uses.py", "stmt_exprs"):
        "the expression fields a buffer use can hide in",
    ("unify/match.py", "Matcher.stmt"): "structural match per kind",
    ("unify/match.py", "describe_stmt"): "a description per kind",
}


def _kinds(test) -> set:
    """Statement kinds (``IR.<Kind>``) named in ``isinstance`` calls of an
    ``if`` test."""
    out = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == \
                "isinstance" and len(n.args) == 2:
            for a in ast.walk(n.args[1]):
                if isinstance(a, ast.Attribute) and a.attr in STMT_KINDS \
                        and getattr(a.value, "id", None) == "IR":
                    out.add(a.attr)
    return out


def _elif_branches(node: ast.If) -> int:
    """Branches of an ``if``/``elif``/``elif``... chain that test a
    statement kind."""
    n = 0
    while True:
        n += bool(_kinds(node.test))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
        else:
            return n


def _chains(tree):
    """(function qualname, number of branches) of every chain of LIMIT or
    more branches on statement kinds."""
    found = []

    def block(stmts, where, elif_tail=False):
        run = 0
        for s in list(stmts) + [None]:
            k = _elif_branches(s) if isinstance(s, ast.If) else 0
            if k and not elif_tail:
                run += k
                continue
            if run >= LIMIT:
                found.append((where, run))
            run = 0

    def visit(node, where):
        for field in ("body", "orelse", "finalbody", "handlers"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and \
                    isinstance(stmts[0], ast.stmt):
                tail = (isinstance(node, ast.If) and field == "orelse"
                        and len(stmts) == 1 and isinstance(stmts[0], ast.If))
                block(stmts, where, tail)
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef)):
                visit(c, f"{where}.{c.name}" if where else c.name)
            else:
                visit(c, where)

    visit(tree, "")
    return found


def _all_chains():
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "core_ir/visitors.py":
            continue
        for where, n in _chains(ast.parse(path.read_text())):
            out[(rel, where)] = max(n, out.get((rel, where), 0))
    return out


def test_no_new_isinstance_chain_over_statement_kinds():
    new = {k: n for k, n in _all_chains().items() if k not in ALLOWED}
    assert not new, (
        "hand-written dispatch over statement kinds (use core_ir.visitors, "
        f"core_ir.paths or core_ir.traversal): {new}")


def test_the_allowed_chains_still_exist():
    gone = set(ALLOWED) - set(_all_chains())
    assert not gone, f"remove these entries from ALLOWED: {sorted(gone)}"


def test_the_guard_sees_a_chain():
    src = ("def f(s):\n"
           "    if isinstance(s, IR.For):\n        pass\n"
           "    elif isinstance(s, (IR.If, IR.Alloc)):\n        pass\n"
           "    elif x:\n        pass\n"
           "    elif isinstance(s, IR.Pass):\n        pass\n"
           "    if isinstance(s, IR.Call):\n        pass\n"
           "def g(s):\n"
           "    if isinstance(s, IR.For):\n        pass\n"
           "    elif isinstance(s, IR.If):\n        pass\n")
    assert _chains(ast.parse(src)) == [("f", 4)]
