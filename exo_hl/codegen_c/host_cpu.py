"""What the host CPU can run, and how to emulate what it cannot.

Compiled callables check the features a procedure needs against the host
before the first call, so a missing instruction set is a ``RuntimeError``
naming it, never a SIGILL that takes the interpreter down.

Emulation (``compile(emulate=True)``, or ``EXO_HL_EMULATE=1``) builds the
same generated C against an x86 emulation layer: SIMDe's portable
implementations of the intrinsics (the ``simde-py`` package), behind a
shim ``immintrin.h`` that also carries our own corrections where SIMDe
disagrees with the instruction's definition. The generated code is
unchanged, except that emulated features are left out of its target
attributes.
"""
from __future__ import annotations

import errno
import hashlib
import os
import platform
from typing import FrozenSet, Iterable

from exo_hl.caches import memo

#: GCC feature names whose /proc/cpuinfo flag is spelt differently
_CPUINFO_NAMES = {
    "sse4.1": "sse4_1", "sse4.2": "sse4_2", "avx512vnni": "avx512_vnni",
    "avx512bf16": "avx512_bf16", "avx512vbmi2": "avx512_vbmi2",
    "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
    "avx512fp16": "avx512_fp16", "avxvnni": "avx_vnni",
}

_EMULATION_DIR = os.path.join(os.path.dirname(__file__), "x86_emulation")


