"""The P2 experiment: which gate would have caught the failures in a repository's history?

Offline, from ``git log`` alone: reverts and quick fixes in a window counted back from the
newest commit (never the wall clock) each go to the first gate that would have caught them,
``ci``, ``human_review`` or ``self_reflection``, with the pre-registered kill condition
(:data:`SELF_REFLECTION_FLOOR`). The signals and buckets are described in docs/reports.md.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import attrs

from reflexkit._git import git_env
from reflexkit.reports._calibration import KillCondition
from reflexkit.reports._risk import evaluate_risk, on_surface, rules_of
from reflexkit.tasks._config import ReviewSurface, RiskConfig

__all__ = [
    "MIN_SIGNALS",
    "SELF_REFLECTION_FLOOR",
    "Commit",
    "Gate",
    "GitHistory",
    "Signal",
    "classify",
    "git_history",
    "read_commits",
    "signals_of",
]

Gate = Literal["ci", "human_review", "self_reflection"]

SELF_REFLECTION_FLOOR = 0.10
"""The kill condition: fewer self-reflection-only signals than this share is "near empty"."""

MIN_SIGNALS = 5
"""Below this many signals the kill condition is undecided."""

_GIT_TIMEOUT_S = 300.0
_MAX_COMMITS = 200_000

_REVERT_SUBJECT = re.compile(r'^revert\b\s*"?', re.IGNORECASE)
_REVERTS = re.compile(r"this reverts commit ([0-9a-f]{7,64})", re.IGNORECASE)
_FIX = re.compile(
    r"^(?:(?:hot|bug|quick)?fix(?:\([^)]*\))?!?:|(?:hot ?fix|quick ?fix|bug ?fix|fix(?:es|ed)?)\b)"
    r"|\bhotfix\b",
    re.IGNORECASE,
)
_FEATURE = re.compile(r"^feat(?:\([^)]*\))?!?:|\(#\d+\)\s*$", re.IGNORECASE)
_CHECKS = re.compile(
    r"\b(?:tests?|testing|unit ?tests?|ci|lint\w*|typing|type ?errors?|type-?check\w*|mypy|"
    r"tsc|ruff|eslint|flak(?:y|iness)|syntax|compil(?:e|es|ing|ation|er)|"
    r"(?:the|broken|failing|red) build|build (?:fail\w*|error\w*|break\w*))\b",
    re.IGNORECASE,
)
_CI_FILES = re.compile(
    r"(?:^|/)\.(?:github|gitlab|circleci|woodpecker|buildkite)(?:/|[^/]*\.ya?ml$)"
)


@attrs.frozen(kw_only=True)
class Commit:
    """One commit as ``git log`` shows it (a merge's files: its change on the first parent)."""

    sha: str
    parents: tuple[str, ...]
    at: datetime
    subject: str
    body: str = ""
    files: tuple[str, ...] = ()

    @property
    def is_merge(self) -> bool:
        """More than one parent."""
        return len(self.parents) > 1


@attrs.frozen(kw_only=True)
class Signal:
    """A failure the history shows, and the gate that would have caught it.

    Attributes:
        kind: ``revert`` or ``quick_fix``.
        commit: The revert or the fix.
        subject: Its subject line.
        at: When it was committed.
        original: The commit it reverts or repairs (``None`` when not in the history read).
        original_subject: That commit's subject.
        hours_after: Hours from the original to the repair.
        files: The files the repair changed.
        gate: ``ci``, ``human_review`` or ``self_reflection``.
        why: What put it in that bucket.
    """

    kind: Literal["revert", "quick_fix"]
    commit: str
    subject: str
    at: datetime
    original: str | None
    original_subject: str | None
    hours_after: float | None
    files: tuple[str, ...]
    gate: Gate
    why: str


@attrs.frozen(kw_only=True)
class GitHistory:
    """What the P2 harness found in one repository.

    Attributes:
        repo: The repository's folder name.
        rev: The commit the history was read from.
        since: The window's start (the newest commit's date minus *days*).
        until: The newest commit's date.
        days: The window, in days.
        fix_hours: How soon after a feature change a fix counts as a quick fix.
        commits: Commits in the window.
        feature_changes: Of them, merges, ``feat:`` commits and squash-merged pull requests.
        signals: The reverts and quick fixes, newest first.
        tally: Signals per gate (keyed by the gate names above).
        kill_condition: The pre-registered kill condition and its verdict.
    """

    repo: str
    rev: str
    since: datetime | None
    until: datetime | None
    days: int
    fix_hours: int
    commits: int
    feature_changes: int
    signals: list[Signal]  # a list: the converter unstructures its items
    tally: dict[str, int]
    kill_condition: KillCondition


def _git(root: Path, *args: str) -> str:
    """Run a read-only git command in *root*; its stdout (``ConfigError``-free: raises OSError)."""
    done = subprocess.run(  # noqa: S603 -- a fixed git command line, no shell
        ["git", "-c", "core.quotepath=off", *args],  # noqa: S607 -- git from PATH
        cwd=root,
        capture_output=True,
        timeout=_GIT_TIMEOUT_S,
        check=False,
        env={**git_env(repository=root), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(message[0] if message else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


def read_commits(root: Path, *, rev: str = "HEAD", days: int = 180) -> list[Commit]:
    """Read the commits reachable from *rev* in the *days* before its newest commit.

    Raises:
        OSError: *root* is not a git repository, *rev* is unknown, or git can't run.
    """
    newest = _git(root, "log", "-1", "--format=%ct", rev, "--").strip()
    if not newest:
        return []
    since = int(newest) - days * 86_400
    out = _git(
        root,
        "log",
        "-z",
        "--name-only",
        "--no-renames",
        "--diff-merges=first-parent",
        f"--max-count={_MAX_COMMITS}",
        f"--since=@{since}",
        "--format=%x1e%H%x1f%P%x1f%ct%x1f%s%x1f%b%x1f",
        rev,
        "--",
    )
    commits = []
    for record in out.split("\x1e")[1:]:
        parsed = _commit(record)
        if parsed is not None:
            commits.append(parsed)
    return commits


def _commit(record: str) -> Commit | None:
    head = record.split("\x1f", 4)
    if len(head) != 5:  # noqa: PLR2004 -- sha, parents, time, subject, the rest
        return None
    sha, parents, stamp, subject, rest = head
    body, _, names = rest.rpartition("\x1f")
    try:
        at = datetime.fromtimestamp(int(stamp), tz=UTC)
    except (ValueError, OverflowError):
        return None
    files = tuple(name for name in names.lstrip("\0\n").split("\0") if name.strip())
    return Commit(
        sha=sha, parents=tuple(parents.split()), at=at, subject=subject, body=body, files=files
    )


def _is_fix(commit: Commit) -> bool:
    return (
        not commit.is_merge
        and not _REVERT_SUBJECT.match(commit.subject)
        and bool(_FIX.search(commit.subject))
    )


def _is_feature(commit: Commit) -> bool:
    # A merge of a fix branch ("Merge branch 'hotfix/cart'") lands a fix, not a feature.
    if _REVERT_SUBJECT.match(commit.subject) or _FIX.search(commit.subject):
        return False
    return commit.is_merge or bool(_FEATURE.search(commit.subject))


def classify(
    repair: Commit, original: Commit | None, *, risk: RiskConfig | None = None
) -> tuple[Gate, str]:
    """Put one failure signal in its bucket, by the pre-registered heuristic (module doc).

    Args:
        repair: The revert or the fix.
        original: The change it repairs, when known.
        risk: The risk table to judge the original by (the defaults when ``None``).

    Returns:
        The gate and why.
    """
    text = repair.subject if not _REVERT_SUBJECT.match(repair.subject) else ""
    text += "\n" + _REVERTS.sub("", repair.body)
    named = _CHECKS.search(text)
    if named:
        return "ci", f"its message names a check ({named.group(0).lower()!r})"
    rules = rules_of(risk or RiskConfig())
    if repair.files and all(
        on_surface(f, ReviewSurface.TEST, rules)
        or on_surface(f, ReviewSurface.BUILD, rules)
        or _CI_FILES.search(f)
        for f in repair.files
    ):
        return "ci", "it changes only test, build or CI files"
    judged = original if original is not None and original.files else repair
    verdict = evaluate_risk(judged.files, config=risk)
    if verdict.needs_review:
        whose = "the change it repairs" if judged is original else "the repair"
        return "human_review", f"the risk floor sends {whose} to review: {verdict.reason}"
    return "self_reflection", "no check names it and the risk floor does not flag it"


def signals_of(
    commits: Sequence[Commit], *, fix_hours: int = 72, risk: RiskConfig | None = None
) -> list[Signal]:
    """Find the reverts and quick fixes among *commits* (newest first, as ``git log`` gives).

    A fix counts only after a feature change it shares a file with, within *fix_hours*; it is
    charged to the latest such change.
    """
    by_sha = {c.sha: c for c in commits}
    # Oldest first; at the same second, the merge after its branch's commits: it lands them.
    features = sorted((c for c in commits if _is_feature(c)), key=lambda c: (c.at, c.is_merge))
    window = timedelta(hours=fix_hours)
    found: list[Signal] = []
    for commit in commits:
        if _REVERT_SUBJECT.match(commit.subject) or _REVERTS.search(commit.body):
            match = _REVERTS.search(commit.body)
            original = _find(by_sha, match.group(1)) if match else None
            found.append(_signal("revert", commit, original, risk))
        elif _is_fix(commit):
            touched = set(commit.files)
            original = next(
                (
                    f
                    for f in reversed(features)
                    if f.at <= commit.at <= f.at + window
                    and f.sha != commit.sha
                    and touched.intersection(f.files)
                ),
                None,
            )
            if original is not None:
                found.append(_signal("quick_fix", commit, original, risk))
    return found


def _find(by_sha: dict[str, Commit], prefix: str) -> Commit | None:
    if prefix in by_sha:
        return by_sha[prefix]
    return next((c for sha, c in by_sha.items() if sha.startswith(prefix)), None)


def _signal(
    kind: Literal["revert", "quick_fix"],
    commit: Commit,
    original: Commit | None,
    risk: RiskConfig | None,
) -> Signal:
    gate, why = classify(commit, original, risk=risk)
    hours = None
    if original is not None:
        hours = round((commit.at - original.at).total_seconds() / 3600, 2)
    return Signal(
        kind=kind,
        commit=commit.sha,
        subject=commit.subject,
        at=commit.at,
        original=original.sha if original else None,
        original_subject=original.subject if original else None,
        hours_after=hours,
        files=commit.files,
        gate=gate,
        why=why,
    )


def _kill(tally: dict[str, int]) -> KillCondition:
    rule = (
        "only-self-reflection bucket near empty: under "
        f"{SELF_REFLECTION_FLOOR:.0%} of the reverts and quick fixes -> end-of-run reflection "
        "has nothing of its own to catch; do not build the closed calibration loop"
    )
    total = sum(tally.values())
    own = tally["self_reflection"]
    if total < MIN_SIGNALS:
        verdict = f"undecided: {total} signals in the window; at least {MIN_SIGNALS} are needed"
        return KillCondition(rule=rule, met=None, verdict=verdict)
    share = own / total
    if share < SELF_REFLECTION_FLOOR:
        verdict = f"MET: {own} of {total} signals ({share:.0%}) only self-reflection could catch"
        return KillCondition(rule=rule, met=True, verdict=verdict)
    verdict = f"not met: {own} of {total} signals ({share:.0%}) only self-reflection could catch"
    return KillCondition(rule=rule, met=False, verdict=verdict)


def git_history(
    root: Path,
    *,
    rev: str = "HEAD",
    days: int = 180,
    fix_hours: int = 72,
    risk: RiskConfig | None = None,
) -> GitHistory:
    """Run the P2 harness on the repository at *root*.

    Args:
        root: A folder inside the repository.
        rev: The commit to read history from.
        days: The window, counted back from *rev*'s newest commit.
        fix_hours: How soon after a feature change a fix is a quick fix.
        risk: The risk table for the human-review bucket.

    Returns:
        The signals, their tally and the kill condition's verdict.

    Raises:
        OSError: Not a repository, an unknown *rev*, or git can't run.
    """
    commits = read_commits(root, rev=rev, days=days)
    top = _git(root, "rev-parse", "--show-toplevel").strip()
    head = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    found = signals_of(commits, fix_hours=fix_hours, risk=risk)
    tally = {"ci": 0, "human_review": 0, "self_reflection": 0}
    for signal in found:
        tally[signal.gate] += 1
    until = max((c.at for c in commits), default=None)
    return GitHistory(
        repo=Path(top).name,
        rev=head,
        since=until - timedelta(days=days) if until else None,
        until=until,
        days=days,
        fix_hours=fix_hours,
        commits=len(commits),
        feature_changes=sum(_is_feature(c) for c in commits),
        signals=found,
        tally=tally,
        kill_condition=_kill(tally),
    )
