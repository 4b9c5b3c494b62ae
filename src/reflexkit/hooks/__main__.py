"""``python -m reflexkit.hooks EVENT [--config PATH]``: the entry point Claude Code runs.

It does what ``reflexkit hook EVENT`` does without loading the whole command line (click,
rich, the containers), because Claude Code starts it on every Bash call: it reads the payload
on stdin, prints what Claude Code should read, and exits 0 whatever happens.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from reflexkit.hooks.handlers import EVENTS, MAX_PAYLOAD_BYTES, run_hook

log = logging.getLogger("reflexkit.hooks")

_USAGE = f"usage: python -m reflexkit.hooks {{{'|'.join(EVENTS)}}} [--config PATH]"


def main(argv: list[str]) -> int:
    """Run one hook; return the exit code (always 0, but 2 for a wrong command line)."""
    logging.basicConfig(level=logging.WARNING, format="reflexkit: %(levelname)s: %(message)s")
    args = list(argv)
    config: Path | None = None
    if "--config" in args:
        at = args.index("--config")
        if at + 1 >= len(args):
            sys.stderr.write(_USAGE + "\n")
            return 2
        config = Path(args[at + 1])
        del args[at : at + 2]
    if len(args) != 1 or args[0] not in EVENTS:
        sys.stderr.write(_USAGE + "\n")
        return 2
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        result = run_hook(args[0], raw, config=config)
        if result.stdout:
            sys.stdout.write(result.stdout + "\n")
    except Exception as err:  # noqa: BLE001 -- a hook exits 0 whatever happens
        log.warning("hook %s failed: %s: %s", args[0], type(err).__name__, err)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
