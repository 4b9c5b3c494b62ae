"""Claude Code as the subagent, through ``claude-agent-sdk`` (extra ``reflexkit[claude-code]``).

The SDK (imported when the first attempt runs) drives the bundled CLI in a session of its
own, confined to the project folder and killed at the attempt's limit; a credential or API
failure is a :class:`~reflexkit.exceptions.SetupError`, not a lesson. The permission rules,
stopping and set-up errors are described once, in docs/orchestrator.md ("Claude Code").
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from reflexkit._files import atomic_write, read_regular
from reflexkit._git import git_env, git_refusal, program_keys
from reflexkit.exceptions import SetupError
from reflexkit.orchestrator import _process
from reflexkit.orchestrator._subagents import SubagentRequest, SubagentResult

if TYPE_CHECKING:
    from reflexkit.tasks._config import OrchestratorConfig

__all__ = [
    "DENIED_TOOLS",
    "PROTECTED_FOLDERS",
    "ClaudeCodeSubagent",
    "bundled_cli",
    "permission_rules",
]

PROTECTED_FOLDERS: tuple[str, ...] = (".git", ".claude", ".reflexkit")
"""Folders of the project the agent may read but never edit."""

DENIED_TOOLS: tuple[str, ...] = (
    "Agent",
    "Task",
    "CronCreate",
    "CronDelete",
    "ScheduleWakeup",
    "RemoteTrigger",
    "Monitor",
    "SendMessage",
    "EnterWorktree",
    "ExitWorktree",
    "Workflow",
    "WebFetch",
    "WebSearch",
)
"""Tools removed from the session unless the project allows them: background agents, timers,
worktrees elsewhere and the web (some of them run without asking, even under ``dontAsk``)."""

_MS = 1_000
_KILL_GRACE_S = 0.5
"""Between SIGTERM and SIGKILL at the time limit."""
_OUTAGE_RETRIES = 3
"""Connection failures, before any reply, that make an API unreachable."""
_CREDENTIAL_ERRORS = frozenset({"authentication_failed", "billing_error"})
_CREDENTIAL_STATUSES = frozenset({401, 403})
_OUTAGE_ERRORS = frozenset({"server_error", "rate_limit"})
_INSTALL = "pip install 'reflexkit[claude-code]'"


def permission_rules(
    *, bash_commands: Sequence[str] = (), extra: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """Return the allow and deny rules of an attempt (the CLI runs in the project folder).

    Args:
        bash_commands: Command prefixes the agent may run through Bash, e.g. ``pytest`` or
            ``python -m pytest``; none means no Bash at all.
        extra: More allow rules, as the project lists them (``orchestrator.allowedTools``).

    Returns:
        ``(allow, deny)``, for ``allowed_tools`` and ``disallowed_tools``.

    Raises:
        ValueError: A command is empty or holds a character that would break its rule.
    """
    allow = ["Read(./**)", "Edit(./**)"]
    for command in bash_commands:
        text = command.strip()
        if not text or any(c in text for c in "()\n\r*"):
            msg = f"a Bash command must be a plain command prefix, got {command!r}"
            raise ValueError(msg)
        allow.append(f"Bash({text}:*)")
    allow += [rule for rule in extra if rule not in allow]
    deny = [f"Edit(./{folder}/**)" for folder in PROTECTED_FOLDERS]
    # A bare name removes the tool from the session; a tool the project allows in any form
    # is left alone (a deny would beat its allow rule).
    named = {rule.split("(", 1)[0] for rule in allow}
    deny += [tool for tool in ("Bash", *DENIED_TOOLS) if tool not in named]
    return allow, deny


def bundled_cli() -> Path:
    """Return the Claude Code CLI that ``claude-agent-sdk`` bundles.

    Raises:
        SetupError: The extra is not installed, or its CLI is missing or not executable.
    """
    try:
        import claude_agent_sdk  # noqa: PLC0415 -- the optional extra
    except ImportError:
        msg = f"the claude-code subagent needs the claude-agent-sdk package: {_INSTALL}"
        raise SetupError(msg) from None
    name = "claude.exe" if sys.platform == "win32" else "claude"
    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / name
    if not cli.is_file() or not os.access(cli, os.X_OK):
        msg = f"the Claude Code CLI bundled with claude-agent-sdk is missing at {cli}: {_INSTALL}"
        raise SetupError(msg)
    return cli


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    return dict(env or {})


def _strings(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.define(eq=False, kw_only=True)
class ClaudeCodeSubagent:
    """A :class:`~reflexkit.orchestrator._subagents.Subagent` that runs Claude Code.

    Each attempt is a fresh Claude Code session in the project folder with the attempt's
    prompt (the retry lessons included); its result text, cost in USD and number of turns
    come back on the :class:`SubagentResult`. A CLI failure, an error result, a cost past the
    budget or the time limit is ``ok=False`` with the reason (a time-out's error says "timed
    out"); only a setup problem raises.

    Args:
        bash_commands: Command prefixes the agent may run through Bash; none: no Bash.
        allowed_tools: More allow rules on top of the confined defaults (see
            :func:`permission_rules`); a bare ``"Bash"`` or ``"Read"`` here lifts the
            confinement for that tool.
        model: The model Claude Code uses (its own default when ``None``).
        max_turns: A limit on the agent's turns per attempt.
        effort: The effort level (``low`` ... ``max``) of the agent's model.
        max_budget_usd: The most an attempt may cost: Claude Code stops at it, and an
            attempt whose reported cost is higher fails.
        env: Extra environment variables for the CLI (e.g. ``CLAUDE_CONFIG_DIR``).
    """

    name: ClassVar[str] = "claude-code"
    """What attempt reports call this subagent."""

    bash_commands: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    allowed_tools: Sequence[str] = ()
    model: str | None = None
    max_turns: int | None = None
    effort: str | None = None
    max_budget_usd: float | None = None
    env: dict[str, str] = attrs.field(default=None, converter=_env)
    disallowed_tools: Sequence[str] = attrs.field(init=False)
    allows_git: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        """The confined allow and deny rules, from the Bash prefixes and the extra tools."""
        self.allowed_tools, self.disallowed_tools = permission_rules(
            bash_commands=self.bash_commands, extra=self.allowed_tools
        )
        self.allows_git = any(c.split()[:1] == ["git"] for c in self.bash_commands)

    @classmethod
    def from_config(
        cls, config: OrchestratorConfig, /, *, env: Mapping[str, str] | None = None
    ) -> ClaudeCodeSubagent:
        """Build the subagent from the ``orchestrator`` section of project.json."""
        settings = config.claude_code
        return cls(
            bash_commands=settings.bash_commands,
            allowed_tools=config.allowed_tools,
            model=settings.model,
            max_turns=settings.max_turns,
            effort=settings.effort.value if settings.effort is not None else None,
            max_budget_usd=settings.max_budget_usd,
            env=env,
        )

    def __repr__(self) -> str:
        return (
            f"ClaudeCodeSubagent(allowed_tools={self.allowed_tools!r}, "
            f"disallowed_tools={self.disallowed_tools!r}, model={self.model!r})"
        )

    def preflight(self) -> None:
        """Check, before the first attempt, that Claude Code can run at all.

        It finds the bundled CLI and runs it, through the launcher attempts use, with
        ``--version`` (a tenth of a second): a missing extra, a missing or broken binary or a
        temp folder that can't hold an executable launcher fails here, once, not in every
        attempt.

        Raises:
            SetupError: Claude Code can't be started; the message says why.
        """
        launcher = _own_session_launcher(bundled_cli())
        try:
            done = subprocess.run(  # noqa: S603 -- our launcher of the bundled CLI
                [launcher, "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env={**os.environ, **self.env},
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            msg = f"the Claude Code CLI can't be started ({launcher}): {err}"
            raise SetupError(msg) from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            msg = f"the Claude Code CLI failed to start (exit {done.returncode}): {said[0]}"
            raise SetupError(msg)

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Run one attempt.

        Raises:
            SetupError: The extra or the CLI is missing, the API rejects the credential
                (or there is none), or the API can't be reached.
        """
        started = time.monotonic()
        cli = bundled_cli()
        import claude_agent_sdk as sdk  # noqa: PLC0415 -- the optional extra, checked above

        options = sdk.ClaudeAgentOptions(
            cwd=str(request.workdir),
            cli_path=_own_session_launcher(cli),
            permission_mode="dontAsk",
            allowed_tools=list(self.allowed_tools),
            disallowed_tools=list(self.disallowed_tools),
            setting_sources=[],
            model=self.model,
            max_turns=self.max_turns,
            effort=self.effort,  # type: ignore[arg-type]  # validated by the config
            max_budget_usd=self.max_budget_usd,
            # Every git the agent runs is confined (no hooks, fsmonitor, pager, editor, and
            # no driver the repository's configuration names now; one it adds later refuses
            # its git, see _git_guard).
            env={**git_env({}, repository=request.workdir), **_process.lifeline_env(), **self.env},
            hooks=_git_guard(sdk, request.workdir) if self.allows_git else None,  # type: ignore[arg-type]
        )
        _quiet_kill_reports()
        # Registered with the process runner before the CLI starts: an interrupt of the run
        # (kill_all, from whichever thread gets the signal) kills the CLI and all it started
        # at once, and no orphan sweep of a parallel subtask takes it for an orphan.
        with _process.adopted() as adopted:
            transport = _transport(request.prompt, options, adopted)
            watch = _Watch(transport, adopted)
            try:
                outcome = _run_attempt(
                    self._attempt(sdk, transport, request, options, watch), watch
                )
            except Exception as err:  # noqa: BLE001 -- a CLI failure is a failed attempt
                outcome = err
            finally:
                watch.kill_group(signal.SIGKILL)  # nothing the attempt started outlives it
        took = int((time.monotonic() - started) * _MS)
        if watch.setup_problem is not None:
            raise SetupError(watch.setup_problem)
        if watch.timed_out:
            error = f"Claude Code timed out after {request.timeout_s:g} s (stopped)"
            return SubagentResult(
                ok=False, output=watch.text(), duration_ms=took, error=error, timed_out=True
            )
        if isinstance(outcome, BaseException):
            error = f"Claude Code failed: {type(outcome).__name__}: {outcome}"
            return SubagentResult(ok=False, output=watch.text(), duration_ms=took, error=error)
        return self._to_result(outcome, watch.text(), took)

    async def _attempt(
        self,
        sdk: Any,  # noqa: ANN401 -- the optional module
        transport: Any,  # noqa: ANN401 -- the SDK's transport
        request: SubagentRequest,
        options: Any,  # noqa: ANN401
        watch: _Watch,
    ) -> Any:  # noqa: ANN401 -- the SDK's ResultMessage or None
        loop = asyncio.get_running_loop()
        alarm = loop.call_later(max(request.timeout_s, 0.0), watch.expire, loop)
        result: Any = None
        messages = sdk.query(prompt=request.prompt, options=options, transport=transport)
        try:
            # The stream is read to its end, also after the CLI was killed (that ends it):
            # leaving it early would skip the SDK's own clean-up of the subprocess.
            async for message in messages:
                watch.remember()
                if watch.setup_problem is not None or watch.timed_out:
                    continue
                if isinstance(message, sdk.ResultMessage):
                    result = message
                    problem = _result_problem(message)
                elif isinstance(message, sdk.AssistantMessage):
                    watch.texts += [b.text for b in message.content if isinstance(b, sdk.TextBlock)]
                    problem = _assistant_problem(message, watch)
                elif isinstance(message, sdk.SystemMessage):
                    problem = _system_problem(message, watch, options.env)
                else:
                    problem = None
                if problem is not None:
                    watch.setup_problem = problem
                    watch.kill_group(signal.SIGKILL)
        except Exception:
            if not (watch.timed_out or watch.setup_problem or result is not None):
                raise
        finally:
            alarm.cancel()
        return result

    def _to_result(self, result: Any, text: str, took: int) -> SubagentResult:  # noqa: ANN401
        """Turn the SDK's ResultMessage (or its absence) into a SubagentResult."""
        if result is None:
            return SubagentResult(
                ok=False, output=text, duration_ms=took, error="Claude Code gave no result"
            )
        error: str | None = None
        if result.is_error:
            detail = f": {'; '.join(result.errors)}" if result.errors else ""
            error = f"Claude Code ended with {result.subtype}{detail}"
        cost = result.total_cost_usd
        if error is None and self.max_budget_usd is not None and (cost or 0) > self.max_budget_usd:
            error = (
                f"Claude Code spent ${cost:.4f}, more than the attempt budget "
                f"(orchestrator.claudeCode.maxBudgetUsd: ${self.max_budget_usd:g})"
            )
        return SubagentResult(
            ok=error is None,
            output=result.result or text,
            duration_ms=took,
            error=error,
            cost_usd=cost,
            turns=result.num_turns,
        )


def _run_attempt(attempt: Coroutine[Any, Any, Any], watch: _Watch) -> Any:  # noqa: ANN401 -- the SDK's ResultMessage or None
    """Run the attempt's event loop; on an interrupt kill the CLI *before* the loop's clean-up.

    ``asyncio.run`` would first cancel the SDK's tasks and let them close the transport, which
    waits up to seconds for a CLI that is still alive; killed first, it closes at once.
    """
    with asyncio.Runner() as runner:
        try:
            return runner.run(attempt)
        except BaseException:
            watch.kill_group(signal.SIGKILL)
            raise


def _git_guard(sdk: Any, workdir: Path) -> dict[str, list[Any]]:  # noqa: ANN401 -- the optional module
    """A PreToolUse hook that refuses the git command lines :func:`git_refusal` names.

    The drivers *workdir*'s configuration named at launch are emptied in the agent's
    environment; one added since (the agent can write ``.git/config``) refuses its git.
    """
    emptied = program_keys(workdir)

    async def guard(data: Any, _tool_use_id: str | None, _context: Any) -> dict[str, Any]:  # noqa: ANN401
        tool_input = data.get("tool_input") if isinstance(data, dict) else None
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        why = (
            git_refusal(command, repository=workdir, neutralised=emptied)
            if isinstance(command, str)
            else None
        )
        if why is None:
            return {}
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"reflexkit confines git: {why}",
            }
        }

    return {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[guard])]}


