"""Python tracebacks: chained exceptions, workers, recursion, frames."""

from __future__ import annotations

import sys
from pathlib import Path

from reflexkit.models import ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


def test_python_script_progress_before_its_traceback_is_quoted(tmp_path: Path) -> None:
    """The last lines a script printed say how far it got: they are quoted with the error."""
    write_files(
        tmp_path,
        {
            "migrate.py": """
            steps = ["users", "orders", "invoices"]
            for n, step in enumerate(steps):
                print(f"migrated {step}", flush=True)
                if step == "orders":
                    raise KeyError(step)
            """
        },
    )
    failure = run_in_bash(f"{sys.executable} migrate.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "KeyError: 'orders'" in text
    assert "migrated users / migrated orders" in text


def test_worker_traceback_points_at_the_workers_function(tmp_path: Path) -> None:
    """A process pool re-raises a worker's error: its own frame is quoted, not just ``map``."""
    write_files(
        tmp_path,
        {
            "sizes.py": """
            from concurrent.futures import ProcessPoolExecutor

            def ratio(pair):
                w, h = pair
                return h / w

            if __name__ == "__main__":
                with ProcessPoolExecutor(max_workers=1) as pool:
                    print(list(pool.map(ratio, [(4, 3), (0, 1)])))
            """
        },
    )
    failure = run_in_bash(f"{sys.executable} sizes.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ZeroDivisionError: division by zero" in text
    assert 'sizes.py", line 5, in ratio' in text
    assert '"""' not in text  # the quotes around the worker's traceback are not its message


def test_python_implicit_chaining_is_named_as_printed(tmp_path: Path) -> None:
    """An exception raised in an ``except`` block: the handler failed, not only the first call."""
    write_files(
        tmp_path,
        {
            "prices.py": """
            def parse(text):
                try:
                    return float(text)
                except ValueError:
                    return float(text.replace(",", ".").strip("EUR "))

            print(parse("12,50 EURO"))
            """,
        },
    )
    text = reflection_text(GEN.generate(run_in_bash(f"{sys.executable} prices.py", tmp_path)))
    assert "During handling of the above exception, another exception occurred:" in text
    assert "ValueError: could not convert string to float: '12,50 EURO'" in text
    assert "caused by" not in text  # not `raise ... from`: the handler itself failed


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
