"""Whose verdict is in the output: the failure type its own evidence shows.

A command line hides what ran (``npm test`` may run a linter, ``make test`` a C test binary,
``python -m pytest`` may never start pytest), so the type is read from the output first: a
test runner's closing count, a build's or a doc builder's final verdict, a linter's rule ids,
a missing module or package, a script that does not exist. :func:`verdict` returns the type
and the line that proves it; ``None`` when the output shows no verdict. The shapes are those
that runners of many ecosystems share (``N examples, N failures``, ``N tests, N failures``,
``not ok N``, ``N% tests passed``), not one tool's words.
"""

from __future__ import annotations

import functools
import re

import attrs

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory

__all__ = ["SETUP", "Verdict", "verdict"]

M = re.MULTILINE


@attrs.frozen
class Verdict:
    """A failure type and the output line that proves it.

    Attributes:
        failure_type: The type the line shows.
        line: The line, verbatim.
        setup: The check could not run at all (its command, runner module or script is
            missing, or not allowed to run): the environment's failure, not the code's.
        closing: The line is the run's closing verdict (a count, a build's last word), so
            it reads as the summary; a rule id or a missing module is not.
    """

    failure_type: FailureType
    line: str
    setup: bool = False
    closing: bool = True


_FT = FailureType


_Needles = tuple[tuple[str, ...], ...]
_Shape = tuple[_Needles, Pattern, FailureType, int]
_SPAN = 24
"""Lines a shape that reads more than one line may read past the line holding its needle."""


def _shapes(*shapes: tuple[FailureType, str, str]) -> tuple[_Shape, ...]:
    """Compile the shapes: (type, needles, pattern), and the lines each one reads.

    A shape's pattern is tried only around the lines that hold one of its needles
    (``|``-separated), and one of each further group (``&``-separated) too: a match holds
    them, a substring test costs a fraction of a regex pass, and most lines of an output
    hold none of them.
    """
    return tuple(
        (
            tuple(tuple(group.split("|")) for group in needles.split("&")),
            Pattern(pattern, M),
            failure_type,
            _SPAN if "\\n" in pattern else 0,
        )
        for failure_type, needles, pattern in shapes
    )


_RULE = r"[A-Za-z][\w./-]*(?:,-?[\w./=-]+)*"
"""A rule id in brackets: ``no-dup-id``, ``clang-analyzer-core.Assign,-warnings-as-errors``."""

