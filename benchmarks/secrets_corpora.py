"""Measure redaction on the secrets corpora: what survives, per context, and what it damaged.

Two corpora under ``tests/data/secrets`` (see its README):

* ``secrets.json`` / ``lookalikes.json``: planted by hand, one shape each.
* ``real_tools.json`` / ``real_tools_lookalikes.json``: the output of real tools run here with
  fake credentials (pytest ``--showlocals``, rich tracebacks, curl ``-v``, git, npm, pip,
  kubectl, docker, node, Go, Rust, Java, ``set -x``, make, ``printenv``), the best estimate of
  secrets in output nobody planted.

For each item the secrets still present after :class:`~reflexkit.reflection.redaction.Redactor`
ran are counted (a secret survives when its planted value, or any listed visible part of it,
is still in the text); for each look-alike, whether the text changed at all.

Usage::

    python benchmarks/secrets_corpora.py [--verbose]

Exits 1 when a secret survived or a look-alike changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reflexkit.reflection.redaction import Redactor

FOLDER = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets"


def measure(name: str, lookalikes_name: str, *, verbose: bool) -> tuple[int, int]:
    """Print one corpus's figures per item; return (survived, look-alikes changed)."""
    items: list[dict[str, Any]] = json.loads((FOLDER / name).read_text("utf-8"))
    lookalikes: list[Any] = json.loads((FOLDER / lookalikes_name).read_text("utf-8"))
    survived = total = 0
    print(f"{name}: {len(items)} texts")
    for item in items:
        text = Redactor(environ=item.get("env", {})).redact(item["text"]).text
        left = [secret for secret in item["secrets"] if secret in text]
        total += len(item["secrets"])
        survived += len(left)
        if left or verbose:
            context = item.get("context", item["id"])
            print(f"  {len(left):3d} of {len(item['secrets']):3d} survive  {item['id']}: {context}")
            for secret in left:
                print(f"        {secret[:6]}... ({len(secret)} chars)")
    changed = 0
    for entry in lookalikes:
        text = entry["text"] if isinstance(entry, dict) else entry
        if Redactor(environ={}).redact(text).text != text:
            changed += 1
            label = entry["id"] if isinstance(entry, dict) else repr(text[:60])
            print(f"  look-alike changed: {label}")
    print(f"  secrets surviving   {survived:5d} of {total}")
    print(f"  look-alikes changed {changed:5d} of {len(lookalikes)}")
    return survived, changed


def main(argv: list[str] | None = None) -> int:
    """Measure both corpora; return 1 when a secret survived or a look-alike changed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="list every item")
    args = parser.parse_args(argv)
    bad = 0
    for name, lookalikes in (
        ("secrets.json", "lookalikes.json"),
        ("real_tools.json", "real_tools_lookalikes.json"),
    ):
        survived, changed = measure(name, lookalikes, verbose=args.verbose)
        bad += survived + changed
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
