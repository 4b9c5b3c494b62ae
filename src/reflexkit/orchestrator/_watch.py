"""What an attempt did beside its work: to reflexkit's own folder, and to its own checks.

Before the subagent's turn the loop notes ``.reflexkit`` (:func:`~reflexkit.orchestrator.
own_state.capture`) and what the checks run and name (:func:`check_inputs`); after it,
:class:`AttemptWatch` repairs and reports the own folder (``own_state_changed``) and reports
checks the attempt changed (``checks_changed``). None of it raises into the loop: each is a
hint, never worth failing the run for.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from reflexkit._text import show_name
from reflexkit.events import EventData, EventKind
from reflexkit.orchestrator._own_state import OWN_FOLDER, OwnState, capture, settle, shared_own_path
from reflexkit.orchestrator._verify import CheckInputs, Verifier, modified_files

__all__ = ["AttemptWatch", "check_inputs", "modified"]

log = logging.getLogger("reflexkit.orchestrator")

Emit = Callable[[EventKind, str, int, EventData], None]


def check_inputs(verifier: Verifier, workdir: Path) -> CheckInputs | None:
    """What the subtask's checks run and name inside the project (``None``: unknown)."""
    commands = getattr(verifier, "commands", None)
    if not isinstance(commands, tuple | list) or not commands:
        return None
    try:
        return CheckInputs.of([str(c) for c in commands], workdir)
    except Exception:
        log.warning("could not note what the checks run", exc_info=True)
        return None


def modified(workdir: Path) -> tuple[str, ...]:
    """The files git says are modified (empty when it can't say)."""
    try:
        return modified_files(workdir)
    except Exception:  # noqa: BLE001 -- the list is a hint, never worth failing for
        return ()


class AttemptWatch:
    """Repairs and reports what attempts did to ``.reflexkit`` and to their checks.

    Args:
        emit: Writes one event (kind, subtask id, attempt, data).
        lock: The loop's event lock: held while the own folder is settled, so that no event
            is written while a run log may be put back.
        alone: Whether one subtask runs at a time: then what an attempt added to the folder
            is taken out again (nothing else can have written it).
        report_path: The configured self-report path (``None``: no reports). The agent is
            asked to write it, and a parallel subtask its own ``<stem>-<id><suffix>``.
    """

    def __init__(
        self,
        emit: Emit,
        lock: threading.RLock,
        *,
        alone: Callable[[], bool],
        report_path: Callable[[], str | None],
    ) -> None:
        self._emit = emit
        self._lock = lock
        self._alone = alone
        self._report_path = report_path
        self._report_seen: str | None = None  # the self-report path _report_names is of
        self._report_names: tuple[str, str, str, str] | None = None

    def capture(self, workdir: Path) -> OwnState | None:
        try:
            return capture(workdir)
        except Exception:
            log.warning("could not note %s/.reflexkit before the attempt", workdir, exc_info=True)
            return None

    def settle(self, before: OwnState | None, workdir: Path, subtask_id: str, attempt: int) -> None:
        """Repair and report what the attempt did to ``.reflexkit`` (docs: "The own folder")."""
        if before is None:
            return
        try:
            with self._lock:
                found = settle(
                    workdir,
                    before,
                    revert=self._alone(),
                    allowed=functools.partial(self._self_report, self._report_path()),
                    shared=shared_own_path,
                )
        except Exception:
            log.warning("could not check %s/.reflexkit after the attempt", workdir, exc_info=True)
            return
        if found:
            self._emit(EventKind.OWN_STATE_CHANGED, subtask_id, attempt, {**found.as_data()})

    def checks_changed(
        self,
        inputs: CheckInputs | None,
        workdir: Path,
        changed: tuple[str, ...] | None,
        subtask_id: str,
        attempt: int,
    ) -> EventData:
        """Report an attempt that changed its own checks; the ``passed`` event's addition."""
        if inputs is None:
            return {}
        try:
            programs, files = inputs.changed_by(workdir, changed)
        except Exception:
            log.warning("could not compare the checks' files", exc_info=True)
            return {}
        if not programs and not files:
            return {}
        shown = {
            "files": ", ".join(show_name(f) for f in files[:50]),
            "programs": ", ".join(show_name(p) for p in programs),
        }
        self._emit(EventKind.CHECKS_CHANGED, subtask_id, attempt, {**shown})
        return {"checksChanged": ", ".join(x for x in shown.values() if x)}

    def _self_report(self, configured: str | None, relative: str) -> bool:
        """The agent's self-report (the configured path, or a parallel subtask's own one)."""
        if configured is None:
            return False
        if configured != self._report_seen:  # worked out once, not once per file
            self._report_seen = configured
            path = PurePosixPath(configured)
            self._report_names = None
            if path.parts[:1] == (OWN_FOLDER,) and len(path.parts) > 1:
                folder = "/".join(path.parts[1:-1])
                self._report_names = (
                    f"{folder}/" if folder else "",
                    path.name,
                    f"{path.stem}-",
                    path.suffix,
                )
        if self._report_names is None:
            return False
        folder, name, stem, suffix = self._report_names
        if not relative.startswith(folder):
            return False
        rest = relative[len(folder) :]
        return rest == name or ("/" not in rest and rest.startswith(stem) and rest.endswith(suffix))
