"""Claude Code hooks: reflexkit in a plain Claude Code session (see docs/hooks.md)."""

from reflexkit.hooks._handlers import ACTIVE_ENV, HOOK_SUBTASK, HookResult, run_hook
from reflexkit.hooks._settings import hook_command, install_hooks, merge_hooks

__all__ = [
    "ACTIVE_ENV",
    "HOOK_SUBTASK",
    "HookResult",
    "hook_command",
    "install_hooks",
    "merge_hooks",
    "run_hook",
]
