"""Output formats the readers missed on unseen output of the corpus's tools (#12 follow-up).

Each test runs the real tool where this machine has it (skipped where it does not); eslint's
one-line formats are read from outputs captured from real runs in tests/data/holdout_like.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.reflection.heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()
HOLDOUT = DATA / "holdout_like"


@pytest.mark.skipif(shutil.which("timeout") is None, reason="no GNU timeout on this machine")
@pytest.mark.parametrize("options", ["-s KILL", "--signal=KILL", "-k 1 -s TERM"])
def test_timeout_with_a_signal_option_is_a_timeout(tmp_path: Path, options: str) -> None:
    """``timeout -s KILL 1 cmd`` exits 137, not 124: still the time limit, not a crash."""
    write_files(
        tmp_path, {"serve.py": "import time\nprint('listening', flush=True)\ntime.sleep(30)\n"}
    )
    failure = run_in_bash(f"timeout {options} 1 {sys.executable} serve.py", tmp_path)
    assert failure.exit_code in {124, 137}
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TIMEOUT
    assert reflection.category is ReflectionCategory.APPROACH_FLAW
    assert "listening" in reflection_text(reflection)


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_recursive_make_quotes_the_innermost_and_outermost_target(tmp_path: Path) -> None:
    """A sub-make's compiler error: the error, the sub-make's target and the top target."""
    write_files(
        tmp_path,
        {
            "Makefile": "all: lib\nlib:\n\t$(MAKE) -C lib\n.PHONY: all lib\n",
            "lib/Makefile": "vec.o: vec.c\n\tgcc -c -o $@ $<\n",
            "lib/vec.c": "int dot(int a, int b) {\n    return a * b\n}\n",
        },
    )
    failure = run_in_bash("make", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "vec.c:2:17: error" in text
    assert "make[1]: *** [Makefile:2: vec.o] Error 1" in text
    assert "make: *** [Makefile:3: lib] Error 2" in text


def test_make_around_a_test_runner_names_the_target(tmp_path: Path) -> None:
    """`make test` running pytest: pytest's facts, and which make target failed."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    write_files(
        tmp_path,
        {
            "Makefile": f"test:\n\t{sys.executable} -m pytest -q -p no:cacheprovider test_x.py\n",
            "test_x.py": "def test_half():\n    assert 7 // 2 == 3.5\n",
        },
    )
    failure = run_in_bash("make test", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    text = reflection_text(reflection)
    assert "test_x.py::test_half" in text
    assert "make: *** [Makefile:2: test] Error 1" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_linker_failure_quotes_collect2_summary(tmp_path: Path) -> None:
    """The linker's closing line says the link, not the compile, failed."""
    write_files(
        tmp_path,
        {"main.c": 'int parse(const char *s);\nint main(void) { return parse("1"); }\n'},
    )
    failure = run_in_bash("gcc -o calc main.c", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "undefined reference to `parse'" in text
    assert "collect2: error: ld returned 1 exit status" in text


def test_comprehension_frame_names_its_function(tmp_path: Path) -> None:
    """An exception in a set comprehension: the frame of the function that holds it too."""
    write_files(
        tmp_path,
        {
            "report.py": """
            def summarize(rows):
                return {r["region"] for r in rows}

            summarize([{"amount": 3}])
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} report.py", tmp_path)
    findings = analyse(failure)
    assert any("line 2, in summarize" in d for d in findings.details), findings.details
    assert "line 2, in summarize" in reflection_text(GEN.generate(failure))


def test_recursion_quotes_the_call_that_repeats(tmp_path: Path) -> None:
    """RecursionError: the frame Python says repeated is the recursive call to look at."""
    write_files(
        tmp_path,
        {
            "resolve.py": """
            import json

            def resolve(name, seen=()):
                data = json.loads('{"include": "%s"}' % name)
                return resolve(data["include"], seen)

            resolve("main")
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} resolve.py", tmp_path)
    assert "Previous line repeated" in failure.error_output
    reflection = GEN.generate(failure)
    assert 'resolve.py", line 5, in resolve' in reflection_text(reflection)
    assert reflection.category is ReflectionCategory.APPROACH_FLAW


def test_ruff_github_annotations_read_as_ruff(tmp_path: Path) -> None:
    """``ruff --output-format=github`` wraps each finding in a workflow command."""
    write_files(tmp_path, {"stats.py": "import os\nfrom math import *\n\ndef f():\n    return x\n"})
    command = (
        f"{sys.executable} -m ruff check --isolated --no-cache --select F "
        "--output-format=github stats.py"
    )
    failure = run_in_bash(command, tmp_path)
    assert failure.error_output.startswith("::error ")
    findings = analyse(failure)
    assert findings.tool == "ruff"
    text = reflection_text(GEN.generate(failure))
    for fact in ("stats.py:1:8", "F401", "F403", "F405"):
        assert fact in text


def test_annotation_without_location_in_its_message_gets_one() -> None:
    """A workflow command whose message has no location: its file/line parameters give it."""
    output = "::error file=src/app.py,line=3,col=5,title=E999::SyntaxError: invalid syntax\n"
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="lint",
        exit_code=1,
        error_output=output,
    )
    assert "src/app.py:3:5" in reflection_text(GEN.generate(failure))


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        (
            "eslint-dashboard-unix-format",
            ["src/widgets.js:4:7", "no-unused-vars", "eqeqeq", "no-fallthrough", "4 problems"],
        ),
        (
            "eslint-shop-json-format-react",
            ["src/Checkout.jsx: line 4, col 7", "no-cond-assign", "'totl' is not defined"],
        ),
    ],
)
def test_eslint_one_line_formats(item: str, facts: list[str]) -> None:
    """The eslint ``unix`` and ``compact`` formats: every rule and location, paths shortened."""
    data = json.loads((HOLDOUT / f"{item}.json").read_text(encoding="utf-8"))
    failure = structure(data["failureContext"], FailureContext)
    findings = analyse(failure)
    assert findings.tool == "eslint"
    assert findings.failure_type is FailureType.LINT_ERROR
    text = reflection_text(GEN.generate(failure))
    for fact in facts:
        assert fact in text
    assert not findings.facts[0].startswith("/")  # the shared directory is left out


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_refusal_names_the_paths_it_lists(tmp_path: Path) -> None:
    """``would be overwritten by checkout:`` lists the paths; git's verdict is ``Aborting``."""
    steps = [
        "git init -q -b main",
        "git -c user.name=a -c user.email=a@example.org commit -q --allow-empty -m init",
        "echo one > notes.md && git add notes.md",
        "git -c user.name=a -c user.email=a@example.org commit -q -m notes",
        "git branch release && git checkout -q release && echo rel > notes.md",
        "git -c user.name=a -c user.email=a@example.org commit -q -am rel",
        "git checkout -q main && echo local > notes.md",
    ]
    for step in steps:
        subprocess.run(["bash", "-c", step], cwd=tmp_path, check=True, capture_output=True)
    failure = run_in_bash("git checkout release", tmp_path)
    assert "would be overwritten by checkout" in failure.error_output
    text = reflection_text(GEN.generate(failure))
    assert "notes.md" in text
    assert "Aborting" in text


