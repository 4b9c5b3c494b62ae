"""The review risk floor: from the paths a diff changes to whether it needs a second look.

:func:`evaluate_risk` is pure: each changed file goes on its riskiest matching surface, the
riskiest file (or a large diff) decides, and the verdict never changes an exit code or an
outcome. The table is data (:data:`DEFAULT_ROWS`), each row with the paths it must catch and
the look-alikes it must leave, which the tests walk; docs/reports.md describes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

import attrs

from reflexkit.tasks._config import ReviewSurface, RiskConfig, SurfaceRule

__all__ = [
    "DEFAULT_ROWS",
    "DEFAULT_RULES",
    "SURFACE_ORDER",
    "RiskVerdict",
    "SurfaceRow",
    "evaluate_risk",
    "on_surface",
    "rules_of",
    "surface_of",
]

SURFACE_ORDER: tuple[ReviewSurface, ...] = (
    ReviewSurface.AUTH,
    ReviewSurface.DATA,
    ReviewSurface.INFRA,
    ReviewSurface.BUILD,
    ReviewSurface.UI,
    ReviewSurface.TEST,
    ReviewSurface.DOCS,
)
"""The surfaces from the riskiest down; between two rules of equal weight, the earlier wins."""

_SEP = r"(?:^|/)"  # the start of a path segment
_WORD = r"(?:^|[/_.-])"  # the start of a word inside a file or folder name
_END = r"(?:$|[/_.-])"


@attrs.frozen(kw_only=True)
class SurfaceRow:
    """One built-in row of the risk table, with the examples that pin it down.

    Attributes:
        surface: The surface.
        weight: The score of a change there, 0 to 1.
        words: Whole words of a folder or file name (between ``/ _ . -`` or the ends).
        patterns: Further regular expressions searched in the lowercased path.
        catches: Paths this row must put on its surface.
        leaves: Look-alikes it must not match.
    """

    surface: ReviewSurface
    weight: float
    words: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    catches: tuple[str, ...] = ()
    leaves: tuple[str, ...] = ()

    @property
    def rule(self) -> SurfaceRule:
        """The row as a :class:`~reflexkit.tasks._config.SurfaceRule` (what project.json holds)."""
        words = (_WORD + "(?:" + "|".join(self.words) + ")" + _END,) if self.words else ()
        return SurfaceRule(weight=self.weight, patterns=words + self.patterns)


DEFAULT_ROWS: tuple[SurfaceRow, ...] = (
    SurfaceRow(
        surface=ReviewSurface.AUTH,
        weight=1.0,
        words=(
            r"auth(?:n|z|entication|enticate|orization|orize)?",
            r"login|logout|signin|signup|oauth2?|oidc|sso|saml|sessions?",
            r"tokens?|jwt|permissions?|rbac|acl|credentials?|secrets?|passwords?",
            r"crypto|keyring|csrf|cors",
        ),
        patterns=(_SEP + r"\.env(?:\.|$)",),
        catches=(
            "src/app/auth/login.py",
            "src/auth/login.test.ts",
            "tests/test_auth.py",
            "pkg/jwt/verify.go",
            "app/permissions.py",
            "config/rbac.yaml",
            "src/credentials.ts",
            ".env.production",
        ),
        leaves=("author.py", "src/authoring/draft.py", "src/tokenizer.py", "src/secretary.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.DATA,
        weight=0.9,
        words=(r"migrations?|seeds?|prisma|entity|entities|repository|repositories|schemas?",),
        patterns=(
            _SEP + r"(?:alembic|db|database)/",
            r"\.(?:sql|prisma)$",
            _WORD + r"(?:models?|dao)\.(?:py|go|[cm]?[jt]s)$",
        ),
        catches=(
            "migrations/0007_add_orders.py",
            "db/schema.sql",
            "prisma/schema.prisma",
            "src/shop/models.py",
            "internal/store/repository.go",
            "src/orders/order.entity.ts",
            "prisma/seed.ts",
        ),
        leaves=("src/seedling.py", "docs_schemata.txt", "src/modelling/fit.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.INFRA,
        weight=0.85,
        words=(
            r"docker|dockerfile|containerfile|dockerignore",
            r"woodpecker|traefik|deploy|deploys|deployment|deployments|helm|helmfile",
            r"k8s|kubernetes|kustomization|terraform|ansible|infra|nginx|caddyfile",
        ),
        patterns=(
            _SEP + r"\.(?:github|gitlab|circleci|woodpecker|buildkite)(?:/|[^/]*\.ya?ml$)",
            _SEP + r"(?:docker-)?compose[^/]*\.ya?ml$",
            _SEP + r"chart\.ya?ml$",
            r"\.(?:tf|tfvars|hcl)$",
            _SEP + r"(?:jenkinsfile|procfile|fly\.toml|vercel\.json|netlify\.toml)$",
            _SEP + r"\.gitlab-ci\.yml$",
        ),
        catches=(
            "Dockerfile",
            "docker/entrypoint.sh",
            "docker-compose.yml",
            "compose.yaml",
            ".woodpecker.yml",
            ".woodpecker/ci.yml",
            "traefik/traefik.yml",
            "config/traefik-dynamic.toml",
            "scripts/deploy.sh",
            "deploy/k8s/service.yaml",
            "helm/values.yaml",
            "k8s/ingress.yaml",
            "terraform/main.tf",
            "infra/main.tf",
            ".github/workflows/ci.yml",
        ),
        leaves=("src/deployer_name.py", "src/composer.py", "src/charting/plot.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.BUILD,
        weight=0.6,
        words=(r"eslint|eslintrc|prettier|vite|webpack|rollup|babel|turbo",),
        patterns=(
            _SEP + r"(?:pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.(?:txt|in)|"
            r"poetry\.lock|uv\.lock|pipfile(?:\.lock)?|tox\.ini|noxfile\.py|manifest\.in)$",
            _SEP + r"(?:package\.json|package-lock\.json|pnpm-[^/]*|yarn\.lock|"
            r"tsconfig[^/]*\.json|\.npmrc|\.nvmrc)$",
            _SEP + r"[^/]*\.config\.[cm]?[jt]s$",
            _SEP + r"(?:go\.mod|go\.sum|go\.work|makefile|gnumakefile|[^/]*\.mk|"
            r"cmakelists\.txt|build\.gradle(?:\.kts)?|pom\.xml|cargo\.toml|cargo\.lock)$",
        ),
        catches=(
            "pyproject.toml",
            "requirements-dev.txt",
            "package.json",
            "tsconfig.json",
            "turbo.json",
            "pnpm-lock.yaml",
            "vite.config.ts",
            ".eslintrc.json",
            "eslint.config.mjs",
            "go.mod",
            "Makefile",
        ),
        leaves=("src/packages.py", "src/invite.py", "src/turbofan.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.UI,
        weight=0.4,
        patterns=(
            r"\.(?:[jt]sx|vue|svelte|css|scss|sass|less|html?|astro)$",
            _SEP + r"(?:components|pages|views|templates|static|public|ui|frontend|web)/",
        ),
        catches=(
            "src/components/Cart.tsx",
            "apps/web/src/main.ts",
            "web/styles/main.css",
            "templates/index.html",
            "src/App.vue",
        ),
        leaves=("src/cart/pricing.py", "src/webhook.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.TEST,
        weight=0.2,
        patterns=(
            _SEP + r"(?:tests?|__tests__|spec|specs|testdata|fixtures)/",
            _SEP + r"test_[^/]*\.py$",
            r"_test\.(?:py|go)$",
            r"\.(?:test|spec)\.[cm]?[jt]sx?$",
            _SEP + r"conftest\.py$",
        ),
        catches=(
            "tests/test_pricing.py",
            "src/cart/pricing_test.go",
            "src/cart.spec.ts",
            "src/__tests__/cart.test.js",
            "conftest.py",
        ),
        leaves=("src/latest.py", "src/contest/rules.py"),
    ),
    SurfaceRow(
        surface=ReviewSurface.DOCS,
        weight=0.1,
        patterns=(
            _SEP + r"docs?/",
            r"\.(?:md|markdown|rst|adoc)$",
            _SEP + r"(?:license|licence|changelog|authors|notice)(?:\.|$)",
        ),
        catches=("README.md", "docs/usage.md", "docs/index.rst", "CHANGELOG.md", "LICENSE"),
        leaves=("src/docstring.py", "src/markdown.py"),
    ),
)
"""The built-in risk table, riskiest first; it fits Python, JavaScript/TypeScript and Go
projects, and holds every path word of the Mosaic design's table (``traefik`` included)."""

