"""Shared fixtures for the reflexkit test suite."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from reflexkit._serde import structure
from reflexkit.models import FailureContext, Reflection
from reflexkit.readers import Findings, analyse
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.testing.fake_messages_api import FakeMessagesApi

# Property tests check behaviour, not speed: no per-example deadline (these machines are
# noisy), and under CI the examples are derived from the test, not drawn at random, so a run
# is repeatable and a rare example can't turn a submission red by chance.
settings.register_profile(
    "reflexkit",
    deadline=None,
    derandomize=os.environ.get("CI", "").lower() in {"1", "true", "yes"},
)
settings.load_profile("reflexkit")


def pytest_configure(config: pytest.Config) -> None:
    """Compile reflexkit once; with REFLEXKIT_TEST_DAYS_AHEAD=N, run every test N days ahead.

    The suite must be green on any date: this is how to check it before a pinned date passes.
    It moves this process's clocks only; subprocesses the tests start keep the real date.
    """
    if getattr(config.option, "dist", "no") == "load":  # `-n N`: a worker that ends steals work
        config.option.dist = "worksteal"  # here, not in addopts, so `-p no:xdist` still runs
    if not hasattr(config, "workerinput"):  # the controlling process, before any test
        _compile_reflexkit()
    _cache_rewritten_tests()
    days = os.environ.get("REFLEXKIT_TEST_DAYS_AHEAD")
    if not days:
        return
    import time_machine  # noqa: PLC0415 -- only for this check

    from reflexkit.models import utcnow  # noqa: PLC0415

    traveller = time_machine.travel(utcnow() + timedelta(days=int(days)), tick=True)
    traveller.start()
    config.add_cleanup(traveller.stop)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests marked ``slow`` first, so the two workers never end on one of them.

    xdist hands tests out in collection order; a test of half a minute collected last keeps
    one worker busy while the other idles. Started first, the slow ones spread over both
    workers and the many quick tests fill the gaps. Every worker sorts alike (a stable sort).
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _compile_reflexkit() -> None:
    """Give reflexkit's own modules their bytecode, as ``pip install`` gives any package's.

    Under ``PYTHONDONTWRITEBYTECODE`` an editable install has none, so each of the suite's
    hundreds of ``python -m reflexkit`` children compiled what it imports from source: a
    third of a short command's CPU time. It is written here once, before any test, beside
    the sources and hash-checked, so a changed source is never run from stale bytecode. The
    children still write none: the projects the tests make (a ``calc.py`` an agent rewrites
    within a second) are always compiled fresh, as a shared writable cache once failed to.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # the children write their own, as Python does by default
    import compileall  # noqa: PLC0415 -- only here
    import py_compile  # noqa: PLC0415
    import re  # noqa: PLC0415

    import reflexkit  # noqa: PLC0415

    with contextlib.suppress(OSError):  # a read-only install: compile from source, as before
        compileall.compile_dir(
            Path(reflexkit.__file__).parent,
            quiet=2,
            rx=re.compile(r"[/\\]_demo[/\\]"),  # the demo's project is copied, then run
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )


def _cache_rewritten_tests() -> None:
    """Let pytest keep the test modules it rewrites for assertions, as it does by default.

    Under ``PYTHONDONTWRITEBYTECODE`` pytest rewrote every test module (and every reflexkit
    module, a plugin's package) from source in each worker on each run: 10 s of a worker's
    20 s collection. This process writes bytecode again (pytest's own tagged files beside the
    tests); the children inherit the environment variable and still write none.
    """
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        sys.dont_write_bytecode = False


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "failures" / "dev"
"""The dev corpus of real tool failures, beside the checkout (absent on some machines)."""

DATA = Path(__file__).resolve().parent / "data"


MISSING_CORPUS = (
    f"the dev corpus is not at {CORPUS} (put the shared/ folder beside the checkout to run "
    "the tests that read it)"
)


def corpus_items() -> list[Any]:
    """Return the dev corpus items as test parameters.

    Where the corpus is missing this is one parameter that is skipped with the reason, so a
    plain clone says why instead of collapsing to "empty parameter set"; under CI the session
    stops instead (see :func:`pytest_sessionstart`).
    """
    items = sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []
    if not items:
        return [pytest.param({}, marks=pytest.mark.skip(reason=MISSING_CORPUS), id="no-corpus")]
    return [json.loads(p.read_text(encoding="utf-8")) for p in items]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI a missing corpus is an error: the figures it guards would silently vanish."""
    del session
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and not any(CORPUS.glob("*.json")):
        pytest.exit(f"CI: {MISSING_CORPUS}", returncode=1)


PYTEST_FAILURE = {
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed\n",
}
"""One failing pytest test, as the camelCase JSON `reflexkit reflect` reads."""


FRAGMENT_WRITER = """
import os, random, sys, time
path, stop, head, longest = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
rnd, n = random.Random(longest), 0
while not os.path.exists(stop):
    os.write(fd, head % n + b"t" * rnd.randrange(1, longest))
    n += 1
    time.sleep(rnd.random() / 5000)
print(n)
"""
"""A program that appends torn lines (``head % n`` and up to *longest* bytes, no newline)
without any lock, until the file *stop* exists; it prints how many it wrote.

