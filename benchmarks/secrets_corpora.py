"""Measure redaction on the secrets corpora: what survives, per context, and what it damaged.

Two corpora under ``tests/data/secrets`` (see its README):

* ``secrets.json`` / ``lookalikes.json``: planted by hand, one shape each.
* ``real_tools.json`` / ``real_tools_lookalikes.json``: the output of real tools run here with
  fake credentials (pytest ``--showlocals``, rich tracebacks, curl ``-v``, git, npm, pip,
  kubectl, docker, node, Go, Rust, Java, ``set -x``, make, ``printenv``), the best estimate of
  secrets in output nobody planted.

The failure corpora (``tests/data/tool_outputs``, ``tests/data/holdout_like`` and, where
present, the dev corpus under ``/work/shared/corpus``) hold no secret: each ``errorOutput`` that
redaction changes is named with the rules that fired and the key facts it cost.

For each item the secrets still present after :class:`~reflexkit.redaction.Redactor`
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

from reflexkit.redaction import Redactor

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
FOLDER = DATA / "secrets"
FAILURES = {
    "tests/data/tool_outputs": DATA / "tool_outputs",
    "tests/data/holdout_like": DATA / "holdout_like",
    "dev corpus": Path("/work/shared/corpus/failures/dev"),
}
"""Failure corpora with no secret: their ``errorOutput`` must come through unchanged."""


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


def measure_failures(label: str, folder: Path) -> int:
    """Print how many failure outputs of *folder* redaction changed, and by which rules."""
    paths = sorted(folder.glob("*.json"))
    if not paths:
        print(f"{label}: not found, skipped")
        return 0
    changed = 0
    for path in paths:
        item = json.loads(path.read_text("utf-8"))
        output = item["failureContext"].get("errorOutput") or ""
        result = Redactor(environ={}).redact(output)
        if result.counts:
            changed += 1
            lost = [
                fact
                for fact in item.get("expected", {}).get("keyFacts", [])
                if fact in output and fact not in result.text
            ]
            print(f"  changed {path.name}: {result.counts}, key facts lost: {len(lost)}")
    print(f"{label}: failure outputs changed {changed:5d} of {len(paths)}")
    return changed


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
    for label, folder in FAILURES.items():
        bad += measure_failures(label, folder)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
