"""Measure the heuristic reflections on corpora of real tool failures.

Runs what the reflection service runs (redact, then classify, then the heuristic generator)
over every ``*.json`` item of each corpus folder and prints failure-type accuracy, key-fact
recall (a key fact counts when it appears verbatim in the analysis, the suggestion or an
action item), category agreement, reflection length, the longest block pasted verbatim from
the output, and time per item (mean, median, max); then the secrets that survive redaction
over the secrets corpus (must be 0) and the look-alikes it damaged.

Usage::

    python benchmarks/reflection_quality.py [CORPUS_DIR_OR_ITEM ...] [--secrets DIR] [--verbose]
        [--generic-only] [--prefix PREFIX] [--per-tool] [--hide-commands]

CORPUS_DIR defaults to ``../shared/corpus/failures/dev`` relative to the repository, the
repository's own real outputs in ``tests/data/tool_outputs`` and ``tests/data/holdout_like``:
real outputs of the corpus's tools on projects the readers were not built on, labelled before
the readers were measured on them, the best estimate of the score on the held-out set.
An argument may also be one item's file. ``--prefix b3-`` keeps the items whose file name
starts so (one batch of ``tests/data/holdout_like``); ``--per-tool`` adds the failure type,
key facts and category of each tool that missed something. ``--generic-only`` unregisters
every reader first, so the generic reader reads everything: a measure of how the heuristic
does on formats it has no reader for. ``--hide-commands`` replaces each command line with
``./ci``: how well the output alone is read, as for a tool no table knows by name.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType, Reflection
from reflexkit.readers import registered_readers, unregister_reader
from reflexkit.readers._analyse import forget_readings
from reflexkit.redaction import Redactor
from reflexkit.reflection import HeuristicGenerator
from reflexkit.reflection._classify import classify

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "failures" / "dev"
OWN_OUTPUTS = REPO / "tests" / "data" / "tool_outputs"
HOLDOUT_LIKE = REPO / "tests" / "data" / "holdout_like"
UNSEEN_TOOLS = REPO / "tests" / "data" / "unseen_tools"
UNSEEN_REPOS = REPO / "tests" / "data" / "unseen_repos"
UNSEEN_REPOS_2 = REPO / "tests" / "data" / "unseen_repos_2"
UNSEEN_REPOS_3 = REPO / "tests" / "data" / "unseen_repos_3"
UNSEEN_REPOS_4 = REPO / "tests" / "data" / "unseen_repos_4"
UNSEEN_TOOLS_2 = REPO / "tests" / "data" / "unseen_tools_2"
UNSEEN_TOOLS_3 = REPO / "tests" / "data" / "unseen_tools_3"
UNSEEN_TOOLS_4 = REPO / "tests" / "data" / "unseen_tools_4"
UNSEEN_TOOLS_5 = REPO / "tests" / "data" / "unseen_tools_5"
UNSEEN_TOOLS_6 = REPO / "tests" / "data" / "unseen_tools_6"
TOOL_NAMES = (
    "pytest", "unittest", "mypy", "pyright", "ruff", "flake8", "tsc", "eslint", "jest", "vitest",
    "mocha", "node:test", "cargo", "clippy", "gcc", "clang", "go test", "go vet", "cmake",
    "phpunit", "rspec", "minitest", "busted", "ExUnit", "bats", "shellcheck", "sphinx", "mkdocs",
    "biome", "ctest", "sanitizer", "XCTest", "dotnet", "xunit", "cabal", "hspec",
    "alcotest", "jasmine", "uvu", "deno", "zig", "cppcheck", "hadolint", "taplo", "oxlint",
    "htmlhint", "terraform", "tcltest", "EUnit", "gfortran", "gnat", "fpc", "guile", "racket",
    "raco", "sbcl", "nim", "crystal", "shfmt", "xmllint", "protoc", "clang-tidy", "meson",
    "ninja", "scons", "rubocop", "testthat", "swipl", "plunit", "gdc", "valac", "cobc", "mcs",
    "iverilog", "ocaml", "nox", "pre-commit", "cmake-lint", "sphinx-lint", "gitlint",
    "commitlint", "pyrefly", "refurb", "zizmor", "semgrep", "ansible-lint", "qunit", "tsd",
    "publint", "jsonlint", "madge", "html-validate", "solc", "ajv", "knip", "c8", "sass",
    "lessc", "jshint", "ts-node", "esbuild", "webpack", "depcheck", "pyupgrade", "yapf", "twine",
    "verilator", "nasm", "gawk", "clisp", "gtest", "googletest", "clojure", "sqlite3",
    "msgfmt", "test-unit", "rake", "podchecker", "common_test", "ct_run",
    "luacheck", "perlcritic", "chktex", "shunit2", "cmocka", "clang-format", "doxygen",
    "asciidoctor", "raku", "gforth", "bison", "cython", "xmlstarlet", "composer", "phpcs",
    "autoconf", "bundler", "haxe", "desktop-file-validate", "perltidy", "openssl", "cspell",
    "swagger-cli", "nyc", "stylus", "rollup", "babel", "lockfile-lint", "npm-package-json-lint",
    "type-coverage", "svelte-check", "remark", "sort-package-json", "pnpm", "nginx", "terser",
    "pydoclint", "yamale", "flynt", "docformatter", "django", "zope", "twisted", "cfn-lint",
    "rstcheck", "nbconvert", "jupyter", "fawltydeps", "pyroma", "openapi-spec-validator",
    "proselint", "unimport", "boost.test", "cunit", "luaunit", "yath", "tinytest",
    "polyml", "poly/ml", "ghdl", "tcc", "rexx", "graphviz", "xsltproc", "makeinfo", "hugo",
    "apache2", "haproxy", "visudo", "sshd", "named-checkzone", "mandoc", "appstreamcli",
    "jsonnet", "rebar3", "brittle", "typedoc", "jsdoc", "swc", "vite", "turbo", "spectral",
    "redocly", "solhint", "secretlint", "textlint", "dprint", "quick-lint-js", "jscpd",
    "dependency-cruiser", "rescript", "handlebars", "kustomize", "docker", "xdoctest",
    "pyproject-fmt", "slotscheck", "rst2html", "cpplint", "lizard", "dotenv-linter", "bashate",
    "autoflake", "valgrind", "systemd-analyze", "dpkg", "glib-compile-schemas", "dialyzer",
    "gplc", "pandoc", "promtool", "caddy", "varnishd", "dnsmasq", "unbound-checkconf", "lighttpd",
    "swig", "flatc", "capnp", "thrift", "uncrustify", "splint", "lintian", "groovy", "checkstyle",
    "cxxtest", "cppunit", "junit", "phpmd", "sdcc", "staticcheck", "runit", "yosys", "pymarkdown",
    "poetry", "doit", "testtools", "stestr", "pydoctor", "autopep8", "gersemi", "xmlschema",
    "pykwalify", "sqlfmt", "blacken-docs", "pip-compile", "flawfinder", "gcovr", "zuban",
    "ansible-playbook", "poku", "gulp", "grunt", "npm-run-all", "buildifier",
    "graphql-schema-linter", "syncpack", "license-checker", "ejslint", "pug-lint", "coffeelint",
    "tsx", "browserify", "uglifyjs", "mjml", "svgo", "wait-on", "write-good", "zora", "yarn",
    "ls-lint",
)  # fmt: skip
"""Tools a reflection may name as the one that failed (words that are also verbs or advice,
``make``, ``pip``, ``npm``, are left out); naming one that neither the command nor the output
mentions is a wrong-tool error."""
HIDDEN_COMMAND = "./ci"
"""The command line ``--hide-commands`` puts in place of each item's: a script that says
nothing of what it runs, so the type comes from the output's own evidence alone."""
RUNS = 5
PASTE_LIMIT = 300
"""No block copied verbatim from the output may be longer than this."""
DEFAULT_SECRETS = REPO / "tests" / "data" / "secrets"


