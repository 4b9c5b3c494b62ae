"""``python -m reflexkit.hooks EVENT [--config PATH]``: the entry point Claude Code runs.

It does what ``reflexkit hook EVENT`` does without loading the whole command line, because
Claude Code starts it on every Bash call: it reads the payload on stdin, prints what Claude
Code should read, and exits 0 whatever happens (2 for a wrong command line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from reflexkit import _lazy, _log
from reflexkit.hooks._handlers import EVENTS, answer


class _Parser(argparse.ArgumentParser):
    """argparse, whose error (quoting what was typed) passes the outbound gate."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and *message* through the gate; exit 2."""
        from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- only on error

        said = f"{self.format_usage()}{self.prog}: error: {message}\n"
        sys.stderr.write(outbound(said, "terminal"))
        sys.exit(2)


def main(argv: list[str]) -> int:
    """Run one hook; return the exit code (always 0; argparse exits 2 for a wrong one)."""
    parser = _Parser(prog="python -m reflexkit.hooks")
    parser.add_argument("event", choices=EVENTS)
    parser.add_argument("--config", type=Path, help="the project.json to use")
    args = parser.parse_args(argv)
    _lazy.own_process()
    _log.configure(debug=False)  # every line on stderr passes the gate
    answer(args.event, lambda text: sys.stdout.write(text + "\n"), config=args.config)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