def test_ruff_format_check_quotes_its_summary(tmp_path: Path) -> None:
    """``ruff format --check``: each file where it points, and the count line as printed."""
    write_files(
        tmp_path, {"a.py": "x = {'a':1}\n", "b.py": "def f( y ):\n  return y\n", "c.py": ""}
    )
    failure = run_in_bash(
        f"{sys.executable} -m ruff format --check --isolated --no-cache .", tmp_path
    )
    text = reflection_text(GEN.generate(failure))
    assert "2 files would be reformatted" in text
    assert "a.py" in text
    assert "b.py" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_missing_subpath_names_package_and_code(tmp_path: Path) -> None:
    """``require('pkg/sub')``: install ``pkg``, not ``pkg/sub``; the error's code is quoted."""
    write_files(tmp_path, {"export.js": 'require("csv-stringify/sync");\n'})
    failure = run_in_bash("node export.js", tmp_path)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert "MODULE_NOT_FOUND" in text
    assert "`npm install csv-stringify`" in text


def test_pip_build_failure_quotes_the_build_error(tmp_path: Path) -> None:
    """A package whose setup.py fails: the exception inside pip's output and pip's error names."""
    pytest.importorskip("setuptools")
    write_files(
        tmp_path,
        {
            "sensorlib/setup.py": """
            from setuptools import setup
            import numpy_is_not_installed_here
            setup(name="sensorlib", version="0.1")
            """,
        },
    )
    command = (
        f"{sys.executable} -m pip install --no-build-isolation --no-deps --no-index "
        "--disable-pip-version-check ./sensorlib"
    )
    failure = run_in_bash(command, tmp_path)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert "ModuleNotFoundError: No module named 'numpy_is_not_installed_here'" in text
    assert "error: subprocess-exited-with-error" in text
    assert "error: metadata-generation-failed" in text


