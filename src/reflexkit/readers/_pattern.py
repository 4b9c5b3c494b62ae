"""The readers' lazily compiled patterns: :class:`reflexkit._pattern.Pattern`, shared."""

from __future__ import annotations

from reflexkit._pattern import Pattern

__all__ = ["Pattern"]
