"""The reflection service: redact, classify, reflect, store and recall, never raising.

An orchestrator calls it from its retry loop; whatever goes wrong inside (a generator that
fails, a store that can't be written) is logged with a reason and answered with the best
result still possible, so reflection never breaks the run it serves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeGuard

import attrs

from reflexkit._log import get_logger
from reflexkit._text import strip_control
from reflexkit.exceptions import GenerationError
from reflexkit.memory._protocols import ONCE_WINDOW, EpisodicMemory, IdempotentMemory
from reflexkit.models import (
    FailureContext,
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
    derived_reflection_id,
    utcnow,
)
from reflexkit.redaction import MAX_OUTPUT_CHARS, window
from reflexkit.redaction._gate import gated_reflection
from reflexkit.reflection._protocols import ReflectionGenerator
from reflexkit.reflection._retry_prompt import format_reflections
from reflexkit.tasks._config import FixtureMiss, ReflexionConfig

if TYPE_CHECKING:
    from reflexkit.reflection._fixture import FixtureMissingError

__all__ = ["DefaultReflectionService", "ReflectionDetails", "ServiceHealth"]

log = get_logger("reflexkit.reflection")


_UNREPLAYED = frozenset({"fixture_not_found", "fixture_invalid"})
"""Why a fixture backend could not replay a reply: no reply under the key, or a file (or
reply) that can't be read. Under ``fixtureMiss: error`` both are a miss, never a quiet
fallback: a FIFO, a folder or a file with no good line misses every key, as no file does."""


def _is_missing_fixture(err: Exception) -> TypeGuard[FixtureMissingError]:
    """Whether *err* is a fixture miss, without importing the fixture module otherwise.

    That module brings in the Claude generator and tenacity, which a heuristic reflection
    never needs (``reflexkit reflect`` start-up, #19); only the fixture generator raises the
    error, so by then the module is loaded.
    """
    if not isinstance(err, GenerationError) or err.reason != "fixture_not_found":
        return False
    from reflexkit.reflection._fixture import FixtureMissingError  # noqa: PLC0415

    return isinstance(err, FixtureMissingError)


Redact = Callable[[FailureContext], tuple[FailureContext, dict[str, int]]]
Classify = Callable[[FailureContext], FailureType]
Fingerprint = Callable[[FailureContext], str]

_WITHHELD = "[output withheld: redaction failed]"
_KEEP_DETAILS = 10_000
"""The most reflections whose :class:`ReflectionDetails` the service remembers."""


@attrs.define
class ServiceHealth:
    """What went wrong inside the service since it was built (it never raises).

    Attributes:
        generation_fallbacks: Reflections written by a fallback because a generator failed.
        store_errors: Appends, reads or prunes that failed.
        last_error: The last problem, one line (never a secret: messages are ours).
    """

    generation_fallbacks: int = 0
    store_errors: int = 0
    last_error: str | None = None
    missing_fixtures: list[str] = attrs.Factory(list)
    budget_skips: int = 0


@attrs.frozen(kw_only=True)
class ReflectionDetails:
    """What the service knows about one reflection beyond the record itself.

    Attributes:
        fixture_key: The prompt key the fixture backend looked up (hit or miss), else ``None``.
        latency_ms: How long generation took (0 in deterministic mode).
        length: Characters of analysis, suggestion and action items together.
        reason: Why it was not stored (``write_budget``, ``fixture_miss``), else why a
            fallback wrote it, else ``None``.
    """

    fixture_key: str | None = None
    latency_ms: int = 0
    length: int = 0
    reason: str | None = None


@attrs.define(eq=False, kw_only=True)
class DefaultReflectionService:
    """The :class:`~reflexkit.reflection._protocols.ReflectionService` reflexkit ships.

    Args:
        generator: Writes the reflection (Claude with fallback, the heuristic, fixtures).
        store: Episodic memory.
        fallback: Used when *generator* raises; the heuristic in every shipped composition.
        redact: Removes secrets from a failure; returns the new failure and per-rule counts.
        classify: Names the failure type when the failure does not say it.
        fingerprint: Identifies a failure up to noise, so repeats are recognised.
        config: The ``reflexion`` section of project.json. With ``deterministic`` on,
            reflection ids are derived from (run, task, subtask, attempt, fingerprint), the
            creation time is *clock*'s and latencies are 0; ``maxWritesPerRun`` caps what
            one run (``session_id``) stores; ``fixtureMiss: error`` stores nothing when the
            fixture backend misses and lists the key in :attr:`health`.
        clock: Returns the current UTC time (tests pass a fixed one; deterministic runs get
            a :class:`~reflexkit.models.LogicalClock` from the composition root).
    """

    _generator: ReflectionGenerator
    _store: EpisodicMemory
    _fallback: ReflectionGenerator
    _redact: Redact
    _classify: Classify
    _fingerprint: Fingerprint
    _config: ReflexionConfig = attrs.field(factory=ReflexionConfig)
    _clock: Callable[[], datetime] = utcnow
    health: ServiceHealth = attrs.field(init=False, factory=ServiceHealth)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    _writes: dict[str, int] = attrs.field(init=False, factory=dict)  # session -> stored
    _details: dict[str, ReflectionDetails] = attrs.field(init=False, factory=dict)  # by id

    @property
    def max_reflections_per_retry(self) -> int:
        """How many reflections a retry prompt carries (``maxReflectionsPerRetry``)."""
        return self._config.max_reflections_per_retry

    # --- generate ---------------------------------------------------------------------------

    def prepare(self, failure: FailureContext, /) -> tuple[FailureContext, dict[str, int], str]:
        """Redact and classify a failure, and fingerprint it.

        Redaction comes first, on the whole output; only then is a long output cut to its
        head and tail (:data:`~reflexkit.redaction.MAX_OUTPUT_CHARS`), so no cut
        can split a secret and nothing after this reads more than the bounded text.

        Returns:
            The failure as generators see it, the redaction counts and the fingerprint.
        """
        try:
            clean, counts = self._redact(failure)
        except Exception:
            log.exception("redaction failed; the failure output is withheld")
            clean, counts = (
                attrs.evolve(failure, error_output=_WITHHELD, command="", description=""),
                {"withheld": 1},
            )
        if len(clean.error_output) > MAX_OUTPUT_CHARS:
            clean = attrs.evolve(clean, error_output=window(clean.error_output, MAX_OUTPUT_CHARS))
        if clean.failure_type in {None, FailureType.UNKNOWN}:
            try:
                clean = attrs.evolve(clean, failure_type=self._classify(clean))
            except Exception:
                log.exception("classification failed; the failure type stays unknown")
                clean = attrs.evolve(clean, failure_type=FailureType.UNKNOWN)
        try:
            print_ = self._fingerprint(clean)
        except Exception:
            log.exception("fingerprinting failed")
            print_ = ""
        return clean, counts, print_

    def generate(self, failure: FailureContext, /) -> Reflection:
        """Reflect on a failure; never raises.

        The failure is redacted before any generator sees it, classified when its type is
        missing or unknown, and fingerprinted. The recent reflections of the same task,
        subtask and run (``session_id``; all runs when the failure has none) are passed to
        the generator so it does not repeat them: yesterday's run is not "the previous
        attempt". A generator error falls back (the reflection says why in
        ``fallback_reason``). A time-out is an ``approach_flaw`` whatever the generator says
        (the approach took too long; the code may be fine), and control sequences are
        stripped from the reflection's text.

        Args:
            failure: The failed attempt, as the orchestrator saw it.

        Returns:
            The reflection (not yet saved: call :meth:`save`).
        """
        clean, counts, print_ = self.prepare(failure)
        previous = self.previous(clean)
        started = time.monotonic()
        reflection, key = self._generate(clean, previous)
        latency = 0 if self._config.deterministic else int((time.monotonic() - started) * 1000)
        if clean.failure_type == FailureType.TIMEOUT:
            reflection = attrs.evolve(
                reflection,
                category=ReflectionCategory.APPROACH_FLAW,
                failure_type=FailureType.TIMEOUT,
            )
        analysis, suggestion, items = _capped(
            strip_control(reflection.analysis),
            strip_control(reflection.suggestion),
            [strip_control(item) for item in reflection.action_items],
            self._config.max_reflection_chars,
        )
        reflection = attrs.evolve(
            reflection,
            analysis=analysis,
            suggestion=suggestion,
            action_items=items,
            session_id=clean.session_id,
            task_id=clean.task_id,
            subtask_id=clean.subtask_id,
            attempt_number=clean.attempt_number,
            fingerprint=print_,
            redactions={**counts, **reflection.redactions},
            # One attempt, one record: the id is the attempt's (run, task, subtask, attempt,
            # fingerprint), so saving it again, from this process or another, stores nothing.
            id=derived_reflection_id(
                run_id=clean.session_id,
                task_id=clean.task_id,
                subtask_id=clean.subtask_id,
                attempt=clean.attempt_number,
                fingerprint=print_,
            ),
        )
        if self._config.deterministic:
            reflection = attrs.evolve(
                reflection,
                created_at=self._clock(),
                latency_ms=0 if reflection.latency_ms is not None else None,
            )
        length = len(reflection.analysis) + len(reflection.suggestion)
        length += sum(len(item) for item in reflection.action_items)
        with self._lock:
            self._details[reflection.id] = ReflectionDetails(
                fixture_key=key,
                latency_ms=latency,
                length=length,
                reason=reflection.fallback_reason,
            )
            while len(self._details) > _KEEP_DETAILS:  # a long-lived service forgets the oldest
                del self._details[next(iter(self._details))]
        return reflection

    def details(self, reflection_id: str, /) -> ReflectionDetails:
        """What the service knows of a reflection it generated (or saved): for the run log."""
        with self._lock:
            return self._details.get(reflection_id) or ReflectionDetails()

    def previous(self, failure: FailureContext, /) -> list[Reflection]:
        """The reflections a generator sees beside *failure*: same task, subtask and run.

        The run is the failure's ``session_id``; a failure without one gets every run's.
        Only reflections on *earlier* attempts count, each id once: a reflection stored on
        this very attempt (recording with ``reflect --record-fixtures`` saves it, a replay
        reads it back) must not change what the generator is asked, or a recorded fixture
        would never replay.
        """
        limit = self._config.previous_limit  # reflexion.previousReflections
        if limit < 1:
            return []
        previous = self.get_recent(
            failure.subtask_id,
            task_id=failure.task_id,
            session_id=failure.session_id or None,
            limit=limit,
        )
        unique = {r.id: r for r in previous if r.attempt_number < failure.attempt_number}
        return list(unique.values())

    def _generate(
        self, failure: FailureContext, previous: Sequence[Reflection]
    ) -> tuple[Reflection, str | None]:
        """The reflection, and the fixture key looked up (``None`` for other backends)."""
        key = self._fixture_key(failure, previous)
        try:
            return self._generator.generate(failure, previous=previous), key
        except Exception as err:  # noqa: BLE001 -- any generator bug falls back too
            reason = err.reason if isinstance(err, GenerationError) else "generator_error"
            if _is_missing_fixture(err):
                key = err.key
            if key is not None and reason in _UNREPLAYED:
                self._missed_fixture(key)
            self._note(f"generation failed ({reason}): {type(err).__name__}", store=False)
            log.warning("reflection generator failed (%s); falling back", reason)
        try:
            reflection = self._fallback.generate(failure, previous=previous)
        except Exception as err:  # noqa: BLE001 -- the last resort below always works
            log.warning("fallback generator failed too: %s", type(err).__name__)
            return self._last_resort(failure, reason), key
        reflection = attrs.evolve(reflection, fallback_reason=reflection.fallback_reason or reason)
        return reflection, key

    def _missed_fixture(self, key: str) -> None:
        """Count *key* as a fixture miss, which ``fixtureMiss: error`` turns into exit 2."""
        if self._config.fixture_miss is FixtureMiss.ERROR:
            with self._lock:
                if key not in self.health.missing_fixtures:
                    self.health.missing_fixtures.append(key)

    def _fixture_key(self, failure: FailureContext, previous: Sequence[Reflection]) -> str | None:
        """The key a fixture generator will look up, when the generator is one."""
        key_of = getattr(self._generator, "key", None)
        if not callable(key_of):
            return None
        try:
            key = key_of(failure, previous=previous)
        except Exception:  # noqa: BLE001 -- the key is a detail for the log
            return None
        return key if isinstance(key, str) else None

    def _last_resort(self, failure: FailureContext, reason: str) -> Reflection:
        """A minimal reflection when every generator failed: say so, and what to look at."""
        where = f" `{failure.command}`" if failure.command else " the verification"
        return Reflection.on(
            failure,
            created_at=self._clock(),
            category=ReflectionCategory.ROOT_CAUSE,
            failure_type=failure.failure_type or FailureType.UNKNOWN,
            analysis=f"Attempt {failure.attempt_number} failed{where}"
            + (f" with exit code {failure.exit_code}." if failure.exit_code is not None else "."),
            suggestion="Read the full output of the failing command before changing code again.",
            action_items=(),
            confidence=0.1,
            source=ReflectionSource.HEURISTIC,
            fallback_reason=reason,
        )

    # --- memory -----------------------------------------------------------------------------

    def save(self, reflection: Reflection, /) -> bool:
        """Append a reflection to memory, once.

        Saving is idempotent per attempt: :meth:`generate` gives a reflection the id of its
        (run, task, subtask, attempt, fingerprint), and a record with that id already in
        memory (``reflect`` then ``reflect --json`` on one failure, from two processes) is
        not stored again (:meth:`details` says ``already_stored``).

        Nothing is stored, and :meth:`details` names the reason, when the run
        (``session_id``) has stored ``maxWritesPerRun`` reflections already
        (``write_budget``), or when the fixture backend missed under ``fixtureMiss: error``
        (``fixture_miss``).

        Returns:
            ``True`` when stored (now or before); ``False`` when not (a store failure is
            logged, and counted in :attr:`health`).
        """
        if (
            self._config.fixture_miss is FixtureMiss.ERROR
            and reflection.fallback_reason in _UNREPLAYED
        ):
            self._skip(reflection, "fixture_miss")
            return False
        budget = self._config.max_writes_per_run
        with self._lock:
            written = self._writes.get(reflection.session_id, 0)
            over = budget is not None and written >= budget
            if not over:  # reserve the slot, so parallel subtasks never overshoot
                self._writes[reflection.session_id] = written + 1
        if over:
            with self._lock:
                self.health.budget_skips += 1
            log.info("write budget of %s spent; %s not stored", budget, reflection.id)
            self._skip(reflection, "write_budget")
            return False
        try:
            stored = self._append_once(_gated(reflection))
        except Exception as err:  # noqa: BLE001 -- a store error must not break the run
            with self._lock:
                self._writes[reflection.session_id] -= 1
            self._note(f"could not save reflection {reflection.id}: {err}", store=True)
            return False
        if not stored:
            with self._lock:
                self._writes[reflection.session_id] -= 1
            log.info("reflection %s is stored already; not stored again", reflection.id)
            self._skip(reflection, "already_stored")
        return True

    def _append_once(self, reflection: Reflection) -> bool:
        """Append unless the store holds the id; through the store's own lock when it has one."""
        if isinstance(self._store, IdempotentMemory):
            return self._store.append_once(reflection)
        try:
            known = self._store.recent(
                reflection.subtask_id, limit=ONCE_WINDOW, task_id=reflection.task_id
            )
        except Exception as err:  # noqa: BLE001 -- unreadable: store it rather than lose it
            log.warning("can't check memory for %s before saving it: %s", reflection.id, err)
            known = []
        if any(r.id == reflection.id for r in known):
            return False
        self._store.append(reflection)
        return True

    def _skip(self, reflection: Reflection, reason: str) -> None:
        with self._lock:
            known = self._details.get(reflection.id) or ReflectionDetails()
            self._details[reflection.id] = attrs.evolve(known, reason=reason)

    def get_recent(
        self,
        subtask_id: str,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[Reflection]:
        """Return a subtask's most recent reflections, oldest first; ``[]`` when unreadable.

        A retry asks with its task and run: subtask ids repeat across tasks, and another
        run's attempts (yesterday's, a colleague's) are not this run's previous attempts.

        Args:
            subtask_id: The subtask.
            task_id: Only reflections of this task.
            session_id: Only reflections of this run (the failures' ``sessionId``).
            limit: How many at most; ``maxReflectionsPerRetry`` by default.
        """
        want = limit or self._config.max_reflections_per_retry
        try:
            if session_id is None:
                return self._store.recent(subtask_id, limit=want, task_id=task_id)
            return self._of_run(subtask_id, task_id, session_id, want)
        except Exception as err:  # noqa: BLE001
            self._note(f"could not read reflections of {subtask_id}: {err}", store=True)
            return []

    def _of_run(
        self, subtask_id: str, task_id: str | None, session_id: str, want: int
    ) -> list[Reflection]:
        """The *want* most recent of one run: ask the store for more until enough or all."""
        ask = want * 4
        while True:
            found = self._store.recent(subtask_id, limit=ask, task_id=task_id)
            mine = [r for r in found if r.session_id == session_id]
            if len(mine) >= want or len(found) < ask:
                return mine[-want:]
            ask *= 4

    def format_for_prompt(self, reflections: Sequence[Reflection], /) -> str:
        """Render the "## Learning from Previous Failures" section (``""`` when empty).

        Repeats of one failure are shown once with their count; the section is at most
        ``maxPromptChars`` long, trimming the oldest reflections first.
        """
        try:
            return format_reflections(reflections, max_chars=self._config.max_prompt_chars)
        except Exception:
            log.exception("formatting reflections failed")
            return ""

    def prune(self, *, older_than: datetime | None = None) -> int:
        """Remove reflections created before *older_than* (``retentionDays`` ago by default).

        Returns:
            How many were removed; 0 when the store failed (logged).
        """
        cutoff = older_than or self._clock() - timedelta(days=self._config.retention_days)
        try:
            return self._store.prune(older_than=cutoff)
        except Exception as err:  # noqa: BLE001
            self._note(f"could not prune: {err}", store=True)
            return 0

    def _note(self, message: str, *, store: bool) -> None:
        if store:
            self.health.store_errors += 1
            log.warning("%s", message)
        else:
            self.health.generation_fallbacks += 1
        self.health.last_error = message


def _capped(
    analysis: str, suggestion: str, items: list[str], limit: int
) -> tuple[str, str, tuple[str, ...]]:
    """Fit a reflection's texts into *limit* characters (``reflexion.maxReflectionChars``).

    The last action items go first; then the suggestion keeps the room the analysis leaves
    (at least a third) and the analysis the rest, each cut at its end with an ellipsis. Texts
    that fit are untouched.
    """
    items = [item for item in items if item]
    while items and len(analysis) + len(suggestion) + sum(map(len, items)) > limit:
        items.pop()
    if len(analysis) + len(suggestion) + sum(map(len, items)) > limit:
        suggestion = _clip(suggestion, max(limit // 3, limit - len(analysis)))
        analysis = _clip(analysis, limit - len(suggestion))
    return analysis, suggestion, tuple(items)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _gated(reflection: Reflection) -> Reflection:
    """The reflection as memory may hold it: its texts through the outbound gate."""
    return gated_reflection(reflection)
