"""The risk floor: one table row per surface, for Python, JS and Go projects, and its rules."""

from __future__ import annotations

import pytest

from reflexkit import _serde
from reflexkit.exceptions import ConfigError
from reflexkit.reports._risk import (
    DEFAULT_ROWS,
    SurfaceRow,
    evaluate_risk,
    on_surface,
    rules_of,
    surface_of,
)
from reflexkit.tasks._config import ProjectConfig, ReviewSurface, RiskConfig

S = ReviewSurface

SURFACE_TABLE = [
    # auth
    ("src/app/auth/login.py", S.AUTH),
    ("internal/auth/middleware.go", S.AUTH),
    ("src/lib/session.ts", S.AUTH),
    ("app/permissions.py", S.AUTH),
    ("pkg/jwt/verify.go", S.AUTH),
    (".env.production", S.AUTH),
    # data
    ("migrations/0007_add_orders.py", S.DATA),
    ("db/schema.sql", S.DATA),
    ("prisma/schema.prisma", S.DATA),
    ("src/shop/models.py", S.DATA),
    ("internal/store/repository.go", S.DATA),
    ("alembic/versions/1a2b_orders.py", S.DATA),
    # infra
    ("Dockerfile", S.INFRA),
    ("docker-compose.yml", S.INFRA),
    (".github/workflows/ci.yml", S.INFRA),
    ("deploy/k8s/service.yaml", S.INFRA),
    ("infra/main.tf", S.INFRA),
    # build
    ("pyproject.toml", S.BUILD),
    ("requirements-dev.txt", S.BUILD),
    ("package.json", S.BUILD),
    ("tsconfig.json", S.BUILD),
    ("vite.config.ts", S.BUILD),
    ("go.mod", S.BUILD),
    ("Makefile", S.BUILD),
    # ui
    ("src/components/Cart.tsx", S.UI),
    ("web/styles/main.css", S.UI),
    ("templates/index.html", S.UI),
    ("src/App.vue", S.UI),
    # test
    ("tests/test_pricing.py", S.TEST),
    ("tests/test_auth.py", S.AUTH),  # the highest-risk surface dominates
    ("src/cart/pricing_test.go", S.TEST),
    ("internal/auth/token_test.go", S.AUTH),
    ("src/cart.spec.ts", S.TEST),
    ("src/__tests__/login.test.js", S.AUTH),
    ("src/__tests__/cart.test.js", S.TEST),
    ("conftest.py", S.TEST),
    # docs
    ("README.md", S.DOCS),
    ("docs/deploy.md", S.INFRA),
    ("docs/usage.md", S.DOCS),
    ("docs/auth/setup.rst", S.AUTH),
    ("CHANGELOG.md", S.DOCS),
    # none
    ("src/cart/pricing.py", S.NONE),
    ("cmd/server/main.go", S.NONE),
    ("src/utils/format.js", S.NONE),
    ("author.py", S.NONE),
]


@pytest.mark.parametrize(("path", "surface"), SURFACE_TABLE)
def test_surface_table(path: str, surface: ReviewSurface) -> None:
    """Each path lands on the surface a reviewer would name."""
    assert surface_of(path, rules_of(RiskConfig())) is surface


@pytest.mark.parametrize("surface", list(ReviewSurface))
def test_every_surface_has_a_row(surface: ReviewSurface) -> None:
    """The table above covers every surface."""
    assert any(s is surface for _, s in SURFACE_TABLE)


@pytest.mark.parametrize(
    ("paths", "needs", "surface"),
    [
        (["src/app/auth/login.py"], True, S.AUTH),
        (["migrations/0007_add_orders.py"], True, S.DATA),
        (["Dockerfile"], True, S.INFRA),
        (["go.mod"], True, S.BUILD),
        (["src/components/Cart.tsx"], False, S.UI),
        (["tests/test_pricing.py"], False, S.TEST),
        (["README.md"], False, S.DOCS),
        (["src/cart/pricing.py"], False, S.NONE),
        ([], False, S.NONE),
    ],
)
def test_verdict_per_surface(paths: list[str], needs: bool, surface: ReviewSurface) -> None:
    """auth, data, infra and build need review at the default threshold; the rest do not."""
    verdict = evaluate_risk(paths)
    assert (verdict.needs_review, verdict.surface) == (needs, surface)
    assert 0.0 <= verdict.score <= 1.0


