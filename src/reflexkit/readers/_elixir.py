"""Elixir's compile errors: ``== Compilation error in file x ==`` and the error under it.

mix prints the file that did not compile, ``** (CompileError) file:line: message`` and the
frames under it (``test/x_test.exs:140: (module)``, ``(app 1.0) lib/x.ex:9: Mod.fun/2``). A
test file that does not compile stops ``mix test`` before any test: the runner's collection
error, a test failure; the code under test that does not compile is a build error.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._findings import Findings, clip

__all__ = ["parse_elixir_compile"]

M = re.MULTILINE
_HEADER = Pattern(r"^(?P<line>== Compilation error in file (?P<file>\S+) ==)$", M)
_RAISED = Pattern(r"^(?P<line>\*\* \(\w+(?:\.\w+)*\) [^\n]+)$", M)
_FRAME = Pattern(r"^ {4}(?P<frame>(?:\([\w.-]+ [^)\n]*\) )?\S+:\d+: [^\n]+)$", M)
_TEST_FILE = Pattern(r"(?:^|/)test/|_test\.exs$")
_FRAMES = 2


def parse_elixir_compile(text: str) -> Findings | None:
    """Recognise mix's ``== Compilation error in file x ==`` with its error and frames."""
    header = _HEADER.search(text)
    if header is None:
        return None
    raised = _RAISED.search(text, header.end())
    frames = [m["frame"] for m in _FRAME.finditer(text, header.end(), header.end() + 3000)]
    in_test = _TEST_FILE.search(header["file"]) is not None
    facts = [header["line"]]
    if raised is not None:
        facts.append(clip(raised["line"], 240))
    facts.extend(clip(frame, 160) for frame in frames[:_FRAMES])
    return Findings(
        tool="elixir",
        failure_type=FailureType.TEST_FAILURE if in_test else FailureType.BUILD_ERROR,
        headline=f"{header['file']} did not compile"
        + (": no test ran." if in_test else ": nothing ran."),
        facts=facts,
        evidence=header["line"],
        advice="Fix the compile error at the line it names (the frames under it say which "
        "macro or module was expanding it), then run the same command again.",
        steps=[f"Open {header['file']} at the line the error names."],
        confidence=0.8,
    )
