"""Use reflexkit's Orchestrator with a Subagent of your own.

reflexkit runs the loop (verification, reflection, retries, stuck detection, the run log);
you bring the agent: any object with ``run(request) -> SubagentResult``.

    python examples/own_subagent.py
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import attrs

from reflexkit import (
    SubagentRequest,
    SubagentResult,
    Subtask,
    Task,
    VerificationConfig,
    build_application,
    load_project,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _project import make_project, toy_agent


class MyAgent:
    """A Subagent: does the work in ``request.workdir`` and says how it went."""

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Make one attempt at a subtask."""
        started = time.monotonic()
        toy_agent(request.prompt, request.workdir)  # call your agent here
        took = int((time.monotonic() - started) * 1000)
        return SubagentResult(ok=True, output="edited calc.py", duration_ms=took)


def main() -> int:
    """Run one task; exit 0 when every subtask passed."""
    workdir = make_project()
    project = load_project(cwd=workdir)
    checks = VerificationConfig(commands=(f"{shlex.quote(sys.executable)} -m unittest",))
    project = attrs.evolve(project, config=attrs.evolve(project.config, verification=checks))
    app = build_application(project)
    orchestrator = app.orchestration.orchestrator(
        subagent=MyAgent(), on_event=lambda event: print(event.kind.value, event.subtask_id)
    )
    task = Task(
        id="calc",
        description="The calculator is wrong.",
        subtasks=(Subtask(id="fix-add", description="Make add() add its arguments."),),
    )
    summary = orchestrator.run(task, workdir=workdir)
    for outcome in summary.outcomes:
        print(f"{outcome.subtask_id}: {outcome.outcome} after {outcome.attempts} attempts")
    return 0 if summary.passed else 1


if __name__ == "__main__":
    sys.exit(main())