_SETUP_SHAPES = _shapes(
    # a runner module that is not installed in the interpreter that ran it
    (
        _FT.DEPENDENCY_ERROR,
        "No module named",
        r"^(?:\S*/)?python[\d.]*: No module named [\w.]+\s*$",
    ),
    (
        _FT.DEPENDENCY_ERROR,
        "module specification",
        r"^(?:\S*/)?python[\d.]*: Error while finding module specification for .*No module named",
    ),
    (_FT.TOOL_ERROR, "can't open file", r"^(?:\S*/)?python[\d.]*: can't open file "),
    # a program's own file to run that is not there (`Unable to access jarfile x.jar`)
    (_FT.TOOL_ERROR, "nable to access", r"\bUnable to access (?:jar)?file\b"),
    # an interpreter, a version of it, or a package manager that is not installed
    (
        _FT.TOOL_ERROR,
        "No such file or directory",
        (
            r"^(?:\S*/)?env: \S+: No such file or directory\s*$|: bad interpreter: No such file"
            r"|^(?:\S*/)?(?:ba|da|z)?sh: (?:\d+: |line \d+: )?\S+: No such file or directory\s*$"
        ),
    ),
    (
        _FT.TOOL_ERROR,
        "is not installed|not yet installed|No version is set|No preset version",
        (
            r"^\w+: version \S+ is not installed\b|^N/A: version \S+ is not yet installed"
            r"|^No (?:version is set|preset version installed) for command \S+"
        ),
    ),
    (
        _FT.TOOL_ERROR,
        "packageManager|configured to use",
        (
            r"\bThis project is configured to use \w+ because\b"
            r"|\bpackage\.json defines \"packageManager\": .*\bHowever\b"
        ),
    ),
    # a service the check needs that is not running (a database, the container daemon)
    (
        _FT.TOOL_ERROR,
        " running",
        r"\bIs the (?:\w+ )?(?:server|daemon|service) running\b",
    ),
    # a script or command that does not exist, or may not be run
    (
        _FT.TOOL_ERROR,
        "Missing script",
        r"^(?:npm (?:error|ERR!) |\s*ERR_PNPM_\w+\s+)?Missing script: ",
    ),
    # a script, task or recipe the project's runner does not have (yarn, just, deno task,
    # Task, Gradle)
    (
        _FT.TOOL_ERROR,
        "not found|does not|not defined",
        (
            r"^error Command \"[^\"\n]+\" not found\.|\bdoes not contain (?:a )?recipe\b"
            r"|\b[Tt]ask (?:not found: \S+|['\"`][\w:.-]+['\"`] "
            r"(?:not found|does not exist|is not defined))"
        ),
    ),
    (
        _FT.TOOL_ERROR,
        "not found|not recognized|Failed to spawn|could not determine executable",
        (
            r"^(?:\S+: )?(?:line \d+: )?\S+: command not found\s*$"
            r"|^(?:\S+: )?[Cc]ommand not found: \S+"  # zsh, poetry run, reflexkit's own runner
            r"|^(?:\S*/)?(?:ba|da|z)?sh: (?:\d+: |line \d+: )?\S+: not found\s*$"  # dash
            r"|^'[^']+' is not recognized as an internal or external command"
            r"|^error: Failed to spawn: "  # uv run
            r"|^npm (?:error|ERR!) could not determine executable to run"
        ),
    ),
    (
        _FT.TOOL_ERROR,
        "ermission denied",
        (
            r"^(?:\S+: )?(?:line \d+: )?\S+: Permission denied\s*$"
            r"|^cannot execute \S+: permission denied"
            # a lock or file the tool may not open without rights (`open (13: Permission
            # denied)`, `are you root?`)
            r"|\(13: Permission denied\)|\bare you root\?"
        ),
    ),
    # a command line the program rejects (argparse's, click's usage errors)
    (
        _FT.TOOL_ERROR,
        "sage:",
        (
            r"^[Uu]sage: \S[^\n]*\n(?:[^\n]*\n){0,20}?(?:[\w.-]+: error: (?:argument|unrecognized "
            r"arguments|the following arguments are required|invalid choice)|Error: (?:No such "
            r"(?:option|command)|Got unexpected extra argument|Missing (?:argument|option)))"
        ),
    ),
    # a configuration file the tool needs that is not there (`Unable to find Gruntfile.`,
    # `No config file found`)
    (
        _FT.TOOL_ERROR,
        "nable to find|ould not find|annot find|No config",
        (
            r"\b(?:[Uu]nable to|[Cc]ould not|[Cc]annot|[Cc]an't) find (?:a |the )?(?:valid )?"
            r"(?:config(?:uration)?(?: file)?|[A-Z][a-z]+file)\b"
            r"|\bNo (?:config(?:uration)?|settings) file (?:was )?found\b"
        ),
    ),
    # a usage error: GNU's `Try 'x --help'`, a path argument that does not exist, a
    # required option left out (`Must specify a config file.`); not one a project's own script
    # made (`./build.sh: line 3: cp: missing ...`): that is the script's bug, the code's failure
    (
        _FT.TOOL_ERROR,
        "--help|ust specify",
        (
            r"^(?![^\s:]+: line \d+: )\S[^\n]*\n[Tt]ry '?[\w./ -]*--help'? for more information\b"
            r"|^\S+: error: (?:path|file|argument) [^\n]*, try '?--help'?\s*$"
            r"|^(?:[Ee]rror: )?(?:You )?[Mm]ust specify (?:a|an|the) \w"
        ),
    ),
    # a tool whose configuration names nothing for it to run with
    (
        _FT.TOOL_ERROR,
        "plugin",
        r"\b[Nn]o (?:\w+ )?plugins? (?:were |was )?(?:found|configured|specified)\b",
    ),
    # a program a build tool's recipe runs that is not installed (make's `Error 127`)
    (
        _FT.TOOL_ERROR,
        "No such file|not found",
        r"^make(?:\[\d+\])?: \S+: (?:No such file or directory|[Cc]ommand not found)\s*$",
    ),
    # a folder the tool must write to that it cannot make or use
    (
        _FT.TOOL_ERROR,
        "irector|older",
        (
            r"\b(?:[Oo]utput|[Ll]og|[Cc]ache|[Bb]uild|[Tt]arget) (?:directory|dir|folder)\b"
            r"[^\n]{0,80}?\b(?:cannot|could not) be (?:created|written)\b"
        ),
    ),
    (
        _FT.TOOL_ERROR,
        "No rule to make target",
        r"^make(?:\[\d+\])?: \*\*\* No rule to make target [`'][^']+'\.\s+Stop\.",
    ),
    # a subcommand that does not exist (a misspelt `cargo tset`, `go tset`, `npm tset`)
    (
        _FT.TOOL_ERROR,
        "nrecognized|nknown|no such",
        (
            r"^(?:error: )?(?:[Uu]nrecognized|[Uu]nknown|no such) (?:sub)?command\b"
            r"|^\S+ \S+: unknown (?:sub)?command\s*$"
        ),
    ),
    (_FT.TOOL_ERROR, "is not a", r"^\S+: '[^']+' is not a \S+ command\b"),
    # a session, task, target, job or hook the runner has none of (`nox -s lint`)
    (
        _FT.TOOL_ERROR,
        " not found: ",
        (
            r"\b(?:[Ss]essions?|[Tt]asks?|[Tt]argets?|[Jj]obs?|[Rr]ecipes?|[Hh]ooks?|[Ee]nvironments?)"
            r" not found: \S"
        ),
    ),
    # a tool that needs a repository, run outside one
    (
        _FT.TOOL_ERROR,
        "it repository",
        r"\b(?:[Nn]ot a git repository|are you in a [Gg]it repository)\b",
    ),
)
"""Output whose only content is that the check did not start."""