def test_riskiest_file_decides_and_reason_names_it() -> None:
    """A docs change next to a migration is a data change, and the reason says which file."""
    verdict = evaluate_risk(["README.md", "db/migrations/0002.sql", "src/cart/pricing.py"])
    assert verdict.surface is S.DATA
    assert verdict.score == 0.9
    assert "db/migrations/0002.sql" in verdict.reason


def test_empty_diff() -> None:
    """No changed files: score 0, surface none, no review, and the reason says so."""
    verdict = evaluate_risk([])
    assert (verdict.needs_review, verdict.score, verdict.surface) == (False, 0.0, S.NONE)
    assert "no files changed" in verdict.reason


def test_deterministic_in_any_order() -> None:
    """The verdict depends on the set of paths, not their order or duplicates."""
    paths = ["src/a.py", "tests/test_a.py", "pyproject.toml", "README.md"]
    assert evaluate_risk(paths) == evaluate_risk([*reversed(paths), paths[0]])


def test_large_diff_reaches_the_threshold() -> None:
    """A huge change of plain code needs review because of its size alone."""
    small = evaluate_risk(["src/cart/pricing.py"], insertions=10, deletions=5)
    large = evaluate_risk(["src/cart/pricing.py"], insertions=700, deletions=200)
    assert not small.needs_review
    assert large.needs_review
    assert large.score == 0.5
    assert "900 lines changed" in large.reason


def test_windows_and_dot_paths_are_normalised() -> None:
    """Backslashes, a leading ./ and capitals do not hide a surface."""
    assert surface_of(".\\SRC\\Auth\\Login.PY", rules_of(RiskConfig())) is S.AUTH


def test_configured_rule_replaces_the_default() -> None:
    """project.json can re-weight a surface and give it its own patterns."""
    config = _serde.structure(
        {
            "risk": {
                "threshold": 0.3,
                "surfaces": {"ui": {"weight": 0.35, "patterns": [r"^frontend/"]}},
            }
        },
        ProjectConfig,
    ).risk
    verdict = evaluate_risk(["frontend/cart/price.py"], config=config)
    assert (verdict.surface, verdict.score, verdict.needs_review) == (S.UI, 0.35, True)
    assert evaluate_risk(["src/components/Cart.tsx"], config=config).surface is S.NONE


def test_bad_risk_config_names_each_path() -> None:
    """A bad weight, a bad regex and an unknown surface are each reported with a JSON path."""
    bad = {
        "risk": {
            "threshold": 1.5,
            "surfaces": {"auth": {"weight": 2, "patterns": ["(unclosed"]}, "secrets": {}},
        }
    }
    with pytest.raises(ConfigError) as info:
        _serde.structure(bad, ProjectConfig, source="project.json")
    text = "\n".join(info.value.errors)
    assert "project.json: $.risk.threshold: expected a number between 0 and 1" in text
    assert "$.risk.surfaces.auth.weight" in text
    assert "$.risk.surfaces.auth.patterns: pattern 0 is not a regular expression" in text
    assert "$.risk.surfaces.secrets: unknown key" in text


def test_string_threshold_is_not_coerced() -> None:
    """A threshold written as a string is not coerced to a number."""
    with pytest.raises(ConfigError, match=r"\$\.risk\.threshold"):
        _serde.structure({"risk": {"threshold": "0.5"}}, ProjectConfig)


# --- the table is data: every row's examples, the design's word lists, highest risk wins ------

DESIGN_LISTS = {
    # The Mosaic design's surface table (reference 002, section 6), word for word.
    S.AUTH: ["auth", "login", "session", "token", "permission", "rbac", "credential", "secret"],
    S.DATA: ["migration", "prisma", "schema", ".sql", "entity", "repository", "seed"],
    S.INFRA: ["docker", ".woodpecker", "compose", "traefik", "deploy", "helm", "k8s", "terraform"],
    S.BUILD: ["package.json", "tsconfig", "turbo.json", "pnpm-", ".config.", "eslint", "vite"],
    S.UI: [".tsx", ".css", "components/", "apps/web/"],
    S.TEST: [".spec.", ".test.", "__tests__/"],
    S.DOCS: [".md", "docs/"],
}


