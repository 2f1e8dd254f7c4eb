"""Every memo exo_hl keeps is in one registry, and ``clear_all()`` empties
them all, so a benchmark's "cold" run really recomputes."""
from __future__ import annotations

import functools
import importlib
import pkgutil
from collections import OrderedDict

import exo_hl
from exo_hl import caches
from exo_hl.effects import api as effects_api

from kernels import gemm


def _all_modules():
    mods = []
    for m in pkgutil.walk_packages(exo_hl.__path__, "exo_hl."):
        if m.name.endswith("__main__"):
            continue
        mods.append(importlib.import_module(m.name))
    return mods


def test_every_module_level_cache_is_registered():
    modules = _all_modules()          # importing a module registers its caches
    registered = set(caches.names())
    missing = []
    for mod in modules:
        for attr, v in vars(mod).items():
            if isinstance(v, functools._lru_cache_wrapper) and \
                    getattr(v, "__module__", "") == mod.__name__:
                name = f"{mod.__name__}.{v.__qualname__}"
                if name not in registered:
                    missing.append(name)
            # tables kept between calls are registered containers
            elif isinstance(v, (OrderedDict, dict, list)) and v is not \
                    getattr(mod, "__all__", None) and attr.isupper() and \
                    attr.startswith("_") and any(
                        k in attr for k in ("CACHE", "KNOWN", "SUMMAR",
                                            "DIFF", "MEMO")):
                if not any(size is not None and clear == v.clear
                           for clear, size in caches._REGISTRY.values()):
                    missing.append(f"{mod.__name__}.{attr}")
    assert missing == []
    assert len(registered) >= 14


def _schedule():
    p = gemm.reorder('j', 'k')
    p = p.split('i', 4, 'io', 'ii', tail='cut')
    return p.bind_expr(p.find('A[_]'), 'a')


def test_clear_all_empties_every_cache():
    _schedule()
    gemm.interpret(M=4, N=1, K=1, **_arrays())
    full = {n: s for n, s in caches.sizes().items() if s}
    # scheduling filled the solver's answers, effects and liftings
    for name in ("exo_hl.effects.smt.solver", "exo_hl.patterns.parse",
                 "exo_hl.effects.effects._eff_stmt"):
        assert full.get(name, 0) > 0, (name, full)
    caches.clear_all()
    assert {n: s for n, s in caches.sizes().items() if s} == {}


def _arrays():
    import numpy as np
    return dict(A=np.ones((4, 1), np.float32), B=np.ones((1, 1), np.float32),
                C=np.zeros((4, 1), np.float32))


def test_cold_means_the_solver_runs_again():
    stats = effects_api.stats()
    _schedule()
    before = stats.solver_calls
    _schedule()                       # warm: the cached answers serve
    warm = stats.solver_calls - before
    caches.clear_all()
    before = stats.solver_calls
    _schedule()                       # cold: every query is solved again
    cold = stats.solver_calls - before
    assert cold > warm, (cold, warm)


def test_the_old_entry_points_clear_everything():
    from exo_hl.effects import bounds
    for clear in (effects_api.clear_cache, bounds.clear_cache):
        _schedule()
        assert any(caches.sizes().values())
        clear()
        assert not any(caches.sizes().values())


def test_memo_and_container_register_themselves():
    @caches.memo(maxsize=4)
    def cube(n):
        return n ** 3
    table = caches.container("tests.table", {})
    cube(2)
    table["x"] = 1
    assert f"{__name__}.{cube.__qualname__}" in caches.names()
    assert caches.sizes()["tests.table"] == 1
    caches.clear_all()
    assert cube.cache_info().currsize == 0 and table == {}
