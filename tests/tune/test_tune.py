"""exo_hl.tune: the search survives refused, crashing and hanging
candidates and is reproducible from a seed; the database keeps one record
per machine and never hands out another machine's; the BLIS model's
block sizes satisfy its cache constraints.

The candidates' processes start with ``spawn`` (about a second each), so
every search here runs a handful of candidates."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exo_hl import SchedulingError

sys.path.insert(0, str(Path(__file__).parent))

import tune_candidates as tc  # noqa: E402
from exo_hl.tune import (STATUSES, CacheLevel, Confirmed,  # noqa: E402
                         Trial, TuningDB,
                         blis_blocking, machine_signature, signature_id,
                         signature_label, tune)

REPO = Path(__file__).resolve().parents[2]


def test_refused_crashing_and_hanging_candidates_are_recorded(tmp_path):
    cases = ["tile4", "refused", "abort", "segv", "hang", "tile8"]
    t0 = time.monotonic()
    r = tune(tc.template, {"case": cases}, tc.bench, n_trials=len(cases),
             initial=[{"case": c} for c in cases], workers=2, timeout_s=3,
             progress=False, db=str(tmp_path), key="axpy.test",
             units="tile")
    took = time.monotonic() - t0
    by_case = {t.params["case"]: t for t in r.trials}
    assert set(by_case) == set(cases)
    assert [t.params["case"] for t in r.trials] == cases   # the queue order
    assert by_case["tile4"].status == "ok" and by_case["tile4"].value == 4
    ref = by_case["refused"]
    assert ref.status == "refused" and "split" in ref.message
    assert by_case["abort"].status == "crashed"
    assert "SIGABRT" in by_case["abort"].message
    assert by_case["segv"].status == "crashed"
    assert "SIGSEGV" in by_case["segv"].message
    assert by_case["hang"].status == "timeout"
    # the search went on after them
    assert r.best_params == {"case": "tile8"} and r.best_value == 8
    assert r.counts() == {"ok": 2, "refused": 1, "crashed": 2, "timeout": 1}
    assert took < 60
    # the best point is this machine's record
    rec = TuningDB(str(tmp_path)).lookup("axpy.test").record
    assert rec["params"] == {"case": "tile8"} and rec["value"] == 8
    assert rec["signature"] == machine_signature()


def test_a_slow_build_does_not_hold_the_search_past_its_budget(tmp_path):
    """Builds still running when the budget has run out are stopped
    (status timeout, saying so) once some candidate has been built: the
    search returns near its budget with that candidate, not after the
    slow one's build timeout."""
    t0 = time.monotonic()
    r = tune(tc.template, {"case": ["tile4", "slowbuild"]}, tc.bench,
             initial=[{"case": "tile4"}, {"case": "slowbuild"}],
             workers=2, budget_s=1.0, timeout_s=30, build_timeout_s=250,
             confirm=0, progress=False)
    took = time.monotonic() - t0
    by_case = {t.params["case"]: t for t in r.trials}
    assert by_case["tile4"].status == "ok"
    slow = by_case["slowbuild"]
    assert slow.status == "timeout" and "budget" in slow.message
    assert r.best_params == {"case": "tile4"}
    assert took < 60


def test_a_search_is_reproducible_from_its_seed():
    space = {"t": range(1, 13), "u": [1, 2, 3, 4, 5]}

    def run(seed):
        # two random points, then four from TPE's model of the values
        r = tune(tc.template_xy, space, tc.bench_xy, n_trials=6, seed=seed,
                 workers=2, compile=False, progress=False, n_startup=2)
        assert all(t.status == "ok" for t in r.trials)
        return [(t.params["t"], t.params["u"]) for t in r.trials], r

    first, r = run(7)
    again, _ = run(7)
    other, _ = run(8)
    assert first == again
    assert first != other
    assert r.best_value == max(t.value for t in r.trials)
    assert len(r.trials) == 6


def test_a_finite_space_stops_when_every_point_is_tried(monkeypatch,
                                                        capfd):
    monkeypatch.setenv("EXO_HL_PROGRESS", "1")      # the bar, on stderr
    r = tune(tc.template_xy, {"t": [2, 6], "u": [3]}, tc.bench_xy,
             n_trials=10, compile=False, key="xy")
    err = capfd.readouterr().err
    assert "xy" in err and "trial" in err and "best 0" in err
    fresh = [t for t in r.trials if t.repeat_of is None]
    assert sorted(t.params["t"] for t in fresh) == [2, 6]
    assert r.best_params == {"t": 6, "u": 3} and r.best_value == 0