def reflect(
    failure: FailureContext, redactor: Redactor, generator: HeuristicGenerator
) -> tuple[Reflection, float, float]:
    """Redact, classify and reflect on one failure, as the service does.

    Returns:
        The reflection, the seconds of the whole pipeline and of the heuristic alone
        (classify + generate), each the best of ``RUNS`` runs: the machine is shared, and the
        best run is the one least disturbed by other processes.
    """
    totals: list[float] = []
    heuristics: list[float] = []
    reflection: Reflection | None = None
    for _ in range(RUNS):
        forget_readings()  # each run reads the output anew, as a new failure is
        start = time.perf_counter()
        clean, counts = redactor.redact_failure(failure)
        redacted = time.perf_counter()
        if clean.failure_type in {None, FailureType.UNKNOWN}:
            clean = attrs.evolve(clean, failure_type=classify(clean))
        reflection = attrs.evolve(generator.generate(clean), redactions=counts)
        end = time.perf_counter()
        totals.append(end - start)
        heuristics.append(end - redacted)
    assert reflection is not None
    return reflection, min(totals), min(heuristics)


def quoted_text(reflection: Reflection) -> str:
    """Return the text a key fact must appear in."""
    return "\n".join([reflection.analysis, reflection.suggestion, *reflection.action_items])


