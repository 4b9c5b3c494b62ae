"""Reading a failure: clean the output, try the registered readers in order, fall back.

:func:`analyse` strips terminal colours, tries the registered readers from the highest
priority down and returns the findings of the first that recognises the output, merged with
what a wrapping tool (``make``, ``timeout``) adds; the generic reader reads what no reader
claims. Priorities matter: pytest output contains tracebacks, a make run contains gcc's
diagnostics, ``npm test`` wraps jest.
"""

from __future__ import annotations

import re

import attrs

from reflexkit._log import get_logger
from reflexkit._pattern import Pattern
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers._blocks import find_locations
from reflexkit.readers._findings import ANSI, Findings, clip, dedupe
from reflexkit.readers._generic import parse_generic
from reflexkit.readers._json_reports import from_json_report
from reflexkit.readers._kinds import error_kind, signal_exit
from reflexkit.readers._native import parse_make
from reflexkit.readers._registry import registered_readers
from reflexkit.readers._reports import report_as_text
from reflexkit.readers._shell import parse_timeout
from reflexkit.readers._verdicts import Verdict, verdict

__all__ = ["analyse", "clean_output", "type_from_command"]

HEAD_CHARS = 12_000
TAIL_CHARS = 6_000
"""Longer outputs are read as their first and last parts: first errors and final summaries."""

_log = get_logger(__name__)

_COMMAND_SEPARATOR = Pattern(r"\s*(?:&&|\|\||;|\|)\s*")
_STACK_TRACE_READERS = frozenset({"python", "node", "rust-panic"})
_CHECKERS = frozenset(
    {FailureType.LINT_ERROR, FailureType.TYPECHECK_ERROR, FailureType.TEST_FAILURE}
)
_SPECIFIC = frozenset({FailureType.DEPENDENCY_ERROR, FailureType.TIMEOUT})
"""Types the output itself proves, which running the program (``python x.py``) does not undo."""

