"""Malformed procedures are rejected at decoration time with located errors.

Every offending line below carries the comment ``# ERR``; ``_check`` asserts
that the error names that exact file line (so line numbers are verified
without hard-coding them), the procedure, and the given key words, and that
the message shows the source line with a caret.
"""
from __future__ import annotations

import re

import pytest

from exo_hl import (DRAM, DRAM_STATIC, ExoTypeError, config, f32, i8,
                    instr, par, proc, seq, size, stride)
from exo_hl.errors import ExoSyntaxError


class SCRATCH(DRAM):
    pass


def _check(excinfo, proc_name, *words):
    msg = str(excinfo.value)
    m = re.match(r"(.+?):(\d+): ", msg)
    assert m, msg
    filename, lineno = m.group(1), int(m.group(2))
    assert filename == __file__
    with open(filename) as f:
        line = f.read().splitlines()[lineno - 1]
    assert "# ERR" in line, f"error reported at line {lineno}: {line!r}\n{msg}"
    assert f"procedure '{proc_name}'" in msg, msg
    low = msg.lower()
    for w in words:
        assert w.lower() in low, f"{w!r} not in:\n{msg}"
    assert "^" in msg, msg  # the caret under the offending code
    assert "Traceback" not in msg
    if isinstance(excinfo.value, SyntaxError):
        assert excinfo.value.lineno == lineno


def test_undefined_name():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            for i in seq(0, n):
                A[i] = B[i]  # ERR
    _check(e, "foo", "'B'", "not defined")


def test_while_loop():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(n: size):
            while n > 0:  # ERR
                pass
    _check(e, "foo", "while")


def test_return():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            A[0] = 1.0
            return A  # ERR
    _check(e, "foo", "return")


def test_lambda():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(A: f32[4]):
            A[0] = (lambda x: x)(1.0)  # ERR
    _check(e, "foo", "lambda")


def test_data_dependent_if():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4], x: f32):
            if x > 0.0:  # ERR
                A[0] = 1.0
    _check(e, "foo", "data")


def test_data_dependent_if_via_scalar_buffer():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4]):
            t: f32
            t = A[0]
            if t == 1.0:  # ERR
                pass
    _check(e, "foo", "data")


def test_data_dependent_loop_bound():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4], B: f32[4]):
            for i in seq(0, A[0]):  # ERR
                B[i] = 0.0
    _check(e, "foo", "loop bound", "depends on data")


def test_non_affine_index():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n, n]):
            for i in seq(0, n):
                for j in seq(0, n):
                    A[i * j, 0] = 0.0  # ERR
    _check(e, "foo", "quasi-affine", "*")


def test_division_by_variable():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, m: size, A: f32[n]):
            for i in seq(0, n / m):  # ERR
                A[i] = 0.0
    _check(e, "foo", "quasi-affine", "positive constant")


def test_modulo_by_negative_constant():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            for i in seq(0, n):
                A[i % -2] = 0.0  # ERR
    _check(e, "foo", "positive constant")


def test_wrong_index_arity():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n, 4]):
            for i in seq(0, n):
                A[i] = 0.0  # ERR
    _check(e, "foo", "'A'", "2 dimensions", "1")


def test_wrong_call_arity():
    @proc
    def callee(n: size, A: f32[n]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            callee(A)  # ERR
    _check(e, "foo", "callee", "1 arguments", "expected 2")


def test_wrong_arg_kind_in_call():
    @proc
    def callee(n: size, A: f32[n]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n], x: f32):
            callee(n, x)  # ERR
    _check(e, "foo", "callee", "argument 'A'")


def test_window_of_wrong_element_type():
    @proc
    def callee(A: [f32][4]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(B: i8[16]):
            callee(B[0:4])  # ERR
    _check(e, "foo", "element type", "f32", "i8")


def test_memory_mismatch_in_call():
    @proc
    def callee(A: [f32][4] @ SCRATCH):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(B: f32[16] @ DRAM_STATIC):
            callee(B[0:4])  # ERR
    _check(e, "foo", "memory", "SCRATCH", "DRAM_STATIC")


def test_window_passed_to_dense_tensor_param():
    @proc
    def callee(A: f32[4]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(B: f32[16]):
            callee(B[0:4])  # ERR
    _check(e, "foo", "window", "dense")


def test_write_to_size_argument():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            n = 3  # ERR
    _check(e, "foo", "'n'", "size argument")


def test_write_to_loop_iterator():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            for i in seq(0, n):
                i = A[0]  # ERR
    _check(e, "foo", "'i'", "loop iterator")


def test_assert_after_first_statement():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            A[0] = 1.0
            assert n > 2  # ERR
    _check(e, "foo", "assert", "top")


def test_unknown_memory():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4] @ NOSUCHMEM):  # ERR
            pass
    _check(e, "foo", "unknown memory", "NOSUCHMEM")


def test_not_a_memory():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4] @ f32):  # ERR
            pass
    _check(e, "foo", "not a memory")


def test_unknown_type():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f33[4]):  # ERR
            pass
    _check(e, "foo", "unknown type", "f33")


def test_data_in_assert():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4]):
            assert A[0] == 1.0  # ERR
            pass
    _check(e, "foo", "data")