@memo(maxsize=1)
def _cpuinfo_flags() -> FrozenSet[str]:
    """The host's CPU flags, read once: they do not change while a process
    runs, and reading /proc/cpuinfo costs about 50 us."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


@memo(maxsize=1)
def host_identity() -> str:
    """A short hash of what ``-march=native`` means here: the CPU's
    vendor, family, model and flags (/proc/cpuinfo). The build cache puts
    it in the key of a build with a ``native`` flag: a cache directory
    shared by machines (a home directory on NFS) served a library built
    on an AVX-512 machine to one without, which died of SIGILL."""
    keep = ("vendor_id", "cpu family", "model", "flags")
    lines = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key = line.split(":", 1)[0].strip()
                if key in keep:
                    lines.add(line.strip())
    except OSError:
        pass
    text = "\n".join(sorted(lines) + [platform.machine()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def native_key(flags) -> str:
    """The part of a build's cache key that ``flags`` (a list) take from
    the host: ``host_identity()`` when one asks for the host's CPU
    (``-march=native``, ``-mtune=native``, ``-mcpu=native``), else ''."""
    return host_identity() if any(f.endswith("=native") for f in flags) \
        else ""


def host_features(wanted: Iterable[str]) -> FrozenSet[str]:
    """The subset of ``wanted`` (GCC names) the host CPU supports.

    ``EXO_HL_HOST_CPU`` (comma-separated GCC names) overrides detection, to
    see what a user on a smaller CPU would see.
    """
    wanted = frozenset(wanted)
    override = os.environ.get("EXO_HL_HOST_CPU")
    if override is not None:
        have = {f.strip().lower() for f in override.split(",") if f.strip()}
        return frozenset(f for f in wanted if f in have)
    flags = _cpuinfo_flags()
    return frozenset(f for f in wanted
                     if _CPUINFO_NAMES.get(f, f.replace(".", "_").replace(
                         "-", "_")) in flags)


def missing_features(needed: Iterable[str]) -> FrozenSet[str]:
    needed = frozenset(needed)
    return needed - host_features(needed)


class FeaturePlan:
    """What a build of one procedure needs, emulates and lacks."""

    def __init__(self, proc_ir, emulate_option):
        from ..core_ir.cpu_features import proc_features
        #: every feature the procedure needs
        self.needed = proc_features(proc_ir)
        lacking = missing_features(self.needed)
        #: features supplied by the emulation layer in this build
        self.emulated = (lacking if emulation_wanted(emulate_option)
                         else frozenset())
        #: features this build needs natively but the host lacks
        self.missing = lacking - self.emulated

    def flags(self) -> list:
        return emulation_flags(self.emulated) if self.emulated else []


def check_host(name, needed, missing, emulated=frozenset()) -> None:
    """Raise ``RuntimeError`` before any C of ``name`` runs on a CPU that
    lacks (and does not emulate) some of the features it needs, or whose
    kernel refuses the state they need (AMX tiles on Linux)."""
    if not missing:
        if "amx-tile" in needed and "amx-tile" not in emulated:
            refused = _amx_permission()
            if refused:
                raise RuntimeError(f"{name}(): {refused}; nothing was run")
        return
    need = ", ".join(sorted(missing))
    raise RuntimeError(
        f"{name}(): this CPU lacks {need}, which the compiled code needs (it "
        f"uses {', '.join(sorted(needed))}); nothing was run. Run it on a CPU "
        f"with {need}, schedule it for another instruction set, or "
        f"compile(emulate=True) to run it slowly through an emulation layer")


def request_amx_state() -> int:
    """Ask Linux for the AMX tile state (``arch_prctl(ARCH_REQ_XCOMP_PERM,
    XFEATURE_XTILEDATA)``) now: 0 when given (and on systems that give it
    without asking), else the errno. Not memoized: a benchmark checks with
    it that a seccomp filter refuses the request."""
    import ctypes
    import ctypes.util
    import platform
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return 0
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None,
                       use_errno=True)
    sys_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata = 158, 0x1023, 18
    if libc.syscall(sys_arch_prctl, arch_req_xcomp_perm,
                    xfeature_xtiledata) == 0:
        return 0
    return ctypes.get_errno()


@memo(maxsize=1)
def _amx_permission() -> str:
    """``request_amx_state`` once per process; the refusal as a sentence,
    or ``""``."""
    err = request_amx_state()
    if not err:
        return ""
    why = ("this process may not have it (a seccomp filter or a container "
           "policy refuses the request)" if err == errno.EPERM else
           "AMX needs Linux 5.16 or later" if err == errno.EINVAL else
           "the kernel cannot give it")
    return (f"the Linux kernel refused the AMX tile state (arch_prctl("
            f"ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) failed: "
            f"{os.strerror(err)}); {why}")


def amx_permission() -> str:
    """The refusal of the AMX tile state as a sentence, or ``""`` when
    this process has it (asked once): for dispatchers that pick a kernel
    without AMX rather than fail."""
    return _amx_permission()


def emulation_wanted(option) -> bool:
    """``compile(emulate=...)``: an explicit bool wins; ``None`` reads
    ``EXO_HL_EMULATE`` (``1``/``true``/``yes`` turn emulation on)."""
    if option is not None:
        return bool(option)
    return os.environ.get("EXO_HL_EMULATE", "").strip().lower() in (
        "1", "true", "yes", "on")


def emulation_flags(emulated=()) -> list:
    """Compiler flags that put the x86 emulation layer in front of the
    system's ``immintrin.h`` (as system headers: their warnings are not
    ours). AMX has no SIMDe version: emulating any AMX feature turns on
    the layer's own tile emulation (``EXO_HL_EMULATE_AMX``)."""
    try:
        import simde_py
    except ImportError:  # pragma: no cover - a declared dependency
        raise RuntimeError("CPU-feature emulation needs the simde-py package "
                           "(pip install simde-py)") from None
    amx = (["-DEXO_HL_EMULATE_AMX"]
           if any(f.startswith("amx") for f in emulated) else [])
    # the layer's own headers are not part of the build cache's key (it
    # hashes the generated C and the flags): their digest in a flag is, so
    # an edited layer (or another SIMDe release installed in the same
    # place) is never served from a build of the old one
    return ["-isystem", _EMULATION_DIR, "-isystem", simde_py.get_include(),
            f"-DEXO_HL_EMULATION_LAYER=0x{_layer_digest(_EMULATION_DIR)}"
            ] + amx


@memo(maxsize=1)
def _simde_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("simde-py")
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _layer_digest(directory) -> str:
    """A short hash of the emulation layer's files (names and contents)
    and of the SIMDe release under it (its headers are too many to hash
    on every build)."""
    h = hashlib.sha256(_simde_version().encode() + b"\0")
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            h.update(name.encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def emulation_description() -> str:
    """Which emulation layer this installation uses (for reports)."""
    try:
        import simde_py
    except ImportError:  # pragma: no cover
        return "unavailable (simde-py not installed)"
    ver = "?"
    hdr = os.path.join(simde_py.get_include(), "simde", "simde-common.h")
    try:
        with open(hdr) as f:
            parts = {}
            for line in f:
                for k in ("MAJOR", "MINOR", "MICRO"):
                    tag = f"#define SIMDE_VERSION_{k} "
                    if line.startswith(tag):
                        parts[k] = line[len(tag):].strip()
            ver = ".".join(parts.get(k, "?") for k in ("MAJOR", "MINOR",
                                                         "MICRO"))
    except OSError:  # pragma: no cover
        pass
    return f"SIMDe {ver}"