DEFAULT_RULES: Mapping[ReviewSurface, SurfaceRule] = {row.surface: row.rule for row in DEFAULT_ROWS}
"""The built-in rules, per surface."""


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


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _normal(path: str) -> str:
    text = path.replace("\\", "/").strip().lower()
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def _forms(path: str) -> tuple[str, ...]:
    """The path as rules read it: lowercased, and with its camelCase words split by ``_``."""
    plain = _normal(path)
    split = _normal(_CAMEL.sub("_", path))  # LoginForm.tsx -> login_form.tsx
    return (plain,) if split == plain else (plain, split)


def on_surface(
    path: str, surface: ReviewSurface, rules: Mapping[ReviewSurface, SurfaceRule]
) -> bool:
    """Whether *surface*'s rule matches *path* (whatever riskier surface matches it too).

    A rule reads the lowercased path, and its camelCase-split form too, so ``LoginForm.tsx``
    holds the word ``login`` as ``login_form.tsx`` does.
    """
    rule = rules.get(surface)
    if rule is None:
        return False
    return any(p.search(form) for form in _forms(path) for p in _compiled(rule.patterns))


def surface_of(path: str, rules: Mapping[ReviewSurface, SurfaceRule]) -> ReviewSurface:
    """Return the surface of one changed path under *rules* (``none`` when nothing matches).

    Of the surfaces whose rule matches, the one with the highest weight wins (the earlier in
    :data:`SURFACE_ORDER` between equal weights).
    """
    best, weight = ReviewSurface.NONE, -1.0
    for surface in SURFACE_ORDER:
        rule = rules.get(surface)
        if rule is not None and rule.weight > weight and on_surface(path, surface, rules):
            best, weight = surface, rule.weight
    return best


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