_COMMAND_TYPES: tuple[tuple[Pattern, FailureType], ...] = (
    (
        Pattern(
            r"(?<!\.)\b(?:pytest|py\.test|unittest|doctest|jest|vitest|mocha|jasmine|karma|ava|"
            r"cargo test|cargo nextest|go test|npm (?:run )?test|yarn test|pnpm test|bun test|"
            r"deno test|node --test|tox|nox|prove|rspec|minitest|phpunit|ctest|bats|"
            r"mvn (?:-\S+ )*(?:test|verify)|gradle(?:w)? (?:\S+ )*test|dotnet test|behave|nose2|"
            r"ward|trial|zig test|swift test|mix test|busted|cabal test|stack test|dune test|"
            r"dart test|flutter test|Pkg\.test|eunit|tclsh \S*test|meson test|raco test|"
            r"crystal spec|nimble test|ava|tape|qunit|c8|nyc|testthat|run_tests)\b"
        ),
        FailureType.TEST_FAILURE,
    ),
    (
        Pattern(
            r"(?<!\.)\b(?:mypy|pyright|tsc|vue-tsc|basedpyright|pyre|pytype|flow check|dmypy|"
            r"ty check|pyrefly|deno check|tsd|flow)\b"
        ),
        FailureType.TYPECHECK_ERROR,
    ),
    (
        Pattern(
            r"(?<!\.)\b(?:ruff|flake8|pylint|eslint|clippy|black --check|prettier|stylelint|"
            r"shellcheck|go vet|staticcheck|golangci-lint|rubocop|hadolint|yamllint|"
            r"markdownlint|bandit|pycodestyle|pydocstyle|isort --check|biome|oxlint|tflint|"
            r"ktlint|checkstyle|cppcheck|clang-tidy|sqlfluff|codespell|vulture|pyflakes|"
            r"htmlhint|jshint|standard|xo|swiftlint|detekt|spotbugs|pmd|semgrep|actionlint|"
            r"typos|taplo|check-jsonschema|kubeconform|terraform validate|php -l|xenon|radon|"
            r"interrogate|lint-imports|mdformat|djlint|doc8|rstcheck|validate-pyproject|deptry|"
            r"proselint|vale|cspell|dprint check|editorconfig-checker|[\w-]*lint|shfmt|refurb|"
            r"reuse|zizmor|knip|madge|html-validate|ajv|pre-commit|cz check|gofmt|rustfmt|"
            r"clang-format|dotenv-linter|ec|depcheck|pyupgrade|yapf|autopep8|autoflake|"
            r"docformatter|pycln|twine check|verilator --lint-only|msgfmt|"
            # an interpreter's syntax check of a file, not a run of it
            r"node (?:--check|-c)|ruby -w?c|perl -w?c|python[\d.]* -m (?:py_compile|json\.tool|"
            r"compileall|tabnanny))\b"
        ),
        FailureType.LINT_ERROR,
    ),
    (
        Pattern(
            r"(?<!\.)\b(?:pip3?|npm (?:install|ci|i)|yarn (?:add|install)|pnpm (?:add|install|i)|"
            r"poetry (?:install|add|lock|update)|uv (?:sync|add|pip|lock)|pipenv|conda|mamba|"
            r"cargo (?:fetch|update|add)|go (?:get|mod)|bundle (?:install|update)|"
            r"gem install|composer (?:install|update|require)|apt(?:-get)? install)\b"
        ),
        FailureType.DEPENDENCY_ERROR,
    ),
    (
        Pattern(
            r"(?<!\.)\b(?:gcc|g\+\+|c\+\+|cc|clang(?:\+\+)?|make|cmake|ninja|meson|bazel|"
            r"cargo build|cargo check|go build|go install|javac|kotlinc|scalac|"
            r"mvn (?:-\S+ )*(?:compile|package|install)|gradle(?:w)? (?:\S+ )*(?:build|assemble)|"
            r"dotnet build|msbuild|npm run build|yarn build|pnpm build|vite build|webpack|"
            r"esbuild|rollup|zig build|swift build|rustc|erlc|ghc|cabal build|stack build|"
            r"dune build|nim c|crystal build|gfortran|gnatmake|gprbuild|fpc|gdc|ldc2|dmd|valac|"
            r"cobc|mcs|csc|iverilog|protoc|buf build|solcjs|solc|asc|coffee -c|scons|tsc -b|"
            r"sass|lessc|nasm|yasm|verilator|gem build|asciidoctor|doxygen|pandoc|typedoc|jsdoc|"
            r"sphinx-build|mkdocs build|hugo|jekyll|zola|mdbook|bison|yacc|flex|cython[\d]*|haxe|"
            r"babel|terser|uglifyjs|stylus|tsup|parcel|vite build|rspack)\b"
        ),
        FailureType.BUILD_ERROR,
    ),
    (Pattern(r"\b(?:git)\b"), FailureType.TOOL_ERROR),
    (
        Pattern(
            r"(?<![.-])\b(?:python[\d.]*|node|cargo run|go run|ruby[\d.]*|java|deno|bun|perl[\d.]*|"
            r"php[\d.]*|dotnet run|Rscript|julia|lua[\d.]*|elixir|tclsh[\d.]*|guile|racket|sbcl|"
            r"csi|ocaml|swipl|gawk|awk|clisp|ts-node|tsx|clojure|clj|bb)\b"
        ),
        FailureType.RUNTIME_ERROR,
    ),
    (Pattern(r"^(?:ba|z|da)?sh\b|\.sh\b"), FailureType.TOOL_ERROR),
)


_WRAPPERS = frozenset({"make", "native program", "shell"})
"""Readers of what runs other programs (or of an exit code alone): a verdict of the program
they ran (a test binary's count under ``make test``) is the failure, they only carried it."""


