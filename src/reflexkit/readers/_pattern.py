"""The readers' import path of :class:`reflexkit._pattern.Pattern` (the leaf all layers use)."""

from reflexkit._pattern import Pattern

__all__ = ["Pattern"]
