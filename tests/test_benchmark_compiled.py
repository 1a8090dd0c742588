"""The compiled implementations the benchmarks time (`minigrad.compile`) replay, and compute what
the hand-written NumPy references compute; run.py refuses a compiled time that was not a
replay's; instructions.py's table and JSON file. Tiny sizes, no timing, no valgrind."""

import json

import numpy as np
import pytest

from benchmarks import instructions
from benchmarks import minigrad_workloads as mgw
from benchmarks import numpy_reference as ref
from benchmarks import run
from benchmarks.problems import w0_problem, w1_problem, w2_problem, w3_problem, worst_mismatch
from benchmarks.workloads import ROWS, WORKLOADS

CASES = [
    ("W0", lambda rng: w0_problem(rng, n_ops=6, n=3), "W0NumPy", "W0MinigradCompiled"),
    ("W1", lambda rng: w1_problem(rng, batch=5, inputs=7, hidden=6, classes=4), "W1NumPy",
     "W1MinigradCompiled"),
    ("W2 nn.GRU", lambda rng: w2_problem(rng, batch=3, steps=4, inputs=5, hidden=6),
     "W2NumPy", "W2MinigradGRUCompiled"),
    ("W2 primitives", lambda rng: w2_problem(rng, batch=3, steps=4, inputs=5, hidden=6),
     "W2NumPy", "W2MinigradPrimitivesCompiled"),
    ("W3", lambda rng: w3_problem(rng, batch=2, steps=5, embed=8, heads=2, ffn=12), "W3NumPy",
     "W3MinigradCompiled"),
]


def _outputs(instance, result) -> dict:
    return {k: np.array(v, copy=True) for k, v in instance.outputs(result).items()}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_primed_compiled_step_replays_and_agrees_with_numpy(case, rng):
    _, make, numpy_name, compiled_name = case
    problem = make(rng)
    reference = getattr(ref, numpy_name)(problem)
    expected = _outputs(reference, reference.step())
    instance = getattr(mgw, compiled_name)(problem)
    instance.prime()
    before = run.compiled_calls(instance)
    assert before[0] == 0 and before[1] >= 2             # eager call and capture, no replay yet
    got = _outputs(instance, instance.step())           # a replay, from the initial weights
    name, error = worst_mismatch(got, expected)
    assert error <= 1e-4, f"{name} differs by {error:.2e} of its scale"
    instance.step()
    run.check_replayed(instance, before)
    assert run.compiled_calls(instance) == (before[0] + 2, before[1])


def test_a_compiled_step_that_runs_eagerly_is_refused(rng, monkeypatch):
    monkeypatch.setenv("MINIGRAD_COMPILE", "0")           # read when the step is compiled
    instance = mgw.W0MinigradCompiled(w0_problem(rng, n_ops=4, n=2))
    instance.prime()
    before = run.compiled_calls(instance)
    instance.step()
    with pytest.raises(run.NotReplayed, match="1 of 1 compiled calls did not replay.*"
                                              "MINIGRAD_COMPILE=0"):
        run.check_replayed(instance, before)
    assert run.compiled_calls(mgw.W0Minigrad(w0_problem(rng, n_ops=4, n=2))) is None


def test_every_compiled_row_names_a_compiled_implementation_with_its_target():
    targets = {row.label: row.target for row in ROWS}
    assert targets["W0 per-op overhead"] == 4.5
    assert targets["W2 GRU, from primitives"] == 1.5
    assert targets["W0 per-op overhead, compiled"] == 1.3
    assert targets["W1 MLP train step, compiled"] == 1.05
    assert targets["W2 GRU, from primitives, compiled"] == 1.35
    for row in ROWS:
        if row.label.endswith("compiled"):
            implementation = WORKLOADS[row.workload].implementations[row.minigrad]
            assert hasattr(implementation.load(), "prime"), row.label


def test_the_instruction_table_and_its_file(tmp_path):
    counts = {"W0": {"per_step": {"numpy": 2_000_000, "minigrad": 10_000_000,
                                  "minigrad compiled": 5_000_000}}}
    text = instructions.table(counts)
    assert "| W0 | minigrad | 10.00 M | 5.00× |" in text
    assert "| W0 | minigrad compiled | 5.00 M | 2.50× |" in text
    path = tmp_path / "instructions.json"
    path.write_text(json.dumps({"workloads": {"W2": {"per_step": {"numpy": 1}}}}))
    instructions.write_json(counts, path)
    written = json.loads(path.read_text())
    assert sorted(written["workloads"]) == ["W0", "W2"]        # W2's entry is kept
    assert written["workloads"]["W0"] == counts["W0"]
    assert [p.name for p in tmp_path.iterdir()] == ["instructions.json"]   # no temporary left
    entry = instructions.entry({"numpy": 4.0, "minigrad": 10.0}, 2, 6)
    assert entry["ratio_to_numpy"] == {"numpy": 1.0, "minigrad": 2.5}
    assert entry["steps"] == [2, 6]


class _Stats:
    def __init__(self):
        self.eager = self.captures = self.replays = 0
        self.reasons = []


class _Reference:
    """Stands for an implementation: one output, the same at every step."""

    def __init__(self, problem):
        self.calls = 0

    def step(self):
        self.calls += 1
        return np.ones(3, dtype=np.float32)

    def outputs(self, result):
        return {"y": result}


class _StopsReplaying(_Reference):
    """Stands for a compiled implementation whose step replays for its first few calls after
    priming, then runs eagerly (a guard that started failing)."""

    def __init__(self, problem):
        super().__init__(problem)
        self.compiled = (self,)
        self.stats = _Stats()

    def prime(self):
        self.stats.eager, self.stats.captures = 1, 1

    def step(self):
        if self.calls < 3:
            self.stats.replays += 1
        else:
            self.stats.eager += 1
            self.stats.reasons.append("recapture: a planted guard failed")
        return super().step()


class _Named:
    def __init__(self, cls, framework="minigrad"):
        self.cls, self.framework = cls, framework

    def load(self):
        return self.cls


def test_a_timed_step_that_did_not_replay_is_a_failure_not_a_time(monkeypatch):
    from benchmarks.workloads import Workload
    fake = Workload("WX", "fake", lambda rng: None,
                    {"numpy": _Named(_Reference, "numpy"), "compiled": _Named(_StopsReplaying)})
    monkeypatch.setitem(run.WORKLOADS, "WX", fake)
    measured = run.measure("WX", {}, ["numpy", "compiled"],
                           run.Mode(samples=2, min_time=0.0, warmup=1), run.CLOCKS["cpu"])
    assert "numpy" in measured.times and "compiled" not in measured.times
    assert measured.problems["compiled"].startswith("timed steps not replayed")
    assert "a planted guard failed" in measured.problems["compiled"]


def test_instructions_refuses_an_unknown_workload_or_implementation(capsys):
    for argv in (["W9"], ["W2", "--only", "numpy,minigrad primitivs"]):
        with pytest.raises(SystemExit):
            instructions.main(argv)
        assert "unknown" in capsys.readouterr().err
