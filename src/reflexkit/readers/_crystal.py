"""Crystal's compile errors (``crystal spec``'s own failures are read with RSpec's shape).

The compiler shows the last frame of an error: ``In src/x.cr:89:35``, the source line with a
caret under it, and ``Error: undefined method 'index!' for String``. The code under test that
does not compile is a build error; a spec file that does not (under ``spec/`` or named
``…_spec.cr``) is the runner's collection error, a test failure.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip

__all__ = ["parse_crystal"]

M = re.MULTILINE
_IN = Pattern(r"^In (?P<loc>(?P<file>\S+\.cr):\d+:\d+)$", M)
_ERROR = Pattern(r"^(?P<line>Error: [^\n]+)$", M)
_SPEC_FILE = Pattern(r"(?:^|/)spec/|_spec\.cr$")
_NO_SHARD = Pattern(r"^Error: can't find file '(?P<name>[\w-]+)'$")
_SHARDS_HINT = Pattern(r"^- (?P<line>Did you remember to run `shards install`\?)$", M)


def parse_crystal(text: str) -> Findings | None:
    """Recognise the Crystal compiler's ``In file.cr:L:C`` frame and its ``Error:`` line."""
    frame = _IN.search(text)
    error = _ERROR.search(text, frame.end()) if frame is not None else None
    if frame is None or error is None:
        return None
    in_spec = _SPEC_FILE.search(frame["file"]) is not None
    shard = _NO_SHARD.match(error["line"])
    if shard is not None:
        hint = _SHARDS_HINT.search(text, error.end())
        return Findings(
            tool="crystal",
            failure_type=FailureType.DEPENDENCY_ERROR,
            category=ReflectionCategory.MISSING_CONTEXT,
            headline=f"The compiler cannot find `{shard['name']}`: the shard is not installed.",
            facts=[clip(f"{frame['loc']}: {error['line']}", 300)],
            hints=[hint["line"]] if hint is not None else [],
            evidence=error["line"],
            advice="The code requires a shard that is not installed here: run `shards install` "
            "in the folder that holds shard.yml (or fix the require's name); the code is not at "
            "fault.",
            steps=["Run `shards install`, then build again."],
            confidence=0.8,
        )
    return Findings(
        tool="crystal",
        failure_type=FailureType.TEST_FAILURE if in_spec else FailureType.BUILD_ERROR,
        headline="A spec file did not compile: no example ran."
        if in_spec
        else "The Crystal compiler stopped at an error: nothing ran.",
        facts=[clip(f"{frame['loc']}: {error['line']}", 300)],
        evidence=error["line"],
        advice="Fix the error at the place the compiler names (a method or type this compiler "
        "or the code does not have); `--error-trace` shows how the call got there.",
        steps=[f"Open {frame['loc']} and fix what the compiler names there."],
        confidence=0.8,
    )
