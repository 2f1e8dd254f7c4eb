"""A faithful "machine without AMX" on an AMX machine, for benchmarks.

Linux gives a process the AMX tile state only after
``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``; every library
(MKL, ONNX Runtime's MLAS, exo_hl's runtime and generated code) asks for
it before its AMX path and falls back to AVX-512 when refused.
``deny_amx()`` installs a seccomp filter (classic BPF) on this process that
makes exactly that request fail with ``EPERM``; filters are inherited by
children and kept across ``execve``, so

    python apps/common/no_amx.py CMD ARGS...

runs CMD with AMX refused (``EXO_HL_AMX_DENIED=1`` in its environment),
and ``apps/gemm_lowp/bench.py --no-amx`` runs itself that way.  Everything
else (the other ``arch_prctl`` calls, every other syscall) is allowed.

Only the permission is refused; ``cpuid`` still lists ``amx_tile``, as on a
kernel that does not give the state (before Linux 5.16): each library must
check the permission, which is what this exercises.
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

SYS_ARCH_PRCTL = 158
X32_SYSCALL_BIT = 0x40000000
ARCH_REQ_XCOMP_PERM = 0x1023
AUDIT_ARCH_X86_64 = 0xC000003E
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
ENV_FLAG = "EXO_HL_AMX_DENIED"

# classic BPF opcodes
_LD_W_ABS = 0x20        # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15           # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06           # BPF_RET | BPF_K
# offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6]
_NR, _ARCH, _ARG0_LO, _ARG0_HI = 0, 4, 16, 20


def filter_program():
    """The filter as (code, jt, jf, k) rows: on x86-64, ``arch_prctl``
    (native or x32 number) with ``args[0] == ARCH_REQ_XCOMP_PERM`` returns
    ``EPERM``; everything else is allowed."""
    return [
        (_LD_W_ABS, 0, 0, _ARCH),                           # 0
        (_JEQ_K, 0, 7, AUDIT_ARCH_X86_64),                  # 1 -> 9
        (_LD_W_ABS, 0, 0, _NR),                             # 2
        (_JEQ_K, 1, 0, SYS_ARCH_PRCTL),                     # 3 -> 5
        (_JEQ_K, 0, 4, X32_SYSCALL_BIT | SYS_ARCH_PRCTL),   # 4 -> 9
        (_LD_W_ABS, 0, 0, _ARG0_LO),                        # 5
        (_JEQ_K, 0, 2, ARCH_REQ_XCOMP_PERM),                # 6 -> 9
        (_LD_W_ABS, 0, 0, _ARG0_HI),                        # 7
        (_JEQ_K, 1, 0, 0),                                  # 8 -> 10
        (_RET_K, 0, 0, SECCOMP_RET_ALLOW),                  # 9
        (_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM),          # 10
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _libc():
    import ctypes.util
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def deny_amx() -> str:
    """Install the filter on this process (and its future children).
    ``""`` when installed, else why not, as a sentence (not Linux x86-64,
    or the kernel refused seccomp)."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return (f"seccomp AMX denial needs Linux on x86-64, not "
                f"{platform.system()} on {platform.machine()}")
    libc = _libc()
    prog = filter_program()
    raw = b"".join(struct.pack("=HBBI", *row) for row in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.addressof(buf))
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p,
                           ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        return (f"prctl(PR_SET_NO_NEW_PRIVS) failed: "
                f"{os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                  ctypes.addressof(fprog), 0, 0) != 0:
        return (f"prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) failed: "
                f"{os.strerror(ctypes.get_errno())} (seccomp unavailable)")
    return ""


def request_amx() -> int:
    """Make the AMX permission request directly; 0 or the errno."""
    from exo_hl.codegen_c.host_cpu import request_amx_state
    return request_amx_state()


def amx_refusal() -> str:
    """exo_hl's own answer to the permission request, once per process:
    ``""`` when given, else the refusal as a sentence."""
    from exo_hl.codegen_c.host_cpu import amx_permission
    return amx_permission()


def main(argv) -> int:
    if not argv:
        print("usage: python apps/common/no_amx.py CMD [ARGS...]",
              file=sys.stderr)
        return 2
    why = deny_amx()
    if why:
        print(f"no_amx: cannot deny AMX: {why}", file=sys.stderr)
        return 3
    os.environ[ENV_FLAG] = "1"
    os.execvp(argv[0], argv)
    return 127  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