def _transport(prompt: str, options: Any, adopted: _process.Adopted) -> Any:  # noqa: ANN401 -- the SDK's types
    """The SDK's CLI transport, which hands the CLI's pid to *adopted* as soon as it starts."""
    from claude_agent_sdk._internal.transport.subprocess_cli import (  # noqa: PLC0415
        SubprocessCLITransport,
    )

    class _AdoptedTransport(SubprocessCLITransport):
        async def connect(self) -> None:
            await super().connect()
            pid = getattr(getattr(self, "_process", None), "pid", None)
            if isinstance(pid, int):
                adopted.attach(pid)

    return _AdoptedTransport(prompt=prompt, options=options)


class _Watch:
    """What one attempt saw, and the means to stop its CLI with everything it started."""

    def __init__(self, transport: Any, adopted: _process.Adopted | None = None) -> None:  # noqa: ANN401 -- the SDK's transport
        self._transport = transport
        self._adopted = adopted
        self.texts: list[str] = []
        self.timed_out = False
        self.setup_problem: str | None = None
        self.replied = False
        self.connection_failures = 0
        self.pgid: int | None = None
        self.pid: int | None = None

    def text(self) -> str:
        return "\n".join(self.texts)

    def expire(self, loop: asyncio.AbstractEventLoop) -> None:
        """At the time limit: SIGTERM to the CLI's group now, SIGKILL after the grace."""
        self.timed_out = True
        self.kill_group(signal.SIGTERM)
        loop.call_later(_KILL_GRACE_S, self.kill_group, signal.SIGKILL)

    def remember(self) -> None:
        """Note the CLI's process group while the CLI is alive (it leads its own session)."""
        if self.pgid is not None:
            return
        process = getattr(self._transport, "_process", None)
        pid = getattr(process, "pid", None)
        if pid is None or getattr(process, "returncode", None) is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            self.pgid = pid if os.getpgid(pid) == pid else None
            self.pid = pid

    def kill_group(self, signum: signal.Signals) -> None:
        """Signal the CLI's process group, which outlives the CLI if it left children.

        SIGKILL goes to every descendant too, while they are still the CLI's: a background
        shell of the Bash tool leads a process group of its own.
        """
        if signum == signal.SIGKILL and self._adopted is not None:
            self._adopted.kill()
        self.remember()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.pgid is not None:
                os.killpg(self.pgid, signum)
            elif self.pid is not None:  # pragma: no cover -- only without the launcher
                os.kill(self.pid, signum)


