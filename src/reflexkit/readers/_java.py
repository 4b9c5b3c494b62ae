r"""Readers for Java: javac's diagnostics and the JVM's exception stack traces.

javac prints ``path/Foo.java:12: error: message``, the source line, a caret, and indented
detail lines (``symbol:   method totl()``, ``location: class Order``), then ``4 errors``. The
JVM prints ``Exception in thread "main" pkg.SomeException: message``, ``\tat`` frames, and a
``Caused by:`` chain whose last link is the root cause; the first frame in the project's own
code (not ``java.base/``, ``jdk.``, ``sun.`` ...) is where to look.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    Problem,
    clip,
    dedupe,
    group_problems,
    plural,
)
from reflexkit.readers._kinds import error_kind
from reflexkit.readers._lines import matching_lines

__all__ = ["parse_java_trace", "parse_javac", "parse_junit", "parse_maven"]

M = re.MULTILINE

# --- javac -----------------------------------------------------------------------------------

_JAVAC = Pattern(
    r"^(?P<loc>(?:[A-Za-z]:)?[^\s:][^:\n]*\.java:\d+): (?P<sev>error|warning): (?P<msg>.*)$", M
)
_JAVAC_DETAIL = Pattern(r"^ {2,}(?P<d>(?:symbol|location|required|found|reason): .*|\S.*)$")
_JAVAC_COUNT = Pattern(r"^(?P<n>\d+) (?P<what>errors?|warnings?)$", M)
_JAVAC_FLAG = Pattern(
    r"^(?P<line>error: (?:invalid flag|file not found|no source files|"
    r"invalid source release|release version \S+ not supported).*)$",
    M,
)
_MAX_ERRORS = 60
"""Errors read in detail (the rest are counted): the first ones are the ones to fix."""
_ERROR_NEEDLE = Pattern(r"error: ")
_COUNT_NEEDLE = Pattern(r"\d (?:error|warning)")
_NO_PACKAGE = Pattern(r"package (?P<pkg>[\w.]+) does not exist")


_MAVEN_JAVAC = Pattern(
    r"^\[ERROR\] (?P<loc>(?:[A-Za-z]:)?[^\s:\[][^:\n\[]*\.java:\[\d+,\d+\]) (?P<msg>.*)$", M
)
"""javac's error as Maven's compiler plugin prints it: ``[ERROR] /p/Foo.java:[12,5] msg``."""
_MAVEN_DETAIL = Pattern(
    r"^(?:\[ERROR\])? {2,}(?P<d>(?:symbol|location|required|found|reason): .*)$"
)
_MAVEN_JAVAC_NEEDLE = Pattern(r"\.java:\[")


def _maven_javac(text: str) -> Findings | None:
    """Findings for javac's errors printed by Maven (``COMPILATION ERROR``)."""
    errors = matching_lines(text, _MAVEN_JAVAC_NEEDLE, _MAVEN_JAVAC, limit=_MAX_ERRORS)
    if not errors:
        return None
    problems: list[Problem] = []
    for error in errors:
        after = text[error.end() + 1 : error.end() + 600].split("\n", 3)[:3]
        details = [m["d"] for m in map(_MAVEN_DETAIL.match, after) if m is not None]
        shown = f"{error['loc']} {clip(error['msg'], 150)}"
        if details:
            shown += " (" + clip("; ".join(details[:2]), 120) + ")"
        problems.append(Problem(shown, f"{error['msg']}|{'|'.join(details[:1])}", error["loc"]))
    problems = dedupe_problems(problems)
    findings = Findings(tool="javac", failure_type=FailureType.BUILD_ERROR)
    findings.facts = group_problems(problems, limit=6)
    findings.headline = f"javac (run by Maven) reported {plural(len(problems), 'error')}."
    findings.advice = (
        "Fix each error at its location: a 'cannot find symbol' names the symbol and where it "
        "was looked up (a typo or a missing import); 'incompatible types' needs a conversion "
        "or the declared type changed."
    )
    findings.steps.append(f"Fix {problems[0].loc} first, then run the same Maven goal again.")
    findings.confidence = 0.85
    return findings


