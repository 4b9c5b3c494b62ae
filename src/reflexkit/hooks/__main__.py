"""``python -m reflexkit.hooks EVENT [--config PATH]``: the entry point Claude Code runs.

It does what ``reflexkit hook EVENT`` does without loading the whole command line, because
Claude Code starts it on every Bash call: it reads the payload on stdin, prints what Claude
Code should read, and exits 0 whatever happens (2 for a wrong command line).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from reflexkit import _lazy
from reflexkit.hooks._handlers import EVENTS, answer_stdin


def main(argv: list[str]) -> int:
    """Run one hook; return the exit code (always 0; argparse exits 2 for a wrong one)."""
    parser = argparse.ArgumentParser(prog="python -m reflexkit.hooks")
    parser.add_argument("event", choices=EVENTS)
    parser.add_argument("--config", type=Path, help="the project.json to use")
    args = parser.parse_args(argv)
    _lazy.own_process()
    logging.basicConfig(level=logging.WARNING, format="reflexkit: %(levelname)s: %(message)s")
    answer_stdin(args.event, config=args.config, echo=print)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