_COUNTED = r"(?:examples?|tests?|runs?|specs?|scenarios?)"
_CONF_AT = r"(?:\.(?:conf|cfg|ini|ya?ml|toml|json|xml|vcl)|\b[A-Z][a-z]+file)(?::\d+\b| line:? \d+)"
"""A configuration or data file at a line (``app.conf line: 4``, ``Caddyfile:6``)."""
_PASSED = r"(?:PASS(?:ED)?|[Pp]ass(?:ed)?)"
_FAILED = r"(?:FAIL(?:ED)?|[Ff]ail(?:ed)?)"
_SHAPES = _shapes(
    # a server's or daemon's configuration test (`configuration file x test failed`): no
    # test run, though it says `test failed`
    (
        _FT.LINT_ERROR,
        "onfiguration",
        r"\bconfiguration (?:file )?\S+ (?:test )?failed\b|\berrors? found in configuration\b",
    ),
    # test runners' closing counts, in the shapes many ecosystems share
    (
        _FT.TEST_FAILURE,
        "fail|error",
        (rf"^[ \t]*(?:Executed |Total:? )?\d+ {_COUNTED}(?: completed)?(?:, \d+ \w+)*?, (?:with )?"
        r"[1-9]\d* (?:failures?|failed|errors?)\b.*$"),
    ),
    # a count of passed and of failed tests on one line, in either order and any spelling
    # (`2 passed, 1 failed`, `0 passed; 2 failed`, `Failed: 2.  Passed: 1.`, `Passed 1 Failed 2`)
    (
        _FT.TEST_FAILURE,
        "ass|ASS&ail|AIL",
        (r"\b\d+ pass(?:ed|es)\b[^\n]*?\b[1-9]\d* fail(?:ed|s)\b"
        r"|\b[1-9]\d* fail(?:ed|s)\b[^\n]*?\b\d+ pass(?:ed|es)\b"
        rf"|\b{_PASSED}:?[ \t]+\d+\b[^\n]*?\b{_FAILED}:?[ \t]+[1-9]\d*"
        rf"|\b{_FAILED}:?[ \t]+[1-9]\d*\b[^\n]*?\b{_PASSED}:?[ \t]+\d+"),
    ),
    # a count of failures that names tests (`1 test(s) FAILED`, `2/3 test failures`, `1/1
    # modules FAILED unittests`), or a closing `failures: N` alone on its line
    (
        _FT.TEST_FAILURE,
        "FAILED|failure|failed",
        (r"\b[1-9]\d*(?:/\d+)? (?:unit)?tests?(?:\(s\))? (?:FAILED|failed|failures?)\b"
        r"|\b[1-9]\d* FAILED TESTS?\b"
        r"|\b[1-9]\d*(?:/\d+)? \w+ FAILED (?:unit)?tests?\b"),
    ),
    # xUnit's closing verdict with its counts (`FAILED (failures=1, errors=2)`), a count of
    # tests that ran with failures (`Ran 2 tests with 1 failures`), and the `Label: N,
    # Failures: N` rows of C and Erlang runners (`Checks: 2, Failures: 1`, `1 ok, 1 failed`)
    (
        _FT.TEST_FAILURE,
        "FAILED (|test with|tests with|Failures:|Failed:|Errors:| ok, ",
        (r"^FAILED \((?:[a-z]+=\d+, )*(?:failures|errors)=[1-9]\d*\b"
        r"|\b\d+ tests? with [1-9]\d* (?:failures?|errors?)\b"
        r"|\b(?:Checks|Tests|Cases|Specs|Examples|Assertions|Run): +\d+,? +"
        r"(?:Failures|Failed|Errors): +(?:[1-9]|\d+,? +Errors: +[1-9])"
        r"|\b\d+ ok, [1-9]\d* failed\b"),
    ),
    (
        _FT.TEST_FAILURE,
        "ailures|ail:|AIL:|AILURES|ailed:",
        (r"^[ \t#*-]*(?:of )?(?:unexpected )?(?:[Ff]ail(?:ures?|ed)?|FAIL(?:ED|URES?)?)[ \t]*:?"
        r"[ \t]+[1-9]\d*[ \t]*$"),
    ),
    # `Failed 1 and Skipped 0 of 3 tests`, `Number of failures: 2`
    (
        _FT.TEST_FAILURE,
        "and Skipped|Number of",
        (r"^[ \t]*Failed [1-9]\d* and Skipped \d+ of \d+ tests?\b"
        r"|^[ \t]*Number of (?:failures|failed tests|errors): *[1-9]"),
    ),
    # a count of the failures a runner detected (`*** 2 failures are detected in the test
    # module`), a run of N tests that closes with its failures or errors counted
    (
        _FT.TEST_FAILURE,
        "detected|Ran ",
        (r"\b[1-9]\d* failures? (?:is|are|was|were) detected\b"
        r"|^[# \t]*Ran:? \d+ tests?\b[^\n]*\b[1-9]\d* (?:errors?|failures?|failed)\b"),
    ),
    # a summary table whose tests row counts a failure under a `Passed Failed` header
    (
        _FT.TEST_FAILURE,
        "Passed",
        (r"\bPassed[ \t]+Failed\b[^\n]*\n(?:[^\n]*\n){0,2}?[ \t]*tests?[ \t]+\d+[ \t]+\d+"
        r"[ \t]+\d+[ \t]+[1-9]"),
    ),
    # a coverage gate's minimum not met (`Failed minimum line coverage (got 56.2%, minimum
    # 90.0%)`): the tests leave code unrun
    (
        _FT.TEST_FAILURE,
        "coverage",
        (r"\b[Ff]ailed (?:the )?minimum (?:\w+ )?coverage\b"
        r"|\bcoverage\b[^\n]{0,60}\(got [\d.]+%, (?:minimum|required) [\d.]+%\)"),
    ),
    (_FT.TEST_FAILURE, "Assertions:", r"^Tests: \d+, Assertions: \d+.*(?:Failures|Errors): \d+"),
    (
        _FT.TEST_FAILURE,
        "successes /",
        r"^[ \t]*\d+ successes / (?:[1-9]\d* failures?|\d+ failures? / [1-9]\d* errors?).*$",
    ),
    (_FT.TEST_FAILURE, "tests passed", r"^[ \t]*\d+% tests passed, [1-9]\d* tests? failed out of"),
    (
        _FT.TEST_FAILURE,
        "FAIL|Failed|failed",
        r"^(?:Result: FAIL|Failed \d+/\d+ (?:sub)?tests?.*|# Looks like you failed .*)$",
    ),
    (_FT.TEST_FAILURE, "not ok", r"^not ok \d+\b"),
    # a task runner's failed task named for tests (`Failed:    web#test`)
    (_FT.TEST_FAILURE, "Failed:", r"^[ \t]*Failed:[ \t]+[\w@/.-]+[#:](?:test|spec)s?\b"),
    # a runner that found no test to run for the files or filter it was given
    (
        _FT.TEST_FAILURE,
        "No test|No tests|no test",
        (r"^[ \t]*(?:No test files found|No tests? (?:found|ran|were found|matched)"
        r"|[Nn]o tests to run)\b.*$"),
    ),
    (
        _FT.TEST_FAILURE,
        "fail",
        r"^[ \t]*(?:Tests?|Specs?|Examples?)\s*:?\s.*\b[1-9]\d* (?:failed|failing|failures?)\b.*$",
    ),
    (
        _FT.TEST_FAILURE,
        "fail",
        (r"^[ \t=]*[1-9]\d* (?:failed|failing)(?:, \d+ (?:passed|skipped|errors?))*"
        r"(?: in [\d.]+ ?[a-z]*)?[ \t=]*$"),
    ),
    (
        _FT.TEST_FAILURE,
        "ome tests|est failed|ests failed",
        r"\b(?:[Ss]ome tests (?:failed|did not pass)|[Tt]ests? failed)\b",
    ),
    # a module the compilation needs that is not installed: what aborts it (Perl's `BEGIN
    # failed--compilation aborted` under `Can't locate X.pm in @INC`)
    (_FT.DEPENDENCY_ERROR, "in @INC", r"\bCan't locate \S+\.pm in @INC\b"),
    # a memory checker's report of the program's invalid access (valgrind's `==311== Invalid
    # read of size 4`, a data race): the program's failure at run time
    (
        _FT.RUNTIME_ERROR,
        "== Invalid|== Conditional|== Use of|== Mismatched|== Source and|== Possible|== Syscall",
        (r"^==\d+== (?:Invalid (?:read|write|free)|Conditional jump or move depends|"
        r"Use of uninitialised value|Mismatched free|Source and destination overlap|"
        r"Possible data race|Syscall param \S+ points to)"),
    ),
    # builds and doc builders that stop on their own verdict
    (
        _FT.BUILD_ERROR,
        "build |BUILD |uilding",
        (r"\bbuild (?:finished with problems|failed)\b|\bBUILD FAIL(?:ED|URE)\b"
        r"|\b(?:[Ee]rror|[Ff]ailure) (?:while )?building\b"),
    ),
    (_FT.BUILD_ERROR, "Aborted with", r"^Aborted with \d+ warnings? in strict mode"),
    # a bundler that cannot resolve a path of the project's own (`Could not resolve
    # './data/x.js'`, `Can't resolve './styles.css'`): the source is wrong, not a package
    (
        _FT.BUILD_ERROR,
        "resolve",
        r"\b(?:[Cc]ould not|[Cc]an't|[Cc]annot|[Uu]nable to) resolve (?:import )?['\"`]\.{1,2}/",
    ),
    # a resolver's `Cannot find module './x' from '/p/src/main.js'`: the file that names it
    (
        _FT.BUILD_ERROR,
        "find module&from",
        r"\b[Cc]annot find module ['\"]\.{1,2}/[^'\"\n]*['\"] from ['\"]",
    ),
    # an image build whose step failed (docker, buildah)
    (_FT.BUILD_ERROR, "failed to solve", r"\bfailed to solve\b"),
    (_FT.BUILD_ERROR, "CompileError", r"\*\* \(CompileError\)"),
    (_FT.BUILD_ERROR, "Compilation error", r"^== Compilation error in file "),
    (
        _FT.BUILD_ERROR,
        "ompil",
        (r"\b(?:[Cc]ompilation (?:failed|terminated|aborted)|could not compile)\b"
        r"|\b[1-9]\d* (?:compile|compilation|build) error(?:s|\(s\))?"),
    ),
    (
        _FT.BUILD_ERROR,
        "ailed to render|be rendered",
        r"\b(?:[Ff]ailed to render|could not be rendered)\b",
    ),
    # checkers: rule ids in their namespaced shapes, formatters' verdicts
    (_FT.TYPECHECK_ERROR, "TS", r"\bTS\d{4,5} \[ERROR\]|\berror TS\d{4,5}\b"),
    (_FT.LINT_ERROR, "lint/", r"\blint/\w+/\w+\b"),
    # the stylish reporter's closing count (eslint's, html-validate's, stylelint's)
    (
        _FT.LINT_ERROR,
        "problem|violation",
        r"^[ \t]*[\u2716\u00d7\u2717x][ \t]+[1-9]\d* (?:\w+ )?(?:problems?|violations?) \(",
    ),
    # its rows, where it prints no count: a place, the message, the rule's id closing it
    (
        _FT.LINT_ERROR,
        ":",
        (r"^[ \t]*(?:[\u2716\u00d7\u2717\u26a0][ \t]+)?\d+:\d+(?:-\d+:\d+)?[ \t]{2,}\S[^\n]*?"
        r"[ \t]{2,}@?[a-z][\w.@-]*(?:/[\w.-]+)*[ \t]*$"),
    ),
    # a formatter's check that prints the change it would make: a unified diff
    (
        _FT.LINT_ERROR,
        "+++ |--- ",
        r"^\+\+\+ \S[^\n]*(?=\n@@ )|^--- \S[^\n]*\n\n?\+\+\+ [^\n]*\n\n?@@ ",
    ),
    (_FT.LINT_ERROR, "SC", r"\bSC\d{4}\b"),
    (
        _FT.LINT_ERROR,
        "would|formatted|sorted|differs|Rewriting|Reformatted|Fixing|Fixed",
        (r"\b(?:Formatter would have printed|would reformat|would be reformatted"
        r"|(?:is|are|was|were) not (?:properly )?(?:formatted|sorted)|should be [\w-]*formatted"
        r"|(?:output|formatted code) differs from (?:the )?input)\b.*$"
        # a fixer that rewrote a file: the check it runs as failed (pyupgrade, autoflake)
        r"|^(?:Rewriting|Reformatted|Fixing|Fixed) [\w./-]+\.\w+\s*$"),
    ),
    # a count of files that failed the formatter's check, a file the formatter marks
    (
        _FT.LINT_ERROR,
        "format check|formatting check|# reformat",
        r"\b[1-9]\d* files? failed (?:the )?format(?:ting)? check\b|^\S+ # reformat\b",
    ),
    # a checker's closing count of what it found, a quality gate's threshold
    (
        _FT.LINT_ERROR,
        "ound |OUND |errors =|s found|s detected",
        (r"^[^\n]*\b(?i:found (?:[1-9]\d*|some) (?:\w+ )?"
        r"(?:errors?|issues?|problems?|violations?))\b"
        r"|^Total accumulated errors = [1-9]"
        r"|(?<![Nn]o )\b(?:[Ii]ssues|[Pp]roblems|[Vv]iolations) (?:found|detected)"
        r"(?:: [1-9]|[.!]|[ \t]*$)"),
    ),
    # `2 errors and 0 warnings in 1 file`, `Checker ends with 4 errors.`
    (
        _FT.LINT_ERROR,
        "warning in|warnings in|ends with",
        (r"\b[1-9]\d* errors? and \d+ warnings? in \d+ files?\b"
        r"|\bends with [1-9]\d* (?:errors?|warnings?|violations?)\b"),
    ),
    (_FT.LINT_ERROR, "minimum", r"\bFAILED \(minimum:? [\d.]+%, actual:? [\d.]+%\)"),
    # a checker's closing count of warnings alone (`Total: 5 warnings / 0 errors in 1 file`,
    # `\u26a0 1 warning`): a compiler that fails says error; a file's count of its errors
    (
        _FT.LINT_ERROR,
        "warning|has ",
        (r"^[^\w\n]{0,3}[ \t]*(?:Total:[ \t]*)?[1-9]\d* warnings?(?:[ \t]*/[ \t]*\d+ errors?)?"
        r"(?: in \d+ files?)?\.?[ \t]*$|^\S+ has [1-9]\d* (?:[\w-]+ )*errors?\.[ \t]*$"),
    ),
    # a quality gate's score out of ten, a checker of declared dependencies, a count of
    # the issues a check identified
    (
        _FT.LINT_ERROR,
        "/10|ependenc|identified",
        (r"\b(?:[Ff]inal rating|[Rr]ated at|[Ss]core):? -?\d+(?:\.\d+)?/10\b"
        r"|\bappears? to be (?:undeclared|unused)\b|\b(?:undeclared|unused) dependenc(?:y|ies)\b"
        r"|\bidentified [1-9]\d* issues?\b"),
    ),
    (_FT.LINT_ERROR, " error", r"^[1-9]\d* errors?[ \t]*\n\d+ warnings?[ \t]*$"),
    # findings placed in words, not `file:line` (`line 3 column 5 - Warning:`, `Warning 2 in
    # f.tex line 4:`, `... at line 5, column 5.`)
    (
        _FT.LINT_ERROR,
        "column|Warning |Error |Message | line ",
        (r"^[Ll]ine \d+,? column \d+ - \w+: |^(?:Warning|Error|Message) \d+ in \S+ line \d+: "
        r"|^[\w./-]+ line \d+: [A-Z][^\n]*\.$"  # a configuration file's `f line 10: Bad x.`
        # the same words on two findings at least (one may be a parser's error)
        r"|\bat line \d+, column \d+\b[^\n]*\n(?:[^\n]*\n){0,4}?[^\n]*\bat line \d+, column \d+\b"),
    ),
    (
        _FT.LINT_ERROR,
        "at column",
        r"\bon line \d+ at column \d+\b[^\n]*\n(?:[^\n]*\n){0,4}?[^\n]*\bon line \d+ at column \d+",
    ),
    # a path that fails the rules set for its kind (`a_b.ts failed for `.ts` rules`), a
    # file's finding that closes with what was detected (`a.py: Unused imports detected`)
    (
        _FT.LINT_ERROR,
        "failed for| detected",
        (r"^\S+\.\w+ failed for\b[^\n]*\brules?\b"
        r"|^[\w./-]+\.\w+: [A-Z][\w/ ,-]* detected[ \t]*$"),
    ),
    (_FT.TYPECHECK_ERROR, "error", r"^[ \t]*\d+ errors?, \d+ warnings?, \d+ (?:notes?|infos?\w*)$"),
    # a configuration or data file that does not parse, at its line (`source: app.conf line:
    # 4 ... parser failed`, `Caddyfile:6 - Error during parsing`), `error at line 3 of x.conf`,
    # `YAML parsing failed`, `parsing YAML file x.yml: ...`: nothing compiles it
    (
        _FT.LINT_ERROR,
        "pars&.conf|.cfg|.ini|.yml|.yaml|.toml|.json|.xml|.vcl|file:|file line",
        rf"^(?=[^\n]*?\bpars(?:e|er|ing)\b)[^\n]*?{_CONF_AT}",
    ),
    (
        _FT.LINT_ERROR,
        (
            "error at line|AML pars|SON pars|OML pars|XML pars|INI pars|parsing YAML|"
            "parsing JSON|parsing TOML|parsing XML|parsing INI|parsing config"
        ),
        (r"\berror at line \d+ of \S+\.(?:conf|cfg|ini|ya?ml|toml|json|xml)\b"
        r"|\b(?:YAML|JSON|TOML|XML|INI) pars(?:ing|er?) (?:failed|error)\b"
        r"|\bparsing (?:YAML|JSON|TOML|XML|INI|config\w*) file\b"),
    ),
    # validators of configuration and data, and checkers that name a rule per finding
    (
        _FT.LINT_ERROR,
        "alidat|nvalid|not valid|erification failed|expected JSON schema|expected schema",
        (r"\b[Vv]alidation errors? (?:were |was )?(?:encountered|found)\b"
        r"|\bfailed (?:schema )?validation\b|\bis invalid: |^Invalid (?:file|config\w*): "
        r"|\bfails to validate\b|\b[Vv]alidation:? (?:failed|[Ee]rror)\b"
        r"|^\S+\.\w+(?: -| is)? (?:invalid|not valid)\s*$|\bverification failed\b"
        r"|\bdoes not match the expected (?:JSON )?schema\b"),
    ),
    (
        _FT.LINT_ERROR,
        "]",
        (r"^\S+\.\w+:\d+(?::\d+)?: (?:error|warning|style|performance|portability): "
        rf"[^\[\n][^\n]*\s\[{_RULE}\]\s*$"
        # a rule id right after the place (`f.py:19:8 [FURB141]: ...`)
        r"|^\S+\.\w+:\d+(?::\d+)?:? \[[A-Z]{1,6}\d{1,5}\]:? \S"
        # a rule slug as the severity's qualifier (`error[template-injection]: ...`)
        r"|^(?:error|warning)\[[a-z][a-z\d]*(?:-[a-z\d]+)+\]: "),
    ),
    # a finding on a file of data, configuration or markup, which nothing compiles
    (
        _FT.LINT_ERROR,
        ": error|: warning|: hint",
        (r"^\S+\.(?:json|ya?ml|toml|xml|html?|md|rst|tex|conf|cfg|ini|desktop|po|csv|svg|"
        r"properties|plist|service|env)(?::\d+(?:[:.,]\d+)*)?: (?:error|warning|hint)\b"),
    ),
    # a document's code block that does not parse (`README.md:3: code block parse error`)
    (
        _FT.LINT_ERROR,
        "parse error|syntax error",
        r"^\S+\.(?:md|rst|txt|adoc|tex)(?::\d+)+: [^\n]*\b(?:parse|syntax) error\b",
    ),
    # a place, then the finding's rule code (`Dockerfile:2 DL3008 warning:`,
    # `f.txt:03,04: [C0103] ...`, rubocop's `f.rb:1:1: C: Style/Documentation: ...`)
    (
        _FT.LINT_ERROR,
        ":",
        r"^\S+:\d+(?:[:,]\d+)?:? (?:[CWERF]: )?(?:\[?[A-Z]{1,6}\d{2,5}\]?[: ]|[A-Z]\w+/[A-Z]\w+: )",
    ),
    # a rule slug closing a located finding (`f.rst:8: ... (missing-space-after-role)`), or
    # a line number, then the rule's code (`1: T1 Title exceeds max length`)
    (
        _FT.LINT_ERROR,
        ")\n|: T|: B",
        (r"^\S+\.\w+:\d+(?::\d+)?:? [^\n]*\s\([a-z][a-z\d]*(?:-[a-z\d]+)+\)\s*$"
        r"|^\d+: [A-Z]{1,3}\d{1,4} [A-Z][^\n]*$"),
    ),
    # a module or package that is not installed, a header or a package that cannot be had
    (_FT.DEPENDENCY_ERROR, "no package called", r"\bthere is no package called\b"),
    # a lock file that no longer matches the manifest: what is installed cannot be had
    (
        _FT.DEPENDENCY_ERROR,
        "ock file|ockfile|OCKFILE|lock.|.lock",
        (r"(?i:\block ?file\b|[\w-]*lock\.(?:json|ya?ml|toml)\b|\.lock\b)[^\n]{0,100}?"
        r"\b(?:needs to be updated|not up to date|out of date|outdated|in sync|out of sync)\b"
        r"|\bOUTDATED_LOCKFILE\b"),
    ),
    (
        _FT.DEPENDENCY_ERROR,
        "was last generated|was generated",
        r"\bchanged (?:significantly )?since \S*lock\S* was (?:last )?generated\b",
    ),
    # an installed package whose version the tool cannot use (`which typescript@7.0.2 does
    # not export`), and the install of another version the error prescribes
    (
        _FT.DEPENDENCY_ERROR,
        "not export|not support|not provide",
        r"\b[\w/-]+@\d+(?:\.\d+)+\b[^\n]{0,40}?\b(?:does not|is not) (?:export|support|provide)",
    ),
    (
        _FT.DEPENDENCY_ERROR,
        "npm i|pnpm i|pnpm add|yarn add|yarn install|bun i|bun add&@",
        r"^\s*(?:npm|pnpm|yarn|bun) (?:install|add|i) (?:-\S+ )*@?[\w/.-]+@[~^]?\d",
    ),
    # a package, gem or module the run looked for and could not find (`Bundler::GemNotFound`,
    # `PackageNotFoundError`), or a configure check that found no header or library
    (
        _FT.DEPENDENCY_ERROR,
        "NotFound|any of the sources|checking for",
        (r"\b\w*(?:Gem|Package|Module|Dependency|Library|Distribution)NotFound\w*\b"
        r"|\bin any of the sources\b"
        r"|^checking for [^\n]*\.\.\. no\n(?:[^\n]*\n){0,3}?\w+: error: "),
    ),
    # a dependency, package, module or collection that is not found
    (
        _FT.DEPENDENCY_ERROR,
        "not found",
        # (not a path of the project's own: webpack's `Module not found: ... './charts'`)
        (r"\b(?:[Dd]ependency|[Pp]ackage|[Mm]odule|[Cc]ollection|[Ll]ibrary)(?![.\w])"
        r"[^\n]{0,60}?\bnot found\b(?![^\n]*['\"]\.{1,2}/)"),
    ),
    # a file to load that names a module, not a path (`Error: can't find file 'kemal'`)
    (
        _FT.DEPENDENCY_ERROR,
        "rror: ",
        (r"\bError: (?:can't|cannot|could not) (?:find|open) file:? ['\"]?"
        r"[\w@-]+(?:/[\w@-]+)*['\"]?\s*$"),
    ),
    (_FT.DEPENDENCY_ERROR, "' not found", r"\bmodule '[^']+' not found:?\s*$"),
    # a package the package manager cannot locate, a package not installed, packages
    # missing, a build's unmet requirements
    (
        _FT.DEPENDENCY_ERROR,
        "ocate|not installed|missing |nmet",
        (r"\b(?:[Uu]nable to locate|[Cc]ould not locate) (?:a )?"
        r"(?:package|distribution|gem|crate)\b"
        r"|\b(?:[Pp]ackage|[Mm]odule|[Dd]ependency|[Gg]em|[Cc]rate)\b[^\n]{0,60}?\bnot installed\b"
        r"|\bmissing (?:packages?|dependenc(?:y|ies)|modules?)\b"
        r"|\b[Uu]nmet (?:dependenc(?:y|ies)|requirements?|peer)"),
    ),
    (_FT.DEPENDENCY_ERROR, "cannot load such file", r"\bcannot load such file -- \S+"),
    # a wait for a service or a file that ran out of its time (`Error: Timed out waiting
    # for: tcp:5432`): the time limit ended the run
    (_FT.TIMEOUT, "imed out waiting for", r"^(?:\w*Error: )?[Tt]imed out waiting for\b"),
    # a package that calls a built-in its runtime does not have yet (`Promise.withResolvers
    # is not a function` thrown in node_modules): the runtime's version cannot run it
    (
        _FT.DEPENDENCY_ERROR,
        "is not a function",
        (r"^TypeError: (?:Promise|Array|Object|String|Set|Map|Iterator|Intl|Reflect|Symbol|"
        r"Math|Number|ArrayBuffer|Atomics)\.\w+ is not a function\n(?:[^\n]*\n){0,3}?"
        r"[ \t]+at [^\n]*\bnode_modules/"),
    ),
    # an installed package whose requirement is not installed or of another version
    (
        _FT.DEPENDENCY_ERROR,
        "which is not installed|but you have",
        (r"\brequires [\w.-]+(?:\[[\w,]+\])?[^\n,]*, which is not installed\b"
        r"|\bhas requirement [^\n]*, but you have\b"),
    ),
    (_FT.DEPENDENCY_ERROR, "find include", r"\bcan't find include (?:lib|file) \""),
    (
        _FT.DEPENDENCY_ERROR,
        "failed to ",
        r"\bpackage\b[^\n]*\bfailed to (?:load|fetch|download|resolve)\b",
    ),
)  # fmt: skip
"""Closing verdicts, in the order they are tried: a test count beats a build verdict."""

