"""Project-wide test fixtures (add to this file additively).

``assert_roundtrip(p)``: ``str(p)`` reparsed by the frontend gives an
alpha-equal procedure that prints identically (docs/api.md §5 round trip).
"""
from __future__ import annotations

import pytest


def roundtrip_scope(proc_ir) -> dict:
    """Names the printed text of ``proc_ir`` needs to parse again.

    The public ``exo_hl`` names, plus every callee (as the same IR, wrapped
    in a ``Procedure``), config, extern and memory the procedure mentions.
    """
    import exo_hl
    from exo_hl.api import Procedure
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.printer import mem_name
    from exo_hl.core_ir.traversal import walk

    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    seen = set()

    def visit(p):
        if id(p) in seen:
            return
        seen.add(id(p))
        for a in p.args:
            if a.mem is not None:
                scope[mem_name(a.mem)] = a.mem
        for root in tuple(p.body) + tuple(p.preds):
            for n in walk(root):
                if isinstance(n, IR.Call):
                    scope[n.f.name] = Procedure(n.f)
                    visit(n.f)
                elif isinstance(n, IR.Extern):
                    scope[n.f.name()] = n.f
                elif isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                    scope[n.config.name()] = n.config
                elif isinstance(n, IR.Alloc):
                    scope[mem_name(n.mem)] = n.mem
    visit(proc_ir)
    return scope


def reparse(p):
    """``str(p)`` parsed back into a ``Procedure``."""
    from exo_hl.frontend.decorators import parse_proc_source
    return parse_proc_source(str(p), roundtrip_scope(p.ir()))


def first_difference(a, b, path="proc"):
    """Where two IR trees first differ structurally (modulo Sym renaming
    and source locations): a short description, or None."""
    from exo_hl.core_ir.nodes import Node
    from exo_hl.core_ir.printer import alpha_equal
    from exo_hl.core_ir.syms import Sym
    if isinstance(a, Sym) and isinstance(b, Sym):
        return None
    if isinstance(a, Node) and type(a) is type(b):
        for f in a._fields + a._attributes:
            if f == "srcinfo" or (f == "f" and hasattr(a, "args")
                                  and isinstance(getattr(a, f), Node)):
                continue
            d = first_difference(getattr(a, f), getattr(b, f), f"{path}.{f}")
            if d:
                return d
        return None if alpha_equal(a, b) else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{k}]")
            if d:
                return d
        return None
    if type(a) is type(b) and (a is b or a == b):
        return None
    return f"{path}: {a!r} vs {b!r}"


def check_roundtrip(p):
    from exo_hl.core_ir.printer import alpha_equal
    text = str(p)
    q = reparse(p)
    assert alpha_equal(p.ir(), q.ir()), (
        f"reparsed procedure differs structurally at "
        f"{first_difference(p.ir(), q.ir())}\n{text}\n---\n{q}")
    assert str(q) == text
    return q


@pytest.fixture
def assert_roundtrip():
    """A function ``assert_roundtrip(p)`` checking the printer round trip."""
    return check_roundtrip


# ----------------------------------------------------------------------
# Suite-wide audit: every procedure the tests create round-trips through the
# printer and compiles warning-free as C: the round trip holds for every
# procedure in the test suite, and the generated C of every test procedure
# compiles with -Werror.
#
# ``Procedure.__init__`` is wrapped (no extra frame in ``@proc``, whose name
# resolution reads the caller's frame) to record each new procedure with the
# test module that created it (at import/collection time or in a test).
# When a worker finishes a test module, an autouse module fixture checks that
# module's procedures in one batch: reparse + alpha-equality, then one
# compiler invocation per C compiler for all of them. A failure is an error
# at the module's teardown, listing each bad procedure. Procedures whose
# codegen refuses them by design (MemGenError, ExoTypeError, ValueError:
# unreadable memories, mixed precisions...) are counted, not compiled.
# Set EXO_HL_NO_AUDIT=1 to turn the audit off (e.g. when bisecting).
#
# A C file whose text (up to its file name), compiler and flags match one
# already compiled clean - by this worker or another, in this session or an
# earlier one on this machine: the keys live in a directory under the build
# cache (``$EXO_HL_CACHE``...), like the shared libraries compile() builds -
# is counted ("C checked") but not compiled again ("C not recompiled"); the
# verdict depends on nothing else, and the key holds all of it: the
# compiler (its path, binary and version), the C library's version and the
# host CPU (-march=native). Only clean verdicts are kept: rejected C is
# compiled, and reported, every time. EXO_HL_AUDIT_CACHE=session keeps the
# keys for this session only (a fresh directory, removed at the end).
import hashlib as _hashlib
import os as _os
import shutil as _shutil
import subprocess as _subprocess
import tempfile as _tempfile
import time as _time
from collections import Counter as _Counter