def _ran_something_else(text: str, found: Findings) -> bool:
    """Whether the output's own verdict says another check failed than the reader's.

    A wrapper (make, a shell, a native program) only carried what it ran: a verdict of
    another type is the failure. A compiler's reader that claimed lines of a run closing
    with a test runner's count read a test run (a build that fails prints no test count),
    and so did a program's stack reader (Python's tracebacks under trial or green); a
    program's stack that closes with a checker's count is a checker's findings.
    """
    proof = verdict(text)
    if proof is not None and proof.setup:
        return _could_not_start(proof, found)
    if proof is None or proof.setup or proof.failure_type is found.failure_type:
        return False
    if found.tool in _WRAPPERS:
        return True
    if not proof.closing:
        return False
    if proof.failure_type in _CHECKERS - {FailureType.TYPECHECK_ERROR}:
        return found.failure_type is FailureType.BUILD_ERROR or found.tool in _STACK_TRACE_READERS
    return False


_NOT_THERE = Pattern(
    r"No such file or directory|not found|Permission denied|Unable to access|not recognized"
)
"""A check that could not start because a program or file it runs is not there (or may not
be run), not because a target, task or script of the project is missing."""


def _could_not_start(proof: Verdict, found: Findings) -> bool:
    """Whether the program a reader's findings are about never ran: the setup is the failure.

    A wrapper (make) whose recipe's program is not installed ran nothing; a reader whose
    only finding is the line that says a program or file is not there read no output of it.
    """
    if proof.failure_type is found.failure_type or _NOT_THERE.search(proof.line) is None:
        return False
    return found.tool in _WRAPPERS or all(proof.line in fact for fact in found.facts)


_PROGRAMS = frozenset({"python", "node", "shell", "command"})
"""Readers of a program's own failure, whose output may hold what it printed before failing."""
_ERROR_START = Pattern(
    r"^(?:Traceback \(most recent call last\):|[\w.]*(?:Error|Exception|_RemoteTraceback)\b.*"
    r"|node:[\w/]+:\d+|(?:file://)?/\S+\.[cm]?[jt]sx?:\d+|\S+: line \d+: .*"
    r"|[\w./-]+: .*(?:No such file or directory|command not found|Permission denied)"
    r"|panic: .*|thread '.*' panicked at .*)$",
    re.MULTILINE,
)
"""The first line of a program's error: what comes before it is the program's own output."""


def _add_printed_before(text: str, found: Findings) -> None:
    """Add the last lines a program printed before its error to the details, if any.

    A script's progress (``found 5 backups``, ``+ cp dist/app.tar.gz releases/``, under
    ``bash -x``) says how far it got, which the error alone does not.
    """
    start = _ERROR_START.search(text)
    if start is None or start.start() == 0:
        return
    lines = [line.strip() for line in text[: start.start()].splitlines() if line.strip()][-2:]
    quoted = "\n".join([*found.facts, *found.details])
    lines = [line for line in lines if line not in quoted]
    if lines:
        found.details.append(
            "printed before the error: " + " / ".join(clip(line, 90) for line in lines)
        )


_BLANK_RUN = Pattern(r"\n(?:[ \t]*\n){3,}")
"""Three or more blank (or whitespace-only) lines in a row."""
_SPACES_KEPT = 160
"""Spaces and tabs in a row kept (pytest pads its progress lines with some 90)."""
_SPACE_RUN = Pattern(rf"[ \t]{{{_SPACES_KEPT + 1},}}")
_ANNOTATION = Pattern(
    r"^::(?:error|warning|notice)(?: (?P<params>[^\n]*?))?::(?P<msg>[^\n]*)$", re.MULTILINE
)
"""A GitHub Actions workflow command (``ruff --output-format=github``, ``--format github``)."""
_ANNOTATION_PARAM = Pattern(r"(?:^|,)(?P<key>file|line|col)=(?P<value>[^,]*)")
_LEADING_LOCATION = Pattern(r"^[^\s:]+:\d+")