SETUP = ReflectionCategory.MISSING_CONTEXT
"""The category of a check that could not run: what the environment lacks."""


@functools.lru_cache(maxsize=8)
def verdict(text: str) -> Verdict | None:
    """Return the type the output's own verdict shows, or ``None`` when it shows none.

    The last few outputs' verdicts are kept: a reading asks for the same output's verdict
    up to three times (whether a reader's claim stands, the generic reading, a crash's
    cause), and a string's hash is computed once.

    Args:
        text: The cleaned output.

    Returns:
        The verdict. ``setup`` is true when the output says the check never started (the
        runner module, command or script is missing, or may not be run) and nothing else:
        a few lines at most, so a test run that prints such a line among its results is
        still the test run's failure.
    """
    if _few_lines(text):
        for needles, pattern, failure_type, span in _SETUP_SHAPES:
            match = _search(needles, pattern, text, span)
            if match is not None:
                return Verdict(failure_type, _line_of(text, match.start()), setup=True)
    for needles, pattern, failure_type, span in _SHAPES:
        match = _search(needles, pattern, text, span)
        if match is not None:
            line = _line_of(text, match.start())
            closing = failure_type not in _NOT_CLOSING or bool(_CLOSING_COUNT.search(line))
            return Verdict(failure_type, line, closing=closing)
    return None