def dedupe_problems(problems: list[Problem]) -> list[Problem]:
    """Return the problems without repeats.

    Maven prints each error twice: as javac found it, then in its ``BUILD FAILURE`` summary.
    """
    seen: set[str] = set()
    out: list[Problem] = []
    for problem in problems:
        if problem.text not in seen:
            seen.add(problem.text)
            out.append(problem)
    return out


_ANT_TASK = Pattern(r"^[ \t]*\[[\w:.-]+\] ", M)
"""Ant's task prefix (``    [javac] ``): the compiler's own line follows it."""


def parse_javac(text: str) -> Findings | None:
    """Recognise javac's ``File.java:12: error: message`` diagnostics and its error count."""
    if "[ERROR] " in text:
        maven = _maven_javac(text)
        if maven is not None:
            return maven
    if "[javac] " in text:  # Ant prints the compiler's lines under its task's name
        text = _ANT_TASK.sub("", text)
    diags = list(_JAVAC.finditer(text))
    errors = [d for d in diags if d["sev"] == "error"]
    flags = [] if errors else matching_lines(text, _ERROR_NEEDLE, _JAVAC_FLAG, limit=1)
    if not errors and not flags:
        return None
    findings = Findings(tool="javac", failure_type=FailureType.BUILD_ERROR)
    counts = [m.group(0) for m in matching_lines(text, _COUNT_NEEDLE, _JAVAC_COUNT)]
    findings.summary = ", ".join(counts)
    if not errors:
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.facts.append(flags[0]["line"])
        findings.headline = "javac rejected its command line."
        findings.advice = "Fix the javac invocation: the file paths, the flags and --release."
        findings.steps.append("Run `javac -help` for the flags, then compile again.")
        findings.confidence = 0.7
        return findings
    problems = [_javac_problem(text, d) for d in errors[:_MAX_ERRORS]]
    findings.facts = group_problems(problems, limit=6)
    findings.headline = f"javac reported {plural(len(errors), 'error')}."
    _advise_javac(findings, errors)
    findings.steps.append(f"Fix {problems[0].loc} first; later errors often follow from it.")
    findings.steps.append("Recompile with the same javac command.")
    findings.confidence = 0.85
    return findings


def _advise_javac(findings: Findings, errors: list[re.Match[str]]) -> None:
    """Packages that are not the project's and not on the classpath, or the code's errors."""
    missing = dedupe(m["pkg"] for m in (_NO_PACKAGE.search(d["msg"]) for d in errors) if m)
    foreign = [pkg for pkg in missing if not _own_package(pkg, [d["loc"] for d in errors])]
    if foreign:
        findings.failure_type = FailureType.DEPENDENCY_ERROR
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.headline = f"javac cannot find the packages {', '.join(foreign[:4])}."
        findings.advice = (
            "The imported libraries are not on the classpath: add them as dependencies (Maven "
            "or Gradle) or pass their jars with `-cp`; the 'cannot find symbol' errors for "
            "their classes follow from the same cause."
        )
    else:
        findings.advice = (
            "Fix each error at its location: a 'cannot find symbol' names the symbol and where "
            "it was looked up (a typo or a missing import); 'incompatible types' needs a "
            "conversion or the declared type changed."
        )


def _javac_problem(text: str, diag: re.Match[str]) -> Problem:
    """Return one javac error with its indented detail lines (``symbol:``, the types)."""
    details: list[str] = []
    lines = text[diag.end() + 1 : diag.end() + 1200].split("\n", 8)
    for line in lines[2:8]:  # the source line and the caret come first
        if _JAVAC.match(line) or _JAVAC_COUNT.match(line):
            break
        detail = _JAVAC_DETAIL.match(line)
        if detail is None:
            break
        details.append(detail["d"].strip())
    text_out = f"{diag['loc']}: error: {clip(diag['msg'], 150)}"
    if details:
        text_out += " (" + clip("; ".join(details[:2]), 120) + ")"
    return Problem(text_out, f"{diag['msg']}|{'|'.join(details[:1])}", diag["loc"])


