"""Each attempt's prompt, kept under its run's folder (#27).

The prompt an agent got is what a person reading a run needs most and could not see: the
run log kept only its length. :func:`keep_prompt` writes it, redacted and bounded, to
``.reflexkit/runs/<run id>/prompts/<subtask>-<attempt>.md`` before the agent starts; the
``attempt_started`` event names it (``promptPath``, relative to the project folder) and
``reflexkit show RUN`` prints it. Keeping it never stops an attempt: a write that fails is
said once and the event has no path.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from reflexkit._files import atomic_write, make_dirs
from reflexkit._text import cut_middle
from reflexkit.redaction._gate import outbound
from reflexkit.reports._report import safe_id

__all__ = ["MAX_KEPT_PROMPT_CHARS", "keep_prompt", "prompt_path"]

log = logging.getLogger("reflexkit.orchestrator")

MAX_KEPT_PROMPT_CHARS = 200_000
"""How much of a prompt is kept: its head and tail, the middle cut (a task may paste a log)."""

_said: set[str] = set()
_said_lock = threading.Lock()


def prompt_path(root: Path, run_id: str, subtask_id: str, attempt: int) -> Path:
    """Where the prompt of one attempt is kept (ids made safe as file-name parts)."""
    folder = root / ".reflexkit" / "runs" / safe_id(run_id) / "prompts"
    return folder / f"{safe_id(subtask_id)}-{int(attempt)}.md"


def keep_prompt(root: Path, run_id: str, subtask_id: str, attempt: int, prompt: str) -> str | None:
    """Write an attempt's prompt under its run's folder; never raises.

    Args:
        root: The project folder (the one holding ``.reflexkit``).
        run_id: The run.
        subtask_id: The subtask.
        attempt: The attempt's number.
        prompt: The prompt, as the agent gets it.

    Returns:
        The file's path relative to *root* (POSIX), or ``None`` when it could not be written.
    """
    target = prompt_path(root, run_id, subtask_id, attempt)
    try:
        text = cut_middle(outbound(prompt, "kept_prompt"), MAX_KEPT_PROMPT_CHARS)
        make_dirs(target.parent)
        atomic_write(target, text.encode("utf-8", "surrogatepass"), mode=0o600)
    except (OSError, ValueError) as err:
        with _said_lock:
            first = run_id not in _said
            _said.add(run_id)
        if first:  # once per run: a full disk would otherwise say so on every attempt
            log.warning("cannot keep the prompts of run %s: %s", run_id, err)
        return None
    return target.relative_to(root).as_posix()
