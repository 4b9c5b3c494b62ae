"""Skipping integrations in reflexkit's own process, and only in the thread that skips them."""

from __future__ import annotations

import subprocess
import sys

_CODE = """
import threading
from reflexkit import _lazy

_lazy.own_process()
seen = {}

def other_thread():
    import csv  # the SDK's import runs like this, beside the containers' (llm.preload)
    seen["other"] = csv.__name__

with _lazy.without_integrations("csv"):
    try:
        import csv
    except ModuleNotFoundError:
        seen["own"] = "absent"
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
print(seen["own"], seen.get("other"))
"""


def test_a_skipped_package_is_absent_only_to_the_thread_that_skips_it() -> None:
    """Another thread importing the same package meanwhile gets it, not an ImportError."""
    done = subprocess.run(
        [sys.executable, "-c", _CODE], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["absent", "csv"]