def test_bad_spaces_are_rejected():
    for space in ({}, {"t": []}, {"t": 3}, {"t": range(0)}):
        with pytest.raises((TypeError, ValueError)):
            tune(tc.template_xy, space, tc.bench_xy, n_trials=1,
                 progress=False)
    # an initial point outside the space (the SGEMM model's NC was not in
    # its list, and optuna failed deep inside the search)
    for point in ({"t": 5, "u": 3}, {"t": 1, "v": 3}):
        with pytest.raises(ValueError, match="is not in the space"):
            tune(tc.template_xy, {"t": [1, 2], "u": [3]}, tc.bench_xy,
                 initial=[point], progress=False)


def _other_machine(sig):
    other = json.loads(json.dumps(sig))
    other["cpu_model"] = "AMD EPYC 9B14 96-Core Processor"
    other["caches"][0]["size"] = 32 << 10
    return other


def test_a_record_of_another_machine_is_not_used(tmp_path):
    db = TuningDB(str(tmp_path))
    here = machine_signature()
    there = _other_machine(here)
    path = db.store("k.v1", {"kc": 128}, 99.0, units="GFLOP/s",
                    signature=there)
    assert signature_id(there) in path
    found = db.lookup("k.v1")
    assert found.record is None
    assert "other machines not used" in found.note
    assert "caches" in found.note and "cpu_model" in found.note
    # a file under this machine's name but holding another signature
    # (copied from elsewhere) is not used either
    os.makedirs(os.path.dirname(db.path("k.v1")), exist_ok=True)
    with open(path) as f, open(db.path("k.v1"), "w") as g:
        g.write(f.read())
    assert db.lookup("k.v1").record is None
    # this machine's record is found, and says where it came from
    mine = db.store("k.v1", {"kc": 256}, 150.0, units="GFLOP/s")
    found = db.lookup("k.v1")
    assert found.record["params"] == {"kc": 256} and found.path == mine
    assert mine in found.note
    assert db.lookup("k.v1", signature=there).record["params"] == {"kc": 128}
    assert len(db.records("k.v1")) == 2


def test_a_record_of_another_core_with_the_same_name_is_not_used(tmp_path):
    """A virtual machine may name Zen 3, 4 and 5 all "AMD EPYC": a record
    whose signature differs only in the family/model/stepping numbers
    (``cpu_id``), or predates them, is another machine's."""
    db = TuningDB(str(tmp_path))
    here = machine_signature()
    assert set(here["cpu_id"]) == {"family", "model", "stepping"}
    fam = here["cpu_id"]["family"]
    zen4 = dict(here, cpu_id=dict(here["cpu_id"],
                                  family=25 if fam != 25 else 26))
    older = {k: v for k, v in here.items() if k != "cpu_id"}
    for there in (zen4, older):
        db.store("k.v1", {"kc": 128}, 99.0, signature=there)
        found = db.lookup("k.v1")
        assert found.record is None and "cpu_id" in found.note, found.note


def test_a_stored_record_loads_fast_in_a_new_process(tmp_path):
    db = TuningDB(str(tmp_path))
    db.store("k.v1", {"kc": 256}, 150.0)
    # the lookup itself (signature, file): importing exo_hl comes first
    # for any app and takes about a second on a loaded machine
    code = ("import time\n"
            "from exo_hl.tune import TuningDB\n"
            "t = time.perf_counter()\n"
            f"r = TuningDB({str(tmp_path)!r}).lookup('k.v1').record\n"
            "print(r['params']['kc'], time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, cwd=REPO, env={**os.environ,
                                                   "PYTHONPATH": str(REPO)})
    kc, secs = out.stdout.split()
    assert kc == "256", out.stderr
    assert float(secs) < 1.0


def test_keys_are_file_names():
    db = TuningDB("/nonexistent")
    for bad in ("", "a/b", "../x", "a b"):
        with pytest.raises(ValueError):
            db.path(bad)
    assert signature_label(machine_signature()).endswith(
        signature_id(machine_signature()))


