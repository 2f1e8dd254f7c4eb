"""is_eq / equivalence_modulo: equivalence known by provenance only."""
from __future__ import annotations

from exo_hl import config, f32, proc, seq, size, stride
from exo_hl.rewrites.call_eqv import equivalence_modulo


@config
class Cfg:
    s: stride


@proc
def scale(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 2.0 * x[i, 0]


@proc
def scale_twin(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 2.0 * x[i, 0]


def test_descendants_and_siblings_are_equivalent():
    a = scale.split("i", 4, "io", "ii")
    b = scale.rename("other").split("i", 2, "io", "ii")
    assert scale.is_eq(a) and a.is_eq(scale)
    assert a.is_eq(b)  # cousins through the common root
    assert equivalence_modulo(a, b) == frozenset()
    assert scale.is_eq(scale)


def test_unrelated_same_code_is_not_equivalent():
    assert not scale.is_eq(scale_twin)
    assert equivalence_modulo(scale, scale_twin) is None
    assert not scale.is_eq(scale.split("i", 4, "io", "ii").ir())  # not a proc


def test_modulo_config_fields_accumulate_along_the_path():
    w = scale.configwrite_at("for i in _: _", Cfg, "s", "stride(x, 0)",
                             before=True)
    assert equivalence_modulo(scale, w) == {(Cfg, "s")}
    assert not scale.is_eq(w)
    # a later fully-equivalent step keeps the modulo set
    w2 = w.split("i", 2, "io", "ii")
    assert equivalence_modulo(w, w2) == frozenset()
    assert equivalence_modulo(scale, w2) == {(Cfg, "s")}
    # a sibling derived only by full equivalences is equivalent to scale,
    # but only modulo Cfg.s to w2 (the path goes through w)
    sib = scale.rename("sib")
    assert sib.is_eq(scale)
    assert equivalence_modulo(sib, w2) == {(Cfg, "s")}
