"""Measure the Go, Java, JS, C/C++ and generic readers on real and hostile 20 KB outputs.

Then every reader at once, through ``analyse``, on each captured output with blanks put in
its middle: 3,000 whitespace-only lines, and three lines of 3,000 spaces. A pattern that
opens a line with optional whitespace also matches the newlines of the blank lines after it,
so such runs once made a reading take seconds; each padded output is timed against the same
output unpadded (target: < 10 ms).

For each reader, three inputs: its largest captured output (tests/data/tool_outputs), that
output repeated to 20 KB, and a hostile 20 KB built from the reader's own prefixes with the
ends that make a regex backtrack missing (no newline, no closing quote, no ``(``). Each is timed
against ``clean_output`` (colour stripping and line ends, a linear pass every failure pays) on
the same text in the same run, in interleaved rounds, and judged by the median per-call time.
A reader misses its target when one call on 20 KB takes more than 1 ms.

Usage::

    python benchmarks/readers_speed.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from reflexkit.models import FailureContext
from reflexkit.readers import analyse, clean_output
from reflexkit.readers._cxx import parse_cmake
from reflexkit.readers._findings import Findings
from reflexkit.readers._generic import parse_generic
from reflexkit.readers._go import parse_go_diagnostics, parse_go_panic, parse_go_test
from reflexkit.readers._java import parse_java_trace, parse_javac
from reflexkit.readers._javascript import parse_node_test
from reflexkit.readers._js_runners import parse_mocha, parse_vitest
from reflexkit.readers._native import parse_gcc

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "tool_outputs"
SIZE = 20_000
TARGET_SECONDS = 0.001

Read = Callable[[str], Findings | None]

READERS: dict[str, tuple[Read, str, str]] = {
    # name: (read, glob of its captured outputs, a hostile line repeated to 20 KB)
    "go test": (
        lambda t: parse_go_test(t, "go test ./..."),
        "go-test-*",
        "    a.go:1: " + "x" * 50,
    ),
    "go build/vet": (
        lambda t: parse_go_diagnostics(t, "go build"),
        "go-build-*",
        "a/b.go:1:2: " + "(" * 40,
    ),
    "go panic": (parse_go_panic, "go-*panic*", "panic: x\ngoroutine 1 [running]:\n" + "a.b(" * 20),
    "javac": (parse_javac, "java-javac-*", "A.java:1: error: " + " " * 40 + "x"),
    "java trace": (parse_java_trace, "java-run-*", "\tat a.b.C.d(" + "E" * 40),
    "vitest": (parse_vitest, "vitest-*", " FAIL  a.test.js > " + "> " * 20),
    "mocha": (parse_mocha, "mocha-*", "  1 failing\n  1) " + "a" * 40),
    "node:test": (parse_node_test, "nodetest-*-slug", "# fail 1\nnot ok 1 - " + "x " * 20),
    "gcc/clang/ld": (parse_gcc, "cxx-*", "src/a.cpp:1:2: note: " + "requested here " * 3),
    "cmake": (parse_cmake, "cmake-*", "CMake Error at " + "a:1 " * 15),
    # the generic reader: failure blocks, verdicts, frames, on output no reader claims
    "generic": (
        lambda t: parse_generic(t, 1, command="runner"),
        "generic-*",
        "  1) a " + "b " * 30 + "\nnot ok 1 " + "x " * 30 + "\n\tat a.b:1 " + "(" * 30,
    ),
}


def largest(read: Read, pattern: str) -> str:
    """Return the longest captured output matching *pattern* that *read* recognises, cleaned."""
    outputs = [
        clean_output(json.loads(p.read_text(encoding="utf-8"))["failureContext"]["errorOutput"])
        for p in sorted(DATA.glob(f"{pattern}.json"))
    ]
    return max((o for o in outputs if read(o) is not None), key=len)


def grow(text: str) -> str:
    """Return *text* repeated to at least 20 KB."""
    return (text * (SIZE // max(len(text), 1) + 1))[: SIZE + len(text)]


def per_call(func: Callable[[], object], calls: int) -> float:
    """Return the seconds one call of *func* takes, over *calls* calls."""
    start = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - start) / calls


def measure(read: Read, text: str, rounds: int) -> tuple[float, float]:
    """Return the median per-call seconds of *read* and of the baseline on *text*."""
    calls = max(3, 200_000 // max(len(text), 1))
    mine: list[float] = []
    base: list[float] = []
    for _ in range(rounds):
        mine.append(per_call(lambda: read(text), calls))
        base.append(per_call(lambda: clean_output(text), calls))
    return statistics.median(mine), statistics.median(base)


PADDINGS = {"blank lines": "  \n" * 3000, "long blanks": ("a" + " " * 3000 + "b\n") * 3}
BLANKS_TARGET_SECONDS = 0.010


def measure_blanks(rounds: int) -> list[str]:
    """Print ``analyse`` on every captured output padded with blanks; return the misses."""
    outputs = [
        json.loads(p.read_text(encoding="utf-8"))["failureContext"]["errorOutput"]
        for p in sorted(DATA.glob("*.json"))
    ]
    missed: list[str] = []
    for label, pad in PADDINGS.items():
        times: list[tuple[float, float, int]] = []
        for index, output in enumerate(outputs):
            middle = len(output) // 2
            padded = output[:middle] + pad + output[middle:]
            plain, blank = (
                FailureContext(
                    task_id="t", subtask_id="s", attempt_number=1, command="x", error_output=o
                )
                for o in (output, padded)
            )
            analyse(blank)  # compile the patterns this output uses
            mine = min(per_call(lambda f=blank: analyse(f), 1) for _ in range(rounds))
            base = min(per_call(lambda f=plain: analyse(f), 1) for _ in range(rounds))
            times.append((mine, base, index))
        worst = max(times)
        median = statistics.median(t[0] for t in times)
        print(
            f"analyse, {label:<12} {len(outputs)} outputs: median {median * 1e3:.2f} ms, max "
            f"{worst[0] * 1e3:.2f} ms (unpadded {worst[1] * 1e3:.2f} ms), target < 10 ms"
        )
        if worst[0] > BLANKS_TARGET_SECONDS:
            missed.append(f"analyse with {label}")
    return missed


def main() -> int:
    """Print one line per reader and input; return 1 when a reader misses its target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'reader':<14}{'input':<10}{'chars':>8}{'reader µs':>12}{'baseline µs':>13}{'ratio':>8}"
    )
    missed = []
    for name, (read, pattern, hostile) in READERS.items():
        real = largest(read, pattern)
        for label, text in (("real", real), ("real*20KB", grow(real)), ("hostile", grow(hostile))):
            mine, base = measure(read, text, args.rounds)
            ratio = mine / base if base else float("inf")
            print(
                f"{name:<14}{label:<10}{len(text):>8}{mine * 1e6:>12.0f}{base * 1e6:>13.0f}"
                f"{ratio:>8.1f}"
            )
            if len(text) >= SIZE and mine > TARGET_SECONDS:
                missed.append(f"{name} on {label}")
    missed.extend(measure_blanks(args.rounds))
    if missed:
        print("over target: " + ", ".join(missed))
        return 1
    print("every reader under 1 ms on 20 KB; analyse under 10 ms on outputs padded with blanks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