from exo_hl.api import Procedure as _Procedure

# -march=x86-64, the baseline, not -march=native: every function with
# CPU-specific instructions carries its own target (EXO_HL_TARGET), so the
# C must build for any x86-64 whatever the host has; with -march=native an
# AMX helper without its target passed on the AMX machine and failed on
# one without (session 10)
AUDIT_CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
               "-O1", "-march=x86-64", "-c"]
#: the one ISO C extension the C ABI documents (f16 -> _Float16): files
#: that use it are built with this diagnostic as a warning, and then it
#: must be the only one (``_f16_only``)
_F16_PEDANTIC = "-Wno-error=pedantic"
#: clang's warnings come from its front end, so parsing suffices (faster);
#: gcc needs -O1 for its flow-based ones (-Wmaybe-uninitialized)
_CC_MODE = {"clang": ["-fsyntax-only"]}


class _AuditState:
    """Test-session bookkeeping (not library state)."""

    def __init__(self):
        self.enabled = _os.environ.get("EXO_HL_NO_AUDIT", "") != "1"
        self.recording = True        # off while the audit itself parses
        self.context = None          # module nodeid being collected / run
        self.pending = {}            # context -> {IR.Proc: (p, where, exempt)}
        self.seen = set()            # IR.Proc already checked
        self.stats = _Counter()
        self.per_test = _Counter()   # test nodeid -> procedures recorded
        self.test = None             # nodeid of the running test
        self.c_exempt = None         # no_c_audit reason of the running test
        self.compiled_ok = set()     # keys of C this process saw compile
        self.cache_dir = None        # the same keys, shared by xdist workers


_AUDIT = _AuditState()
_orig_proc_init = _Procedure.__init__


#: at most this many distinct procedures are audited per test (module
#: imports are not capped): fuzz/property tests build thousands of random
#: ones, and auditing all would multiply their run time; the rest are counted
AUDIT_PER_TEST = 25


def _recording_init(self, ir, *args, **kwargs):
    _orig_proc_init(self, ir, *args, **kwargs)
    if not (_AUDIT.enabled and _AUDIT.recording) or ir in _AUDIT.seen:
        return
    bucket = _AUDIT.pending.setdefault(_AUDIT.context, {})
    where = _AUDIT.test or _AUDIT.context
    if ir in bucket:
        return
    n = _AUDIT.per_test[where]
    if _AUDIT.test is not None and n >= AUDIT_PER_TEST:
        _AUDIT.stats["not audited (over per-test cap)"] += 1
        return
    _AUDIT.per_test[where] = n + 1
    bucket[ir] = (self, where, _AUDIT.c_exempt)


_Procedure.__init__ = _recording_init


# AVX-512 (and any other instruction set the host lacks) runs through the
# emulation layer, so every numeric check runs on every machine; on hosts
# that have the feature nothing is emulated.
_os.environ.setdefault("EXO_HL_EMULATE", "1")

# Tuning records (``exo_hl.tune.TuningDB``) of this run live in a directory
# of their own, removed at exit: a test never reads the user's records (a
# tuned SGEMM record would change what the model tests see), and the
# machine facts a test makes the app measure (the parallel-region cost,
# the FMA peak: ``apps/common/fork_cost``) under the suite's own load are
# not kept for the benchmarks.
_os.environ["EXO_HL_TUNING_DB"] = _tempfile.mkdtemp(prefix="exo_hl_tuning_")
import atexit as _atexit  # noqa: E402
_atexit.register(_shutil.rmtree, _os.environ["EXO_HL_TUNING_DB"], True)


def pytest_report_header(config):
    """One line saying how each shipped instruction set runs here."""
    from exo_hl.codegen_c.host_cpu import (emulation_description,
                                           host_features)
    feats = ("fma", "avx2", "avx512f")
    have = host_features(feats)
    layer = emulation_description()
    modes = [f"{f} {'native' if f in have else 'emulated (' + layer + ')'}"
             for f in feats]
    return "exo_hl ISA: " + ", ".join(modes)


#: a clean verdict not met again for this long is forgotten (the keys are
#: empty files: this only bounds their number)
AUDIT_CACHE_DAYS = 30


