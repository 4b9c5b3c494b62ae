"""Redaction on adversarial input: 32 MiB through ``reflexkit reflect``, and each rule's growth.

Two tables, each against a baseline measured in the same run:

1. ``reflexkit reflect --backend heuristic --no-save`` (a real process, as a hook or a user
   runs it) on a failure whose output is 32 MiB of one adversarial kind (:data:`KINDS`),
   for each rule family: one line of ``password=`` repeated, long runs of key-like text
   (base64 bodies, wrapped and not), repeated assignment keys, nested and unbalanced quotes,
   a line per secret and many short lines, URL-encoded and JSON-escaped separators, and
   every rule's example on one long line without newlines. The baseline is one RE2 search
   of the same bytes and a ``bytes.count``: what reading the input once costs. The target
   is <= 2 s per kind.
   Beside it: the CPU time (user and system) the command used, which a busy machine
   stretches less than the wall time, and the same command on a one-line failure (its
   start-up), measured in the same run. The commands run with their bytecode cached, as
   after ``pip install`` (see ``benchmarks/cli.py``): one untimed run fills the cache.
2. ``Redactor.redact`` alone on 64 KiB and 256 KiB of each kind, in CPU time (best of 3,
   after one untimed pass that compiles what compiles on first use): the ratio of the two
   times is about 4 when the cost is linear (16 when quadratic).
3. With ``--per-rule``: every rule's example, cut in half, without spaces and doubled,
   repeated on one line to 16 KiB and 64 KiB (CPU time): each rule's worst shape and its
   growth, marked over 6x.

Usage::

    python benchmarks/redaction.py [--mib N] [--kinds password,keys,...]
                                   [--per-rule [--rules id,...]] [--skip-reflect] [--skip-growth]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import re2

from reflexkit.redaction import RULES, Redactor

_B64 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
_EXAMPLES = " ".join(rule.examples[0] for rule in RULES).replace("\n", " ") + " "

KINDS: dict[str, Callable[[int], str]] = {
    "password": lambda n: "password=" * (n // 9),
    "password-spaced": lambda n: "password= " * (n // 10),
    "keys": lambda n: "api_key=" + "Ab1Cd2Ef3Gh4" * (n // 12),
    "nested-quotes": lambda n: 'password="' + "'\\\"" * (n // 3),
    "sk-run": lambda n: "sk-" * (n // 3),
    "line-per-secret": lambda n: "DB_PASSWORD=Hq3Zt8Lm2Xp7Kd\n" * (n // 27),
    "cut-dots": lambda n: "password=ab..." * (n // 14),
    "token-colon": lambda n: "token: " * (n // 7),
    "jwt-heads": lambda n: "eyJhbGci." * (n // 9),
    "mix": lambda n: (
        "password=password=x 'a\"b' sk-sk-sk- token: eyJhbGci. mysql -p'Pw1#' ..\n" * (n // 70)
    ),
    # long key-like runs: a key's base64 body, wrapped and on one line
    "b64-lines": lambda n: (_B64 + "\n") * (n // 65),
    "b64-one-line": lambda n: _B64 * (n // 64),
    # repeated assignment keys, with values and without
    "assign-run": lambda n: "secret_key=Ab1Cd2Ef3Gh4Ij5 " * (n // 27),
    "assign-names": lambda n: "DB_PASSWORD=API_TOKEN=AUTH_SECRET=" * (n // 34),
    # assignments without a space between them: one token, a name every 37 characters
    "assign-nospace": lambda n: "DB_PASSWORD=correcthorsebatterystaple" * (n // 37),
    # quotes opened and never closed
    "unbalanced-quotes": lambda n: "token='a \"b 'c \"" * (n // 17),
    "stdin-here": lambda n: "--password-stdin <<< Hq3Zt8Lm2 " * (n // 32),
    # many short lines, each a candidate
    "short-lines": lambda n: "pw=x\ntoken: a\n" * (n // 14),
    # separators in disguise
    "url-encoded": lambda n: "password%3DHq3Zt8Lm2%26" * (n // 23),
    "json-escaped": lambda n: '\\"password\\":\\"Hq3Zt8Lm2\\",' * (n // 28),
    "unicode-escaped": lambda n: "password\\u003dHq3Zt8Lm2 " * (n // 24),
    # a long line without newlines holding every rule's example, over and over
    "rules-one-line": lambda n: _EXAMPLES * max(1, n // len(_EXAMPLES)),
}


def _baseline(data: bytes) -> float:
    """Read the input once: an RE2 search for a rare name and a ``bytes.count`` of a common one."""
    start = time.perf_counter()
    re2.compile(rb"(?i)passphrase=\S{40}").search(data)
    data.count(b"password")
    return time.perf_counter() - start


def _failure(make: Callable[[int], str], limit: int) -> str:
    """A failure whose JSON (escapes included) is just under *limit* bytes."""
    size = limit
    while True:
        failure = {
            "taskId": "bench",
            "subtaskId": "bench",
            "attemptNumber": 1,
            "failureType": "test_failure",
            "command": "pytest -q",
            "errorOutput": make(size),
        }
        document = json.dumps(failure)
        if len(document.encode()) <= limit:
            return document
        size = size * limit // len(document.encode()) - 4096


def _reflect(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run ``reflexkit reflect`` on the failure at *path*: its wall and CPU seconds."""
    command = [sys.executable, "-m", "reflexkit", "reflect", "--input", str(path)]
    command += ["--backend", "heuristic", "--no-save", "--json"]
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, check=False, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        print(f"  reflect failed ({done.returncode}): {done.stderr[-300:]!r}")
    return elapsed, _children_cpu() - used