``python -c FRAGMENT_WRITER PATH STOP HEAD LONGEST``: what the tests of every appender run
beside their writers.
"""


@pytest.fixture
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Return an empty project folder that is the current directory, with no config in reach."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    return tmp_path


@pytest.fixture
def live(
    project_dir: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> FakeMessagesApi:
    """A project whose Claude is the fake Messages API, with a generous generation budget.

    A test file that needs more (a planted secret in the environment) wraps it in a fixture
    of the same name that asks for this one.
    """
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"generationTimeoutMs": 30_000}})
    )
    return fake_messages_api


def load_item(path: Path) -> dict[str, Any]:
    """Return one captured failure item (the corpus's JSON shape)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_item(name: str) -> Findings:
    """Analyse the item *name* of tests/data/tool_outputs with the registered readers."""
    data = load_item(DATA / "tool_outputs" / f"{name}.json")
    return analyse(structure(data["failureContext"], FailureContext))


def quoted(findings: Findings) -> str:
    """Return everything the findings quote, one part a line."""
    return "\n".join(
        [
            findings.headline,
            *findings.facts,
            *findings.details,
            findings.summary,
            *findings.hints,
            *findings.steps,
            findings.advice,
        ]
    )


def read_as(output: str, command: str, exit_code: int = 1) -> tuple[str, str, str]:
    """Read *output* of *command* as a failure: the tool named, the failure type, the quotes."""
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command=command,
            exit_code=exit_code,
            error_output=output,
        )
    )
    return findings.tool, findings.failure_type.value, quoted(findings)


def assert_read_as_labelled(path: Path) -> Findings:
    """Assert an item gets its labelled failure type, an accepted category and every key fact."""
    data = load_item(path)
    findings = analyse(structure(data["failureContext"], FailureContext))
    expected = data["expected"]
    assert findings.failure_type.value == expected["failureType"]
    assert findings.category.value in expected["categoryHints"]
    assert [f for f in expected["keyFacts"] if f not in quoted(findings)] == []
    return findings


# --- running real tools the way an agent's harness does (the readers' format tests) ----------


def failure_of(
    command: str, output: str, exit_code: int | None = 1, **fields: Any
) -> FailureContext:
    """Return the FailureContext of *command* that printed *output* (and other *fields*)."""
    return FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command=command,
        exit_code=exit_code,
        error_output=output,
        **fields,
    )


def invoke_cli(
    root: Path,
    *args: str,
    stdin: bytes | str | None = b"",
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``reflexkit ARGS`` in this process, in *root*, as ``python -m reflexkit`` would.

    For what a test claims of a command's output, exit code, config or files: the same
    click group and error boundary, without a process start (a third of a second of CPU each).
    A test about processes, signals, descriptors, encodings or start-up runs the real one.
    ``$REFLEXKIT_CONFIG`` is unset unless *env* sets it (``None`` unsets a variable); an
    exception that escapes the command is shown on stderr as a traceback, as Python shows it.
    A warning raises here (``filterwarnings = error``) where the process would log it.
    """
    from click.testing import CliRunner  # noqa: PLC0415 -- only the CLI tests need it

    from reflexkit.cli import cli  # noqa: PLC0415

    with contextlib.chdir(root):
        done = CliRunner().invoke(
            cli, list(args), input=stdin, env={"REFLEXKIT_CONFIG": None, **(env or {})}
        )
    stderr = done.stderr_bytes
    if done.exc_info is not None and not isinstance(done.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*done.exc_info)).encode()
    return subprocess.CompletedProcess(
        ["reflexkit", *args], done.exit_code, done.stdout_bytes, stderr
    )


def no_plugins() -> dict[str, str]:
    """The environment of a real pytest run on a small project: without this venv's plugins.

    The projects use none of them (hypothesis, xdist, anyio, reflexkit's own), and loading
    them cost each child pytest a second of CPU of its 1.5 s.
    """
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def run_in_bash(
    command: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180
) -> FailureContext:
    """Run *command* in bash as an agent's harness does; return its failure.

    Not exec'd (``; exit $?``), so bash reports a signal as 128 + its number. A pytest it
    starts loads none of this venv's plugins (:func:`no_plugins`).
    """
    done = subprocess.run(
        ["bash", "-c", f"{command}; exit $?"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env=no_plugins() if env is None else env,
    )
    return failure_of(command, done.stdout + done.stderr, done.returncode)


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write a small project: each name's body, dedented, folders made."""
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")


def reflection_text(reflection: Reflection) -> str:
    """Everything a reflection says: where a key fact counts as quoted."""
    return "\n".join([reflection.analysis, reflection.suggestion, *reflection.action_items])


def captured_reflection(name: str) -> Reflection:
    """The heuristic's reflection on an output captured from a real run (tool_outputs)."""
    data = load_item(DATA / "tool_outputs" / f"{name}.json")
    return HeuristicGenerator().generate(structure(data["failureContext"], FailureContext))


class Disks:
    """Small tmpfs mounts of one test: mount one at a folder, fill it, make it read-only."""

    def __init__(self) -> None:
        self.mounted: list[Path] = []

    def mount(self, where: Path, *, size: str = "64k") -> Path:
        """Mount a tmpfs of *size* at *where* (created); skip the test without root."""
        where.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"can't mount a tmpfs here (needs root): {done.stderr.strip()}")
        self.mounted.append(where)
        return where

    @staticmethod
    def fill(where: Path, *, leave: int = 0) -> None:
        """Fill the file system of *where* up to *leave* free bytes."""
        st = os.statvfs(where)
        with (where / ".filler").open("ab") as stream:
            stream.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))

    @staticmethod
    def read_only(where: Path) -> None:
        """Remount the tmpfs at *where* read-only: writes fail with EROFS, even for root."""
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)


@pytest.fixture
def disks() -> Iterator[Disks]:
    """Mounts for the test, unmounted after it."""
    made = Disks()
    yield made
    for where in reversed(made.mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)