def _own_package(package: str, locations: list[str]) -> bool:
    """Return whether *package* looks like the project's own (its path is under a source dir)."""
    prefix = "/".join(package.split(".")[:2])
    return any(
        f"/{prefix}/" in loc.replace("\\", "/") or loc.startswith(prefix) for loc in locations
    )


# --- JVM stack traces ------------------------------------------------------------------------

_EXC = Pattern(
    r"^(?P<line>(?:Exception in thread \"(?P<thread>[^\"]*)\" |Caused by: )?"
    r"(?P<cls>(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:\$[\w$]+)*)(?:: (?P<msg>.*))?)$",
    M,
)
_JFRAME = Pattern(r"^[ \t]+at (?P<frame>[\w$.<>/-]+\((?P<where>[^)\n]*)\))[ \t]*$", M)
"""A JVM frame (``\tat java.base/pkg.Cls.m(Cls.java:3)``); the module prefix is one of the
characters allowed, not a group of its own: nested repeats of overlapping classes backtracked
for ~40 ms over a JUnit report's 15 KB of frames."""
_LIBRARY = Pattern(
    r"^(?:[\w.-]+/)?(?:java|javax|jdk|sun|com\.sun|kotlin|scala|org\.junit|junit|org\.testng|"
    r"org\.gradle|org\.apache\.maven|org\.springframework|org\.hibernate|"
    r"com\.google\.common|org\.apache\.commons)\.|^java\.base/"
)
_LAUNCH = Pattern(
    r"^(?P<line>Error: (?:Could not find or load main class|Unable to access jarfile|"
    r"Main method not found|A JNI error has occurred|LinkageError occurred).*)$",
    M,
)
_LAUNCH_NEEDLE = Pattern(r"Error: ")
_WHY = (
    (
        "NullPointer",
        (
            "a value there is null (a map lookup that found nothing, a field never set, a method "
            "that returned null); check it or give it a value before calling a method on it."
        ),
    ),
    (
        "NumberFormat",
        (
            "the text parsed is not a number of that type; validate or convert it (a decimal "
            "needs Double or BigDecimal, not Integer) before parsing."
        ),
    ),
    (
        "IndexOutOfBounds",
        "an index is outside the array, list or string; check the length before indexing.",
    ),
    (
        "StackOverflow",
        (
            "a method calls itself without ever reaching a base case; make the recursion shrink "
            "its input and stop."
        ),
    ),
    (
        "ConcurrentModification",
        (
            "a collection is changed while it is iterated; collect the changes and apply them "
            "after the loop, or use the iterator's remove()."
        ),
    ),
    ("ClassCast", "an object is cast to a type it does not have; check the type first."),
    ("OutOfMemory", "the program keeps too much in memory; stream the data or free it."),
)
"""What each common exception means, by a part of its class name."""
_WHY_DEFAULT = "the message names the bad value; check inputs before using them."
_MISSING_FILE = ("FileNotFoundException", "NoSuchFileException")
_MISSING_CLASS = ("ClassNotFoundException", "NoClassDefFoundError", "NoSuchMethodError")


def is_library_frame(frame: str) -> bool:
    """Whether a JVM frame (``pkg.Cls.m(Cls.java:3)``) is the JDK's or a test library's.

    A class loader's prefix (Gradle's ``app//``) is no part of the class name.
    """
    return _LIBRARY.search(frame.rpartition("//")[2]) is not None


def parse_java_trace(text: str) -> Findings | None:
    """Recognise a JVM exception with its ``at`` frames and ``Caused by:`` chain."""
    launches = matching_lines(text, _LAUNCH_NEEDLE, _LAUNCH, limit=1)
    chain = [
        m for m in _EXC.finditer(text) if _has_frames(text, m) or m["line"].startswith("Caused by")
    ]
    if launches:
        return _launch_findings(launches[0], chain)
    if not chain:
        return None
    findings = Findings(tool="java", failure_type=FailureType.RUNTIME_ERROR)
    top = _top_of_chain(chain)
    root = chain[-1] if len(chain) > 1 and chain[-1]["line"].startswith("Caused by") else None
    findings.headline = f"The Java program threw {top['cls'].rsplit('.', 1)[-1]}" + (
        f", caused by {root['cls'].rsplit('.', 1)[-1]}." if root else "."
    )
    findings.facts.append(clip(top["line"], 220))
    if root is not None:
        findings.facts.append(clip(root["line"], 220))
    user = _read_user_frame(findings, text, top, root)
    _advise(findings, (root or top)["cls"], (root or top)["line"], user)
    if user:
        findings.steps.append(f"Open {_where(user)} and fix the statement there.")
    findings.steps.append("Re-run the program with the same input.")
    findings.confidence = 0.85 if user else 0.7
    return findings