def _children_cpu() -> float:
    """Seconds of CPU (user and system) that the finished children have used so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _through_reflect(kinds: list[str], mib: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "ANTHROPIC_API_KEY": ""}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        tiny = Path(folder) / "tiny.json"
        tiny.write_text(_failure(lambda _: "FAILED tests/test_a.py::test_b\n", 4096), "utf-8")
        _reflect(tiny, env)  # untimed: fills the bytecode cache
        start_up, start_cpu = _reflect(tiny, env)
        print(f"reflexkit reflect on {mib} MiB of adversarial output (target <= 2 s)")
        print(f"on a one-line failure (start-up): {start_up:.2f} s, {start_cpu:.2f} s CPU")
        print(f"{'kind':18} {'reflect s':>10} {'cpu s':>6} {'baseline s':>11} {'ratio':>7}")
        for kind in kinds:
            document = _failure(KINDS[kind], (mib << 20) - 4096)
            path = Path(folder) / f"{kind}.json"
            path.write_text(document, "utf-8")
            output = json.loads(document)["errorOutput"]
            base = _baseline(output.encode())
            took, cpu = _reflect(path, env)
            mark = "" if took <= 2.0 else "  over 2 s"
            print(f"{kind:18} {took:10.2f} {cpu:6.2f} {base:11.3f} {took / base:7.0f}x{mark}")


def _growth(kinds: list[str]) -> None:
    redactor = Redactor(environ={})
    for kind in kinds:  # untimed: the automata and the rules' patterns compile on first use
        redactor.redact(KINDS[kind](4096))
        redactor.redact(KINDS[kind](128 << 10))
    print("\nRedactor.redact: 64 KiB against 256 KiB (linear: about 4x), CPU ms, best of 3")
    print(f"{'kind':18} {'64 KiB ms':>10} {'256 KiB ms':>11} {'growth':>7}")
    for kind in kinds:
        times = []
        for size in (64 << 10, 256 << 10):
            text = KINDS[kind](size)
            best = float("inf")
            for _ in range(3):  # CPU time: a busy machine stretches single wall timings twofold
                start = time.thread_time()
                redactor.redact(text)
                best = min(best, time.thread_time() - start)
            times.append(max(best, 1e-6))
        print(
            f"{kind:18} {times[0] * 1e3:10.1f} {times[1] * 1e3:11.1f} {times[1] / times[0]:6.1f}x"
        )


def _cpu_best(redactor: Redactor, text: str, tries: int = 2) -> float:
    """The best CPU seconds of *tries* redactions of *text* (a busy machine stretches wall time)."""
    best = float("inf")
    for _ in range(tries):
        start = time.thread_time()
        redactor.redact(text)
        best = min(best, time.thread_time() - start)
    return max(best, 1e-6)


def _per_rule(threshold: float, names: set[str] | None = None) -> float:
    """Each rule's example, halved, de-spaced and doubled, repeated: 16 KiB against 64 KiB.

    One line per rule (of *names*, or all), its worst shape (with and without a gap of 40
    characters between the repetitions, so the examples merge into one long line or stay
    apart); return the worst growth of all.
    """
    redactor = Redactor(environ={})
    print("\nEach rule's example repeated on one line: 16 KiB against 64 KiB, CPU ms")
    print(f"(linear: about 4x; over {threshold}x is marked)")
    print(f"{'rule':28} {'worst shape':16} {'16 KiB ms':>10} {'64 KiB ms':>10} {'growth':>7}")
    worst = 0.0
    for rule in RULES:
        if names is not None and rule.id not in names:
            continue
        example = rule.examples[0]
        units = {
            "half": example[: max(4, len(example) // 2)],
            "nospace": example.replace(" ", "_"),
            "doubled": example + example[: len(example) // 2],
        }
        rows = []
        for shape, unit in units.items():
            for gap in ("", " " + "x" * 40):
                piece = unit + gap
                redactor.redact(piece * 8)  # untimed: the rule's pattern compiles
                small, big = (
                    _cpu_best(redactor, piece * max(1, size // len(piece)))
                    for size in (16 << 10, 64 << 10)
                )
                rows.append(
                    (
                        big / small if big > 0.005 else 0.0,
                        shape + ("+gap" if gap else ""),
                        small,
                        big,
                    )
                )
        growth, shape, small, big = max(rows)
        worst = max(worst, growth)
        mark = "  <-" if growth > threshold else ""
        print(f"{rule.id:28} {shape:16} {small * 1e3:10.1f} {big * 1e3:10.1f} {growth:6.1f}x{mark}")
    print(f"worst growth (of those over 5 ms at 64 KiB): {worst:.1f}x")
    return worst


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--skip-growth", action="store_true")
    parser.add_argument("--per-rule", action="store_true", help="also each rule's growth")
    parser.add_argument("--rules", help="with --per-rule: only these rule ids (comma-separated)")
    parser.add_argument("--skip-reflect", action="store_true", help="only the growth tables")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    if not args.skip_reflect:
        _through_reflect(kinds, args.mib)
    if not args.skip_growth:
        _growth(kinds)
    if args.per_rule:
        _per_rule(threshold=6.0, names=set(args.rules.split(",")) if args.rules else None)


if __name__ == "__main__":
    main()