_FEW = 12
"""Lines (not blank) a check that did not start prints at most: it says little."""


def _few_lines(text: str) -> bool:
    """Whether *text* has at most ``_FEW`` lines that are not blank (it stops counting past)."""
    count = 0
    start = 0
    while count <= _FEW:
        end = text.find("\n", start)
        if end < 0:
            return count + bool(text[start:].strip()) <= _FEW
        count += bool(text[start:end].strip())
        start = end + 1
    return False


_NOT_CLOSING = frozenset({FailureType.LINT_ERROR, FailureType.DEPENDENCY_ERROR})
_CLOSING_COUNT = Pattern(
    r"\b(?i:found) [1-9]\d* |\b[Ss]chema validation failed\b|^Total accumulated errors"
    r"|FAILED \(minimum|would|found: [1-9]"
    r"|(?:found|detected)[.!]"
    r"|not (?:properly )?formatted|should be [\w-]*formatted|\d/10\b|identified [1-9]"
    r"|(?:^|\s)-? ?invalid\s*$"
)
"""A checker's line that closes its run (a count, a gate, a formatter's verdict): the summary."""


def _search(needles: _Needles, pattern: Pattern, text: str, span: int = 0) -> re.Match[str] | None:
    """The first match of *pattern* around the lines holding its needles.

    The lines are found by substring search (``str.find``), and the pattern reads only
    them, with the line above (a match may start there and reach the needle across a line
    end) and *span* + 1 lines below; windows that touch are read as one. The cost is linear
    in the output and small where the needles are rare: most lines hold none.
    """
    if not _holds_any(needles[0], text):  # most shapes' words are absent: say so at once
        return None
    lines = _lines_holding(needles, text)
    if lines is None:  # the needles are on many lines: one pass over the text costs less
        return pattern.search(text)
    for start, end in _windows(lines, text, span):
        match = pattern.search(text, start, end)
        if match is not None:
            return match
    return None


