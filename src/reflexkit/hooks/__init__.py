"""Claude Code hooks: reflexkit in a plain Claude Code session (see docs/hooks.md).

The names load on first use: Claude Code starts ``python -m reflexkit.hooks`` on every tool
call, and a hook never needs the installer of ``settings.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.hooks._handlers import HookResult as HookResult, run_hook as run_hook
    from reflexkit.hooks._settings import install_hooks as install_hooks

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "_handlers": ("HookResult", "run_hook"),
        "_settings": ("install_hooks",),
    },
)
