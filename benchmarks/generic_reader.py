"""Measure the generic reader's cost as its input grows, against a plain regex scan.

The generic reader reads output no format's reader claims, so any output can reach it: a
build log, a test run of an unknown runner, a program's own lines, one line of 20,000
characters. For each kind of input at 5, 10, 20 and 40 KB this prints the reader's time, a
baseline's time on the same text in the same run (one ``re`` scan for error words, what
reading the text once costs), their ratio, and the reader's microseconds per KB: flat when
the cost is linear in the input, growing when it is not.

Times are CPU time (``time.process_time``), the best of ``--rounds`` calls: the machine is
shared, and wall time counts the waits for a core.

Usage::

    python benchmarks/generic_reader.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from reflexkit.readers import clean_output
from reflexkit.readers._generic import parse_generic

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SIZES = (5_000, 10_000, 20_000, 40_000)
BASELINE = re.compile(r"(?i)error|fail")


def _real(pattern: str) -> str:
    """The longest output of the captured items matching *pattern*, cleaned."""
    outputs = [
        clean_output(json.loads(p.read_text(encoding="utf-8"))["failureContext"]["errorOutput"])
        for p in sorted(DATA.glob(pattern))
    ]
    return max(outputs, key=len)


def _log(size: int) -> str:
    """A build log of many shapes: frames, diagnostics, pairs, info lines, prose."""
    shapes = (
        "  at com.example.service.Handler{n}.process(Handler{n}.java:{n})",
        "src/module_{n}/file_{n}.py:{n}:7: E{n} some message about thing {n}",
        "INFO [{n}] request handled in 12 ms path=/api/v1/items/{n}",
        "    expected: {n} got: {n}1",
        "WARNING: deprecated call in lib/x{n}.rb line {n}",
        "error: failed to frobnicate widget {n} (code ERR-{n})",
        "Could not find a package configuration file provided by ZLIB{n}",
    )
    lines = [shape.format(n=n) for n in range(size // 20) for shape in shapes]
    return "\n".join(lines)


KINDS: dict[str, Callable[[], str]] = {
    "cmake (real)": lambda: _real("tool_outputs/generic-*cmake*.json"),
    "rspec (real)": lambda: _real("unseen_tools/u1-rspec-*.json"),
    "build log": lambda: _log(40_000),
    "one long line": lambda: "error: " + "word " * 10_000,
    "long lines": lambda: ("x" * 3_000 + " at a.js:1:2\n") * 20,
    "blank runs": lambda: ("error here\n" + " " * 3_000 + "\n") * 20,
}


def _best(func: Callable[[], object], rounds: int) -> float:
    """The least CPU seconds one call of *func* took over *rounds* calls."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


def _grow(text: str, size: int) -> str:
    return (text * (size // max(len(text), 1) + 1))[:size]


def main() -> int:
    """Print a row per kind and size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{'input':<20}{'KB':>4}{'reader ms':>11}{'baseline ms':>13}{'ratio':>8}{'µs/KB':>8}")
    for name, make in KINDS.items():
        seed = make()
        for size in SIZES:
            text = _grow(seed, size)
            parse_generic(text, 1, command="runner")  # compile what it uses
            mine = _best(lambda t=text: parse_generic(t, 1, command="runner"), args.rounds)
            base = _best(lambda t=text: BASELINE.findall(t), args.rounds)
            ratio = mine / base if base else float("inf")
            print(
                f"{name:<20}{size // 1000:>4}{mine * 1e3:>11.2f}{base * 1e3:>13.3f}"
                f"{ratio:>8.0f}{mine * 1e6 / (size / 1000):>8.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