def test_assigning_control_to_data_scalar_is_rejected():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            for i in seq(0, n):
                A[i] = i  # ERR
    _check(e, "foo", "control", "data")


def test_assign_to_undeclared_scalar():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4]):
            t = A[0]  # ERR
    _check(e, "foo", "'t'", "allocate")


def test_buffer_used_without_index():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4], B: f32[4]):
            A[0] = B  # ERR
    _check(e, "foo", "'B'", "indices")


def test_size_depending_on_data():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4]):
            t: f32[A[0]]  # ERR
    _check(e, "foo", "data")


def test_unknown_config_field():
    @config
    class Cfg:
        a: stride

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            Cfg.b = n  # ERR
    _check(e, "foo", "Cfg", "no field", "'b'")


def test_config_field_type_mismatch():
    @config
    class Cfg:
        flag: bool

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: f32[4]):
            Cfg.flag = A[0]  # ERR
    _check(e, "foo", "flag", "data")


def test_if_condition_must_be_bool():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            if n:  # ERR
                pass
    _check(e, "foo", "bool")


def test_call_to_non_procedure():
    helper = 3

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            helper(n)  # ERR
    _check(e, "foo", "helper", "not a procedure")


def test_range_instead_of_seq():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(n: size, A: f32[n]):
            for i in range(n):  # ERR
                A[i] = 0.0
    _check(e, "foo", "seq")


def test_window_dims_mismatch():
    @proc
    def callee(A: [f32][4, 4]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(B: f32[16, 16]):
            callee(B[0, 0:4])  # ERR
    _check(e, "foo", "2 dimensions", "got 1")


def test_constant_shape_mismatch():
    @proc
    def callee(A: [f32][4]):
        pass

    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(B: f32[16]):
            callee(B[0:8])  # ERR
    _check(e, "foo", "size 4", "got 8")


def test_missing_annotation():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n):  # ERR
            pass
    _check(e, "foo", "'n'", "annotation")


def test_unsupported_augmented_op():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        def foo(A: f32[4]):
            A[0] *= 2.0  # ERR
    _check(e, "foo", "+=")


def test_instr_template_unknown_placeholder():
    with pytest.raises(ExoTypeError) as e:
        @instr("ld({src}, {nosuch});")
        def ld(src: [f32][4]):  # ERR
            pass
    _check(e, "ld", "nosuch", "placeholder")
    with pytest.raises(ExoTypeError) as e:
        @instr("ld({src.data});")
        def ld2(src: [f32][4]):  # ERR
            pass
    _check(e, "ld2", "must be a bare '{src}'")


def test_allocating_control_type():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            k: size  # ERR
    _check(e, "foo", "'k'", "control")


def test_stride_dim_out_of_range():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(A: [f32][4, 4]):
            assert stride(A, 2) == 1  # ERR
            pass
    _check(e, "foo", "dimension 2", "out of range")


def test_config_unknown_field_type():
    with pytest.raises(ExoTypeError) as e:
        @config
        class Bad:
            x: f99
    assert "f99" in str(e.value) and "Bad" in str(e.value)


def test_internal_errors_are_wrapped(monkeypatch):
    from exo_hl.frontend import parser

    def boom(self, *a, **k):
        raise KeyError("oops")
    monkeypatch.setattr(parser.ProcParser, "for_stmt", boom)
    with pytest.raises(ExoTypeError) as e:
        @proc
        def foo(n: size):
            for i in seq(0, n):
                pass
    msg = str(e.value)
    assert "procedure 'foo'" in msg and "internal error" in msg
    assert isinstance(e.value.__cause__, KeyError)


# ---------------------------------------------------------------------------
# a module without `from __future__ import annotations`

NO_FUTURE = '''\
import numpy as np
from exo_hl import f32, proc, seq, size

TILE = 4


@proc
def fine(x: f32[TILE], s: f32):
    x[0] = s


@proc
def axpy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += x[i]
'''


def _import_file(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_future_import_is_explained(tmp_path):
    path = tmp_path / "nofuture_kernels.py"
    path.write_text(NO_FUTURE)
    with pytest.raises(ExoSyntaxError) as e:
        _import_file(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:13: procedure 'axpy': ")
    assert "'n' is not defined" in msg
    assert "add `from __future__ import annotations` at the top of the " \
        "module" in msg
    # the same as a script: the message, not a bare NameError
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(path)], capture_output=True,
                       text=True, env={"PYTHONPATH": str(repo)})
    assert r.returncode != 0
    assert f"{path}:13: procedure 'axpy'" in r.stderr
    assert "from __future__ import annotations" in r.stderr
    assert "NameError: name" not in r.stderr


def test_modules_without_future_import_that_work_still_work(tmp_path):
    # annotations that evaluate fine (constants, scalars) are no error
    path = tmp_path / "nofuture_ok.py"
    path.write_text(NO_FUTURE.split("\n\n@proc\ndef axpy")[0] + "\n")
    m = _import_file(path)
    assert str(m.fine).startswith("def fine(x: f32[4] @ DRAM")
    # nor is a module that does not define procedures
    path = tmp_path / "nofuture_user.py"
    path.write_text("from exo_hl import proc, f32\n\n\n"
                    "def helper(n: int, m: 'f32[n]'):\n    return proc\n")
    _import_file(path)
