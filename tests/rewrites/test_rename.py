"""rename: the printed result, semantics, provenance, rejected names."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def scale(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = 2.0 * x[i]


def test_rename_prints_and_keeps_receiver():
    p = scale.rename("scale_v2")
    assert str(p) == str(scale).replace("def scale(", "def scale_v2(", 1)
    assert p.name() == "scale_v2" and scale.name() == "scale"
    assert p.parent() is scale
    assert [op for op, _ in p.derivation()][-1] == "rename"
    assert p.ir().body is scale.ir().body  # nothing rebuilt


def test_rename_is_equivalent(equiv):
    equiv(scale, scale.rename("other"), [{"n": 1}, {"n": 7}])


def test_rename_forwards_cursors():
    c = scale.find("y[_] = _")
    p = scale.rename("s2").rename("s3")
    assert p.forward(c).node() == c.node()
    assert p.forward(c).proc() is p


@pytest.mark.parametrize("bad", ["", "1abc", "a-b", "for", "x y", 3, None])
def test_rename_rejects_invalid_identifiers(bad):
    with pytest.raises(SchedulingError) as e:
        scale.rename(bad)
    assert "scale" in str(e.value) and "rename" in str(e.value)