def test_pytest_setup_error_is_quoted_as_its_summary_line(tmp_path: Path) -> None:
    """An error at setup: ``ERROR path::test`` as pytest's summary prints it."""
    write_files(
        tmp_path,
        {
            "test_cache.py": """
            import pytest

            @pytest.fixture
            def cache(tmp_path):
                return open(tmp_path / "missing.json")

            def test_miss(cache):
                assert cache
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -p no:cacheprovider test_cache.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ERROR test_cache.py::test_miss" in text
    assert "FileNotFoundError" in text


def _crate(root: Path, main: str, dependencies: str = "") -> None:
    write_files(
        root,
        {
            "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{dependencies}",
            "src/main.rs": main,
        },
    )


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_error_quotes_its_own_note(tmp_path: Path) -> None:
    """A macro called with the wrong arguments: rustc's note says which fragment it tried."""
    _crate(
        tmp_path,
        """
        macro_rules! pair {
            ($x:expr, $y:expr) => { ($x, $y) };
        }
        fn main() {
            let p = pair!(1, 2, 3);
            println!("{:?}", p);
        }
        """,
    )
    failure = run_in_bash("cargo check --offline -q", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "no rules expected" in text
    assert "note: while trying to match meta-variable `$y:expr`" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_unknown_crate_names_the_package_that_requires_it(tmp_path: Path) -> None:
    """``no matching package``: and which package of a workspace asked for it."""
    _crate(tmp_path, "fn main() {}\n", 'no-such-crate-reflexkit-zz = "1.0"\n')
    failure = run_in_bash("cargo build --offline", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    text = reflection_text(reflection)
    assert "no matching package named `no-such-crate-reflexkit-zz` found" in text
    assert "required by package `demo v0.1.0" in text


def test_chained_exception_quotes_its_cause(tmp_path: Path) -> None:
    """``raise ConfigError(...) from exc``: the cause's exception is the real problem."""
    write_files(
        tmp_path,
        {
            "app.py": """
            import json

            class ConfigError(Exception):
                pass

            def load(text):
                try:
                    return json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ConfigError("settings are not valid JSON") from exc

            load('{"port": 1,}')
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} app.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ConfigError: settings are not valid JSON" in text
    assert "json.decoder.JSONDecodeError: Expecting property name" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_syntax_error_in_a_required_file_points_at_that_file(tmp_path: Path) -> None:
    """A required file that does not parse: its line, not the ``require`` call, is the fault."""
    write_files(
        tmp_path,
        {
            "index.js": 'const { price } = require("./pricing");\nconsole.log(price);\n',
            "pricing.js": "const TABLE = {\n  pro: 12\n  team: 30,\n};\nexports.price = TABLE;\n",
        },
    )
    failure = run_in_bash("node index.js", tmp_path)
    reflection = GEN.generate(failure)
    assert "pricing.js:3" in reflection.suggestion + "\n".join(reflection.action_items)
    assert "index.js:1" not in "\n".join(reflection.action_items)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_should_panic_with_another_message_says_so(tmp_path: Path) -> None:
    """``should_panic(expected = ...)`` that saw another panic: cargo's note is quoted."""
    _crate(
        tmp_path,
        """
        fn main() {}

        #[test]
        #[should_panic(expected = "capacity exceeded")]
        fn push_past_capacity() {
            panic!("queue is full");
        }
        """,
    )
    failure = run_in_bash("cargo test --offline -q", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "push_past_capacity" in text
    assert "panic did not contain expected string" in text


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        ("git-pull-divergent", ["git config pull.rebase false", "divergent branches"]),
        ("eslint-warnings-max-zero", ["ESLint found too many warnings (maximum: 0)."]),
    ],
)
def test_captured_outputs_quote_the_tools_verdict(item: str, facts: list[str]) -> None:
    """The hint commands git lists and eslint's ``--max-warnings`` verdict, from real runs."""
    data = json.loads((HOLDOUT / f"{item}.json").read_text(encoding="utf-8"))
    text = reflection_text(GEN.generate(structure(data["failureContext"], FailureContext)))
    for fact in facts:
        assert fact in text
