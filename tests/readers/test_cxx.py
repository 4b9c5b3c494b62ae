"""The C/C++ readers: gcc and clang errors traced back to the project's lines, the linker, CMake.

The outputs under tests/data/tool_outputs/cxx-*.json and cmake-*.json were produced with g++ 12,
clang 14, GNU ld and CMake 3.25; the live tests compile with this machine's compilers.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import Findings, analyse
from reflexkit.readers._cxx import parse_cmake
from reflexkit.readers._native import parse_gcc, parse_make

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    assert_read_as_labelled,
    read_item,
)

ITEMS = sorted(
    p for pattern in ("cxx-*.json", "cmake-*.json") for p in (DATA / "tool_outputs").glob(pattern)
)


@pytest.mark.parametrize("path", ITEMS, ids=lambda p: p.stem)
def test_each_captured_output_is_read(path: Path) -> None:
    """Every captured failure gets its labelled type, category and key facts."""
    assert_read_as_labelled(path)


class TestTemplateErrors:
    """Errors inside libstdc++ headers are reported at the project's line."""

    def test_gcc_required_from_here_names_the_projects_line(self) -> None:
        """The chain gcc prints ends in ``src/shapes.cpp:16:14:   required from here``."""
        facts = read_item("cxx-gxx-template-errors").facts
        assert facts[2].startswith(
            "src/shapes.cpp:16:14: error: no match for \u2018operator<\u2019 (operand types are "
            "\u2018geo::Point\u2019 and \u2018geo::Point\u2019) [in bits/predefined_ops.h:45:23]"
        )
        assert facts[2].endswith("(+2 more)")
        assert not any(f.startswith("/usr/") for f in facts)

    def test_clang_requested_here_names_the_projects_line(self) -> None:
        """The notes clang prints after the error end at the project's ``requested here``."""
        facts = read_item("cxx-clang-template-colour").facts
        assert facts[1].startswith(
            "src/shapes.cpp:16:10: error: invalid operands to binary expression "
            "('geo::Point' and 'geo::Point') [in bits/predefined_ops.h:45:23]"
        )
        assert not any(f.startswith("/usr/") for f in facts)

    def test_errors_in_the_projects_files_come_first_as_printed(self) -> None:
        """The first error is the project's own, and the step says to fix it first."""
        findings = read_item("cxx-gxx-template-errors")
        assert findings.facts[0].startswith("src/shapes.cpp:26:35: error: conversion from")
        assert (
            findings.steps[0]
            == "Fix src/shapes.cpp:26:35 first; later errors often follow from it."
        )

    def test_system_header_error_without_a_chain_uses_the_include_stack(self) -> None:
        """A macro clash in a system header is reported where the project included it."""
        output = (
            "In file included from /usr/include/stdio.h:27,\n"
            "                 from src/main.c:2:\n"
            "/usr/include/features.h:12:2: error: #error unsupported mode\n"
        )
        findings = parse_gcc(output)
        assert findings is not None
        assert findings.facts == [
            "src/main.c:2: error: #error unsupported mode [in include/features.h:12:2]"
        ]


class TestLinker:
    """GNU ld's errors through gcc and clang."""

    def test_each_undefined_symbol_once_with_its_object(self) -> None:
        """Temporary object names are left out; the source name from debug info stays."""
        findings = read_item("cxx-clang-undefined-reference")
        assert findings.facts == [
            "undefined reference to `ring_pop' (in main.c)",
            "undefined reference to `ring_clear' (in main.c)",
        ]
        assert findings.category is ReflectionCategory.MISSING_CONTEXT

    def test_the_implicit_declaration_warning_explains_it(self) -> None:
        """The warning that the function was never declared is kept as a detail."""
        details = read_item("cxx-clang-undefined-reference").details
        assert details[0].startswith(
            "main.c:11:5: warning: implicit declaration of function 'ring_clear'"
        )

    def test_multiple_definition_is_quoted_without_temporary_objects(self) -> None:
        """``/tmp/ccAL8VE9.o:(.bss+0x0): multiple definition of`` changes every run."""
        facts = read_item("cxx-gxx-link-multiple-definition").facts
        assert "multiple definition of `stats::counter'" in facts
        assert not any(".o:(" in f for f in facts)


