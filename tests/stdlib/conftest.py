"""Fixtures for the standard-library tests: ``equiv`` is the rewrite tests'
``check_equiv`` (random small-integer data, ``interpret()`` and compiled C)."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "_rewrites_conftest",
    pathlib.Path(__file__).parent.parent / "rewrites" / "conftest.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
check_equiv = _mod.check_equiv


@pytest.fixture
def equiv():
    """The ``check_equiv`` function, as a fixture."""
    return check_equiv


def squash(text: str) -> str:
    """``text`` without any whitespace: compares printed procedures
    independently of line breaking."""
    return "".join(text.split())


@pytest.fixture
def same_text():
    """``same_text(p, expected)``: ``str(p)`` is ``expected`` up to
    whitespace and line breaks."""
    def check(p, expected):
        assert squash(str(p)) == squash(expected), str(p)
    return check
