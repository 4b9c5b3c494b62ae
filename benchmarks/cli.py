"""Measure the start-up of the ``reflexkit`` command against ``python -c 'import click'``.

Orchestrators in other languages call the command once per failure, so its cost is mostly
start-up. In a temporary project (heuristic backend, 200 reflections in memory) this prints
the median wall time of each command and its ratio to the baseline, ``python -c 'import
click'``, measured in the same run with the runs interleaved (one of each per round), so a
busy machine slows both sides alike; and the median CPU time (user and system) of each, which
a machine shared with other work stretches less than the wall time:

* ``reflexkit --version``;
* ``reflexkit recent SUBTASK`` (the retry-prompt section of the subtask's reflections);
* ``reflexkit reflect --backend heuristic --no-save`` with a failure on stdin;
* ``reflexkit reflect --no-save`` with the ``llm`` backend and no API key (it falls back to
  the heuristic without sending anything, so it must not import the anthropic SDK);
* ``python -m reflexkit.hooks post-tool-use`` with hooks on and a failed Bash command (it
  writes a reflection: each run has a tool-use id of its own, else the hook skips the
  re-delivered event), and with a successful one (the common case);
* ``reflexkit stats`` and ``reflexkit --help``, for information.

Start-up is a measured figure, not a chase (issue 25): each line says whether the command is
within 3x the baseline; only a command that fails makes the exit status 1.

Every command runs with its bytecode cached, as after ``pip install`` (which compiles it):
the children get a ``PYTHONPYCACHEPREFIX`` in the temporary folder (``PYTHONDONTWRITEBYTECODE``
removed), and one untimed round fills it first. Without that, a shell that sets
``PYTHONDONTWRITEBYTECODE`` (or a source tree whose ``__pycache__`` can't be written) makes
every run compile reflexkit's modules from source, which is not what users see.

Usage::

    python benchmarks/cli.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 3.0
BASELINE = "python -c 'import click' (baseline)"
FAILED_HOOK = "hook post-tool-use, a failed Bash command"
OK_HOOK = "hook post-tool-use, a successful Bash command"
HOOKS = Path(__file__).resolve().parent.parent / "tests" / "data" / "hooks"
FAILURE = {
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed in 0.1s\n",
}


def _project(root: Path) -> None:
    """A project with the heuristic backend and 200 reflections over 20 subtasks."""
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}, "hooks": {"enabled": True}})
    )
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from reflexkit.memory import JsonlMemory  # noqa: PLC0415 -- only to fill the store
    from reflexkit.testing.memory_contract import make_reflection  # noqa: PLC0415

    with JsonlMemory(root / ".reflexkit" / "memory" / "reflections.jsonl") as store:
        for i in range(200):
            store.append(make_reflection(subtask_id=f"sub-{i % 20}", task_id="checkout"))


def _payload(name: str, root: Path, tool_use: str | None = None) -> bytes:
    """A recorded hook payload pointed at *root*, with *tool_use* as its tool-use id."""
    data = json.loads((HOOKS / name).read_text())
    data["cwd"] = str(root)
    data["transcript_path"] = str(root / "transcript.jsonl")
    if tool_use is not None:
        data["tool_use_id"] = tool_use
    return json.dumps(data).encode()


def main() -> int:
    """Print the figures; 1 when a command fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11, help="runs per figure (default 11)")
    args = parser.parse_args()
    py = sys.executable
    failure = json.dumps(FAILURE).encode()
    cases: dict[str, tuple[list[str], bytes, bool]] = {
        BASELINE: ([py, "-c", "import click"], b"", False),
        "reflexkit --version": ([py, "-m", "reflexkit", "--version"], b"", True),
        "reflexkit recent sub-3": ([py, "-m", "reflexkit", "recent", "sub-3"], b"", True),
        "reflexkit reflect --backend heuristic --no-save": (
            [py, "-m", "reflexkit", "reflect", "--backend", "heuristic", "--no-save"],
            failure,
            True,
        ),
        "reflexkit reflect --backend llm --no-save (no key)": (
            [py, "-m", "reflexkit", "reflect", "--backend", "llm", "--no-save"],
            failure,
            False,
        ),
        FAILED_HOOK: (
            [py, "-m", "reflexkit.hooks", "post-tool-use"],
            b"",  # filled in below, once the project exists
            True,
        ),
        OK_HOOK: (
            [py, "-m", "reflexkit.hooks", "post-tool-use"],
            b"",
            True,
        ),
        "reflexkit stats": ([py, "-m", "reflexkit", "stats"], b"", False),
        "reflexkit --help": ([py, "-m", "reflexkit", "--help"], b"", False),
    }
    env = {
        k: v for k, v in os.environ.items() if k not in {"ANTHROPIC_API_KEY", "REFLEXKIT_CONFIG"}
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    with tempfile.TemporaryDirectory(prefix="reflexkit-cli-bench-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        _project(root)
        argv, _, targeted = cases[OK_HOOK]
        cases[OK_HOOK] = (argv, _payload("post_tool_use_bash_ok.json", root), targeted)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for round_ in range(args.rounds + 1):  # round 0 caches the bytecode, untimed
            for name, (argv, recorded, _) in cases.items():
                stdin = recorded
                if name == FAILED_HOOK:  # a new failure each time, not a re-delivered one
                    stdin = _payload("post_tool_use_failure_bash.json", root, f"toolu_{round_}")
                used = _children_cpu()
                started = time.perf_counter()
                done = subprocess.run(
                    argv, input=stdin, cwd=root, env=env, capture_output=True, check=False
                )
                if round_:
                    samples[name].append((time.perf_counter() - started) * 1000)
                    cpu[name].append((_children_cpu() - used) * 1000)
                if done.returncode != 0:
                    print(f"{name}: exit {done.returncode}: {done.stderr.decode()}")
                    return 1
    baseline = statistics.median(samples[BASELINE])
    cpu_baseline = statistics.median(cpu[BASELINE])
    print(f"{'command':<54} {'median ms':>10} {'ratio':>7} {'cpu ms':>7} {'ratio':>7}")
    for name, (_, _, targeted) in cases.items():
        median = statistics.median(samples[name])
        ratio = median / baseline
        used = statistics.median(cpu[name])
        mark = ""
        if targeted:
            mark = f"  within {TARGET:.0f}x" if ratio <= TARGET else f"  over {TARGET:.0f}x"
        print(
            f"{name:<54} {median:>10.1f} {ratio:>6.2f}x {used:>7.1f} "
            f"{used / cpu_baseline:>6.2f}x{mark}"
        )
    return 0


def _children_cpu() -> float:
    """Seconds of CPU (user and system) that the finished children have used so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