REALISTIC = {
    # A path a project really has for each of the design's tokens.
    "auth": "src/auth/guard.ts",
    "login": "src/LoginForm.tsx",
    "session": "app/session_store.py",
    "token": "pkg/token/refresh.go",
    "permission": "api/permissions.py",
    "rbac": "config/rbac.yaml",
    "credential": "src/credentials.ts",
    "secret": "k/secrets.yaml",
    "migration": "db/migrations/0001_init.sql",
    "prisma": "prisma/client.ts",
    "schema": "src/api/schema.py",
    ".sql": "queries/orders.sql",
    "entity": "src/orders/order.entity.ts",
    "repository": "src/orders/OrderRepository.java",
    "seed": "prisma/seed.ts",
    "docker": "docker/entrypoint.sh",
    ".woodpecker": ".woodpecker/deploy.yml",
    "compose": "compose.prod.yaml",
    "traefik": "traefik/dynamic.toml",
    "deploy": "scripts/deploy.sh",
    "helm": "helm/values.yaml",
    "k8s": "k8s/ingress.yaml",
    "terraform": "terraform/main.tf",
    "package.json": "apps/api/package.json",
    "tsconfig": "tsconfig.build.json",
    "turbo.json": "turbo.json",
    "pnpm-": "pnpm-workspace.yaml",
    ".config.": "tailwind.config.js",
    "eslint": ".eslintrc.cjs",
    "vite": "vite.config.mts",
    ".tsx": "src/Cart.tsx",
    ".css": "src/cart.css",
    "components/": "src/components/Button.ts",
    "apps/web/": "apps/web/src/main.ts",
    ".spec.": "src/cart.spec.ts",
    ".test.": "src/cart.test.js",
    "__tests__/": "src/__tests__/cart.js",
    ".md": "CONTRIBUTING.md",
    "docs/": "docs/guide.txt",
}


@pytest.mark.parametrize(
    ("surface", "token"), [(s, t) for s, tokens in DESIGN_LISTS.items() for t in tokens]
)
def test_every_word_of_the_design_table_is_covered(surface: ReviewSurface, token: str) -> None:
    """Each word of the design's lists puts a path on its surface (or a riskier one)."""
    path = REALISTIC[token]
    rules = rules_of(RiskConfig())
    assert on_surface(path, surface, rules), path
    assert rules[surface_of(path, rules)].weight >= rules[surface].weight


@pytest.mark.parametrize("row", DEFAULT_ROWS, ids=[r.surface.value for r in DEFAULT_ROWS])
def test_each_row_catches_its_examples_and_leaves_its_look_alikes(row: SurfaceRow) -> None:
    """The examples in the table are what it does: caught on the surface, look-alikes left."""
    rules = rules_of(RiskConfig())
    for path in row.catches:
        assert surface_of(path, rules) is row.surface, path
    for path in row.leaves:
        assert not on_surface(path, row.surface, rules), path


@pytest.mark.parametrize(
    ("path", "surface"),
    [
        ("src/auth/login.test.ts", S.AUTH),
        ("tests/migrations/test_0007.py", S.DATA),
        ("docs/traefik.md", S.INFRA),
        ("src/components/LoginForm.tsx", S.AUTH),
        ("e2e/deploy.spec.ts", S.INFRA),
    ],
)
def test_the_highest_risk_surface_dominates(path: str, surface: ReviewSurface) -> None:
    """Not the first rule that matches: the riskiest one, and the verdict follows."""
    assert surface_of(path, rules_of(RiskConfig())) is surface
    verdict = evaluate_risk([path])
    assert verdict.surface is surface
    assert verdict.needs_review


def test_a_configured_weight_decides_which_surface_dominates() -> None:
    """Re-weighting in project.json changes the winner: the weights, not the order, decide."""
    config = _serde.structure(
        {"risk": {"surfaces": {"test": {"weight": 1.0, "patterns": [r"\\.test\\.ts$"]}}}},
        ProjectConfig,
    ).risk
    assert surface_of("src/auth/login.test.ts", rules_of(config)) is S.AUTH  # a tie: auth first
    config = _serde.structure(
        {"risk": {"surfaces": {"auth": {"weight": 0.1, "patterns": ["auth"]}}}}, ProjectConfig
    ).risk
    assert surface_of("src/auth/login.test.ts", rules_of(config)) is S.TEST
