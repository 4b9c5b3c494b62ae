"""gcc's, clang's and the linker's diagnostics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reflexkit.models import ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


@pytest.mark.skipif(shutil.which("clang") is None, reason="no clang on this machine")
def test_clang_error_count_is_its_summary(tmp_path: Path) -> None:
    """A clang run closes with ``N errors generated.``: the summary of the run."""
    write_files(tmp_path, {"q.c": "int f(void) { return x; }\nint g(void) { return y; }\n"})
    failure = run_in_bash("clang -c q.c -o q.o", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "2 errors generated." in text


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")
def test_gxx_note_naming_the_missing_include_is_the_hint(tmp_path: Path) -> None:
    """g++'s ``did you forget to '#include <map>'?`` note names the fix: it is quoted."""
    write_files(tmp_path, {"idx.cpp": "#include <string>\nstd::map<std::string, int> index;\n"})
    failure = run_in_bash(
        "g++ -std=c++17 -c idx.cpp", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "#include <map>" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_implicit_declaration_beside_an_error_is_quoted(tmp_path: Path) -> None:
    """An implicit declaration warning next to an error is a bug too: its line is quoted."""
    write_files(
        tmp_path,
        {
            "main.c": """
            struct cfg;
            struct cfg *load(void);
            int main(void) {
                struct cfg *c = load();
                return c->port + count_items(c);
            }
            """
        },
    )
    failure = run_in_bash(
        "gcc -std=c11 -Wall -c main.c", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "main.c:5:13: error:" in text
    assert "implicit declaration of function 'count_items'" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_gcc_call_declared_and_defined_nowhere_is_root_cause(tmp_path: Path) -> None:
    """An implicit declaration and an undefined reference to one name: a misspelt call."""
    write_files(
        tmp_path,
        {
            "totals.c": "int compute_total(int a, int b) { return a + b; }\n",
            "main.c": "#include <stdio.h>\n\n"
            'int main(void) {\n    printf("%d\\n", compute_totl(1, 2));\n    return 0;\n}\n',
        },
    )
    reflection = GEN.generate(run_in_bash("gcc -Wall -o app main.c totals.c", tmp_path))
    text = reflection_text(reflection)
    assert "undefined reference to `compute_totl'" in text
    assert "implicit declaration of function" in text
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_linker_multiple_definition_alone_is_a_root_cause(tmp_path: Path) -> None:
    """A header that defines a global: nothing is missing, the header is wrong."""
    write_files(
        tmp_path,
        {
            "state.h": "int counter = 0;\nvoid bump(void);\n",
            "state.c": '#include "state.h"\nvoid bump(void) { counter++; }\n',
            "main.c": '#include "state.h"\nint main(void) { bump(); return counter; }\n',
        },
    )
    failure = run_in_bash("gcc -o app main.c state.c", tmp_path)
    reflection = GEN.generate(failure)
    assert "multiple definition of `counter'" in reflection_text(reflection)
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_linker_failure_quotes_collect2_summary(tmp_path: Path) -> None:
    """The linker's closing line says the link, not the compile, failed."""
    write_files(
        tmp_path,
        {"main.c": 'int parse(const char *s);\nint main(void) { return parse("1"); }\n'},
    )
    failure = run_in_bash("gcc -o calc main.c", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "undefined reference to `parse'" in text
    assert "collect2: error: ld returned 1 exit status" in text


def test_the_first_errors_types_are_kept_whole() -> None:
    """A C++ error names its types at length: the first error keeps its operand types."""
    from reflexkit.readers._native import parse_gcc  # noqa: PLC0415

    found = parse_gcc(
        "include/opts.hpp:1000:6: error: no match for \u2018operator>>\u2019 (operand types are "
        "\u2018std::stringstream\u2019 {aka \u2018std::__cxx11::basic_stringstream<char>\u2019} "
        "and \u2018std::optional<std::__cxx11::basic_string<char> >\u2019)\n"
    )
    assert found is not None
    assert "std::optional<std::__cxx11::basic_string<char> >" in found.facts[0]


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")
def test_gxx_note_at_the_declaration_a_call_does_not_fit_is_quoted(tmp_path: Path) -> None:
    """A call that does not fit its function's header: the header's place is quoted too."""
    write_files(
        tmp_path,
        {
            "inc/buf.h": "long buf_find(char *s, long pos);\n",
            "use.cpp": '#include "buf.h"\nlong f(const char *s) { return buf_find(s, 0); }\n',
        },
    )
    failure = run_in_bash(
        "g++ -Iinc -c use.cpp", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "use.cpp:2:" in text
    assert "inc/buf.h:1:" in text
