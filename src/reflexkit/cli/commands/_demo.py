"""``reflexkit demo``: the retry loop on a bundled project, offline."""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

import click

from reflexkit.cli._core import (
    EXIT_FAILED,
    _fail,
)
from reflexkit.cli._output import say
from reflexkit.cli.commands._run import _orchestrate, _show_summary
from reflexkit.containers import build_application
from reflexkit.orchestrator._subagents import ScriptedSubagent
from reflexkit.tasks._config import (
    GeneratorBackend,
    LoadedProject,
    ProjectConfig,
    ReflexionConfig,
    VerificationConfig,
)
from reflexkit.tasks._task import Subtask, Task

__all__ = ["demo"]

_DEMO_BUG = "return round(price_cents * percent / 100)"
_DEMO_WRONG_FIX = "return price_cents - percent"
_DEMO_RIGHT_FIX = "return round(price_cents * (100 - percent) / 100)"


@click.command()
def demo() -> None:
    """Fix a real bug with the retry loop, offline: fail, reflect, retry with the lesson, pass.

    A copy of a small bundled project (a discount function that returns the discount instead
    of the discounted price, and its unittest suite) is fixed in a temporary folder. A
    scripted subagent stands in for Claude Code; verification, reflection (the heuristic: no
    API key, no network), memory and the retry prompt are the real ones.
    """
    with tempfile.TemporaryDirectory(prefix="reflexkit-demo-") as tmp:
        root = Path(tmp) / "cart-project"
        with resources.as_file(resources.files("reflexkit") / "_demo" / "project") as bundled:
            shutil.copytree(bundled, root, ignore=shutil.ignore_patterns("__pycache__"))
        source = (root / "cart" / "pricing.py").read_text()
        config = ProjectConfig(
            reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
            verification=VerificationConfig(
                commands=(f"{shlex.quote(sys.executable)} -m unittest",)
            ),
        )
        app = build_application(LoadedProject(config=config, root=root))
        click.get_current_context().call_on_close(app.shutdown_resources)
        task = Task(
            id="cart",
            description="The cart project's discounts are wrong.",
            subtasks=(
                Subtask(
                    id="fix-discount",
                    description="apply_discount() in cart/pricing.py returns the discount "
                    "instead of the discounted price; make the unittest suite pass.",
                ),
            ),
        )
        agent = ScriptedSubagent(
            {
                "fix-discount": [
                    {"cart/pricing.py": source.replace(_DEMO_BUG, _DEMO_WRONG_FIX)},
                    {"cart/pricing.py": source.replace(_DEMO_BUG, _DEMO_RIGHT_FIX)},
                ]
            }
        )
        say(
            "reflexkit demo: a retry loop that learns, on a copy of a small project with a real\n"
            "bug and real tests. A SCRIPTED SUBAGENT stands in for Claude Code: its two edits\n"
            "are fixed in advance (a plausible wrong fix, then the right one). Verification runs\n"
            "the project's real unittest suite; the reflection is written by the heuristic\n"
            "generator (no API key, no network).\n"
        )
        summary, run_log = _orchestrate(app, task, agent)
        _show_summary(summary, task, run_log, as_json=False, log_kept=False)
        if len(agent.prompts) > 1:
            say("\n--- the prompt attempt 2 got " + "-" * 46)
            say(agent.prompts[1])
        if not summary.passed:
            _fail(["the demo did not pass: this is a bug, please report it"], EXIT_FAILED)
