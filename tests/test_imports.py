"""The import structure of exo_hl (docs/architecture.md): no cycles between
modules, dependencies only in the documented direction, and no module
reaching into another package's private names.

Every module is read with ``ast`` (nothing is imported), including imports
made inside functions: a deferred import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import exo_hl

ROOT = Path(exo_hl.__file__).parent

#: bottom-layer utilities every layer may use
BASE = {"errors", "caches", "logdepth"}
#: what each lower layer may import (besides itself); see
#: docs/architecture.md. Packages not listed are not constrained here.
ALLOWED = {
    "errors": set(),
    "caches": set(),
    "logdepth": set(),
    "core_ir": BASE,
    "effects": BASE | {"core_ir"},
    "unify": BASE | {"core_ir"},
    "progress": BASE | {"core_ir"},
    "codegen_c": BASE | {"core_ir", "progress"},
    "frontend": BASE | {"core_ir", "effects", "feedback", "api",
                        "patterns"},
    "rewrites": BASE | {"core_ir", "effects", "unify", "frontend",
                        "cursors", "patterns", "provenance"},
    "provenance": BASE | {"core_ir", "effects"},
}


def _modules():
    """Dotted module name -> (path, is package)."""
    mods = {}
    for f in sorted(ROOT.rglob("*.py")):
        parts = ["exo_hl"] + list(f.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (f, is_pkg)
    return mods


MODULES = _modules()


def _owner(name: str) -> str:
    """The module that defines dotted ``name`` (a module or a name in it)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(mod: str):
    """(imported module, imported name or None) for every import in
    ``mod``, relative imports resolved."""
    path, is_pkg = MODULES[mod]
    pkg = mod if is_pkg else mod.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                if f"{base}.{a.name}" in MODULES:   # a submodule
                    yield f"{base}.{a.name}", None
                else:
                    yield base, a.name


def _graph():
    """module -> set of exo_hl modules it imports."""
    g = {}
    for m in MODULES:
        g[m] = {_owner(t) for t, _ in _imports(m)
                if t == "exo_hl" or t.startswith("exo_hl.")} - {m}
    return g


def _package(mod: str) -> str:
    """The top-level part of exo_hl a module belongs to ("core_ir",
    "rewrites", "api", ...; "" for the package root)."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycles(g):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_walk_sees_the_tree():
    # the checks below are vacuous if the walk finds nothing
    g = _graph()
    assert len(MODULES) > 80
    assert "exo_hl.provenance" in g["exo_hl.rewrites.split"]
    assert "exo_hl.core_ir.nodes" in g["exo_hl.api"] or \
        "exo_hl.provenance" in g["exo_hl.api"]


def test_cycle_finder_finds_cycles():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(g) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_layers_import_only_downwards():
    bad = []
    for m, targets in _graph().items():
        p = _package(m)
        if p not in ALLOWED:
            continue
        for t in sorted(targets):
            q = _package(t)
            if q != p and q not in ALLOWED[p]:
                bad.append(f"{m} -> {t}")
    assert bad == []


def test_no_private_name_of_another_package_is_imported():
    # inside one package, modules share helpers freely (e.g. a rewrite
    # uses rewrites/_common.py); across packages only public names count
    bad = []
    for m in MODULES:
        for target, name in _imports(m):
            if not target.startswith("exo_hl"):
                continue
            owner = _owner(target)
            if _package(owner) == _package(m):
                continue
            private_module = any(
                part.startswith("_") and not part.startswith("__")
                for part in owner.split("."))
            private_name = (name is not None and name.startswith("_")
                            and not name.startswith("__"))
            if private_module or private_name:
                bad.append(f"{m}: {target} {name or ''}".rstrip())
    assert bad == []


#: modules being split elsewhere; remove an entry once its module is below
#: the limit or states its reason
_SIZE_PENDING: set = set()


def test_a_long_module_says_why_it_is_one_module():
    long = []
    for m, (path, _) in MODULES.items():
        text = path.read_text()
        if len(text.splitlines()) <= 500 or m in _SIZE_PENDING:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why one module of this size" not in doc:
            long.append(m)
    assert long == []
