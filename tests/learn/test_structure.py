"""The learning path's structure (cheap; the full runs are `python -m learn.run --solutions`
and `--stubs`, in .ci/run): every exercise has a stub, a solution and a check; lessons import
only their own step's exercises and never a solution; notebooks are written without outputs."""

import ast
import importlib
import json

import numpy as np
import pytest

import minigrad as mg
from learn import notebooks, run

LESSONS = run.lessons()


def _imports(path):
    """Every module name a file imports (absolute names)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_steps_are_numbered_from_one_without_gaps():
    assert sorted(LESSONS) == list(range(1, len(LESSONS) + 1))


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_every_exercise_has_a_stub_a_solution_and_a_check(number):
    lesson = LESSONS[number]
    name = run.module_name(lesson)
    exercises = run.exercises_of(lesson)
    assert 1 <= len(exercises) <= 3
    assert [e.split(".")[0] for e in exercises] == [str(number)] * len(exercises)
    stub_path = run.HERE / "exercises" / f"{name}.py"
    stub_source = ast.parse(stub_path.read_text(encoding="utf-8"))
    solution = importlib.import_module(f"learn.solutions.{name}")
    checks = importlib.import_module(f"learn.checks.{name}")
    check_numbers = {getattr(f, "exercise", None) for f in vars(checks).values()}
    defined = {node.name: node for node in ast.walk(stub_source)
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for exercise, names in exercises.items():
        assert exercise in check_numbers, f"no check function for exercise {exercise}"
        for attribute in names:
            assert attribute in defined, f"{stub_path.name} lacks {attribute}"
            raises = [n for n in ast.walk(defined[attribute]) if isinstance(n, ast.Raise)
                      and "NotImplementedError" in ast.dump(n)]
            assert raises, f"the stub {attribute} does not raise NotImplementedError"
            assert hasattr(solution, attribute), f"no solution for {attribute}"


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_lesson_imports_its_own_exercises_and_checks_and_no_solution(number):
    lesson = LESSONS[number]
    name = run.module_name(lesson)
    imported = _imports(lesson)
    assert not [m for m in imported if m.startswith("learn.solutions")]
    assert f"learn.exercises.{name}" in imported and f"learn.checks.{name}" in imported
    others = [m for m in imported if m.startswith("learn.exercises.") and name not in m]
    assert not others, f"{lesson.name} imports another step's exercises: {others}"
    calls = lesson.read_text(encoding="utf-8")
    checks = importlib.import_module(f"learn.checks.{name}")
    for attribute, function in vars(checks).items():
        if getattr(function, "exercise", None):
            assert f"check.{attribute}(" in calls, f"{lesson.name} never calls check.{attribute}"


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_checks_never_import_solutions(number):
    path = run.HERE / "checks" / f"{run.module_name(LESSONS[number])}.py"
    assert not [m for m in _imports(path) if m.startswith("learn.solutions")]


def test_notebooks_are_written_without_outputs(tmp_path):
    lesson = LESSONS[1]
    written = notebooks.write(lesson, tmp_path)
    book = json.loads(written.read_text(encoding="utf-8"))
    assert book["nbformat"] == 4
    kinds = [cell["cell_type"] for cell in book["cells"]]
    assert kinds[0] == "code" and "autoreload" in "".join(book["cells"][0]["source"])
    assert "markdown" in kinds and kinds.count("code") >= 3
    assert all(cell.get("outputs", []) == [] for cell in book["cells"])
    markdown = "".join(book["cells"][1]["source"])
    assert markdown.startswith("# Step 1") and "\n# " not in markdown.replace("\n# Step", "")
    source_code = "".join("".join(c["source"]) for c in book["cells"] if c["cell_type"] == "code")
    assert "check.grad_by_hand(mine.grad_by_hand)" in source_code
    written.write_text("{}")                              # the learner's notebook is kept ...
    assert notebooks.write(lesson, tmp_path).read_text() == "{}"
    notebooks.write(lesson, tmp_path, overwrite=True)     # ... unless asked
    assert json.loads(written.read_text())["nbformat"] == 4


def test_recorded_timings_cover_every_step_within_the_bound():
    recorded = json.loads(run.TIMINGS.read_text())
    assert set(recorded["seconds"]) == {lesson.stem for lesson in LESSONS.values()}
    assert all(seconds <= recorded["max_seconds"] for seconds in recorded["seconds"].values())


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_lesson_says_what_it_follows_and_what_you_write(number):
    text = LESSONS[number].read_text(encoding="utf-8")
    head = text.split("# %%\n")[0]
    assert head.startswith(f"# %% [markdown]\n# # Step {number} ")
    assert "**Follows:**" in head and "**You write:**" in head


def test_given_code_imports_no_exercise_or_solution():
    for name in ("tasks.py", "earlier.py"):
        imported = _imports(run.HERE / name)
        assert not [m for m in imported if m.startswith(("learn.exercises", "learn.solutions"))]


# -- a wrong answer is named: the exercise, and the element or property that is wrong ----------

def _wrong_causal_mask(T):
    return np.ones((T, T), dtype=bool)                     # lets every position see the future


def _wrong_encoding(T, D, base=10000.0):
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, D, 2) / D)
    pe = np.zeros((T, D))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angles), np.sin(angles)        # sin and cos swapped
    return pe


def _wrong_split(x, heads):
    B, L, E = x.shape
    return x.reshape(B, heads, L, E // heads)               # a reshape is not a split


def _attention_without_mask(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    weights = mg.softmax(q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]), axis=-1)
    return weights @ v, weights


WRONG = [
    ("step07_causal", "causal_mask", (_wrong_causal_mask,), "7.1",
     ["causal_mask(2)[0, 1] is True", "may not look at position 1"]),
    ("step07_causal", "causal_self_attention", (_attention_without_mask,), "7.2",
     ["weight α[0, 0, 1] of a future position", "exactly 0"]),
    ("step09_positions", "sinusoidal_encoding", (_wrong_encoding,), "9.2",
     ["for T=1, D=2, base=10000", "PE[0, 0] is 1.0, expected 0.0"]),
    ("step08_scaling_heads", "split_merge", (_wrong_split, lambda x: x), "8.2",
     ["split_heads [b, h, l, j]", "[0, 0, 1, 0]"]),
    ("step06_soft_hard", "gradient_norms", (lambda loss, params: {n: 1.0 for n in params},),
     "6.2", ["the norm for 'a' is 1.0"]),
]


@pytest.mark.parametrize("module, check, answers, number, phrases", WRONG,
                         ids=[w[3] for w in WRONG])
def test_a_wrong_answer_fails_naming_the_exercise_and_the_element(module, check, answers,
                                                                   number, phrases):
    from learn.checks._core import CheckFailed

    checks = importlib.import_module(f"learn.checks.{module}")
    with pytest.raises(CheckFailed) as failure:
        getattr(checks, check)(*answers)
    message = str(failure.value)
    assert failure.value.exercise == number and not failure.value.not_written
    assert message.startswith(f"exercise {number} (")
    for phrase in phrases:
        assert phrase in message, message


def test_readme_step_times_are_those_recorded():
    data = json.loads(run.TIMINGS.read_text())
    text = run.README.read_text(encoding="utf-8")
    start = text.index(run.TIMES_BEGIN) + len(run.TIMES_BEGIN)
    assert text[start:text.index(run.TIMES_END)].strip() == run.times_line(data)