def _launch_findings(launch: re.Match[str], chain: list[re.Match[str]]) -> Findings:
    """Findings for a JVM that could not start the program (class or jar not found)."""
    findings = Findings(
        tool="java", failure_type=FailureType.RUNTIME_ERROR, category=ReflectionCategory.TOOL_MISUSE
    )
    findings.headline = "The JVM could not start the program."
    findings.facts.append(launch["line"])
    findings.facts.extend(clip(m["line"], 200) for m in chain[:1])
    findings.advice = (
        "The class or jar named on the command line is not where java looks: give the "
        "fully qualified class name (package included) and a classpath (`-cp`) that holds "
        "the compiled classes, compiled first with javac."
    )
    findings.steps.append("Check the class name and the -cp directory, then run again.")
    findings.confidence = 0.8
    return findings


def _read_user_frame(
    findings: Findings, text: str, top: re.Match[str], root: re.Match[str] | None
) -> str:
    """Quote the first frame in the project's code (the root cause's, else the top's)."""
    frames = _frames_after(text, root or top)
    user = next((f for f in frames if not _LIBRARY.search(f)), "")
    if not user and root is not None:
        user = next((f for f in _frames_after(text, top) if not _LIBRARY.search(f)), "")
    if user:
        findings.facts.append(user)
    elif frames:
        findings.details.append(f"thrown at {frames[0]}")
    return user


def _has_frames(text: str, exc: re.Match[str]) -> bool:
    """Return whether an ``at`` frame follows the exception line (within its message lines)."""
    after = text[exc.end() : exc.end() + 2000].lstrip("\n").splitlines()[:6]
    return any(line.lstrip().startswith("at ") for line in after)


def _top_of_chain(chain: list[re.Match[str]]) -> re.Match[str]:
    """Return the outermost exception: the last one printed that is not a ``Caused by:``."""
    tops = [m for m in chain if not m["line"].startswith("Caused by")]
    return tops[0] if tops else chain[0]


def _frames_after(text: str, exc: re.Match[str]) -> list[str]:
    """Return the frames printed under one exception (up to the next exception line)."""
    body = text[exc.end() : exc.end() + 8000]
    stop = re.search(r"^(?:Caused by: |\S)", body, M)
    if stop is not None:
        body = body[: stop.start()]
    return [m["frame"] for m in _JFRAME.finditer(body)]


def _where(frame: str) -> str:
    """Return ``Order.java:37`` from ``com.acme.Order.weight(Order.java:37)``."""
    inside = frame[frame.rfind("(") + 1 : -1]
    return inside if ":" in inside else frame


def _advise(findings: Findings, culprit: str, line: str, user: str) -> None:
    """Set the category, type and advice that fit the exception *culprit* thrown at *user*."""
    kind = error_kind(line)
    if kind is not None and kind.name == "permission":
        # AccessDeniedException, SecurityException ...: the file is there, access is refused.
        findings.category = kind.category
        findings.advice = kind.advice
    elif culprit.endswith(_MISSING_FILE):
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "The program opens a file that is not there: create it, or pass the right path "
            "(relative paths resolve from the working directory)."
        )
    elif culprit.endswith(_MISSING_CLASS):
        findings.failure_type = FailureType.DEPENDENCY_ERROR
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A class that compiled is missing at run time: put its jar on the runtime classpath "
            "(same dependency versions as at compile time)."
        )
    else:
        where = _where(user) if user else "the first frame in the project's code"
        name = culprit.rsplit(".", 1)[-1]
        why = next((text for key, text in _WHY if key in name), _WHY_DEFAULT)
        findings.advice = f"Fix the code at {where} so it no longer throws {name}: {why}"