class _KillReports(logging.Filter):
    """Drop the SDK's "Fatal error in message reader" for a CLI we stopped ourselves.

    A CLI stopped at its limit exits with SIGTERM's or SIGKILL's status, and the SDK logs
    that at error level; the attempt reports the time-out itself, so the line is noise.
    """

    _OURS = ("exit code 143", "exit code 137", "exit code -15", "exit code -9")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("Fatal error in message reader")
            and any(code in message for code in self._OURS)
        )


_KILL_FILTER = _KillReports()


def _quiet_kill_reports() -> None:
    sdk_log = logging.getLogger("claude_agent_sdk._internal.query")
    if _KILL_FILTER not in sdk_log.filters:
        sdk_log.addFilter(_KILL_FILTER)


def _assistant_problem(message: Any, watch: _Watch) -> str | None:  # noqa: ANN401
    error = getattr(message, "error", None)
    said = " ".join(getattr(b, "text", "") for b in message.content).strip()
    if error in _CREDENTIAL_ERRORS:
        return _credential_problem(said or error)
    if error in _OUTAGE_ERRORS and not watch.replied:
        # The CLI reports this only after its own retries (ten, over minutes, by default).
        return f"the Anthropic API kept failing before any reply ({said or error})"
    if getattr(message, "model", None) != "<synthetic>":
        watch.replied = True
    return None


