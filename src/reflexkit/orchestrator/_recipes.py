"""Agent recipes: how to run aider, codex, mini-swe-agent, opencode and ``claude -p`` (#27).

A recipe is data (:class:`~reflexkit.tasks._config.AgentRecipe`): the agent's command line,
with the prompt where that agent wants it (``{prompt}``: one argument; ``{prompt_file}``: a
file; neither: stdin), and variables it gets unless the environment sets them. The model,
its base URL and its key are the agent's own settings (its environment variables, its config
file), left to the user: a recipe never names a model. A project adds or replaces recipes
in ``orchestrator.agents``; ``reflexkit run --agent NAME`` (or ``orchestrator.agent``) picks
one, and docs/agents.md shows each with the variables it reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from reflexkit.exceptions import ConfigError
from reflexkit.orchestrator._subagents import CommandSubagent
from reflexkit.tasks._config import AgentRecipe, OrchestratorConfig

__all__ = ["COMMAND", "RECIPES", "agent_names", "command_subagent", "recipe_for"]

COMMAND = "command"
"""The agent named by ``orchestrator.agentCommand`` (or ``--agent-command``): no recipe."""

_LITELLM_SETUP = (
    r"litellm\.(?:APIConnectionError|AuthenticationError|NotFoundError)\b",
    r"OpenAIException\s+-\s+Connection\s+error",  # rich may wrap it at any space
)
"""What agents on LiteLLM (aider, mini-swe-agent) print, retrying, when the model can't be
reached or used: seen with the real agents against a closed port."""

RECIPES: Mapping[str, AgentRecipe] = {
    "aider": AgentRecipe(
        command=(
            "aider",
            "--message-file",
            "{prompt_file}",
            "--yes-always",  # nobody is there to answer
            "--no-auto-commits",  # the checks judge the work tree; commits are the user's
            "--no-gitignore",  # leave .gitignore alone
            "--no-check-update",
            "--no-show-release-notes",
            "--analytics-disable",
            "--no-show-model-warnings",
            # A lesson may quote a URL (an error that names a help page): aider would scrape
            # it, and install a browser to do so, in the middle of an attempt.
            "--no-detect-urls",
            "--no-suggest-shell-commands",  # with --yes-always it would run them
            "--no-pretty",
            "--no-fancy-input",
        ),
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},  # no price list from the network
        setup_errors=_LITELLM_SETUP,
        about="aider (pip install aider-chat): AIDER_MODEL, OPENAI_API_BASE, OPENAI_API_KEY "
        "or the provider's own variables; the files to edit go in agentArgs",
    ),
    "codex": AgentRecipe(
        command=("codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "-"),
        setup_errors=(
            r"Reconnecting\.\.\.\s+waiting\s+for\s+network",
            r"stream disconnected before completion: (?:error sending request|failed to lookup)",
        ),
        about="OpenAI's codex CLI (npm install -g @openai/codex): model and provider from "
        "$CODEX_HOME/config.toml, OPENAI_API_KEY or the provider's env_key",
    ),
    "mini-swe-agent": AgentRecipe(
        command=("mini", "--yolo", "--exit-immediately", "--task", "{prompt}"),
        env={
            "MSWEA_CONFIGURED": "true",  # no first-run set-up dialogue
            "MSWEA_COST_TRACKING": "ignore_errors",  # a model LiteLLM can't price still runs
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no price list from the network
        },
        setup_errors=_LITELLM_SETUP,
        about="mini-swe-agent (pip install mini-swe-agent): MSWEA_MODEL_NAME and LiteLLM's "
        "variables (OPENAI_API_BASE, OPENAI_API_KEY ...)",
    ),
    "opencode": AgentRecipe(
        command=("opencode", "run", "{prompt}"),
        about="opencode (npm install -g opencode-ai): model and provider from its config "
        "(OPENCODE_CONFIG, opencode.json) and the provider's variables",
    ),
    "claude-cli": AgentRecipe(
        command=("claude", "-p", "{prompt}", "--permission-mode", "acceptEdits"),
        about="Claude Code's CLI in print mode: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, "
        "ANTHROPIC_MODEL; tools beyond edits need --allowedTools in agentArgs",
    ),
}
"""The built-in recipes, each tested with its real agent (tests/orchestrator/test_recipes.py)."""


def agent_names(config: OrchestratorConfig) -> list[str]:
    """Every name ``--agent`` accepts: the built-in recipes, the project's, ``command``."""
    return sorted({*RECIPES, *config.agents, COMMAND})


def recipe_for(name: str, config: OrchestratorConfig) -> AgentRecipe:
    """The recipe called *name*: the project's own first, then the built-in one.

    Raises:
        ConfigError: No recipe has that name; the message lists those that do.
    """
    found = config.agents.get(name) or RECIPES.get(name)
    if found is None:
        known = ", ".join(agent_names(config))
        msg = f"agent {name}: no such recipe (known: {known}; add one in orchestrator.agents)"
        raise ConfigError([msg])
    return found


def command_subagent(
    name: str,
    recipe: AgentRecipe,
    *,
    extra_args: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    prompt_dir: Path | None = None,
) -> CommandSubagent:
    """The command subagent that runs *recipe*, with *extra_args* after its command line.

    Args:
        name: What attempt reports call the agent.
        recipe: The recipe.
        extra_args: Arguments added at the end (``orchestrator.agentArgs``, ``--agent-arg``).
        environ: The environment the recipe's variables are added to (ours by default); a
            variable already set there wins over the recipe's.
        prompt_dir: Where prompt files are made (see :class:`CommandSubagent`).

    Raises:
        ConfigError: The command line places ``{prompt}`` where it would run as shell code.
    """
    base = dict(os.environ if environ is None else environ)
    env = {**recipe.env, **base} if recipe.env else (None if environ is None else base)
    try:
        return CommandSubagent(
            [*recipe.command, *extra_args],
            env=env,
            prompt_dir=prompt_dir,
            name=name,
            setup_errors=recipe.setup_errors,
        )
    except ValueError as err:
        raise ConfigError([f"agent {name}: {err}"]) from None