_BELOW = Pattern(rf"(?:[^\n]*\n){{{_SPAN + 2}}}")
"""A line and the ``_SPAN`` + 1 lines below it, read in one pass (not a find a line)."""


def _windows(lines: list[int], text: str, span: int) -> list[tuple[int, int]]:
    """The stretches of *text* around the lines starting at *lines*, those that touch joined."""
    windows: list[tuple[int, int]] = []
    for line in lines:
        start = text.rfind("\n", 0, max(line - 1, 0)) + 1
        if span:  # every shape reads its needle's line and one more, or _SPAN more
            below = _BELOW.match(text, line)
            end = below.end() if below is not None else len(text)
        else:
            first = text.find("\n", line) + 1
            end = (text.find("\n", first) + 1 or len(text)) if first else len(text)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _holds_any(words: tuple[str, ...], text: str) -> bool:
    """Whether *text* holds one of *words* (a substring test each, no line is split)."""
    for word in words:  # noqa: SIM110 -- any() costs more: this runs for every shape and reading
        if word in text:
            return True
    return False


_MANY = 8
"""Lines holding a needle past which the pattern reads the whole text instead (``:`` is on
most lines of a checker's output: windows around each would cost more than one pass)."""


def _lines_holding(needles: _Needles, text: str) -> list[int] | None:
    """The offsets of the lines of *text* that hold a needle of each group, in order.

    ``None`` when more than ``_MANY`` lines hold one of the first group's.
    """
    first, *others = needles
    starts: set[int] = set()
    found = 0
    for needle in first:
        index = text.find(needle)
        while index >= 0:
            found += 1
            if found > _MANY:
                return None
            start = text.rfind("\n", 0, index) + 1
            line_end = text.find("\n", index + len(needle))
            line = text[start : line_end if line_end >= 0 else len(text)]
            if all(any(n in line for n in group) for group in others):
                starts.add(start)
            if line_end < 0:
                break
            index = text.find(needle, line_end)
    return sorted(starts)


def _line_of(text: str, index: int) -> str:
    """Return the whole line of *text* that holds *index*, stripped."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)].strip()