def _system_problem(message: Any, watch: _Watch, env: Mapping[str, str]) -> str | None:  # noqa: ANN401
    if message.subtype != "api_retry":
        return None
    data = message.data
    status, error = data.get("error_status"), data.get("error")
    if error in _CREDENTIAL_ERRORS or status in _CREDENTIAL_STATUSES:
        return _credential_problem(f"HTTP {status} {error}" if status else str(error))
    if status is None and not watch.replied:
        watch.connection_failures += 1
        if watch.connection_failures >= _OUTAGE_RETRIES:
            where = env.get("ANTHROPIC_BASE_URL") or os.environ.get("ANTHROPIC_BASE_URL")
            where = where or "https://api.anthropic.com"
            return (
                f"the Anthropic API at {where} can't be reached "
                f"({watch.connection_failures} connection failures before any reply); "
                "check the network, ANTHROPIC_BASE_URL and any proxy"
            )
    return None


def _result_problem(result: Any) -> str | None:  # noqa: ANN401
    if result.is_error and getattr(result, "api_error_status", None) in _CREDENTIAL_STATUSES:
        return _credential_problem(f"HTTP {result.api_error_status}")
    return None


def _credential_problem(detail: str) -> str:
    return (
        f"Claude Code can't use the API: {detail}. Set ANTHROPIC_API_KEY (or log in with "
        "`claude /login`) to a valid credential"
    )


