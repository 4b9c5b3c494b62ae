"""Python's faulthandler dumps: a fatal error (segfault, abort) and the frames it happened in.

``Fatal Python error: Segmentation fault`` is followed by each thread's frames, most recent
call first; the useful frame is the first one in the project's own code, not the library
(``ctypes``) or ``runpy`` frames around it.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip
from reflexkit.readers._generic import is_library_path

__all__ = ["own_frame", "parse_faulthandler"]

M = re.MULTILINE

_FATAL = Pattern(r"^Fatal Python error: (?P<msg>.+)$", M)
_THREAD = Pattern(r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$", M)
_FRAME = Pattern(r'^ {2}File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)$', M)


def own_frame(text: str) -> str:
    """Return the first frame of the project's own code in a faulthandler dump, or ``""``.

    The crashing thread (``Current thread``) is read first; frames are most recent first.
    """
    current = text.find("Current thread 0x")
    headers = [current] if current >= 0 else [m.start() for m in _THREAD.finditer(text)]
    for start in headers:
        end = text.find("\n\n", start)
        for frame in _FRAME.finditer(text, start, end if end >= 0 else len(text)):
            if not is_library_path(frame["file"]):
                return frame.group(0).strip()
    return ""


def parse_faulthandler(text: str) -> Findings | None:
    """Recognise ``Fatal Python error: ...`` with faulthandler's dump of the threads."""
    fatal = _FATAL.search(text)
    if fatal is None:
        return None
    findings = Findings(tool="python", failure_type=FailureType.RUNTIME_ERROR)
    findings.facts.append(clip(fatal.group(0), 200))
    frame = own_frame(text)
    if frame:
        findings.facts.append(frame)
    where = frame or "the first frame of your own code in the dump"
    findings.headline = f"The Python interpreter died: {clip(fatal['msg'], 80)}."
    if "Segmentation fault" in fatal["msg"] or "Bus error" in fatal["msg"]:
        findings.advice = (
            "Native code called from Python read invalid memory: check what is passed to the C "
            f"extension or ctypes call at {where} (pointers, buffer sizes, freed objects); "
            "the Python line itself is not wrong."
        )
    elif "Aborted" in fatal["msg"]:
        findings.advice = (
            f"A native library aborted (a failed check in C code) under {where}: read the "
            "library's message printed before the dump and fix the call's arguments or state."
        )
    else:
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            f"The interpreter stopped with a fatal error under {where}: read the message "
            "and the frames; it is usually a native extension or an interpreter misuse."
        )
    findings.steps.append(f"Open {where} and check the arguments of the native call there.")
    findings.confidence = 0.75
    return findings