class TestCMake:
    """CMake's configure errors."""

    def test_a_package_cmake_cannot_find_is_a_dependency_error(self) -> None:
        """find_package(fmt REQUIRED) without fmt installed."""
        findings = read_item("cmake-find-package-fmt")
        assert findings.failure_type is FailureType.DEPENDENCY_ERROR
        assert findings.headline == "CMake cannot find fmt."
        assert findings.hints[0].startswith('Add the installation prefix of "fmt"')

    def test_an_error_inside_a_find_module_is_located_in_cmakelists(self) -> None:
        """The call stack's project line, not FindPackageHandleStandardArgs.cmake."""
        facts = read_item("cmake-could-not-find-curl").facts
        assert facts == [
            (
                "CMake Error at CMakeLists.txt:3 (find_package): Could NOT find CURL (missing: "
                "CURL_LIBRARY CURL_INCLUDE_DIR)"
            )
        ]

    def test_a_missing_source_file_is_a_build_error(self) -> None:
        """A target listing a file that does not exist."""
        findings = read_item("cmake-missing-source")
        assert findings.failure_type is FailureType.BUILD_ERROR
        assert findings.facts[0] == (
            "CMake Error at CMakeLists.txt:4 (add_executable): Cannot find source file: "
            "src/median.cpp"
        )

    def test_a_cmake_build_is_read_as_the_compilers_errors(self) -> None:
        """``cmake --build`` runs gmake: the compiler error, gmake's failed and top targets."""
        findings = read_item("cmake-build-gxx-error")
        assert findings.tool == "gcc"
        assert findings.details == [
            (
                "gmake[2]: *** [CMakeFiles/stats.dir/build.make:90: CMakeFiles/stats.dir/src/"
                "stats.cpp.o] Error 1"
            ),
            "gmake: *** [Makefile:91: all] Error 2",
        ]

    def test_other_output_is_not_cmake(self) -> None:
        """No ``CMake Error``, no findings."""
        assert parse_cmake("-- Configuring done\n-- Generating done\n") is None


def test_gmake_stop_lines_are_make_errors() -> None:
    """GNU make installed as gmake (BSD, macOS, CMake's generator) prints ``gmake: ***``."""
    findings = parse_make("gmake: *** No rule to make target 'lib.o', needed by 'app'.  Stop.\n")
    assert findings is not None
    assert findings.facts == ["gmake: *** No rule to make target 'lib.o', needed by 'app'.  Stop."]


def _compile(tmp_path: Path, compiler: str, source: str, name: str) -> Findings:
    """Compile *source* with the real *compiler* and analyse what it printed."""
    (tmp_path / name).write_text(source, encoding="utf-8")
    command = [compiler, "-std=c++17", "-c", name, "-o", "out.o"]
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    return analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command=" ".join(command),
            exit_code=run.returncode,
            error_output=run.stdout + run.stderr,
        )
    )


_SORT_WITHOUT_LESS = (
    "#include <algorithm>\n#include <vector>\nstruct P { int x; };\n"
    "void f(std::vector<P>& v) {\n    std::sort(v.begin(), v.end());\n}\n"
)


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_live_template_error_points_at_the_call(tmp_path: Path, compiler: str) -> None:
    """The real compiler's std::sort error is reported at the project's line 5."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler} on this machine")
    findings = _compile(tmp_path, compiler, _SORT_WITHOUT_LESS, "sort.cpp")
    assert findings.failure_type is FailureType.BUILD_ERROR
    assert findings.facts[0].startswith("sort.cpp:5:"), findings.facts