def _own_session_launcher(cli: Path) -> str:
    """Return a launcher that starts *cli* as the leader of a new session.

    The SDK starts the CLI in our own process group; from its own session, the CLI and every
    process it starts can be stopped together with one ``killpg``. The launcher is a tiny
    script (one per CLI path) in the temp folder: ``setsid()``, then ``exec`` of the CLI,
    so the CLI keeps the launcher's pid and the SDK talks to it directly.
    """
    if sys.platform == "win32" or " " in sys.executable:
        return str(cli)  # pragma: no cover -- no sessions, or a shebang that can't hold it
    body = (
        f"#!{sys.executable} -I\n"
        "import os, sys\n"
        "os.setsid()\n"
        f"os.execv({str(cli)!r}, [{str(cli)!r}, *sys.argv[1:]])\n"
    )
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"reflexkit-{os.getuid()}"
    launcher = folder / f"claude-{digest}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()  # a link planted there by another user is not our folder
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        msg = f"{folder} is not a private folder of this user; can't start Claude Code safely"
        raise SetupError(msg)
    with contextlib.suppress(OSError):  # the safe reader: no link, FIFO or device there
        if read_regular(launcher, limit=len(body) + 1) == body.encode():
            return str(launcher)
    # Whole or not at all: a full disk never leaves half a launcher under its name.
    atomic_write(launcher, body.encode(), mode=stat.S_IRWXU)
    return str(launcher)
