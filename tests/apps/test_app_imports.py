"""An app module imported as a package module (``apps.<app>.<module>``, as
the tests import them) takes its sibling modules from its own directory,
whatever module of that name another app or script left in
``sys.modules``: ``apps.saxpy_rvv.schedule`` tried ``import kernel`` first
and, in a test worker that had imported the SGEMM quickstart's ``kernel``
by its bare name, took that one (CI: AttributeError; the NEON and RVV
SGEMM schedules, whose ``from kernel import sgemm`` found an ``sgemm``
there too, would have scheduled the quickstart's procedure silently)."""
from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _library_modules():
    """(app, module, sibling names it imports) of every app module, not a
    script (no ``__main__`` block), that imports a module of its own
    directory."""
    out = []
    for d in sorted((REPO / "apps").iterdir()):
        names = {p.stem for p in d.glob("*.py") if p.stem != "__init__"}
        for p in sorted(d.glob("*.py")):
            text = p.read_text()
            if "__main__" in text or p.stem == "__init__":
                continue
            used = {m for m in names - {p.stem} if re.search(
                rf"^\s*(from \.?{m} import|import {m}\b|from \. import "
                rf"{m}\b)", text, re.M)}
            if used:
                out.append((d.name, p.stem, sorted(used)))
    return out


MODULES = _library_modules()

#: importing the ARM and RISC-V apps makes their procedures, whose C only
#: their cross compilers build (their own tests do)
pytestmark = pytest.mark.no_c_audit("imports every app's modules, the "
                                    "ARM and RISC-V ones too")


def test_the_scan_finds_the_known_cases():
    found = {(a, m) for a, m, _ in MODULES}
    assert {("saxpy_rvv", "schedule"), ("sgemm_quickstart", "schedule"),
            ("sgemm_neon", "schedule"), ("toy_accel", "gemm")} <= found


class _Decoy(types.ModuleType):
    """A module that has every attribute (as another app's ``kernel``
    with an ``sgemm`` would)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


@pytest.mark.parametrize("app,module,siblings", MODULES,
                         ids=[f"{a}.{m}" for a, m, _ in MODULES])
def test_a_package_module_takes_its_own_siblings(app, module, siblings):
    pkg = f"apps.{app}"
    decoys = {s: _Decoy(s) for s in siblings}
    saved = {k: sys.modules.get(k) for k in
             list(decoys) + [f"{pkg}.{module}"] +
             [f"{pkg}.{s}" for s in siblings]}
    try:
        for k in saved:
            sys.modules.pop(k, None)
        sys.modules.update(decoys)
        mod = importlib.import_module(f"{pkg}.{module}")
        bad = [k for k, v in vars(mod).items()
               if any(v is d for d in decoys.values())]
        assert not bad, f"{pkg}.{module} took {bad} from another module"
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