def _persistent_audit_dir():
    """The keys' directory under the build cache, stale keys pruned; None
    when it cannot be made (the session then keeps its own)."""
    from exo_hl.codegen_c.runner import cache_dir
    try:
        d = _os.path.join(cache_dir(), "audit-c-v1")
        _os.makedirs(d, exist_ok=True)
        old = _time.time() - AUDIT_CACHE_DAYS * 86400
        with _os.scandir(d) as it:
            for e in it:
                try:
                    if e.stat().st_mtime < old:
                        _os.remove(e.path)
                except OSError:
                    pass
        return d
    except OSError:
        return None


def pytest_configure(config):
    """The audit's compile cache lives in a directory the xdist controller
    picks and hands to its workers, so each worker skips C that another
    worker (or an earlier session) has already compiled clean."""
    winput = getattr(config, "workerinput", None)
    if winput is not None:
        _AUDIT.cache_dir = winput.get("exo_hl_audit_cache")
    elif _AUDIT.enabled:
        if _os.environ.get("EXO_HL_AUDIT_CACHE", "") != "session":
            _AUDIT.cache_dir = _persistent_audit_dir()
        if _AUDIT.cache_dir is None:
            _AUDIT.cache_dir = _tempfile.mkdtemp(prefix="exo_audit_cache_")
            config.add_cleanup(lambda d=_AUDIT.cache_dir:
                               _shutil.rmtree(d, ignore_errors=True))
    config.addinivalue_line(
        "markers", "no_c_audit(reason): procedures made by this test are "
        "deliberately not valid C (nonsense instr templates, reads of "
        "uninitialised memory); the suite-wide -Werror check skips them")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """(xdist controller) every worker shares the audit's compile cache."""
    node.workerinput["exo_hl_audit_cache"] = _AUDIT.cache_dir