def _annotation_message(match: re.Match[str]) -> str:
    """Return a workflow command as the diagnostic it carries (``file:line:col: message``)."""
    message = match["msg"].replace("%0A", "\n").replace("%0D", "").replace("%25", "%")
    if _LEADING_LOCATION.match(message):
        return message
    params = {m["key"]: m["value"] for m in _ANNOTATION_PARAM.finditer(match["params"] or "")}
    if "file" not in params:
        return message
    where = ":".join(params[key] for key in ("file", "line", "col") if params.get(key))
    return f"{where}: {message}"


def clean_output(text: str) -> str:
    """Return *text* as the readers read it: no colours, LF line ends, head and tail if long.

    GitHub Actions annotations (``::error file=...::message``) are read as their message, and
    a checker's JSON report (pyright, ruff, eslint, mypy) as its text format, so a tool's
    github or json output format reads like its plain one.
    """
    text = ANSI.sub("", text).replace("\r\n", "\n")
    text = from_json_report(text) or report_as_text(text) or text
    # A run of blank lines reads as two: many readers' patterns start a line with `\s*`, which
    # crosses blank lines, so a long run made them quadratic (a second on 300 lines).
    text = _BLANK_RUN.sub("\n\n\n", text)
    longer = _SPACES_KEPT + 1
    if " " * longer in text or "\t" * longer in text:  # finding is cheap, the scan is not
        text = _SPACE_RUN.sub(" " * _SPACES_KEPT, text)  # likewise a line of blanks
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    if "::" in text:
        text = _ANNOTATION.sub(_annotation_message, text)
    return text


def type_from_command(command: str) -> FailureType:
    """Guess the failure type from the command line alone (``UNKNOWN`` when it says nothing)."""
    for pattern, failure_type in _COMMAND_TYPES:
        if pattern.search(command):
            return failure_type
    return FailureType.UNKNOWN


_RECENT: dict[tuple[object, ...], Findings] = {}
_RECENT_LIMIT = 4
"""Readings kept: a reflection classifies its failure, then writes about the same reading."""


def analyse(failure: FailureContext) -> Findings:
    """Read a failure's output with the reader for its format.

    The last few readings are kept: classifying a failure and writing its reflection read
    the same output, so the second reading costs a copy.

    Args:
        failure: The failure; its command and exit code help pick the reader.

    Returns:
        The findings of the first reader that recognised the output, or the generic reader's
        low-confidence findings when none did (a copy the caller may change).
    """
    key = (
        failure.error_output,
        failure.command,
        failure.exit_code,
        failure.files_modified,
        failure.failure_type is FailureType.TIMEOUT,
        registered_readers(),
    )
    found = _RECENT.get(key)
    if found is None:
        found = _analyse(failure)
        _named_as_seen(found, failure)
        if len(_RECENT) >= _RECENT_LIMIT:
            del _RECENT[next(iter(_RECENT))]
        _RECENT[key] = found
    return _copied(found)


_NOT_A_NAME = frozenset(
    {"command", "shell", "make", "native program", "agent", "python", "node", "dependencies",
     "timeout", "go program", "rust program", "rust-panic", "TAP", "java"}
)  # fmt: skip
"""Readers' names that are no tool a reflection could wrongly name (an interpreter, a shape)."""