# --- JUnit and Maven -------------------------------------------------------------------------
# JUnit 4's text runner (JUnitCore) prints ``1) testName(pkg.Class)``, the exception and its
# frames, then ``FAILURES!!!`` and ``Tests run: 9,  Failures: 2``. Maven Surefire prints a header
# per failing test (``[ERROR] pkg.Class.test -- Time elapsed: 0.01 s <<< FAILURE!``, or 2.x's
# ``test(pkg.Class)  Time elapsed: 0.01 sec  <<< FAILURE!``) followed by the same exception and
# frames, and ``Tests run: 9, Failures: 1, Errors: 1, Skipped: 0``.

_JUNIT_HEADER = Pattern(
    r"^(?:\d+\) (?P<n4>[\w$\[\]\-, ]+?)\((?P<c4>[\w.$]+)\)"
    r"|(?:\[ERROR\] )?(?:(?P<cs>[\w.$]+)\.(?P<ns>[\w$\[\](), -]+?) -- |"
    r"(?P<n2>[\w$\[\]\-, ]+?)\((?P<c2>[\w.$]+)\)\s+)"
    r"Time elapsed: [^\n]*<<< (?:FAILURE|ERROR)!)$",
    M,
)
_JUNIT_SUMMARY = Pattern(
    r"^(?:\[(?:ERROR|WARNING|INFO)\] )?(?P<line>Tests run: \d+, +Failures: \d+"
    r"(?:, Errors: \d+)?(?:, Skipped: \d+)?)(?P<rest>,[^\n]*)?$",
    M,
)
_JUNIT_VERDICT = Pattern(r"^FAILURES!!!$|<<< (?:FAILURE|ERROR)!|^\[ERROR\] Tests run: ", M)
_CAUSED = Pattern(r"^Caused by: (?P<line>.+)$", M)
_SUREFIRE_RESULT = Pattern(r"^(?:\[ERROR\] )? {2}(?P<line>[\w$]+\.[\w$\[\]()-]+:\d+ \S.*)$", M)
"""A line of Surefire's ``Results:`` (``  CalculatorTest.adds:5 expected: <5> but was: <-1>``)."""


def parse_junit(text: str) -> Findings | None:
    """Recognise JUnit's per-test failures as JUnitCore or Maven Surefire print them."""
    if _JUNIT_VERDICT.search(text) is None:
        return None
    headers = list(_JUNIT_HEADER.finditer(text))
    summaries = [m for m in _JUNIT_SUMMARY.finditer(text) if not (m["rest"] or "").strip()]
    if not headers and not summaries:
        return None
    findings = Findings(tool="junit", failure_type=FailureType.TEST_FAILURE)
    summary = (summaries or list(_JUNIT_SUMMARY.finditer(text)))[-1]["line"]
    findings.summary = findings.evidence = summary
    ends = [h.start() for h in headers[1:]] + [len(text)]
    groups: dict[str, list[str]] = {}
    for header, end in zip(headers[:MAX_BLOCKS], ends, strict=False):
        test_id, error, where = _junit_failure(header, text[header.end() : end])
        findings.tests.append(test_id)
        if error not in groups:  # the frames of the first test of each kind of error
            findings.details.extend(where)
        groups.setdefault(error, []).append(test_id)
    results = [clip(m["line"], 200) for m in _SUREFIRE_RESULT.finditer(text)]
    for error, ids in [] if results else list(groups.items())[:6]:
        line = f"{ids[0]}: {clip(error, 180)}" if error else ids[0]
        if len(ids) > 1:
            line += f" (+{len(ids) - 1} more: {', '.join(ids[1:4])})"
        findings.facts.append(line)
    findings.facts.extend(dedupe(results)[:6])  # Surefire's own results: `Test.name:12 msg`
    findings.details = dedupe(findings.details)[:4]
    count = len(headers) or _failed_count(summary)
    named = "JUnit" if "junit" in text.lower() else "The Java tests"  # named when it shows
    findings.headline = f"{named} reported {plural(count, 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with its exception and the frames in the test and in the "
        "code under test: fix the code so the assertion holds (an unexpected exception names "
        "the line that threw it); change a test only if its expectation is wrong."
    )
    if findings.tests:
        findings.steps.append(f"Start with {findings.tests[0]}, then re-run the test class.")
    findings.confidence = 0.85 if headers else 0.6
    return findings


