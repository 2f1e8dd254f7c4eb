"""``@config`` errors are located when the defining module is loaded with
``importlib.util.spec_from_file_location`` + ``exec_module`` (issue 32,
item 16): ``inspect`` finds a class's file through ``sys.modules``, which
such a module is not in, so the error said ``<unknown>``; procedures were
located in that case already."""
from __future__ import annotations

import importlib.util
import textwrap

import pytest

from exo_hl.errors import ExoTypeError

_HEAD = "from __future__ import annotations\nfrom exo_hl import *\n\n"


def _load(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(_HEAD + textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def test_bad_field_type_is_located(tmp_path):
    with pytest.raises(ExoTypeError) as ei:
        _load(tmp_path, "cfg_bad_field", """
            @config
            class Cfg:
                a: stride
                b: notatype
            """)
    msg = str(ei.value)
    assert f"cfg_bad_field.py:{_HEAD.count(chr(10)) + 5}:" in msg, msg
    assert "b: notatype" in msg


def test_empty_config_is_located(tmp_path):
    with pytest.raises(ExoTypeError) as ei:
        _load(tmp_path, "cfg_empty", """
            x = 1

            @config
            class Empty:
                pass
            """)
    assert "cfg_empty.py:" in str(ei.value) and "<unknown>" not in \
        str(ei.value)


def test_the_class_being_defined_is_the_one_located(tmp_path):
    # two classes of one name: the error points into the second
    with pytest.raises(ExoTypeError) as ei:
        _load(tmp_path, "cfg_twice", """
            @config
            class Cfg:
                a: stride

            @config
            class Cfg:
                a: stride
                c: nosuchtype
            """)
    msg = str(ei.value)
    assert f"cfg_twice.py:{_HEAD.count(chr(10)) + 9}:" in msg, msg


def test_a_good_config_loads_and_is_usable(tmp_path):
    mod, _ = _load(tmp_path, "cfg_good", """
        @config
        class Cfg:
            a: stride

        @proc
        def setc(n: size, x: f32[n]):
            Cfg.a = stride(x, 0)
        """)
    assert "Cfg.a = stride(x, 0)" in str(mod.setc)
