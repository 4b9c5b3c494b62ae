"""Task files: a task, its subtasks, and how each subtask is verified.

A task file is camelCase JSON, read by the one converter in :mod:`reflexkit._serde`, so its
errors name JSON paths exactly like project.json's; docs/orchestrator.md shows one and lists
its fields.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from reflexkit import _serde
from reflexkit.exceptions import ConfigError
from reflexkit.models import ID_PATTERN, _show, at_least, check_id, non_empty
from reflexkit.tasks._config import expand_user

__all__ = ["ID_PATTERN", "Subtask", "Task", "check_id", "load_task", "parse_task"]


@attrs.frozen(kw_only=True)
class Subtask:
    """One piece of a task, given to a subagent and verified on its own.

    Attributes:
        id: Unique within the task; reflections are stored under it and the task's id.
            It matches :data:`ID_PATTERN`.
        description: What the subagent is asked to do.
        verify: The commands that check the result; empty means the project's
            ``verification.commands``.
        max_attempts: Overrides ``orchestrator.maxAttempts`` for this subtask.
        depends_on: Ids of subtasks that must pass before this one starts.
        reflect: ``false`` turns reflection off for this subtask: plain retries, no
            reflection stored, no lessons in its prompts (``reflexion.enabled`` must be on
            too for reflection to run).
    """

    id: str = attrs.field(validator=check_id)
    description: str = attrs.field(validator=non_empty)
    verify: tuple[str, ...] = ()
    max_attempts: int | None = attrs.field(default=None, validator=at_least(1))
    depends_on: tuple[str, ...] = ()
    reflect: bool = True


@attrs.frozen(kw_only=True)
class Task:
    """A task: a description and the subtasks that achieve it.

    Attributes:
        id: The task's id, recorded on every failure and reflection; it matches
            :data:`ID_PATTERN`.
        description: The overall goal; every subagent prompt starts with it.
        subtasks: In file order; the orchestrator runs them in ``dependsOn`` order.
        require_verification: Every subtask must be checked (its ``verify`` or the project's
            ``verification.commands``); a run where one is not fails before attempt 1.
    """

    id: str = attrs.field(validator=check_id)
    description: str = ""
    subtasks: tuple[Subtask, ...] = ()
    require_verification: bool = False

    def subtask(self, subtask_id: str) -> Subtask:
        """Return the subtask with this id.

        Raises:
            KeyError: No subtask has it.
        """
        for subtask in self.subtasks:
            if subtask.id == subtask_id:
                return subtask
        raise KeyError(subtask_id)


def _check_references(task: Task, source: str) -> list[str]:
    """Find duplicate subtask ids, unknown or self dependencies, and dependency cycles."""
    prefix = f"{source}: " if source else ""
    errors: list[str] = []
    if not task.subtasks:
        errors.append(f"{prefix}$.subtasks: expected at least one subtask")
    first: dict[str, int] = {}
    for index, subtask in enumerate(task.subtasks):
        if subtask.id in first:
            errors.append(
                f'{prefix}$.subtasks[{index}].id: duplicate id "{subtask.id}" '
                f"(already used by $.subtasks[{first[subtask.id]}])"
            )
        else:
            first[subtask.id] = index
    for index, subtask in enumerate(task.subtasks):
        for dep_index, dep in enumerate(subtask.depends_on):
            where = f"{prefix}$.subtasks[{index}].dependsOn[{dep_index}]"
            if dep == subtask.id:
                errors.append(f'{where}: a subtask cannot depend on itself ("{dep}")')
            elif dep not in first:
                known = ", ".join(first) or "none"
                errors.append(f"{where}: unknown subtask id {_show(dep)} (known ids: {known})")
    if not errors:
        cycle = _find_cycle(task)
        if cycle:
            errors.append(f"{prefix}$.subtasks: dependency cycle: {' -> '.join(cycle)}")
    return errors


def _find_cycle(task: Task) -> list[str]:
    """Return one dependency cycle as a list of ids (first id repeated at the end), or []."""
    deps = {s.id: s.depends_on for s in task.subtasks}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in deps.get(node, ()):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for subtask in task.subtasks:
        if subtask.id not in state:
            found = visit(subtask.id)
            if found:
                return found
    return []


def parse_task(data: object, *, source: str = "") -> Task:
    """Validate parsed JSON as a task.

    Args:
        data: The parsed task file.
        source: What was read, prefixed to each error line.

    Returns:
        The task.

    Raises:
        ConfigError: Every problem, one ``"<source>: $.json.path: what was expected"`` line.
    """
    prefix = f"{source}: " if source else ""
    if not isinstance(data, dict):
        raise ConfigError([f"{prefix}$: expected an object, got {_serde.kind(data)}"])
    task = _serde.structure(data, Task, source=source)
    errors = _check_references(task, source)
    if errors:
        raise ConfigError(errors)
    return task


def load_task(path: Path | str) -> Task:
    """Read and validate a task file.

    Args:
        path: The JSON task file.

    Returns:
        The task.

    Raises:
        ConfigError: The file can't be read, isn't JSON or doesn't validate; every problem
            is one line, ``"<path>: $.subtasks[0].id: what was expected"``.
    """
    label = str(path)
    raw = _serde.read_file(expand_user(Path(path), label), source=label)
    return parse_task(_serde.loads(raw, source=label), source=label)
