"""The review risk floor: from the paths a diff changes to whether it needs a second look.

:func:`evaluate_risk` is pure and deterministic: no I/O, no clock, the same verdict for the
same paths in any order. Each changed file is put on one *surface* (auth, data, infra, build,
ui, test, docs, none) by the first rule whose patterns match its path, in the order test,
docs, auth, data, infra, build, ui; so a test of the login code is a test, and a page about
deployment is docs. The riskiest file decides: the score is the highest weight among the
changed files, and a diff of at least ``risk.largeDiffLines`` changed lines scores at least
the threshold whatever it touches.

This is a floor, a minimum review requirement, and never a gate: it does not change an exit
code or an outcome. Checks and tests stay the authority above it (checks > human review >
reviewer verdict > the agent's own reflection).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

import attrs

from reflexkit.tasks.config import ReviewSurface, RiskConfig, SurfaceRule

__all__ = [
    "DEFAULT_RULES",
    "SURFACE_ORDER",
    "RiskVerdict",
    "evaluate_risk",
    "rules_of",
    "surface_of",
]

SURFACE_ORDER: tuple[ReviewSurface, ...] = (
    ReviewSurface.TEST,
    ReviewSurface.DOCS,
    ReviewSurface.AUTH,
    ReviewSurface.DATA,
    ReviewSurface.INFRA,
    ReviewSurface.BUILD,
    ReviewSurface.UI,
)
"""The order surfaces are tried in, per file; the first whose patterns match wins."""

_SEP = r"(?:^|/)"  # the start of a path segment
_WORD = r"(?:^|[/_.-])"  # the start of a word inside a file or folder name
_END = r"(?:$|[/_.-])"

DEFAULT_RULES: Mapping[ReviewSurface, SurfaceRule] = {
    ReviewSurface.TEST: SurfaceRule(
        weight=0.2,
        patterns=(
            _SEP + r"(?:tests?|__tests__|spec|specs|testdata|fixtures)/",
            _SEP + r"test_[^/]*\.py$",
            r"_test\.(?:py|go)$",
            r"\.(?:test|spec)\.[cm]?[jt]sx?$",
            _SEP + r"conftest\.py$",
        ),
    ),
    ReviewSurface.DOCS: SurfaceRule(
        weight=0.1,
        patterns=(
            _SEP + r"docs?/",
            r"\.(?:md|markdown|rst|adoc)$",
            _SEP + r"(?:license|licence|changelog|authors|notice)(?:\.|$)",
        ),
    ),
    ReviewSurface.AUTH: SurfaceRule(
        weight=1.0,
        patterns=(
            _WORD + r"(?:auth(?:n|z|entication|enticate|orization|orize)?|"
            r"login|logout|signin|signup|oauth2?|oidc|sso|saml|sessions?|"
            r"tokens?|jwt|permissions?|rbac|acl|credentials?|secrets?|passwords?|"
            r"crypto|keyring|csrf|cors)" + _END,
            _SEP + r"\.env(?:\.|$)",
        ),
    ),
    ReviewSurface.DATA: SurfaceRule(
        weight=0.9,
        patterns=(
            _SEP + r"(?:migrations?|alembic|schema|schemas|seeds?|prisma|db|database)/",
            r"\.(?:sql|prisma)$",
            _WORD + r"(?:models?|schema|entity|entities|repository|repositories|migrations?|"
            r"seeds?|dao)\.(?:py|go|[cm]?[jt]s)$",
        ),
    ),
    ReviewSurface.INFRA: SurfaceRule(
        weight=0.85,
        patterns=(
            _SEP + r"(?:dockerfile|containerfile)[^/]*$",
            _SEP + r"(?:docker-)?compose[^/]*\.ya?ml$",
            _SEP + r"\.(?:github|gitlab|circleci|woodpecker|buildkite)(?:/|[^/]*\.ya?ml$)",
            _SEP + r"(?:deploy|deployment|deployments|infra|k8s|kubernetes|helm|charts|"
            r"terraform|ansible|ops)/",
            r"\.(?:tf|tfvars|hcl)$",
            _SEP + r"(?:jenkinsfile|procfile|fly\.toml|vercel\.json|netlify\.toml)$",
            _SEP + r"\.gitlab-ci\.yml$",
        ),
    ),
    ReviewSurface.BUILD: SurfaceRule(
        weight=0.6,
        patterns=(
            _SEP + r"(?:pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.(?:txt|in)|"
            r"poetry\.lock|uv\.lock|pipfile(?:\.lock)?|tox\.ini|noxfile\.py|manifest\.in)$",
            _SEP + r"(?:package\.json|package-lock\.json|pnpm-[^/]*\.ya?ml|yarn\.lock|"
            r"tsconfig[^/]*\.json|turbo\.json|\.npmrc|\.nvmrc)$",
            _SEP + r"(?:[^/]*\.config\.[cm]?[jt]s|\.eslintrc[^/]*|\.babelrc[^/]*)$",
            _SEP + r"(?:go\.mod|go\.sum|go\.work|makefile|gnumakefile|[^/]*\.mk|"
            r"cmakelists\.txt|build\.gradle(?:\.kts)?|pom\.xml|cargo\.toml|cargo\.lock)$",
        ),
    ),
    ReviewSurface.UI: SurfaceRule(
        weight=0.4,
        patterns=(
            r"\.(?:[jt]sx|vue|svelte|css|scss|sass|less|html?|astro)$",
            _SEP + r"(?:components|pages|views|templates|static|public|ui|frontend|web)/",
        ),
    ),
}
"""The built-in risk table; it fits Python, JavaScript/TypeScript and Go projects."""


@attrs.frozen(kw_only=True)
class RiskVerdict:
    """What the risk floor says about a diff.

    Attributes:
        needs_review: The score reached the threshold.
        score: The weight of the riskiest file, raised to the threshold for a large diff.
        surface: The surface of the riskiest file (``none`` for an empty diff).
        reason: Which files and which rule decided, in one line.
    """

    needs_review: bool
    score: float
    surface: ReviewSurface
    reason: str


def rules_of(config: RiskConfig) -> dict[ReviewSurface, SurfaceRule]:
    """Return the effective risk table: the built-in rules with the configured ones over them."""
    rules = dict(DEFAULT_RULES)
    for surface in SURFACE_ORDER:
        override = getattr(config.surfaces, surface.value)
        if override is not None:
            rules[surface] = override
    return rules


@cache
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def _normal(path: str) -> str:
    text = path.replace("\\", "/").strip().lower()
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def surface_of(path: str, rules: Mapping[ReviewSurface, SurfaceRule]) -> ReviewSurface:
    """Return the surface of one changed path under *rules* (``none`` when nothing matches)."""
    text = _normal(path)
    for surface in SURFACE_ORDER:
        rule = rules.get(surface)
        if rule is not None and any(p.search(text) for p in _compiled(rule.patterns)):
            return surface
    return ReviewSurface.NONE


_SHOWN = 3


def evaluate_risk(
    paths: Iterable[str],
    /,
    *,
    insertions: int = 0,
    deletions: int = 0,
    config: RiskConfig | None = None,
) -> RiskVerdict:
    """Decide whether a diff needs review, from the paths it changes and its size.

    Args:
        paths: The changed files, relative to the project root.
        insertions: Lines added, over the whole diff.
        deletions: Lines removed, over the whole diff.
        config: The ``risk`` section (threshold, large-diff size, rule overrides); the
            defaults when ``None``.

    Returns:
        The verdict. The same paths give the same verdict in any order.
    """
    config = config or RiskConfig()
    rules = rules_of(config)
    by_surface: dict[ReviewSurface, list[str]] = {}
    for path in sorted({p for p in paths if _normal(p)}):
        by_surface.setdefault(surface_of(path, rules), []).append(path)
    score, surface = 0.0, ReviewSurface.NONE
    for candidate in (*SURFACE_ORDER, ReviewSurface.NONE):
        if candidate not in by_surface:
            continue
        weight = rules[candidate].weight if candidate in rules else 0.0
        if weight > score or (surface is ReviewSurface.NONE and not score):
            score, surface = weight, candidate
    reasons = []
    if not by_surface:
        reasons.append("no files changed")
    else:
        files = by_surface[surface]
        shown = ", ".join(files[:_SHOWN]) + (
            f" (+{len(files) - _SHOWN} more)" * (len(files) > _SHOWN)
        )
        reasons.append(f"{surface.value} (weight {score:g}): {shown}")
    lines = max(insertions, 0) + max(deletions, 0)
    if lines >= config.large_diff_lines and score < config.threshold:
        score = config.threshold
        reasons.append(f"{lines} lines changed (risk.largeDiffLines is {config.large_diff_lines})")
    needs = score >= config.threshold
    verdict = "needs review" if needs else "below the review threshold"
    return RiskVerdict(
        needs_review=needs,
        score=round(score, 4),
        surface=surface,
        reason=f"{verdict}: " + "; ".join(reasons),
    )
