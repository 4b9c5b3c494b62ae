"""Reflections on failures of real processes: signals, reflexkit's own time limit, teardown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.orchestrator._process import Command, run_process
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import failure_of  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

GEN = HeuristicGenerator()


def _text(failure: FailureContext) -> str:
    reflection = GEN.generate(failure)
    return "\n".join([reflection.analysis, reflection.suggestion, *reflection.action_items])


def test_sigkill_says_killed_and_changes_approach(tmp_path: Path) -> None:
    """A process killed by SIGKILL (exit 137 from bash) is called killed, not a bug in a line."""
    script = tmp_path / "load.py"
    script.write_text("import os, signal\nprint('loading', flush=True)\nos.kill(os.getpid(), 9)\n")
    command = f"{sys.executable} {script}; exit $?"  # not exec'd: bash reports 128 + 9
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == 137
    failure = failure_of(command, done.stdout + done.stderr, done.returncode)
    reflection = GEN.generate(failure)
    assert "killed by SIGKILL" in reflection.analysis
    assert reflection.category is ReflectionCategory.APPROACH_FLAW


def test_our_own_time_limit_names_the_hung_frame(tmp_path: Path) -> None:
    """Killed by reflexkit's limit: a timeout, approach_flaw, and the frame it hung in."""
    script = tmp_path / "poll.py"
    script.write_text(
        textwrap.dedent(
            """
            import faulthandler, time
            faulthandler.dump_traceback_later(0.5)

            def wait_for_broker():
                while True:
                    time.sleep(0.05)

            wait_for_broker()
            """
        )
    )
    result = run_process(Command([sys.executable, str(script)], cwd=tmp_path), timeout_s=2)
    assert result.timed_out
    failure = failure_of(
        f"python {script.name}",
        result.output,
        result.exit_code,
        failure_type=FailureType.TIMEOUT,
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TIMEOUT
    assert reflection.category is ReflectionCategory.APPROACH_FLAW
    assert "in wait_for_broker" in _text(failure)
    assert "exit code None" not in reflection.analysis


@pytest.mark.slow
def test_teardown_error_after_a_passing_test_is_not_tests_never_ran(tmp_path: Path) -> None:
    """Pytest's ERROR at teardown: the test ran and passed; the cleanup is what failed."""
    (tmp_path / "test_ledger.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture
            def ledger():
                rows = []
                yield rows
                assert rows, "ledger left empty"

            def test_ledger_opens(ledger):
                assert ledger == []
            """
        )
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_ledger.py"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    text = _text(failure_of("python -m pytest -q test_ledger.py", done.stdout + done.stderr))
    assert "never ran" not in text
    assert "teardown" in text
    assert "ledger left empty" in text