def _module_id(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Procedures built while a test module is imported belong to it."""
    if isinstance(collector, pytest.Module):
        prev, _AUDIT.context = _AUDIT.context, _module_id(collector.nodeid)
        yield
        _AUDIT.context = prev
    else:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    prev = _AUDIT.context
    _AUDIT.context, _AUDIT.test = _module_id(item.nodeid), item.nodeid
    m = item.get_closest_marker("no_c_audit")
    _AUDIT.c_exempt = (m.args[0] if m.args else "no_c_audit") if m else None
    yield
    _AUDIT.context, _AUDIT.test, _AUDIT.c_exempt = prev, None, None


def _c_compilers():
    return [cc for cc in ("gcc", "clang") if _shutil.which(cc)]


_F16_OK = {}


def _supports_float16(cc) -> bool:
    """clang < 15 rejects ``_Float16`` on x86-64 (gcc >= 12 accepts it)."""
    if cc not in _F16_OK:
        r = _subprocess.run([cc, "-std=c11", "-fsyntax-only", "-x", "c", "-"],
                            input="_Float16 h;\n", capture_output=True,
                            text=True)
        _F16_OK[cc] = r.returncode == 0
    return _F16_OK[cc]


def _well_formed(p) -> bool:
    """False for procedures a test builds ill-formed on purpose (e.g. to
    see the interpreter catch a bad index): the frontend rejects their
    text, so there is nothing to round-trip or compile."""
    from exo_hl.errors import BoundsError, ExoTypeError
    from exo_hl.frontend.checks import run_static_checks
    from exo_hl.frontend.typecheck import check_calls
    try:
        check_calls(p.ir())
        run_static_checks(p.ir())
    except (BoundsError, ExoTypeError):
        return False
    return True


def _c_text(d, base) -> str:
    """Header and source of ``base`` in ``d``, as one string."""
    parts = []
    for ext in (".h", ".c"):
        with open(_os.path.join(d, base + ext)) as f:
            parts.append(f.read())
    return "\0".join(parts)


_CC_IDENTITY = {}


def _cc_identity(cc) -> str:
    """What else a verdict of ``cc`` depends on: the compiler (resolved
    path, size and time of its binary, its version text), the C library
    whose headers the C includes, and the CPU (once part of -march=native's meaning; kept)."""
    if cc not in _CC_IDENTITY:
        parts = [cc]
        path = _shutil.which(cc)
        if path:
            real = _os.path.realpath(path)
            st = _os.stat(real)
            parts += [real, str(st.st_size), str(st.st_mtime_ns)]
            r = _subprocess.run([path, "--version"], capture_output=True,
                                text=True)
            parts.append(r.stdout)
        try:
            parts.append(_os.confstr("CS_GNU_LIBC_VERSION") or "")
        except (ValueError, OSError):
            pass
        try:
            with open("/proc/cpuinfo") as f:
                parts += sorted({ln for ln in f if ln.startswith(
                    ("flags", "model name", "vendor_id"))})
        except OSError:
            pass
        _CC_IDENTITY[cc] = "\0".join(parts)
    return _CC_IDENTITY[cc]


def _compile_key(cc, flags, text, base) -> str:
    """What decides a compiler's verdict on ``text``: the compiler (and
    what ``_cc_identity`` adds), its flags, and the C with its file name
    abstracted (the base name only names the file, its header guard and
    its context struct, and the distinctive ``auditNNNNN`` names clash with
    nothing, so two files equal up to that name get the same
    diagnostics)."""
    norm = text.replace(base, "\1").replace(base.upper(), "\2")
    return _hashlib.sha256("\0".join(
        [_cc_identity(cc), *flags, "", norm]).encode()).hexdigest()


#: keys older than this process come from an earlier session (counted, so
#: that the summary says how warm the audit was)
_STARTED = _time.time()


def _known_clean(key, cc="") -> bool:
    """This C was already compiled clean (this session, by any worker, or
    an earlier one)."""
    if key in _AUDIT.compiled_ok:
        return True
    if _AUDIT.cache_dir:
        path = _os.path.join(_AUDIT.cache_dir, key)
        try:
            earlier = _os.stat(path).st_mtime < _STARTED
            _os.utime(path)      # refreshed: a key in use is never pruned
        except OSError:
            return False
        if earlier:
            _AUDIT.stats[f"C clean in an earlier session ({cc})"] += 1
        _AUDIT.compiled_ok.add(key)
        return True
    return False


def _mark_clean(keys):
    for key in keys:
        _AUDIT.compiled_ok.add(key)
        if _AUDIT.cache_dir:
            try:
                open(_os.path.join(_AUDIT.cache_dir, key), "w").close()
            except OSError:
                pass    # the cache only saves time; never fails the audit


def _audit_procs(procs):
    """Problems (list of str) with ``procs``: [(Procedure, where, exempt)]."""
    from exo_hl.codegen_c.emit import compile_procs
    from exo_hl.errors import ExoTypeError, MemGenError

    problems = []

    def where(p, w):
        si = getattr(p.ir(), "srcinfo", None)
        return f"'{p.name()}' (defined at {si}, created in {w})"

    with _tempfile.TemporaryDirectory(prefix="exo_audit_") as d:
        files = {}
        for k, (p, w, exempt) in enumerate(procs):
            try:
                if p.ir().srcinfo is None:
                    # IR a test built by hand (no source): its control-type
                    # annotations need not be the frontend's (e.g. a size
                    # read as index), so only the text must round-trip
                    assert str(reparse(p)) == str(p), "text differs"
                else:
                    check_roundtrip(p)
            except Exception as e:
                if not _well_formed(p):
                    _AUDIT.stats["ill-formed on purpose"] += 1
                    continue
                problems.append(f"round trip of {where(p, w)} failed: "
                                f"{type(e).__name__}: {e}")
            _AUDIT.stats["round trip"] += 1
            if exempt:
                _AUDIT.stats["C exempt (no_c_audit)"] += 1
                continue
            base = f"audit{k:05d}"
            try:
                compile_procs([p], d, base)
            except (MemGenError, ExoTypeError, ValueError) as e:
                _AUDIT.stats[f"C refused ({type(e).__name__})"] += 1
                continue
            except Exception as e:
                problems.append(f"C generation for {where(p, w)} crashed: "
                                f"{type(e).__name__}: {e}")
                continue
            files[base] = (p, w)
        texts = {b: _c_text(d, b) for b in files}
        for cc in _c_compilers() if files else ():
            todo = {b: pw for b, pw in files.items()
                    if _supports_float16(cc) or "_Float16" not in texts[b]}
            if len(todo) < len(files):
                _AUDIT.stats[f"C skipped ({cc}: no _Float16)"] += \
                    len(files) - len(todo)
            if not todo:
                continue
            flags = AUDIT_CFLAGS if cc not in _CC_MODE else \
                [f for f in AUDIT_CFLAGS if f != "-c"] + _CC_MODE[cc]
            f16 = {b for b in todo if "_Float16" in texts[b]}
            keys = {b: _compile_key(cc, flags + [_F16_PEDANTIC] * (b in f16),
                                    texts[b], b) for b in todo}
            first = {}               # key -> the first file with that C
            for b in todo:
                first.setdefault(keys[b], b)
            run = [b for key, b in first.items()
                   if not _known_clean(key, cc)]
            _AUDIT.stats[f"C checked ({cc})"] += len(todo)
            _AUDIT.stats[f"C compiled ({cc})"] += len(run)
            if len(run) < len(todo):
                _AUDIT.stats[f"C not recompiled ({cc}: identical C "
                             f"already compiled clean)"] += len(todo) - len(run)
            if not run:
                continue
            t0 = _time.perf_counter()
            plain = [f"{b}.c" for b in run if b not in f16]
            r = _subprocess.run([cc, *flags, *plain], cwd=d,
                                capture_output=True, text=True) \
                if plain else None
            if len(plain) < len(run):
                r16 = _subprocess.run(
                    [cc, *flags, _F16_PEDANTIC,
                     *(f"{b}.c" for b in run if b in f16)],
                    cwd=d, capture_output=True, text=True)
                r16.stderr = _f16_only(r16.stderr)
                if r is None or (r.returncode == 0
                                 and not r.stderr.strip()):
                    r = r16
                elif r16.returncode or r16.stderr.strip():
                    r.stderr += r16.stderr
            _AUDIT.stats["seconds in C compilers (all workers)"] += round(
                _time.perf_counter() - t0, 1)
            if r.returncode == 0 and not r.stderr.strip():
                _mark_clean(keys[b] for b in run)
                continue
            bad = [b for b in run
                   if f"{b}.c:" in r.stderr or f"{b}.h:" in r.stderr]
            for b in bad or run:
                msgs = "\n".join(
                    ln for ln in r.stderr.splitlines()
                    if ln.startswith((f"{b}.c:", f"{b}.h:"))) or r.stderr
                with open(_os.path.join(d, f"{b}.c")) as f:
                    src = f.read()
                for same in (x for x in todo if keys[x] == keys[b]):
                    p, w = todo[same]
                    problems.append(
                        f"{cc} {' '.join(flags)} rejects the C of "
                        f"{where(p, w)}:\n{msgs}\n--- {b}.c ---\n{src}")
    return problems


def _f16_only(stderr):
    """Compiler output without the documented ``_Float16`` extension
    diagnostics (and their context lines): what remains is a problem."""
    keep, skip = [], False
    for ln in stderr.splitlines():
        if "does not support the" in ln and "_Float16" in ln:
            skip = True
            continue
        if skip and (ln.startswith(" ") or "In function" in ln
                     or ln.startswith("cc1:")):
            continue
        skip = False
        if "In function" in ln or "warnings being treated" in ln or \
                ln.startswith("In file included from"):
            continue
        keep.append(ln)
    return "\n".join(keep)


def _take_pending(module_id):
    """Pending procedures of ``module_id`` (and of no module), deduplicated."""
    out = []
    for key in (None, module_id):
        for ir, pw in _AUDIT.pending.pop(key, {}).items():
            if ir not in _AUDIT.seen:
                _AUDIT.seen.add(ir)
                out.append(pw)
    return out


@pytest.fixture(scope="module", autouse=True)
def _audit_every_procedure(request):
    """After a test module: its procedures round-trip and compile as C."""
    yield
    if not _AUDIT.enabled:
        return
    procs = _take_pending(_module_id(request.node.nodeid))
    if not procs:
        return
    _AUDIT.recording = False
    t0 = _time.perf_counter()
    try:
        problems = _audit_procs(procs)
    finally:
        _AUDIT.recording = True
        _AUDIT.stats["seconds (all workers)"] += round(
            _time.perf_counter() - t0, 1)
    if problems:
        pytest.fail(f"procedure audit: {len(problems)} problem(s) among the "
                    f"{len(procs)} procedures of this module\n\n"
                    + "\n\n".join(problems), pytrace=False)


def pytest_sessionfinish(session):
    """An xdist worker hands its audit counts to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["exo_hl_audit"] = dict(_AUDIT.stats)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(xdist controller) sum the workers' audit counts."""
    for k, v in getattr(node, "workeroutput", {}).get("exo_hl_audit",
                                                      {}).items():
        _AUDIT.stats[k] += v


def pytest_terminal_summary(terminalreporter):
    if _AUDIT.enabled and _AUDIT.stats:
        terminalreporter.write_line(
            "procedure audit: " + ", ".join(
                f"{k}: {round(v, 1)}" for k, v in sorted(_AUDIT.stats.items())))