def wrong_tools(reflection: Reflection, failure: FailureContext) -> list[str]:
    """Return the tools the reflection names that neither the command nor the output shows."""
    said = quoted_text(reflection).lower()
    seen = f"{failure.command}\n{failure.error_output}".lower()
    return [t for t in TOOL_NAMES if _named(t.lower(), said) and t.lower() not in seen]


def _named(tool: str, text: str) -> bool:
    return re.search(rf"(?<![\w/.-]){re.escape(tool)}(?![\w-])", text) is not None


def longest_paste(reflection_text: str, output: str) -> int:
    """Return the length of the longest stretch of the reflection copied from the output."""
    matcher = difflib.SequenceMatcher(None, reflection_text, output, autojunk=False)
    match = matcher.find_longest_match(0, len(reflection_text), 0, len(output))
    return match.size


def item_paths(folder: Path, prefix: str) -> list[Path]:
    """Return the items of a corpus folder (or the one item a file is) whose name starts so."""
    paths = [folder] if folder.is_file() else sorted(folder.glob("*.json"))
    return [path for path in paths if path.name.startswith(prefix)]


def tool_of(item_id: str) -> str:
    """Return the tool an item's id names: ``b3-pytest-x`` and ``pytest-x`` are pytest's."""
    parts = item_id.split("-")
    if len(parts) > 1 and parts[0][:1] == "b" and parts[0][1:].isdigit():
        parts = parts[1:]
    return parts[0]


def print_per_tool(rows: dict[str, list[tuple[bool, int, int, bool]]]) -> None:
    """Print type, key facts and category per tool, for the tools that missed something."""
    print("  per tool, where one missed (items; type; key facts; category):")
    for tool, results in sorted(rows.items()):
        typed = sum(r[0] for r in results)
        found = sum(r[1] for r in results)
        total = sum(r[2] for r in results)
        agreed = sum(r[3] for r in results)
        if typed == agreed == len(results) and found == total:
            continue
        print(
            f"    {tool:10s} {len(results):3d}   {typed}/{len(results)}   "
            f"{found}/{total}   {agreed}/{len(results)}"
        )


def print_misses(item: dict[str, Any], reflection: Reflection, missing: list[str]) -> None:
    """Print what the reflection on one item got wrong: type, category, facts, tools."""
    expected = item["expected"]
    failure = structure(item["failureContext"], FailureContext)
    lines = [f"    missing key fact: {fact!r}" for fact in missing]
    if reflection.failure_type.value != expected["failureType"]:
        lines.insert(
            0, f"    type {reflection.failure_type.value}, expected {expected['failureType']}"
        )
    if reflection.category.value not in expected["categoryHints"]:
        hints = expected["categoryHints"]
        lines.insert(0, f"    category {reflection.category.value}, expected {hints}")
    named = wrong_tools(reflection, failure)
    if named:
        lines.insert(0, f"    names {', '.join(named)}, which did not run")
    if lines:
        print(f"  {item['id']}:")
        print("\n".join(lines))


