"""End-of-attempt reports: ``reflexkit.report.v1``, one JSON file per attempt.

:func:`build_report` is pure (the mechanical fields measured, the self-reported ones from the
agent's file); :func:`git_changes`, :func:`take_self_report` and :func:`write_report` do the
I/O around it, atomically and under sanitised ids. The fields and the schema
(:func:`report_schema`) are described in docs/reports.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import attrs
import orjson

from reflexkit import _serde
from reflexkit._files import atomic_write, open_regular, read_regular, safe_id
from reflexkit._git import git_env
from reflexkit._text import show_name, strip_control
from reflexkit._version import __version__
from reflexkit.exceptions import ConfigError
from reflexkit.models import at_least, utcnow
from reflexkit.orchestrator._process import Command, run_process
from reflexkit.redaction._gate import outbound_data
from reflexkit.reports._risk import RiskVerdict, evaluate_risk
from reflexkit.tasks._config import LoadedProject, ReviewSurface, RiskConfig

__all__ = [
    "REPORT_SCHEMA_ID",
    "SELF_REPORT_MAX_BYTES",
    "AttemptReporter",
    "FileChange",
    "GitChanges",
    "JudgeSummary",
    "ReflectionMode",
    "ReportIds",
    "ReportSettings",
    "SelfReport",
    "Verification",
    "atomic_write",
    "build_report",
    "diff_text",
    "git_changes",
    "head_commit",
    "parse_self_report",
    "read_reports",
    "repo_name",
    "report_path",
    "report_schema",
    "safe_id",
    "self_report_instructions",
    "take_self_report",
    "write_report",
]

log = logging.getLogger("reflexkit.reports")

REPORT_SCHEMA_ID = "reflexkit.report.v1"
"""The value of every report's ``schema`` field."""

SELF_REPORT_MAX_BYTES = 64 * 1024
"""A self-report larger than this is not read (it is ``invalid``)."""

_GIT_TIMEOUT_S = 20.0
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_OWN_FOLDER = ".reflexkit/"  # reports, memory and the self-report are not the agent's work