def _ways(nbytes, c):
    return -(-nbytes // c.way_bytes)


@pytest.mark.parametrize("mr,nr", [(6, 32), (6, 64), (8, 32), (14, 32),
                                   (4, 64), (6, 16), (4, 24), (8, 8),
                                   (3, 32)])
@pytest.mark.parametrize("l1,l2", [((32 << 10, 8), (1 << 20, 16)),
                                   ((48 << 10, 12), (2 << 20, 16)),
                                   ((32 << 10, 8), (512 << 10, 8))])
def test_the_blis_model_meets_its_constraints(mr, nr, l1, l2):
    caches = {1: CacheLevel(1, l1[0], ways=l1[1]),
              2: CacheLevel(2, l2[0], ways=l2[1]),
              3: CacheLevel(3, 32 << 20, ways=16, shared_by=4)}
    b = blis_blocking(mr, nr, caches=caches)
    c1 = caches[1]
    # both micro-panels in W - 1 ways of L1, and 16 more k would not fit
    assert _ways(mr * b.kc * 4, c1) + _ways(nr * b.kc * 4, c1) <= c1.ways - 1
    k2 = b.kc + 16
    assert _ways(mr * k2 * 4, c1) + _ways(nr * k2 * 4, c1) > c1.ways - 1
    assert b.kc % 16 == 0 and b.mc % mr == 0 and b.nc % nr == 0
    assert b.mc * b.kc * 4 <= caches[2].size // 2
    assert b.nc * b.kc * 4 <= (32 << 20) // 4 // 2
    assert b.nc_l2 * b.kc * 4 <= caches[2].size // 2
    assert len(b.notes) == 4


def test_the_blis_model_gives_blis_own_haswell_kc():
    # BLIS's Haswell DGEMM: 6x8 kernel, 32 KiB 8-way L1 -> kc = 256
    caches = {1: CacheLevel(1, 32 << 10, ways=8), 2: CacheLevel(2, 256 << 10,
                                                                ways=8),
              3: CacheLevel(3, 8 << 20, ways=16)}
    assert blis_blocking(6, 8, elem_bytes=8, caches=caches).kc == 256
    # without associativity: half the L1
    b = blis_blocking(6, 16, caches={1: CacheLevel(1, 32 << 10)})
    assert (6 + 16) * b.kc * 4 <= 16 << 10
    assert any("no L2 reported" in n for n in b.notes)


def test_statuses_are_the_documented_ones():
    assert STATUSES == ("ok", "refused", "crashed", "timeout")


def test_the_cli_tunes_and_stores(tmp_path, capsys):
    from exo_hl.cli import main
    spec = str(Path(__file__).parent / "tune_candidates.py")
    rc = main(["tune", spec, "--trials", "3", "--db", str(tmp_path),
               "--option", "u=3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "tuning the test landscape" in out and "stored:" in out
    assert "best 0 score with {'t': 6, 'u': 3}" in out
    rec = TuningDB(str(tmp_path)).lookup("axpy.cli.v1").record
    assert rec["params"] == {"t": 6, "u": 3} and rec["trials"] == 3
    # confirmed (the default): the spec's initial point, the optimum, won
    assert "confirm #0   initial" in out and "the initial point #0 won" \
        in out
    assert rec["confirmed"]["winner"] == "initial"
    assert rec["confirmed"]["rounds"] == 3
    assert main(["tune", spec, "--trials", "2", "--no-store",
                 "--confirm", "0"]) == 0
    assert "confirm" not in capsys.readouterr().out.split("space:")[1]
    assert main(["tune", str(tmp_path / "missing.py")]) == 1
    assert main(["tune", spec, "--option", "novalue"]) == 1


def test_the_cli_unsets_the_specs_variables_before_the_workers(tmp_path):
    """A spec's ``unset_env`` is gone from the workers' environment (the
    SGEMM spec's OPENBLAS_CORETYPE: with it, the baseline ran OpenBLAS's
    Haswell kernels and every ratio was 1.9x on an AVX-512 machine). In a
    process of its own: a forkserver started earlier by other tests would
    keep the environment it started with."""
    import subprocess
    spec = str(Path(__file__).parent / "tune_candidates.py")
    env = dict(os.environ, EXO_HL_TEST_UNSET="1",
               PYTHONPATH=os.pathsep.join([str(REPO)] + sys.path))
    cmd = [sys.executable, "-m", "exo_hl.cli", "tune", spec, "--trials",
           "1", "--no-store", "--confirm", "0"]
    out = subprocess.run(cmd + ["--option", "unset=EXO_HL_TEST_UNSET"],
                         env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "unset EXO_HL_TEST_UNSET=1" in out.stdout
    assert "best 0 score" in out.stdout, out.stdout
    # without it the worker sees the variable (the check can fail)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True,
                         timeout=120)
    assert "best -100 score" in out.stdout, out.stdout + out.stderr


def test_the_cli_passes_the_specs_n_startup(tmp_path, monkeypatch, capsys):
    """A spec's ``n_startup`` reaches ``tune`` (the CLI dropped it, so the
    SGEMM search spent its 10 minutes on optuna's 10 random points)."""
    import exo_hl.tune as T
    from exo_hl.cli import main
    seen, real = {}, T.tune

    def spy(*a, **k):
        seen.update(k)
        return real(*a, **k)
    monkeypatch.setattr(T, "tune", spy)
    spec = str(Path(__file__).parent / "tune_candidates.py")
    assert main(["tune", spec, "--trials", "2", "--no-store",
                 "--option", "n_startup=1", "--option", "cflags=-O2"]) == 0
    assert seen["n_startup"] == 1
    # and its compile options (the CLI dropped them: SGEMM's AVX2
    # candidates were built without the app's -fira-region=one)
    assert seen["compile_opts"] == {"cflags": "-O2"}


def test_the_guides_example_runs(capsys):
    """docs/tuning.md's worked example (examples/tuning/gemv_tuning.py):
    the perfect split of an unknown n is refused, the others measured."""
    sys.path.insert(0, str(REPO / "examples" / "tuning"))
    import gemv_tuning
    from exo_hl.tune import tune as run
    r = run(gemv_tuning.template, gemv_tuning.SPACE, gemv_tuning.bench,
            n_trials=4, progress=False, units="GFLOP/s",
            initial=[{"rows": 4, "tail": "cut"},
                     {"rows": 4, "tail": "perfect"}])
    assert r.trials[0].ok and r.trials[0].value > 0
    assert r.trials[1].status == "refused"
    assert "perfect" in r.trials[1].message or "divid" in \
        r.trials[1].message
    # the value kept is the confirmation's median of the winner
    assert r.confirmation is not None
    assert r.best_value == r.confirmation.winner.median
    assert r.best_params == r.confirmation.winner.params


# ---------------------------------------------------------------------------
# the confirmation rounds (fake benchmarks whose values follow a script:
# no real timing)

def _scripted(tmp_path, script, **kw):
    bench = tc.ScriptedBench(tmp_path / "counts", script,
                             crash=kw.pop("crash", ()))
    kw.setdefault("initial", [{"p": "model"}])
    # (a finite space: the search ends when every point was tried)
    return tune(tc.template_p, {"p": sorted(script)}, bench,
                n_trials=40, compile=False, progress=False,
                workers=2, **kw)


#: the search's single measurements mislead: ``lucky`` is measured once
#: at 1.5 (then 0.9 for ever), ``good`` once at 1.1 (then 1.2), the
#: model's point is 1.0
MISLEADING = {"model": [1.0], "lucky": [1.5, 0.9], "good": [1.1, 1.2],
              "slow": [0.6], "slower": [0.5], "bad": [0.4]}


def test_the_confirmation_picks_the_truly_better_point(tmp_path):
    r = _scripted(tmp_path, MISLEADING, db=str(tmp_path / "db"),
                  key="scripted.v1", units="x")
    by_p = {t.params["p"]: t for t in r.trials}
    assert by_p["lucky"].value == 1.5          # the search's best...
    c = r.confirmation
    assert c is not None and c.rounds == 3
    # ... is re-timed with the model's point and the next best
    assert {f.params["p"]: f.source for f in c.finalists} == {
        "model": "initial", "lucky": "search", "good": "search",
        "slow": "search"}
    assert {f.params["p"]: f.values for f in c.finalists}["lucky"] == (
        0.9, 0.9, 0.9)
    assert r.best_params == {"p": "good"} and r.best_value == 1.2
    assert c.winner.source == "search" and c.initial.params["p"] == "model"
    assert abs(c.margin - 0.2) < 1e-12
    assert "beat the initial point" in r.summary()
    rec = TuningDB(str(tmp_path / "db")).lookup("scripted.v1").record
    assert rec["params"] == {"p": "good"} and rec["value"] == 1.2
    assert rec["confirmed"]["winner"] == "search"
    assert abs(rec["confirmed"]["margin_over_initial"] - 0.2) < 1e-12
    assert len(rec["confirmed"]["finalists"]) == 4


def test_without_confirmation_the_lucky_point_wins(tmp_path):
    """What the confirmation is for: without it the one lucky value is
    kept."""
    r = _scripted(tmp_path, MISLEADING, confirm=0)
    assert r.confirmation is None
    assert r.best_params == {"p": "lucky"} and r.best_value == 1.5


def test_a_point_within_the_spread_does_not_displace_the_initial_one(
        tmp_path):
    # the rounds: model 0.97, 1.03, 1.0 (median 1.0, spread 0.06);
    # close 1.05, 0.96, 1.04 (median 1.04: +0.04, within 0.09)
    script = {"model": [1.0, 0.97, 1.03, 1.0],
              "close": [1.3, 1.05, 0.96, 1.04], "slow": [0.5]}
    r = _scripted(tmp_path, script)
    c = r.confirmation
    assert r.best_params == {"p": "model"} and r.best_value == 1.0
    assert c.winner is c.initial and c.margin == 0.0
    assert abs(c.spread - 0.09) < 1e-12
    assert "the initial point #0 won" in c.note and "within the spread" \
        in c.note


def test_a_confirmation_is_reproducible_and_survives_a_flaky_finalist(
        tmp_path):
    def run(sub):
        r = _scripted(tmp_path / sub, MISLEADING, seed=3, crash=["good"])
        return r, [(t.params["p"], t.value) for t in r.trials]

    r, first = run("a")
    again, second = run("b")
    assert first == second
    assert [f.values for f in r.confirmation.finalists] == \
        [f.values for f in again.confirmation.finalists]
    good = next(f for f in r.confirmation.finalists
                if f.params["p"] == "good")
    assert good.values == () and "flaky" in good.message
    # the lucky point was found out; the model's point stays
    assert r.best_params == {"p": "model"} and r.best_value == 1.0


def test_an_initial_point_must_give_every_parameter():
    with pytest.raises(ValueError, match="does not give u"):
        tune(tc.template_xy, {"t": [1, 2], "u": [3]}, tc.bench_xy,
             initial=[{"t": 1}], progress=False)


def test_the_choice_between_finalists():
    from exo_hl.tune.confirm import choose as _choose, reserve as _reserve
    model = Confirmed({"p": 0}, "initial", 0, 1.0, (1.0, 0.98, 1.02))
    near = Confirmed({"p": 1}, "search", 5, 1.4, (1.03, 1.04, 1.05))
    far = Confirmed({"p": 2}, "search", 6, 1.1, (1.1, 1.12, 1.11))
    gone = Confirmed({"p": 3}, "search", 7, 1.9, (), "crashed: x")
    assert _choose([model, near, gone], 3, "x").winner is model
    c = _choose([model, near, far, gone], 3, "x")
    assert c.winner is far and abs(c.margin - 0.11) < 1e-12
    # the first initial point is the one to beat: a second initial point
    # (an alternative) within the spread does not displace it (the real
    # search kept SGEMM's A-unpacked alternative at a median 0.016 above
    # the model's, with rounds spread by 0.16)
    alt = Confirmed({"p": 4}, "initial", 1, 1.0, (1.01, 0.97, 1.04))
    assert _choose([model, alt, near], 3, "x").winner is model
    assert _choose([model, alt, far], 3, "x").winner is far
    # one round measures no spread: the initial point stays
    one = [Confirmed(f.params, f.source, f.number, f.first, f.values[:1])
           for f in (model, far)]
    assert _choose(one, 1, "x").winner.source == "initial"
    # no initial point: the best median
    assert _choose([near, far], 3, "x").winner is far
    assert _choose([gone], 3, "x") is None
    # the time kept for it: the finalists built again (two at a time)
    # and timed in each round, from the search's median times
    trials = [Trial(i, {"p": i}, "ok", float(i), build_s=10.0,
                    bench_s=2.0) for i in range(6)]
    ids = {json.dumps({"p": 0})}
    # 1 initial + 3 others: 2 chunks of builds, 3 rounds of 4 timings
    assert _reserve(trials, ids, 3, 3, 2) == pytest.approx(
        1.2 * (2 * 10 + 3 * 4 * 2) + 1)
    assert _reserve(trials, ids, 0, 3, 2) == 0


def test_the_apps_initial_points_are_the_models_whole_points():
    """The SGEMM and conv searches start from their models' points, with
    every parameter named: the SGEMM "model point" left pack_b, prefetch
    and order out, the search drew them at random (pack_b=False once,
    measured 0.74x OpenBLAS), and conv's base point par, dynamic, kc..."""
    sys.path.insert(0, str(REPO))
    from apps.conv import tuning as conv
    from apps.sgemm import tuning as sgemm
    spec = sgemm.tune_spec({})
    isa = spec["initial"][0]["isa"]
    for point in spec["initial"]:
        assert set(point) == set(spec["space"]), point
    ran = sgemm.variant(isa, spec["initial"][0])
    model = sgemm.configured(isa, "model")[0]
    for f in ("mr", "nr", "kc", "nc", "mc", "pack_a", "pack_b", "prefetch",
              "order", "dynamic"):
        assert getattr(ran, f) == getattr(model, f), f
    # the candidates are built as the app builds its kernels
    from apps.common.kernel_flags import kernel_compile_opts
    assert spec["compile_opts"] == kernel_compile_opts(isa)
    assert sgemm.tune_spec({"isa": "avx2"})["compile_opts"] == \
        kernel_compile_opts("avx2")
    for sizes in ("halide", "resnet7", "resnet14:5"):
        spec = conv.tune_spec({"sizes": sizes})
        for point in spec["initial"]:
            assert set(point) == set(spec["space"]), point
            conv.variant(point["isa"], point)


def test_points_valid_refuses_are_never_built():
    """``valid`` keeps a point that cannot be built out of the batches
    (SGEMM's 'goto' order without MC took 28 of 76 places in a quiet
    search): the benchmark never sees one, every place of the search
    goes to a valid point, and a note counts the skipped ones."""
    space = {"t": range(1, 12)}
    r = tune(tc.template_xy, space, tc.bench_odd, n_trials=4, seed=3,
             workers=2, compile=False, progress=False, n_startup=2,
             valid=tc.odd_t_only, confirm=0)
    assert len(r.trials) == 4 and all(t.ok for t in r.trials), r.trials
    assert {t.params["t"] for t in r.trials} <= {3, 5, 7, 9, 11}
    assert r.best_params == {"t": 5} or r.best_params == {"t": 7}
    skipped = [n for n in r.notes if "failed valid()" in n]
    assert skipped and "is even" in skipped[0], r.notes
    # an initial point valid refuses is an error, not a silent skip
    with pytest.raises(ValueError, match="fails valid"):
        tune(tc.template_xy, space, tc.bench_odd, initial=[{"t": 4}],
             valid=tc.odd_t_only, compile=False, progress=False)
    # a space with no valid point ends (stale batches), measuring nothing
    r = tune(tc.template_xy, {"t": [1, 2, 4]}, tc.bench_odd, n_trials=3,
             valid=tc.odd_t_only, compile=False, progress=False,
             confirm=0, budget_s=60)
    assert r.trials == () and r.best_params is None


def test_sgemms_valid_refuses_goto_without_an_a_block():
    sys.path.insert(0, str(REPO))
    from apps.sgemm import tuning as sgemm
    spec = sgemm.tune_spec({})
    start = spec["initial"][0]
    assert spec["valid"] is sgemm.valid and sgemm.valid(start) is None
    # its OpenBLAS baseline must run this CPU's kernels in the workers
    assert set(spec["unset_env"]) == {"OPENBLAS_CORETYPE",
                                      "OPENBLAS_L2_SIZE"} or \
        spec["units"] == "GFLOP/s"
    for bad in (dict(start, order="goto", mc=0),
                dict(start, order="goto", mc=384, pack_a=False)):
        assert "goto" in sgemm.valid(bad)
    assert sgemm.valid(dict(start, order="goto", mc=384,
                            pack_a=True)) is None


def test_convs_valid_agrees_with_its_template():
    """conv's ``valid`` refuses exactly the points its template refuses
    without scheduling (sampled from its space), so the search loses no
    point the template could build."""
    import random
    sys.path.insert(0, str(REPO))
    from apps.conv import tuning as conv
    spec = conv.tune_spec({"sizes": "resnet14"})
    space, rng = spec["space"], random.Random(5)
    assert conv.valid(spec["initial"][0]) is None
    seen = set()
    for _ in range(300):
        point = {n: rng.choice(list(c)) for n, c in space.items()}
        why = conv.valid(point)
        seen.add(why is None)
        if why is not None:
            with pytest.raises(SchedulingError):
                conv.build(point["isa"], point, point["sizes"])
    assert seen == {True, False}
