"""Measure the process runner on a flood of output: time and peak memory, beside baselines.

A program prints N bytes (``head -c N /dev/zero | tr``). Three ways of consuming it, each in
a fresh Python process whose peak RSS comes from ``os.wait4`` on it:

* ``baseline``: the same pipeline into ``wc -c`` in a shell, no Python reading at all (what
  producing the output costs), in a Python process that only imports reflexkit (what the
  interpreter costs);
* ``runner``: :func:`reflexkit.orchestrator._process.run_process`, keeping 20,000 bytes of it;
* ``communicate`` (``--legacy``): ``subprocess.Popen.communicate``, what the runner replaced,
  which holds the whole output in memory (skip it for big N on a shared machine).

Usage::

    python benchmarks/process.py [--bytes N] [--legacy]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PRODUCE = "head -c {n} /dev/zero | tr '\\\\0' x"

HELPERS = {
    "baseline": """
        import subprocess
        import reflexkit.orchestrator._process  # the same imports as the runner's process
        out = subprocess.run(["sh", "-c", "{produce} | wc -c"], capture_output=True, check=True)
        print(out.stdout.decode().strip())
    """,
    "runner": """
        from pathlib import Path
        from reflexkit.orchestrator._process import Command, run_process
        result = run_process(
            Command(["sh", "-c", "{produce}"], cwd=Path.cwd()),
            timeout_s=600,
            max_output_bytes=20_000,
        )
        print(result.output_bytes)
    """,
    "communicate": """
        import subprocess
        import reflexkit.orchestrator._process
        proc = subprocess.Popen(["sh", "-c", "{produce}"], stdout=subprocess.PIPE)
        out, _ = proc.communicate()
        print(len(out))
    """,
}


def measure(name: str, n: int, folder: Path) -> tuple[float, int, int]:
    """Run one helper; return its wall time (s), the bytes it saw and its peak RSS (KiB)."""
    script = folder / f"{name}.py"
    code = HELPERS[name].replace("{produce}", PRODUCE.format(n=n))
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{name} failed with {proc.returncode}")
    return took, int(out.strip()), usage.ru_maxrss


def main() -> int:
    """Print the figures; exit 1 when the runner's memory grows with the output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1 << 30, help="output size (1 GiB)")
    parser.add_argument("--legacy", action="store_true", help="also measure communicate()")
    args = parser.parse_args()
    names = ["baseline", "runner"] + (["communicate"] if args.legacy else [])
    with tempfile.TemporaryDirectory(prefix="reflexkit-bench-") as tmp:
        results = {name: measure(name, args.bytes, Path(tmp)) for name in names}
    base_s, _, base_kib = results["baseline"]
    print(f"output: {args.bytes:,} bytes")
    print(f"{'way':<12} {'seconds':>8} {'MB/s':>8} {'x baseline':>10} {'peak RSS MiB':>13}")
    for name, (took, seen, kib) in results.items():
        if seen != args.bytes:
            sys.exit(f"{name} saw {seen} bytes, not {args.bytes}")
        print(
            f"{name:<12} {took:8.2f} {args.bytes / took / 1e6:8.0f} {took / base_s:10.2f} "
            f"{kib / 1024:13.1f}"
        )
    growth = (results["runner"][2] - base_kib) / 1024
    print(f"runner peak RSS above the baseline interpreter: {growth:.1f} MiB")
    return 0 if growth < 64 else 1  # bounded: a few read buffers, whatever the size


if __name__ == "__main__":
    sys.exit(main())