def measure_corpus(
    folder: Path,
    *,
    verbose: bool,
    prefix: str = "",
    per_tool: bool = False,
    hide_commands: bool = False,
) -> dict[str, float]:
    """Run the pipeline over a corpus folder (or one item's file) and print its figures."""
    paths = item_paths(folder, prefix)
    if not paths:
        sys.exit(f"no *.json items named {prefix}* in {folder}")
    rows: dict[str, list[tuple[bool, int, int, bool]]] = {}
    redactor, generator = Redactor(), HeuristicGenerator()
    typed = facts_total = facts_found = agreed = wrong = 0
    lengths: list[int] = []
    seconds: list[float] = []
    heuristic_seconds: list[float] = []
    slowest = ("", 0.0)
    pastes: list[int] = []
    for path in paths:
        item: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        expected = item["expected"]
        failure = structure(item["failureContext"], FailureContext, source=str(path))
        if hide_commands:
            failure = attrs.evolve(failure, command=HIDDEN_COMMAND)
        reflection, elapsed, heuristic = reflect(failure, redactor, generator)
        text = quoted_text(reflection)
        missing = [fact for fact in expected["keyFacts"] if fact not in text]
        type_ok = reflection.failure_type.value == expected["failureType"]
        category_ok = reflection.category.value in expected["categoryHints"]
        typed += type_ok
        wrong += bool(wrong_tools(reflection, failure))
        agreed += category_ok
        facts_total += len(expected["keyFacts"])
        facts_found += len(expected["keyFacts"]) - len(missing)
        rows.setdefault(tool_of(item["id"]), []).append(
            (
                type_ok,
                len(expected["keyFacts"]) - len(missing),
                len(expected["keyFacts"]),
                category_ok,
            )
        )
        lengths.append(
            len(reflection.analysis)
            + len(reflection.suggestion)
            + sum(len(a) for a in reflection.action_items)
        )
        seconds.append(elapsed)
        heuristic_seconds.append(heuristic)
        slowest = max(slowest, (item["id"], heuristic), key=lambda pair: pair[1])
        pastes.append(longest_paste(text, failure.error_output))
        if verbose and pastes[-1] > PASTE_LIMIT:
            print(f"  {item['id']}: pasted block of {pastes[-1]} chars")
        if verbose:
            print_misses(item, reflection, missing)
    count = len(paths)
    figures = {
        "items": count,
        "type_accuracy": typed / count,
        "key_fact_recall": facts_found / facts_total if facts_total else 1.0,
        "category_agreement": agreed / count,
        "mean_length": statistics.mean(lengths),
        "max_length": max(lengths),
        "ms_per_item": 1000 * statistics.mean(seconds),
        "ms_median": 1000 * statistics.median(seconds),
        "ms_max": 1000 * max(seconds),
        "heuristic_ms_median": 1000 * statistics.median(heuristic_seconds),
        "heuristic_ms_max": 1000 * max(heuristic_seconds),
        "heuristic_ms_p95": 1000 * _p95(heuristic_seconds),
        "longest_paste": max(pastes),
        "wrong_tool": wrong,
    }
    figures["facts"] = f"{facts_found}/{facts_total}"
    print_figures(f"{folder}{' ' + prefix + '*' if prefix else ''}", figures, slowest)
    if per_tool:
        print_per_tool(rows)
    return figures


def print_figures(name: str, figures: dict[str, Any], slowest: tuple[str, float]) -> None:
    """Print one corpus's figures (and its slowest item for the heuristic)."""
    print(f"corpus: {name} ({figures['items']} items)")
    print(f"  failure type correct    {figures['type_accuracy']:7.1%}   (target >= 95%)")
    print(
        f"  key facts quoted        {figures['key_fact_recall']:7.1%}   (target >= 90%; "
        f"{figures['facts']})"
    )
    print(f"  category acceptable     {figures['category_agreement']:7.1%}   (target >= 80%)")
    print(f"  wrong tool named        {figures['wrong_tool']:7d}   items (target 0)")
    print(
        f"  reflection length       {figures['mean_length']:7.0f}   chars mean, "
        f"{figures['max_length']} max (limit 1500)"
    )
    print(f"  longest pasted block    {figures['longest_paste']:7d}   chars (limit {PASTE_LIMIT})")
    print(
        f"  time per item           {figures['ms_per_item']:7.2f}   ms mean, "
        f"{figures['ms_median']:.2f} ms median, {figures['ms_max']:.2f} ms max "
        "(redact + classify + generate, best of 5)"
    )
    print(
        f"  heuristic alone         {figures['heuristic_ms_median']:7.2f}   ms median, "
        f"{figures['heuristic_ms_max']:.2f} ms max "
        "(classify + generate; target median < 1 and max < 10)"
    )
    print(
        f"  heuristic p95           {figures['heuristic_ms_p95']:7.2f}   ms "
        f"(slowest: {slowest[0]}, {1000 * slowest[1]:.2f} ms)"
    )


