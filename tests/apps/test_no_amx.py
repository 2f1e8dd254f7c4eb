"""apps/common/no_amx: the seccomp filter refuses exactly the AMX
permission request, and exo_hl's runtime and the GEMM dispatch react to the
refusal (a clear RuntimeError; the AVX-512 kernels). Each case runs in a
child process: a seccomp filter cannot be removed once installed."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import ctypes, errno, sys
    from apps.common import no_amx as n
    why = n.deny_amx()
    if why:
        print("UNAVAILABLE", why); sys.exit(0)
    assert n.request_amx() == errno.EPERM, n.request_amx()
    libc = n._libc()
    # other arch_prctl codes stay allowed: ARCH_GET_FS (0x1003)
    fs = ctypes.c_ulong(0)
    assert libc.syscall(158, 0x1003, ctypes.byref(fs)) == 0 and fs.value
    assert libc.getpid() > 0
    refusal = n.amx_refusal()
    assert "refused the AMX tile state" in refusal, refusal
    assert "Operation not permitted" in refusal, refusal
    assert "seccomp filter or a container policy" in refusal, refusal
    assert "5.16" not in refusal, refusal
    from exo_hl.codegen_c.host_cpu import check_host
    try:
        check_host("k", frozenset({"amx-tile"}), frozenset())
    except RuntimeError as e:
        assert "k(): the Linux kernel refused the AMX tile state" in str(e)
        assert "nothing was run" in str(e)
    else:
        raise AssertionError("check_host ran AMX code without permission")
    from apps.gemm_amx import dispatch as d
    for kind in ("u8s8", "bf16"):
        try:
            label = d.choose(kind)[0]
        except RuntimeError as e:
            label = "none: " + str(e)
        assert not label.startswith("amx"), (kind, label)
        print(kind, label)
    print("DENIED")
""")


def _run(code, env=None):
    return subprocess.run([sys.executable, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO),
                               **(env or {})})


def test_seccomp_filter_denies_amx_permission_only():
    r = _run(CHILD)
    assert r.returncode == 0, r.stderr
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        assert "DENIED" in r.stdout, r.stdout + r.stderr
    else:   # the helper must say why it cannot deny
        assert r.stdout.startswith("UNAVAILABLE seccomp AMX denial needs "
                                   "Linux on x86-64"), r.stdout


def test_launcher_sets_flag_and_keeps_filter_across_exec():
    if not (platform.system() == "Linux" and platform.machine() == "x86_64"):
        r = subprocess.run([sys.executable, "apps/common/no_amx.py", "true"],
                           cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 3 and "cannot deny AMX" in r.stderr
        return
    code = ("import os, errno; from apps.common import no_amx as n; "
            "print(os.environ.get('EXO_HL_AMX_DENIED'), "
            "n.request_amx() == errno.EPERM)")
    r = subprocess.run([sys.executable, "apps/common/no_amx.py",
                        sys.executable, "-c", code], cwd=REPO,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "True"], r.stdout
    # without the filter the request is not refused by it
    r = _run("import errno; from apps.common import no_amx as n; "
             "print(n.request_amx() == errno.EPERM)")
    assert r.stdout.strip() == "False", r.stdout + r.stderr