def _named_as_seen(found: Findings, failure: FailureContext) -> None:
    """Name the reader's tool only when the command or the output shows that it ran.

    Another checker that prints a known tool's format (a type checker's mypy-shaped lines, a
    Go analyser's vet-shaped ones) is not that tool: the reflection calls it by the command
    that ran (`` `zuban check src` ``), and "the check" where a sentence names it alone.
    """
    tool = found.tool
    if tool in _NOT_A_NAME or tool.lower() not in found.headline.lower():
        return
    if tool in failure.command or tool in failure.error_output:  # the common case, no copy
        return
    if tool.lower() in failure.command.lower() or tool.lower() in failure.error_output.lower():
        return
    word = Pattern(rf"(?i)(?:\b(the|a|an) )?(?<![\w/.-]){re.escape(tool)}(?![\w-])")
    quoted = Pattern(rf"(?i)`[^`\n]*(?<![\w/.-]){re.escape(tool)}(?![\w-])[^`\n]*`")

    def prose(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            if match.group(1):  # "The Gradle build" -> "The check build", not "The the check build"
                return f"{match.group(1)} check"
            return "The check" if match.start() == 0 else "the check"

        # Only prose outside backticks is renamed: a quoted command or code stays as written.
        parts = _BACKTICKED.split(text)
        return "".join(part if part.startswith("`") else word.sub(one, part) for part in parts)

    def headline(text: str) -> str:
        if failure.command:  # `gradle test` named in a sentence: the command that ran instead
            text = quoted.sub(lambda _match: f"`{failure.command}`", text)
        return prose(text)

    found.headline = headline(found.headline)
    found.advice = headline(found.advice)
    # A step whose command names the unseen tool cannot be run as written: the whole command
    # is no targeted re-run, so the step goes.
    found.steps = [prose(step) for step in found.steps if not quoted.search(step)]


_BACKTICKED = Pattern(r"(`[^`\n]*`)")


def forget_readings() -> None:
    """Drop the readings kept (a benchmark measuring the reading itself calls this)."""
    _RECENT.clear()


def _copied(found: Findings) -> Findings:
    return attrs.evolve(
        found,
        tests=[*found.tests],
        facts=[*found.facts],
        details=[*found.details],
        hints=[*found.hints],
        steps=[*found.steps],
    )


def _analyse(failure: FailureContext) -> Findings:
    """Read a failure's output: the first reader that claims it, its wrapper, or the generic."""
    text = clean_output(failure.error_output)
    found = _first_reading(text, failure)
    if found is not None and found.tool == "agent":  # the agent's log is no tool's output
        return found
    if found is not None and found.failure_type is FailureType.TIMEOUT:
        _add_wrapper(text, found)  # a runner that read its own time-out (go test -timeout)
        _complete(text, failure, found)
        return found
    timeout = parse_timeout(
        text,
        failure.command,
        failure.exit_code,
        timed_out=failure.failure_type is FailureType.TIMEOUT,
        trust_text=found is None or found.failure_type is not FailureType.TEST_FAILURE,
    )
    if found is not None:
        _add_wrapper(text, found)
    if timeout is not None:
        if found is not None and found.tool != "shell":
            timeout.details = dedupe([*found.facts[:2], *timeout.details])
        return timeout
    if found is None or _ran_something_else(text, found):
        return _read_wrapped(text, failure, found)
    _complete(text, failure, found)
    return found


def _add_wrapper(text: str, found: Findings) -> None:
    """Add the failing target(s) of the build tool (make, ninja, scons) around the tool."""
    if found.tool == "make":
        return
    wrapper = parse_make(text)
    if wrapper is not None:
        found.details.extend(d for d in (wrapper.details or wrapper.facts)[:3] if d)
    else:
        _add_failing_target(text, found)


def _complete(text: str, failure: FailureContext, found: Findings) -> None:
    """Add what a reader's findings leave out.

    The signal that ended the command, what a program printed before its error, and the
    type of a checker that crashed.
    """
    signal = signal_exit(failure.exit_code)
    if signal and not any(signal in d for d in found.details):
        found.details.append(signal)
    if found.tool in _PROGRAMS:
        _add_printed_before(text, found)
    if found.tool in _STACK_TRACE_READERS:
        _crash_of_a_compiler_or_a_package(text, found)
        if found.failure_type is not FailureType.DEPENDENCY_ERROR:  # a package it lacks: that
            _crash_of_a_checker(found, failure.command)


_FAILING_TARGET = Pattern(r"^(?:FAILED: \S.*|\w+: \*\*\* \[[^\]\n]+\] Error \d+)$", re.MULTILINE)
"""A build driver's line naming the target that failed: ninja's ``FAILED: obj/a.o``,
scons's ``scons: *** [bin/app] Error 1`` (make's is read by make's reader)."""


def _add_failing_target(text: str, found: Findings) -> None:
    if "FAILED: " not in text and "*** [" not in text:
        return
    quoted = "\n".join([*found.facts, *found.details])
    targets = [m.group(0).strip() for m in _FAILING_TARGET.finditer(text)]
    found.details.extend(t for t in dedupe(targets)[:2] if t not in quoted)


def _read_wrapped(text: str, failure: FailureContext, wrapper: Findings | None) -> Findings:
    """The generic reading, with the first fact of the wrapper around it (``make``'s)."""
    found = _read_generic(text, failure)
    if wrapper is not None:
        found.details.extend(d for d in wrapper.facts[:1] if d not in found.facts)
    return found


def _read_generic(text: str, failure: FailureContext) -> Findings:
    """Read output no reader claimed, typed by the command where its shape says nothing."""
    found = parse_generic(text, failure.exit_code, failure.files_modified, command=failure.command)
    if found.evidence:  # the output's own verdict decides, whatever the command line says
        if found.failure_type is FailureType.LINT_ERROR and found.facts:
            _as_findings_of_a_checker_of_its_kind(found, failure.command)
        if found.failure_type is FailureType.DEPENDENCY_ERROR:
            # what cannot be had (a lock file out of date, a gem): the environment's lesson,
            # and the line that says so first
            found.category = ReflectionCategory.MISSING_CONTEXT
            if not any(found.evidence in fact for fact in found.facts):
                found.facts.insert(0, clip(found.evidence, 200))
        return found
    guessed = _compound_command_type(_script_command(text, failure.command), found.failure_type)
    keeps_own = (guessed is FailureType.RUNTIME_ERROR and found.failure_type in _SPECIFIC) or (
        # a build that runs its tests (`nim c -r`, `make check`): the failing tests are shown
        guessed is FailureType.BUILD_ERROR and bool(found.tests)
    )
    if guessed is not FailureType.UNKNOWN and not keeps_own:
        found.failure_type = guessed
    elif found.failure_type is FailureType.UNKNOWN and _are_findings(found.facts):
        # placed or coded findings, no crash, no compiler's error, no test: a checker's
        found.failure_type = FailureType.LINT_ERROR
        _as_findings_of_a_checker_of_its_kind(found, failure.command)
        return found
    if guessed is FailureType.LINT_ERROR and found.facts:
        _as_findings_of_a_checker(found)
    if found.failure_type is FailureType.RUNTIME_ERROR and _INPUT_ERROR.search(text):
        found.failure_type = FailureType.BUILD_ERROR  # a compiler's parse error, not a crash
    if found.failure_type in {FailureType.RUNTIME_ERROR, FailureType.TOOL_ERROR}:
        _add_printed_before(text, found)
    return found


_SCRIPT_BANNER = Pattern(r"^> \S+@\S+ [\w:.-]+\n> (?P<cmd>\S.*)$", re.MULTILINE)
"""npm's (and pnpm's) banner of a script it runs: ``> pkg@1.0.0 lint`` then the script."""


def _script_command(text: str, command: str) -> str:
    """The command line, or the script ``npm run x`` ran as its banner prints it."""
    if "> " not in text:
        return command
    banner = _SCRIPT_BANNER.search(text)
    return banner["cmd"] if banner is not None else command


_TYPE_FINDING = Pattern(
    r"\b(?:is incompatible with|[Ii]ncompatible types?|is not assignable to|not assignable to "
    r"(?:parameter|type)|[Tt]ype mismatch|[Aa]rgument of type|expected type|has type|"
    r"[Tt]ype specification|success typing)\b"
)
"""A finding about types (``number is incompatible with string``): a type checker's."""
_CODED = Pattern(
    r"\b[A-Z]{1,4}\d{3,5}\b|\[[a-z][\w-]*(?:[-/.][\w-]+)+\]|\([a-z][\w-]*-[\w-]+\)\s*$"
    r"|^\S+:\d+(?::\d+)?:? [a-z][a-z_.]+[a-z]: "
)
"""A rule's id: a code (``E3030``), a bracketed or parenthesised slug (``[no-unused-vars]``,
``(no-undefined-references)``), a slug after the place (``post.md:3:17: weasel_words.very:``)."""


_LOG_HEADER = Pattern(r"^[IWEF]\d{4} \d\d:\d\d:\d\d")
"""A log line's severity, date and time (klog's ``E1128 12:15:07.339 ...``): its place is the
logger's own source line, not a finding's."""


def _are_findings(facts: list[str]) -> bool:
    """Whether quoted lines read as a checker's findings: placed in a file, or a rule's id."""
    return any(
        (find_locations(fact) or _CODED.search(fact)) and not _LOG_HEADER.match(fact)
        for fact in facts
    )


def _as_findings_of_a_checker_of_its_kind(found: Findings, command: str) -> None:
    """A checker's findings; a type checker's when its command or its findings say types."""
    typed = type_from_command(command) is FailureType.TYPECHECK_ERROR
    if typed or _TYPE_FINDING.search(" ".join(found.facts)) is not None:
        found.failure_type = FailureType.TYPECHECK_ERROR
    else:
        _as_findings_of_a_checker(found)


def _as_findings_of_a_checker(found: Findings) -> None:
    """A checker's findings: the code fails a check (a syntax error: the code is broken)."""
    broken = _BAD_INPUT.search(" ".join(found.facts)) is not None
    found.category = ReflectionCategory.ROOT_CAUSE if broken else ReflectionCategory.VERIFICATION
    found.advice = (
        "The checker rejects the code at the lines quoted: fix each finding where it "
        "points, keeping behaviour the same; do not disable the rule or the check."
    )


def _compound_command_type(command: str, shape: FailureType) -> FailureType:
    """The type a command line implies; of ``a && b``, the part whose kind the output shows.

    ``javac X.java && java X`` that prints a Java stack trace failed in ``java``: when the
    output's shape matches one part, that part's type wins, else the first part that says
    anything.
    """
    parts = _COMMAND_SEPARATOR.split(command)
    types = [_part_type(part) if len(parts) > 1 else type_from_command(part) for part in parts]
    known = [t for t in types if t is not FailureType.UNKNOWN]
    if not known:
        return FailureType.UNKNOWN
    return shape if shape in known else known[0]


def _part_type(part: str) -> FailureType:
    """The type of one part of a compound command; a program of the project's (``./x``) runs.

    ``gfortran -o app app.f90 && ./app`` that prints a runtime error failed in ``./app``.
    """
    guessed = type_from_command(part)
    if guessed is FailureType.UNKNOWN and part.startswith("./"):
        return FailureType.RUNTIME_ERROR
    return guessed


_BAD_INPUT = Pattern(r"(?i)\b(?:parse|syntax) ?error\b|\bunexpected token\b|\binvalid json\b")
"""A checker's stack trace whose message is about the file it checked, not about itself."""


_INPUT_ERROR = Pattern(
    r"^(?:\w*SyntaxError|[Pp]arse error|\w*Parser?Error)\b:? (?:at )?"
    r"[\w./@~-]*\w\.(?!json\b)[a-z]\w*(?::\s|:\d+[:,]\d+\b)"
    # a renderer's frame around the source line it is about (miette's `,-[a.ts:3:1]`,
    # ariadne's `\u256d\u2500[ a.js:2:28 ]`): a diagnostic of the input the tool read
    r"|^[ \t]*(?:,-|\u256d\u2500)\[ ?[\w./@~-]+\.[a-z]\w*:\d+:\d+ ?\]\s*$",
    re.MULTILINE,
)
"""A tool's parse error that names the file it read (Babel's ``SyntaxError: /p/a.js:
Unexpected token``, Terser's ``Parse error at a.js:6,19``): a compiler's verdict on its input,
not the program's own crash (node's own ``SyntaxError: Unexpected token`` names no file)."""


_THROWN_VERDICTS = frozenset({FailureType.BUILD_ERROR, FailureType.TIMEOUT})
"""Verdicts a tool may throw with a stack: a build's, a time limit's."""

_RENDERED = Pattern(
    r"^[ \t]*(?:,-|\u256d\u2500)\[ ?[\w./@~-]+\.[a-z]\w*:\d+:\d+ ?\]\s*$", re.MULTILINE
)
"""A renderer's frame around the source line its error is about (miette's, ariadne's)."""


def _crash_of_a_compiler_or_a_package(text: str, found: Findings) -> None:
    """A program's stack whose error is a compiler's on its input, or a package's version.

    A JavaScript compiler, bundler or minifier throws its parse error with a stack: the
    failure is the build's. A tool that stops because an installed package is of a version
    it cannot use (the output's own verdict says so) failed for a dependency.
    """
    if found.failure_type is not FailureType.RUNTIME_ERROR:
        return
    if _INPUT_ERROR.search(text) is not None:
        found.failure_type = FailureType.BUILD_ERROR
        if _RENDERED.search(text) is not None:  # the error is the renderer's, above the stack
            rendered = parse_generic(text, None)
            found.facts = dedupe([*rendered.facts, *found.facts])[: len(rendered.facts) + 1]
            found.details = dedupe([*rendered.details, *found.details])
        return
    proof = verdict(text)
    if proof is not None and proof.failure_type is FailureType.DEPENDENCY_ERROR:
        found.failure_type = FailureType.DEPENDENCY_ERROR
        found.category = ReflectionCategory.MISSING_CONTEXT
    elif proof is not None and proof.failure_type in _THROWN_VERDICTS:
        # a bundler's module it cannot find from a file, a wait that ran out of time:
        # the tool's verdict, thrown with its stack
        found.failure_type = proof.failure_type
        if proof.failure_type is FailureType.TIMEOUT:
            found.category = ReflectionCategory.MISSING_CONTEXT
            found.advice = (
                "The run waited for something that never became ready (a server, a port, a "
                "file) until its time limit: start it, or find why it did not come up (its "
                "log, its port, its address), before running the check again."
            )


def _crash_of_a_checker(found: Findings, command: str) -> None:
    """A linter, type checker or test runner that dies with a stack trace failed as that tool.

    The trace is the tool's own (a missing plugin or config, a crash), so the failure type
    follows the command, and the lesson is about what the tool needs, not the user's code.
    """
    guessed = type_from_command(command)
    if guessed not in _CHECKERS:
        return
    found.failure_type = guessed
    if guessed is FailureType.LINT_ERROR and _BAD_INPUT.search(" ".join(found.facts)):
        _as_findings_of_a_checker(found)  # it threw its verdict on the input: a finding
        return
    kind = error_kind(" ".join(found.facts))
    found.category = kind.category if kind is not None else ReflectionCategory.TOOL_MISUSE
    found.advice = (
        f"The tool itself stopped with an error before checking anything: {kind.advice}"
        if kind is not None
        else "The tool itself stopped with an error before checking anything: fix its "
        "configuration, plugins or invocation as the message says, then run it again."
    )


def _first_reading(text: str, failure: FailureContext) -> Findings | None:
    """Return the findings of the first registered reader that recognises *text*."""
    for reader in registered_readers():
        if not reader.may_read(text):
            continue
        try:
            found = reader.read(text, failure)
        except Exception:  # noqa: BLE001 -- a broken reader never stops a reflection
            _log.warning("reader %r failed; trying the next", reader.name, exc_info=True)
            continue
        if found is not None:
            return found
    return None