def _p95(values: list[float]) -> float:
    """Return the 95th percentile (the largest value when there are too few to cut)."""
    return (
        statistics.quantiles(values, n=20, method="inclusive")[18]
        if len(values) > 1
        else max(values)
    )


LARGE = ("pytest-inventory-assertions", "make-gcc-queue", "jest-price-discount")
"""Items of tests/data repeated up to 100 KB, to time the heuristic on large outputs."""


def measure_large(folder: Path) -> None:
    """Time the heuristic on 100 KB outputs (each an item's output repeated), best of RUNS."""
    generator = HeuristicGenerator()
    print("100 KB outputs (an item's output repeated):")
    for name in LARGE:
        path = folder / f"{name}.json"
        if not path.exists():
            continue
        item: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        failure = structure(item["failureContext"], FailureContext, source=str(path))
        output = failure.error_output
        while len(output) < 100_000:
            output += "\n" + failure.error_output
        big = attrs.evolve(failure, error_output=output[:100_000])
        best = float("inf")
        for _ in range(RUNS):
            start = time.perf_counter()
            generator.generate(big)
            best = min(best, time.perf_counter() - start)
        print(f"  {name:32s} {1000 * best:7.2f}   ms (generate, best of {RUNS})")


def measure_secrets(folder: Path) -> int:
    """Redact the secrets corpus; print and return how many secrets survived."""
    items: list[dict[str, Any]] = json.loads((folder / "secrets.json").read_text("utf-8"))
    lookalikes: list[str] = json.loads((folder / "lookalikes.json").read_text("utf-8"))
    survived = total = 0
    for item in items:
        text = Redactor(environ=item.get("env", {})).redact(item["text"]).text
        total += len(item["secrets"])
        for secret in item["secrets"]:
            if secret in text:
                survived += 1
                print(f"  SURVIVED in {item['id']}: {secret[:6]}...")
    damaged = [t for t in lookalikes if Redactor(environ={}).redact(t).text != t]
    for text in damaged:
        print(f"  look-alike changed: {text!r}")
    print(f"secrets corpus: {folder} ({len(items)} texts, {total} secrets)")
    print(f"  secrets surviving       {survived:7d}   (target 0)")
    print(f"  look-alikes changed     {len(damaged):7d}   of {len(lookalikes)}")
    return survived


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, measure, and return 1 when a secret survived."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "corpus",
        nargs="*",
        type=Path,
        default=[
            DEFAULT_CORPUS,
            OWN_OUTPUTS,
            HOLDOUT_LIKE,
            UNSEEN_TOOLS,
            UNSEEN_TOOLS_2,
            UNSEEN_TOOLS_3,
            UNSEEN_TOOLS_4,
            UNSEEN_TOOLS_5,
            UNSEEN_TOOLS_6,
            UNSEEN_REPOS,
            UNSEEN_REPOS_2,
            UNSEEN_REPOS_3,
            UNSEEN_REPOS_4,
        ],
        metavar="CORPUS_DIR_OR_ITEM",
    )
    parser.add_argument("--secrets", type=Path, default=DEFAULT_SECRETS)
    parser.add_argument("--verbose", "-v", action="store_true", help="list per-item misses")
    parser.add_argument(
        "--generic-only", action="store_true", help="unregister every reader: generic reader only"
    )
    parser.add_argument(
        "--prefix", default="", help="only the items whose file name starts so (b3- for batch 3)"
    )
    parser.add_argument(
        "--per-tool", action="store_true", help="print the figures per tool where one missed"
    )
    parser.add_argument(
        "--hide-commands",
        action="store_true",
        help=f"replace every command line with {HIDDEN_COMMAND!r}: what the output alone says",
    )
    args = parser.parse_args(argv)
    if args.generic_only:
        for reader in registered_readers():
            unregister_reader(reader.name)
        print("generic reader only (every registered reader removed)")
    for folder in args.corpus:
        measure_corpus(
            folder,
            verbose=args.verbose,
            prefix=args.prefix,
            per_tool=args.per_tool,
            hide_commands=args.hide_commands,
        )
    measure_large(OWN_OUTPUTS)
    return 1 if measure_secrets(args.secrets) else 0


if __name__ == "__main__":
    sys.exit(main())
