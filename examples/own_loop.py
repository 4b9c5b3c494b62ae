"""Use reflexkit's ReflectionService inside your own retry loop.

Your orchestrator keeps its loop, its agent and its checks; reflexkit turns each failure
into a reflection, keeps it in episodic memory and writes the lessons for the retry prompt.

    python examples/own_loop.py
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from reflexkit import FailureContext, build_application, load_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _project import make_project, toy_agent

TASK = "Make add() in calc.py add its arguments."


def main() -> int:
    """Run the loop; exit 0 when the tests pass."""
    workdir = make_project()
    app = build_application(load_project(cwd=workdir))
    service = app.reflection.service()
    run_id = uuid.uuid4().hex  # one run: its lessons are its own, not yesterday's run's
    prompt = TASK
    for attempt in range(1, 4):
        toy_agent(prompt, workdir)  # your agent here
        check = [sys.executable, "-m", "unittest"]
        done = subprocess.run(check, cwd=workdir, capture_output=True, text=True, check=False)  # noqa: S603
        if done.returncode == 0:
            print(f"passed on attempt {attempt}")
            return 0
        failure = FailureContext(
            session_id=run_id,
            task_id="calc",
            subtask_id="fix-add",
            attempt_number=attempt,
            command="python -m unittest",
            exit_code=done.returncode,
            error_output=done.stdout + done.stderr,
        )
        reflection = service.generate(failure)  # never raises: falls back to the heuristic
        service.save(reflection)  # once per attempt; False (and logged) when it can't be
        print(f"attempt {attempt} failed; lesson: {reflection.analysis[:100]}...")
        # This task's subtask, this run: subtask ids repeat across tasks, and runs.
        lessons = service.get_recent("fix-add", task_id="calc", session_id=run_id)
        prompt = f"{TASK}\n\n{service.format_for_prompt(lessons)}"
    return 1


if __name__ == "__main__":
    sys.exit(main())
