"""rustc's and cargo's output: errors with their notes, tests, doc tests, crates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


CARGO_TOML = '[package]\nname = "tiles"\nversion = "0.1.0"\nedition = "2021"\n'


def _crate(root: Path, main: str, dependencies: str = "") -> None:
    write_files(
        root,
        {
            "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{dependencies}",
            "src/main.rs": main,
        },
    )


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_quotes_a_notes_list_and_the_warnings_beside_the_error(tmp_path: Path) -> None:
    """The list rustc indents under a note, and a warning printed next to the error."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/main.rs": """
            use std::collections::HashSet;
            use std::fmt::Write;

            #[derive(Debug)]
            struct Tile {
                x: i32,
            }

            fn main() {
                let seen: HashSet<Tile> = HashSet::new();
                println!("{}", seen.contains(&Tile { x: 1 }));
            }
            """,
        },
    )
    text = reflection_text(GEN.generate(run_in_bash("cargo build --offline", tmp_path)))
    assert "`Tile: Eq`" in text  # the list under `note: the following trait bounds ...`
    assert "`Tile: Hash`" in text
    assert "warning: unused import: `std::fmt::Write`" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_unresolved_item_of_own_module_quotes_its_label(tmp_path: Path) -> None:
    """``no `perimeter` in `geo``` is the span's label: a renamed item, not a missing crate."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/geo.rs": "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
            "src/main.rs": "mod geo;\nuse geo::perimeter;\n\nfn main() {\n    perimeter(1);\n}\n",
        },
    )
    reflection = GEN.generate(run_in_bash("cargo build --offline", tmp_path))
    assert "no `perimeter` in `geo`" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_label_after_a_secondary_span_is_quoted(tmp_path: Path) -> None:
    """``-----   ^^^ expected `usize`, found `f64```: the primary label after a secondary one."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/main.rs": "fn main() {\n    let n: usize = (3 as f64 / 2.0).floor() - 1.0;\n"
            '    println!("{n}");\n}\n',
        },
    )
    failure = run_in_bash("cargo build --offline", tmp_path)
    assert "-----" in failure.error_output
    assert "expected `usize`, found `f64`" in reflection_text(GEN.generate(failure))


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_doc_test_failure_is_named_with_left_and_right(tmp_path: Path) -> None:
    """A doc-test is named ``src/lib.rs - item (line N)``: quoted whole, with its panic."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "clampy"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": """
            /// Clamps a percentage.
            ///
            /// ```
            /// assert_eq!(clampy::pct(150), 100);
            /// ```
            pub fn pct(v: i32) -> i32 {
                v.max(0)
            }
            """,
        },
    )
    failure = run_in_bash("cargo test --offline -q", tmp_path, timeout=300)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "src/lib.rs - pct (line 3)" in text
    assert "left: 150" in text
    assert "right: 100" in text
    assert "cargo test --doc" in text
    assert reflection.failure_type is FailureType.TEST_FAILURE


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_error_quotes_its_own_note(tmp_path: Path) -> None:
    """A macro called with the wrong arguments: rustc's note says which fragment it tried."""
    _crate(
        tmp_path,
        """
        macro_rules! pair {
            ($x:expr, $y:expr) => { ($x, $y) };
        }
        fn main() {
            let p = pair!(1, 2, 3);
            println!("{:?}", p);
        }
        """,
    )
    failure = run_in_bash("cargo check --offline -q", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "no rules expected" in text
    assert "note: while trying to match meta-variable `$y:expr`" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_unknown_crate_names_the_package_that_requires_it(tmp_path: Path) -> None:
    """``no matching package``: and which package of a workspace asked for it."""
    _crate(tmp_path, "fn main() {}\n", 'no-such-crate-reflexkit-zz = "1.0"\n')
    failure = run_in_bash("cargo build --offline", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    text = reflection_text(reflection)
    assert "no matching package named `no-such-crate-reflexkit-zz` found" in text
    assert "required by package `demo v0.1.0" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_should_panic_with_another_message_says_so(tmp_path: Path) -> None:
    """``should_panic(expected = ...)`` that saw another panic: cargo's note is quoted."""
    _crate(
        tmp_path,
        """
        fn main() {}

        #[test]
        #[should_panic(expected = "capacity exceeded")]
        fn push_past_capacity() {
            panic!("queue is full");
        }
        """,
    )
    failure = run_in_bash("cargo test --offline -q", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "push_past_capacity" in text
    assert "panic did not contain expected string" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_error_after_many_warnings_is_read(tmp_path: Path) -> None:
    """A dozen warnings printed before the one error don't hide it (nor crash the reader)."""
    cfgs = "".join(f"#[cfg(not(old_rustc_{i}))]\npub fn f{i}() {{}}\n" for i in range(14))
    write_files(
        tmp_path,
        {"Cargo.toml": CARGO_TOML, "src/lib.rs": cfgs + 'pub fn g() -> u32 {\n    "x"\n}\n'},
    )
    failure = run_in_bash("cargo build --offline", tmp_path)
    assert failure.error_output.count("warning: unexpected `cfg`") > 12
    reflection = GEN.generate(failure)
    assert "error[E0308]: mismatched types" in reflection_text(reflection)
    assert "src/lib.rs:30:5" in reflection_text(reflection)
    assert reflection.failure_type is FailureType.BUILD_ERROR


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_test_rerun_names_the_test_target(tmp_path: Path) -> None:
    """An integration test's failure is re-run with cargo's ``--test NAME``, right value whole."""
    want = "a rather long expected message that used to be clipped at sixty characters"
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/lib.rs": 'pub fn msg() -> String {\n    String::from("short")\n}\n',
            "tests/api.rs": "#[test]\nfn message() {\n"
            f'    assert_eq!(tiles::msg(), "{want}");\n}}\n',
        },
    )
    failure = run_in_bash("cargo test --offline", tmp_path, timeout=300)
    assert "to rerun pass `--test api`" in failure.error_output
    text = reflection_text(GEN.generate(failure))
    assert "cargo test --test api message -- --exact" in text
    assert f'right: "{want}"' in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_crates_missing_from_the_manifest_are_a_dependency_error(tmp_path: Path) -> None:
    """Every error an import of an undeclared crate: declare it, don't change the code."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/main.rs": "use rand::Rng;\n\nfn main() {\n    rand::rng();\n}\n",
        },
    )
    reflection = GEN.generate(run_in_bash("cargo build --offline", tmp_path))
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert reflection.category is ReflectionCategory.MISSING_CONTEXT
    assert "Cargo.toml" in reflection.suggestion


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_test_of_a_target_that_does_not_exist_is_a_misuse(tmp_path: Path) -> None:
    """``cargo test --test nope``: cargo names what it does not have; nothing was tested."""
    write_files(tmp_path, {"Cargo.toml": CARGO_TOML, "src/lib.rs": "pub fn f() {}\n"})
    failure = run_in_bash("cargo test --offline --test nope", tmp_path)
    reflection = GEN.generate(failure)
    assert "error: no test target named `nope`" in reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert reflection.category is ReflectionCategory.TOOL_MISUSE


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_should_panic_with_another_message_quotes_the_substring_it_wanted(
    tmp_path: Path,
) -> None:
    """``should_panic(expected = ...)`` met another panic: both messages are quoted."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "split"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": "pub fn split(ways: u32) -> u32 {\n"
            '    if ways == 0 { panic!("zero ways"); }\n    10 / ways\n}\n\n'
            "#[cfg(test)]\nmod tests {\n    #[test]\n"
            '    #[should_panic(expected = "cannot split into zero parts")]\n'
            "    fn zero_ways_panics() { super::split(0); }\n}\n",
        },
    )
    text = reflection_text(GEN.generate(run_in_bash("cargo test --offline", tmp_path)))
    assert 'expected substring: "cannot split into zero parts"' in text
    assert "zero ways" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_warnings_made_errors_name_where_the_lint_level_is_set(tmp_path: Path) -> None:
    """``#![deny(warnings)]`` turns a warning into an error: the attribute's line is quoted."""
    _crate(tmp_path, "#![deny(warnings)]\nfn main() {\n    let unused = 1;\n}\n")
    failure = run_in_bash("cargo check --offline -q", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "src/main.rs:1:9" in text
    assert "#![deny(warnings)]" in text