def report_schema() -> dict[str, Any]:
    """Return the ``reflexkit.report.v1`` JSON Schema shipped in the package."""
    text = (resources.files("reflexkit") / "schemas" / f"{REPORT_SCHEMA_ID}.json").read_text(
        encoding="utf-8"
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


# --- the models ------------------------------------------------------------------------------


def _optional_fraction(_inst: object, _attr: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        msg = f"expected a number between 0 and 1, got {value!r}"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class MostLikelyWrong:
    """The single most likely way the work is wrong, as the agent sees it."""

    surface: ReviewSurface
    description: str


@attrs.frozen(kw_only=True)
class SelfReport:
    """What the agent writes to ``.reflexkit/self-report.json`` (every field optional)."""

    confidence: float | None = attrs.field(default=None, validator=_optional_fraction)
    most_likely_wrong: MostLikelyWrong | None = None
    known_not_in_diff: str | None = None


@attrs.frozen(kw_only=True)
class FileChange:
    """One changed file; ``None`` counts for a binary file."""

    path: str
    insertions: int | None = attrs.field(default=None, validator=at_least(0))
    deletions: int | None = attrs.field(default=None, validator=at_least(0))


@attrs.frozen(kw_only=True)
class GitChanges:
    """What git says an attempt changed.

    Attributes:
        files: The changed files, sorted by path.
        problem: Why the list may be incomplete (not a repository, git missing ...), or
            ``None``.
    """

    files: tuple[FileChange, ...] = ()
    problem: str | None = None

    @property
    def insertions(self) -> int:
        """Lines added, binary files not counted."""
        return sum(f.insertions or 0 for f in self.files)

    @property
    def deletions(self) -> int:
        """Lines removed, binary files not counted."""
        return sum(f.deletions or 0 for f in self.files)


@attrs.frozen(kw_only=True)
class JudgeSummary:
    """The completion judge's verdict, as far as a report records it."""

    complete: bool
    severity: str
    source: str


@attrs.frozen(kw_only=True)
class Verification:
    """How the attempt's checks went.

    Attributes:
        passed: ``True``/``False`` from the checks; ``None`` when nothing checked.
        command: The command that failed, or the last one run.
        exit_code: Its exit code.
        judge: The completion judge's verdict, when one ran.
        ending: How the agent's last message ended the attempt (see
            :func:`~reflexkit.reports._ending.classify_ending`).
    """

    passed: bool | None = None
    command: str | None = None
    exit_code: int | None = None
    judge: JudgeSummary | None = None
    ending: str | None = None


@attrs.frozen(kw_only=True)
class ReportIds:
    """Who and what a report is about."""

    run_id: str
    subtask_id: str
    attempt: int = attrs.field(validator=at_least(1))
    task_id: str = ""
    session_id: str = ""
    agent: str = "unknown"


ReflectionMode = Literal["off", "solo", "orchestrated"]
"""How reflection ran around the attempt: ``off`` (``reflexion.enabled`` false), ``solo`` (one
agent session under the stop hook), ``orchestrated`` (reflexkit's retry loop)."""


@attrs.frozen(kw_only=True)
class _Provenance:
    source: Literal["orchestrator", "stop-hook"]
    reflection_mode: ReflectionMode
    degraded: bool
    self_report: Literal["ok", "missing", "invalid"]
    problems: tuple[str, ...]
    reflexkit_version: str


@attrs.frozen(kw_only=True)
class _Report:
    schema: str
    repo: str
    run_id: str
    task_id: str
    subtask_id: str
    attempt: int
    session_id: str
    agent: str
    created_at: datetime
    verification: Verification
    files_changed: list[FileChange]  # a list: the converter unstructures its items
    insertions: int
    deletions: int
    risk: RiskVerdict
    confidence: float | None
    most_likely_wrong: MostLikelyWrong | None
    known_not_in_diff: str | None
    provenance: _Provenance


# --- the self-report -------------------------------------------------------------------------


def parse_self_report(raw: bytes | None) -> tuple[SelfReport | None, str, list[str]]:
    """Validate the bytes of a self-report file.

    Args:
        raw: The file's bytes, or ``None`` when there was no file.

    Returns:
        The self-report (``None`` unless valid), its status (``ok``, ``missing`` or
        ``invalid``) and the problems found, one line each with its JSON path.
    """
    if raw is None:
        return None, "missing", ["no self-report was written"]
    if len(raw) > SELF_REPORT_MAX_BYTES:
        return None, "invalid", [f"self-report: larger than {SELF_REPORT_MAX_BYTES} bytes"]
    try:
        data = _serde.loads(raw, source="self-report")
        return _serde.structure(data, SelfReport, source="self-report"), "ok", []
    except ConfigError as err:
        return None, "invalid", list(err.errors)


def self_report_instructions(path: str = ".reflexkit/self-report.json") -> str:
    """Return the text a prompt adds so the agent writes its self-report.

    Args:
        path: Where the agent writes it, relative to the project root
            (``reports.selfReportPath``).
    """
    surfaces = "|".join(s.value for s in ReviewSurface)
    return (
        "## Self-report\n\n"
        f"When you are done, write `{path}` (create the folder if needed) with one JSON "
        "object, and nothing else in the file:\n\n"
        "```json\n"
        "{\n"
        '  "confidence": 0.8,\n'
        '  "mostLikelyWrong": {"surface": "data", "description": "..."},\n'
        '  "knownNotInDiff": "..."\n'
        "}\n"
        "```\n\n"
        "- `confidence`: how sure you are that the work is correct and complete, from 0 to 1.\n"
        f"- `mostLikelyWrong`: the single most likely way it is wrong; `surface` is one of "
        f"{surfaces}.\n"
        "- `knownNotInDiff`: what you know that the diff does not show (assumptions, "
        "shortcuts, untested paths), or null.\n\n"
        "Be honest: this file is used to decide what gets reviewed, not to grade you. It is "
        "not part of your change.\n"
    )


def take_self_report(path: Path) -> bytes | None:
    """Read and remove the agent's self-report, so a later attempt never reuses it.

    Returns:
        Its bytes (at most :data:`SELF_REPORT_MAX_BYTES` + 1, so an oversized file is
        recognised as such), or ``None`` when there is no regular file there.
    """
    try:  # the agent writes it: the safe reader (no link, FIFO or device), bounded
        raw = read_regular(path, limit=SELF_REPORT_MAX_BYTES + 1, keep="head")
    except OSError:
        return None
    with contextlib.suppress(OSError):
        path.unlink()
    return raw


# --- git ---------------------------------------------------------------------------------


def _git(
    root: Path, *args: str, timeout_s: float | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # noqa: S603 -- a fixed git command line, no shell
        ["git", "-c", "core.quotepath=off", *args],  # noqa: S607 -- git from PATH, as users run it
        cwd=root,
        capture_output=True,
        timeout=_GIT_TIMEOUT_S if timeout_s is None else timeout_s,
        check=False,
        env={**git_env(repository=root), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},  # confined
    )


def head_commit(root: Path) -> str | None:
    """The commit HEAD names in *root*; ``None`` with no repository, no commit or no git."""
    try:
        head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.decode().strip() or None if head.returncode == 0 else None


def _count(text: bytes) -> int | None:
    return None if text == b"-" else int(text)


def git_changes(root: Path, *, base: str = "HEAD") -> GitChanges:
    """Return the files changed in *root* since *base*: staged, unstaged and untracked.

    Tracked changes come from ``git diff --numstat`` against *base* (the empty tree when
    the repository has no commit yet); untracked files that git does not ignore count as
    added, every line an insertion. Files under ``.reflexkit/`` are left out. Never raises:
    when git can't answer, the result is empty and ``problem`` says why.

    Args:
        root: The working tree.
        base: The commit to compare with (the attempt's starting commit, ideally).
    """
    try:
        head = _git(root, "rev-parse", "--verify", "--quiet", base)
        if head.returncode != 0:
            inside = _git(root, "rev-parse", "--is-inside-work-tree")
            if inside.returncode != 0:
                return GitChanges(problem="not a git repository")
            base = _EMPTY_TREE
        diff = _git(root, "diff", "--numstat", "-z", "--no-renames", base, "--")
        if diff.returncode != 0:
            return GitChanges(problem=f"git diff failed: {_first_line(diff.stderr)}")
        others = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    except FileNotFoundError:
        return GitChanges(problem="git is not installed")
    except subprocess.TimeoutExpired:
        return GitChanges(problem=f"git took longer than {_GIT_TIMEOUT_S:g} s")
    except OSError as err:
        return GitChanges(problem=f"git could not run: {err.strerror or err}")
    files = _numstat(diff.stdout)
    if others.returncode == 0:
        files.update(_untracked(root, others.stdout))
    kept = tuple(files[p] for p in sorted(files) if not p.startswith(_OWN_FOLDER))
    return GitChanges(files=kept)


def repo_name(root: Path) -> str:
    """Return the name of the repository *root* lies in: the base name of its top folder.

    Outside a repository (or when git can't answer) the name of *root* itself. Never raises.
    """
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.TimeoutExpired):
        top = None
    if top is not None and top.returncode == 0 and top.stdout.strip():
        return Path(top.stdout.decode("utf-8", "surrogateescape").strip()).name
    return root.absolute().name


def diff_text(
    root: Path, *, base: str = "HEAD", max_chars: int = 200_000, timeout_s: float | None = None
) -> str:
    """Return the attempt's unified diff for the judge: tracked changes and untracked files.

    Untracked files appear as new-file diffs. Files under ``.reflexkit/`` are left out. The
    text stops at about *max_chars* (the judge bounds it further); never raises: when git
    can't answer (or not within *timeout_s* per git command), the result is ``""``.
    """
    try:
        head = _git(root, "rev-parse", "--verify", "--quiet", base, timeout_s=timeout_s)
        if head.returncode != 0:
            base = _EMPTY_TREE
        others = _git(root, "ls-files", "-z", "--others", "--exclude-standard", timeout_s=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    # The diff of what the agent wrote can be any size: captured head and tail, bounded. The
    # runner joins stderr to stdout, so git's warnings go to /dev/null (argv passed as "$@").
    confined = {**git_env(repository=root), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    command = [
        "sh",
        "-c",
        'exec "$@" 2>/dev/null',
        "sh",
        "git",
        "-c",
        "core.quotepath=off",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        base,
        "--",
        ".",
        f":(exclude){_OWN_FOLDER}",
    ]
    diff = run_process(
        Command(command, cwd=root, env=confined),
        timeout_s=_GIT_TIMEOUT_S if timeout_s is None else timeout_s,
        max_output_bytes=max_chars,
        raw=True,
    )
    if diff.exit_code != 0:
        return ""
    parts = [diff.output]
    size = len(parts[0])
    for name in others.stdout.split(b"\0") if others.returncode == 0 else []:
        path = name.decode("utf-8", "surrogateescape")
        if not path or path.startswith(_OWN_FOLDER) or size > max_chars:
            continue
        data = _head_of(root / path, max_chars)
        if data is None:
            continue
        if b"\0" in data[:8000]:
            body = "Binary file\n"
        else:
            lines = data.decode("utf-8", "replace").splitlines()
            body = f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)
        block = (
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/{path}\n{body}"
        )
        parts.append(block)
        size += len(block)
    return "".join(parts)[:max_chars]


def _numstat(output: bytes) -> dict[str, FileChange]:
    """Parse ``git diff --numstat -z --no-renames``: ``ins<TAB>del<TAB>path<NUL>`` records."""
    files: dict[str, FileChange] = {}
    for record in output.split(b"\0"):
        parts = record.split(b"\t", 2)
        if len(parts) != 3:  # noqa: PLR2004 -- insertions, deletions, path
            continue
        path = parts[2].decode("utf-8", "surrogateescape")
        files[path] = FileChange(path=path, insertions=_count(parts[0]), deletions=_count(parts[1]))
    return files


def _untracked(root: Path, output: bytes) -> dict[str, FileChange]:
    """Count the lines of the untracked files ``git ls-files -z --others`` names."""
    files: dict[str, FileChange] = {}
    for name in output.split(b"\0"):
        if name:
            path = name.decode("utf-8", "surrogateescape")
            lines = _lines(root / path)
            files[path] = FileChange(
                path=path, insertions=lines, deletions=None if lines is None else 0
            )
    return files


_CHUNK = 1 << 20


def _lines(path: Path) -> int | None:
    """Count the lines of an untracked file; ``None`` for a binary or unreadable one.

    The file is the agent's: it is read in pieces, so a huge one costs time, not memory.
    """
    lines, last = 0, b"\n"
    try:
        # The safe reader's open: a link to /dev/zero or a FIFO would hang the report.
        with os.fdopen(open_regular(path), "rb") as stream:
            first = True
            while chunk := stream.read(_CHUNK):
                if first and b"\0" in chunk[:8000]:
                    return None
                first = False
                lines += chunk.count(b"\n")
                last = chunk[-1:]
    except OSError:
        return None
    return lines + (last != b"\n")


def _head_of(path: Path, max_bytes: int) -> bytes | None:
    """The first *max_bytes* of a file, or ``None`` when it can't be read."""
    try:
        return read_regular(path, limit=max_bytes, keep="head")
    except OSError:
        return None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "no message"


# --- the report ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ReportSettings:
    """How reports are written: by whom, of which repository, under which rules and clock."""

    source: Literal["orchestrator", "stop-hook"] = "orchestrator"
    repo: str = ""  # :func:`repo_name`
    # ``off``, ``solo`` or ``orchestrated``; by default ``solo`` for the stop hook and
    # ``orchestrated`` for the loop
    reflection_mode: ReflectionMode | None = None
    risk: RiskConfig | None = None  # the ``risk`` section of project.json (defaults)
    clock: Callable[[], datetime] = utcnow  # the report's creation time


_DEFAULT_SETTINGS = ReportSettings()


def build_report(
    ids: ReportIds,
    /,
    *,
    changes: GitChanges,
    self_report: bytes | None,
    verification: Verification | None = None,
    settings: ReportSettings = _DEFAULT_SETTINGS,
) -> dict[str, Any]:
    """Build one ``reflexkit.report.v1`` report: a pure function of its inputs.

    Args:
        ids: Run, task, subtask, attempt, session and agent.
        changes: What git says changed (:func:`git_changes`).
        self_report: The bytes of the agent's self-report, or ``None`` when it wrote none.
        verification: How the checks went; all ``null`` when not given.
        settings: Who writes it, of which repository, the risk rules and the clock.

    Returns:
        The report as camelCase JSON data; it validates against :func:`report_schema`.
    """
    parsed, status, problems = parse_self_report(self_report)
    if changes.problem:
        problems = [*problems, f"files changed: {changes.problem}"]
    # File names are the agent's to choose: a bidi override, a newline or a byte that is not
    # UTF-8 in one is shown (``<U+202E>``, ``<0xFF>``), never stored as is (#21).
    files = [attrs.evolve(f, path=show_name(f.path)) for f in changes.files]
    verdict = evaluate_risk(
        [f.path for f in files],
        insertions=changes.insertions,
        deletions=changes.deletions,
        config=settings.risk,
    )
    source = settings.source
    report = _Report(
        schema=REPORT_SCHEMA_ID,
        repo=settings.repo,
        run_id=ids.run_id,
        task_id=ids.task_id,
        subtask_id=ids.subtask_id,
        attempt=ids.attempt,
        session_id=ids.session_id,
        agent=ids.agent,
        created_at=settings.clock(),
        verification=verification or Verification(),
        files_changed=files,
        insertions=changes.insertions,
        deletions=changes.deletions,
        risk=verdict,
        confidence=parsed.confidence if parsed else None,
        most_likely_wrong=parsed.most_likely_wrong if parsed else None,
        known_not_in_diff=parsed.known_not_in_diff if parsed else None,
        provenance=_Provenance(
            source=source,
            reflection_mode=settings.reflection_mode
            or ("solo" if source == "stop-hook" else "orchestrated"),
            degraded=status != "ok" or changes.problem is not None,
            self_report=status,  # type: ignore[arg-type]  # one of the three, by construction
            problems=tuple(problems),
            reflexkit_version=__version__,
        ),
    )
    data: dict[str, Any] = _stripped(_serde.unstructure(report))
    return data


def _stripped(value: Any) -> Any:  # noqa: ANN401 -- JSON data in, the same shape out
    """Every string of JSON data with control sequences stripped and hidden characters shown.

    The self-report's text is the agent's own: a report read in a terminal must not run
    escape sequences or show text in another order than stored.
    """
    if isinstance(value, str):
        return strip_control(value)
    if isinstance(value, dict):
        return {key: _stripped(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_stripped(item) for item in value]
    return value


# --- writing -----------------------------------------------------------------------------


def report_path(reports_dir: Path, run_id: str, subtask_id: str, attempt: int) -> Path:
    """Return where the report of one attempt goes: ``<dir>/<run>/<subtask>-<attempt>.json``."""
    return reports_dir / safe_id(run_id) / f"{safe_id(subtask_id)}-{int(attempt)}.json"


def write_report(report: dict[str, Any], reports_dir: Path) -> Path:
    """Write a report atomically under ``<reports_dir>/<run id>/`` and return its path.

    The JSON goes to a temporary file in the target folder, is synced, and is renamed over
    the target (see :func:`reflexkit._files.atomic_write`), so a reader sees the old file or
    the whole new one, never a part.

    Raises:
        OSError: The folder can't be created or the file written.
    """
    target = report_path(
        reports_dir, str(report["runId"]), str(report["subtaskId"]), int(report["attempt"])
    )
    report = outbound_data(report, "report")  # the check command, the self-report (#29)
    return atomic_write(target, orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")


def read_reports(reports_dir: Path) -> Sequence[dict[str, Any]]:
    """Read every report under *reports_dir*; files that are not reports are skipped.

    Returns:
        The reports, ordered by run folder, then creation time.
    """
    found: list[dict[str, Any]] = []
    if not reports_dir.is_dir():
        return found
    for path in sorted(reports_dir.glob("*/*.json")):
        try:
            data = orjson.loads(read_regular(path))  # no FIFO planted there blocks it
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(data, dict) and data.get("schema") == REPORT_SCHEMA_ID:
            found.append(data)
    found.sort(key=lambda r: (str(r.get("createdAt", "")), str(r.get("runId", ""))))
    return found


class AttemptReporter:
    """What a retry loop calls around each attempt to leave a report; never raises.

    With ``reports.enabled`` off every method is a no-op and nothing is written::

        reporter = AttemptReporter(project)
        prompt += reporter.prompt_section()
        base = reporter.start()                      # before the subagent runs
        ...                                          # the attempt, its checks, the judge
        report = reporter.finish(ids, base=base, verification=Verification(...))
        if report is not None and report["risk"]["needsReview"]:
            emit("needs_review", report["risk"])     # never changes the outcome

    Args:
        project: The validated project; its ``reports`` and ``risk`` sections are used.
        workdir: The working tree the agent changes (the project root by default).
        source: Who writes the reports.
        said: The reasons a report could not be written that were said already; the
            reporters of one run share it, so a full disk is said once, not per attempt.
    """

    def __init__(
        self,
        project: LoadedProject,
        *,
        workdir: Path | None = None,
        source: Literal["orchestrator", "stop-hook"] = "orchestrator",
        said: set[str] | None = None,
    ) -> None:
        self.project = project
        self.workdir = workdir or project.root
        self.source: Literal["orchestrator", "stop-hook"] = source
        self._unwritten = said if said is not None else set()
        self._repo: str | None = None

    @property
    def repo(self) -> str:
        """The repository's name (:func:`repo_name`), asked of git once per reporter."""
        if self._repo is None:
            self._repo = repo_name(self.workdir)
        return self._repo

    @property
    def reflection_mode(self) -> ReflectionMode:
        """``off`` when ``reflexion.enabled`` is false, else ``solo`` or ``orchestrated``."""
        if not self.project.config.reflexion.enabled:
            return "off"
        return "solo" if self.source == "stop-hook" else "orchestrated"

    @property
    def enabled(self) -> bool:
        """``reports.enabled``."""
        return self.project.config.reports.enabled

    @property
    def self_report_file(self) -> Path:
        """Where the agent writes its self-report."""
        return self.workdir / self.project.config.reports.self_report_path

    @property
    def reports_dir(self) -> Path:
        """The reports folder."""
        return self.project.root / self.project.config.reports.path

    def _take_self_report(self) -> bytes | None:
        """The self-report's bytes, when its folder is the project's own (no link leads out).

        The agent chooses what is in the project: a folder on the self-report's path that is
        a link elsewhere would have a file outside read, trusted and removed.
        """
        path = self.self_report_file
        try:
            inside = path.parent.relative_to(self.workdir)
        except ValueError:  # an absolute selfReportPath: the project's own choice
            return take_self_report(path)
        try:
            own = Path(os.path.normpath(self.workdir.resolve() / inside))
            if path.parent.resolve() != own:
                log.warning("the self-report's folder %s links elsewhere; not read", path.parent)
                return None
        except OSError:
            return None
        return take_self_report(path)

    def prompt_section(self) -> str:
        """The prompt text that asks for a self-report, or ``""`` when reports are off."""
        if not self.enabled:
            return ""
        return self_report_instructions(self.project.config.reports.self_report_path)

    def start(self) -> str | None:
        """Before an attempt: remove a stale self-report and return the base commit (or None)."""
        if not self.enabled:
            return None
        self._take_self_report()
        return head_commit(self.workdir)

    def finish(
        self,
        ids: ReportIds,
        /,
        *,
        base: str | None = None,
        verification: Verification | None = None,
    ) -> dict[str, Any] | None:
        """After an attempt, passed or not: build and write its report.

        Returns:
            The report, or ``None`` when reports are off or it could not be written (the
            reason is logged at warning level on ``reflexkit.reports``, each reason once).
        """
        if not self.enabled:
            return None
        try:
            report = build_report(
                ids,
                changes=git_changes(self.workdir, base=base or "HEAD"),
                self_report=self._take_self_report(),
                verification=verification,
                settings=ReportSettings(
                    source=self.source,
                    repo=self.repo,
                    reflection_mode=self.reflection_mode,
                    risk=self.project.config.risk,
                ),
            )
            write_report(report, self.reports_dir)
        except (OSError, ValueError, TypeError) as err:
            reason = (err.strerror or str(err)) if isinstance(err, OSError) else str(err)
            if reason not in self._unwritten:  # a full disk is news once, not per attempt
                self._unwritten.add(reason)
                log.warning(
                    "the report of %s attempt %d was not written: %s (said once; the run goes on)",
                    ids.subtask_id,
                    ids.attempt,
                    err,
                )
            return None
        return report
