"""Measure strip_control on 64 KiB of tool output, beside the pass it had before #14's follow-up.

Since the hidden-character pass was added, ``strip_control`` looks at every non-ASCII text
for bidi controls, zero-width and tag characters. This prints, per kind of text, the time of
one call on 64 KiB (the runner's capture size) and its ratio to a baseline measured in the
same run: the control-sequence pass alone (``_CONTROL_RE.sub`` after the line-break fixes),
which is what ``strip_control`` did before.

Usage::

    python benchmarks/text_safety.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from reflexkit._text import _CONTROL_RE, _LINE_BREAKS, strip_control

SIZE = 64 * 1024


def _baseline(text: str) -> str:
    """What strip_control did before: line breaks, then the control-sequence pass."""
    if text.isprintable():
        return text
    return _CONTROL_RE.sub("", text.replace("\r\n", "\n").translate(_LINE_BREAKS))


def _texts() -> dict[str, str]:
    """Kinds of 64 KiB output: plain ASCII, accented/CJK/RTL text, colours, a hostile mix."""
    lines = {
        "ascii": "FAILED tests/test_x.py::test_y - assert 1 == 2\n",
        "non-ascii": "café — “résumé” 漢字 שלום: test_login failed ✓\n",
        "coloured": "\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y - AssertionError\n",
        "hostile": "ok\u202e \u2066// admin\u2069 \u200b\U000e0069\U000e0067 \x1b]52;c;eA==\x07\n",
    }
    return {name: (line * (SIZE // len(line) + 1))[:SIZE] for name, line in lines.items()}


def _time(fn: Callable[[str], str], text: str, rounds: int) -> float:
    """Median milliseconds of one call."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn(text)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    """Print one line per kind of text: baseline ms, strip_control ms, ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    print(f"strip_control on {SIZE // 1024} KiB, median of {args.rounds} calls")
    print(f"{'text':<10} {'baseline ms':>12} {'strip_control ms':>17} {'ratio':>6}")
    for name, text in _texts().items():
        base = _time(_baseline, text, args.rounds)
        new = _time(strip_control, text, args.rounds)
        print(f"{name:<10} {base:>12.3f} {new:>17.3f} {new / base if base else 0:>6.2f}")


if __name__ == "__main__":
    main()