def _junit_failure(header: re.Match[str], body: str) -> tuple[str, str, list[str]]:
    """Return one failing test's id, its error line, and its root cause and telling frames."""
    if header["c4"]:
        test_id, cls = f"{header['n4']}({header['c4']})", header["c4"]
    elif header["cs"]:
        test_id, cls = f"{header['cs']}.{header['ns']}", header["cs"]
    else:
        test_id, cls = f"{header['n2']}({header['c2']})", header["c2"]
    first = body.lstrip("\n").split("\n", 1)[0].strip()
    error = "" if first.startswith("at ") else first
    frames = [m["frame"] for m in _JFRAME.finditer(body[:6000])]
    own = [f for f in frames if not _LIBRARY.search(f)]
    in_test = next((f for f in own if f.startswith(f"{cls}.")), "")
    under_test = next((f for f in own if not f.startswith(cls)), "")
    cause = _CAUSED.search(body[:6000])
    where = [clip(f"Caused by: {cause['line']}", 160)] if cause is not None else []
    return test_id, error, [*where, *(f for f in (under_test, in_test) if f)]


def _failed_count(summary: str) -> int:
    """Return failures plus errors from a ``Tests run:`` line."""
    return sum(int(n) for n in re.findall(r"(?:Failures|Errors): (\d+)", summary))


_MAVEN_UNRESOLVED = Pattern(
    r"^\[ERROR\] (?P<msg>.*(?:could not be resolved|Could not resolve dependencies|"
    r"Non-resolvable (?:parent|import) POM|Could not (?:transfer|find) artifact|"
    r"Unresolv(?:e)?able build extension|in offline mode|Unknown packaging: ).*)$",
    M,
)
_MAVEN_CLAUSE = Pattern(
    r"(?:Plugin |Could not resolve dependencies for |Could not (?:transfer|find) artifact |"
    r"Non-resolvable \w+ POM )[^:\n]*(?::[^:\s\n]+)*[^:\n]*?(?=: |$)"
    r"|The following artifacts could not be resolved: "
    r"[\w.-]+(?::[\w.-]+)+(?:, [\w.-]+(?::[\w.-]+)+)*"
    r"|Cannot access \S+ \([^)\n]*\) in offline mode"
    r"|the artifact \S+ has not been downloaded from it before"
    r"|Unknown packaging: \S+"
)
_MAVEN_NEEDLE = Pattern(r"\[ERROR\] ")


def parse_maven(text: str) -> Findings | None:
    """Recognise Maven's failure to resolve the build's plugins or dependencies."""
    lines = matching_lines(text, _MAVEN_NEEDLE, _MAVEN_UNRESOLVED, limit=6)
    if not lines:
        return None
    findings = Findings(
        tool="maven",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
    )
    clauses = dedupe(m.group(0) for line in lines for m in _MAVEN_CLAUSE.finditer(line["msg"]))
    findings.facts = [clip(c, 200) for c in clauses[:5]] or [clip(lines[0]["msg"], 220)]
    findings.headline = "Maven could not resolve the build's plugins or dependencies."
    offline = "offline" in text
    findings.advice = (
        "The artifacts named are not in the local repository and the remote one cannot be "
        "reached: "
        + (
            "run without -o once where the repository is reachable, or "
            if offline
            else "check the repository URL, proxy and the artifact's coordinates, or "
        )
        + "drop the plugin or dependency from pom.xml if the build can do without it."
    )
    findings.steps.append("Check the coordinates named above against pom.xml, then build again.")
    findings.confidence = 0.8
    return findings
