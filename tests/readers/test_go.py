"""The Go readers: go test (with -v and without), go build/vet diagnostics, module errors, panics.

The outputs under tests/data/tool_outputs/go-*.json were produced by running go 1.19 on small
projects; the live tests at the end run the go toolchain of this machine when it has one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.readers._go import parse_go_panic, user_frame

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    assert_read_as_labelled,
    load_item,
    quoted,
    read_item,
)

ITEMS = sorted((DATA / "tool_outputs").glob("go-*.json"))


def item(name: str) -> dict[str, Any]:
    """Return one captured item."""
    return load_item(DATA / "tool_outputs" / f"{name}.json")


@pytest.mark.parametrize("path", ITEMS, ids=lambda p: p.stem)
def test_each_captured_output_is_read(path: Path) -> None:
    """Every captured Go failure gets its labelled type, category and key facts."""
    assert_read_as_labelled(path)


class TestGoTest:
    """``go test`` output."""

    def test_verbose_run_attributes_log_lines_to_their_test(self) -> None:
        """With -v the log lines come before ``--- FAIL``; each is quoted with its test."""
        findings = read_item("go-test-v-slug")
        assert findings.tool == "go test"
        assert findings.tests == ["TestMake", "TestTruncate", "TestWords"]
        assert (
            findings.facts[1]
            == '--- FAIL: TestTruncate: slug_test.go:24: Truncate: got "h\\xc3", want "hé"'
        )
        assert "TestOK" not in quoted(findings)

    def test_multi_line_log_message_is_kept(self) -> None:
        """A ``t.Errorf`` message of several lines keeps its got and want lines."""
        fact = read_item("go-test-v-slug").facts[2]
        assert fact.startswith("--- FAIL: TestWords: slug_test.go:32: mismatch:")
        assert 'got:  []string{"a-b"}' in fact
        assert 'want: []string{"a-b", "c"}' in fact

    def test_failing_subtests_are_named_instead_of_their_parent(self) -> None:
        """The parent of failing subtests adds nothing: the subtests are the ids to re-run."""
        findings = read_item("go-test-cart-panic")
        assert "TestDiscountTable/none" in findings.tests
        assert "TestDiscountTable" not in findings.tests
        assert findings.summary == "FAIL\texample.com/shop/cart\t0.010s"
        assert "go test -run '^TestTotal$' example.com/shop/cart" in findings.steps[0]

    def test_panic_in_a_test_points_at_the_projects_frame(self) -> None:
        """A panic is quoted at the project's line, not at testing.go or runtime/panic.go."""
        fact = next(
            f
            for f in read_item("go-test-cart-panic").facts
            if f.startswith("--- FAIL: TestFirstEmpty")
        )
        assert "index out of range [0] with length 0" in fact
        assert "at /tmp/i12b/go/shop/cart/cart.go:39" in fact
        assert fact.endswith("(called from /tmp/i12b/go/shop/cart/cart_test.go:40)")
        assert "[recovered]" not in fact

    def test_test_binary_timeout_is_a_timeout_naming_the_stuck_test(self) -> None:
        """``panic: test timed out`` names the test and where it was waiting."""
        findings = read_item("go-test-timeout")
        assert findings.failure_type is FailureType.TIMEOUT
        assert findings.tests == ["TestLockOrder"]
        assert (
            "example.com/shop/price.TestLockOrder waiting at "
            "/tmp/i12b/go/shop/price/slow_test.go:16" in findings.facts
        )

    def test_tests_that_do_not_compile_are_a_build_error(self) -> None:
        """``FAIL pkg [build failed]``: the compiler's errors, not a test failure."""
        findings = read_item("go-test-build-failed")
        assert findings.failure_type is FailureType.BUILD_ERROR
        assert findings.tool == "go test"
        assert findings.facts[0].startswith("cart/extra_test.go:7:4: c.Remove undefined")

    def test_ok_and_no_test_files_lines_are_not_failures(self) -> None:
        """Packages that passed or have no tests are not reported."""
        text = quoted(read_item("go-test-v-slug"))
        assert "wrap" not in text
        assert "cmd/slugify" not in text

    def test_json_events_are_read_like_the_plain_output(self) -> None:
        """``go test -json`` wraps each output line in an event; the same tests come out."""
        plain, wrapped = read_item("go-test-cart-panic"), read_item("go-test-json")
        assert wrapped.tests == plain.tests
        assert (
            wrapped.facts[0]
            == plain.facts[0]
            == "--- FAIL: TestTotal: cart_test.go:8: Total() = 8, want 11"
        )

    def test_a_data_race_is_located_at_the_projects_line(self) -> None:
        """-race reports the racing accesses; the project's line is quoted, not the runtime's."""
        findings = read_item("go-test-race")
        assert findings.facts[0] == (
            "WARNING: DATA RACE (Read) at /tmp/i12b/var/shop/cart/race_test.go:15"
        )
        assert "sync.Mutex" in findings.advice

    def test_a_race_in_a_program_is_a_runtime_error(self) -> None:
        """``go run -race`` exits 66 with the race reports and no panic."""
        findings = read_item("go-run-race-map")
        assert findings.failure_type is FailureType.RUNTIME_ERROR
        assert findings.facts[0].endswith("at /tmp/i12b/var/shop/main.go:15")


class TestDiagnostics:
    """``go build`` and ``go vet``: the same shape, told apart by the messages."""

    def test_build_errors_are_quoted_one_per_line(self) -> None:
        """Each compiler error with its location as printed."""
        findings = read_item("go-build-store-errors")
        assert findings.failure_type is FailureType.BUILD_ERROR
        assert findings.facts[-1] == "store/store.go:37:9: undefined: totl"
        assert "package example.org/inventory/store" in findings.details

    def test_vet_findings_are_a_lint_error(self) -> None:
        """Vet is a linter: its findings are lint_error, verification."""
        findings = read_item("go-vet-store")
        assert findings.failure_type is FailureType.LINT_ERROR
        assert findings.category is ReflectionCategory.VERIFICATION
        assert findings.tool == "go vet"

    def test_vet_messages_are_recognised_without_the_command(self) -> None:
        """Under ``make lint`` the analyzer messages alone tell it is vet."""
        failure = structure(item("go-vet-store")["failureContext"], FailureContext)
        findings = analyse(attrs.evolve(failure, command="make lint"))
        assert findings.failure_type is FailureType.LINT_ERROR

    def test_compile_errors_under_go_vet_stay_build_errors(self) -> None:
        """``go vet`` on code that does not compile reports compiler errors."""
        failure = structure(item("go-build-store-errors")["failureContext"], FailureContext)
        findings = analyse(attrs.evolve(failure, command="go vet ./..."))
        assert findings.failure_type is FailureType.BUILD_ERROR

    def test_package_missing_from_go_mod_is_a_dependency_error(self) -> None:
        """``no required module provides package``: dependency_error, with Go's own command."""
        findings = read_item("go-run-missing-modules")
        assert findings.failure_type is FailureType.DEPENDENCY_ERROR
        assert findings.hints == ["go get github.com/google/uuid", "go get golang.org/x/exp/slices"]
        assert not any(fact.endswith("to add it:") for fact in findings.facts)

    def test_missing_go_sum_entry_is_a_dependency_error(self) -> None:
        """The module is required but go.sum lacks it: go mod tidy."""
        findings = read_item("go-build-missing-go-sum")
        assert findings.failure_type is FailureType.DEPENDENCY_ERROR
        assert "go mod tidy" in findings.advice


class TestPanics:
    """Programs that panic or die (``go run``, a built binary)."""

    def test_library_frames_are_skipped_for_the_projects(self) -> None:
        """regexp.MustCompile panics, the project's match.go:7 called it."""
        findings = read_item("go-binary-panic-regexp")
        assert findings.failure_type is FailureType.RUNTIME_ERROR
        assert (
            findings.steps[0]
            == "Open /tmp/i12b/go/worker/internal/match/match.go:7 and fix the statement there."
        )

    def test_nil_dereference_keeps_the_signal_line(self) -> None:
        """The SIGSEGV line is a detail; the fact names the project's line."""
        findings = read_item("go-run-nil-map-entry")
        assert findings.facts[0].endswith("at /tmp/i12b/go/cfgload/main.go:33")
        assert findings.details[0].startswith("[signal SIGSEGV")
        assert "nil" in findings.advice

    def test_module_cache_frames_are_not_the_projects(self) -> None:
        """A third-party module's frame (in the module cache) is skipped like the runtime's."""
        dump = (
            "goroutine 1 [running]:\n"
            "github.com/other/lib.Parse(...)\n"
            "\t/root/go/pkg/mod/github.com/other/lib@v1.2.0/parse.go:40 +0x1d\n"
            "example.com/app/conf.Load({0x4b858c, 0x3})\n"
            "\t/src/app/conf/load.go:12 +0x5e\n"
            "main.main()\n\t/src/app/main.go:9 +0x25\n"
        )
        assert user_frame(dump) == "/src/app/conf/load.go:12"

    def test_a_module_path_without_a_dot_is_still_the_projects(self) -> None:
        """``module shop`` has no domain: its frames are not mistaken for the standard library."""
        dump = "goroutine 1 [running]:\nshop/cart.(*Cart).First(...)\n\t/src/shop/cart/cart.go:39\n"
        assert user_frame(dump) == "/src/shop/cart/cart.go:39"

    def test_a_line_starting_with_panic_but_no_goroutines_is_not_a_panic(self) -> None:
        """Only a real dump (``goroutine N [state]:``) counts."""
        assert parse_go_panic("panic: the word appears in a log line\n") is None


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_go_test_run(tmp_path: Path) -> None:
    """Run the real ``go test`` on a fresh module and read what it prints."""
    (tmp_path / "go.mod").write_text("module example.com/live\n\ngo 1.19\n", encoding="utf-8")
    (tmp_path / "calc.go").write_text(
        "package live\n\nfunc Add(a, b int) int { return a - b }\n", encoding="utf-8"
    )
    (tmp_path / "calc_test.go").write_text(
        'package live\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        '\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %d, want 5", got)\n\t}\n}\n',
        encoding="utf-8",
    )
    run = subprocess.run(
        ["go", "test", "./..."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": ""},
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="go test ./...",
        exit_code=run.returncode,
        error_output=run.stdout + run.stderr,
    )
    findings = analyse(failure)
    assert findings.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert findings.tests == ["TestAdd"]
    assert findings.facts == ["--- FAIL: TestAdd: calc_test.go:7: Add(2, 3) = -1, want 5"]


_CALC = "package live\n\nfunc Add(a, b int) int { return a - b }\n"
_CALC_TEST = (
    'package live\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %d, want 5", got)\n\t}\n}\n'
)


def _live_go(
    tmp_path: Path, files: dict[str, str], command: str, env: dict[str, str] | None = None
) -> Any:
    """Write a module's files, run *command* there the way an agent does, and analyse it."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    run = subprocess.run(
        command.split(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "", **(env or {})},
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command=command,
        exit_code=run.returncode,
        error_output=run.stdout + run.stderr,
    )
    return analyse(failure), failure.error_output


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_test_file_run_without_its_package_is_a_misuse(tmp_path: Path) -> None:
    """``go test calc_test.go`` compiles the test file alone: the package's names are undefined."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "calc.go": _CALC,
            "calc_test.go": _CALC_TEST,
        },
        "go test calc_test.go",
    )
    assert "command-line-arguments" in output
    assert findings.failure_type is FailureType.BUILD_ERROR
    assert findings.category is ReflectionCategory.TOOL_MISUSE
    assert "Name the package" in findings.advice


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_panic_names_the_test_line_that_called_the_code(tmp_path: Path) -> None:
    """A panic in the code under test is quoted where it crashed and where the test called it."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "first.go": "package live\n\nfunc First(xs []int) int {\n\treturn xs[0]\n}\n",
            "first_test.go": 'package live\n\nimport "testing"\n\nfunc TestFirst(t *testing.T) {\n'
            "\tif First(nil) != 0 {\n\t\tt.Fail()\n\t}\n}\n",
        },
        "go test ./...",
    )
    assert findings.failure_type is FailureType.TEST_FAILURE, output
    assert findings.facts[0].startswith("--- FAIL: TestFirst: panic: runtime error: index out")
    assert findings.facts[0].endswith(
        "first.go:4 (called from " + str(tmp_path) + "/first_test.go:6)"
    )


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_timeout_names_the_test_and_where_its_goroutine_is_blocked(tmp_path: Path) -> None:
    """``-timeout``: the test's frame and the project frames its goroutine is blocked in."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "queue.go": "package live\n\nfunc Drain(c chan int) int {\n\treturn wait(c)\n}\n\n"
            "func wait(c chan int) int {\n\treturn <-c\n}\n",
            "queue_test.go": 'package live\n\nimport "testing"\n\nfunc TestDrain(t *testing.T) {\n'
            "\tif Drain(make(chan int)) != 0 {\n\t\tt.Fail()\n\t}\n}\n",
        },
        "go test -timeout 2s ./...",
    )
    assert findings.failure_type is FailureType.TIMEOUT, output
    assert findings.tests == ["TestDrain"]
    waiting = next(fact for fact in findings.facts if "waiting at" in fact)
    assert waiting.startswith(f"example.com/live.TestDrain waiting at {tmp_path}/queue_test.go:6")
    assert f"{tmp_path}/queue.go:8" in waiting
    assert f"{tmp_path}/queue.go:4" in waiting


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_module_asking_for_a_newer_go_is_missing_context(tmp_path: Path) -> None:
    """go.mod's ``go`` line newer than the toolchain: the note is quoted, the code not blamed."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.99\n",
            "low.go": "package live\n\nfunc Low(a, b int) int { return min(a, b) }\n",
        },
        "go build ./...",
    )
    if "note: module requires Go 1.99" not in output:
        pytest.skip("this go knows min or refuses the module before compiling: " + output[:200])
    assert findings.category is ReflectionCategory.MISSING_CONTEXT
    assert findings.facts[0] == "note: module requires Go 1.99"
    assert findings.steps == ["Check `go version`: go.mod needs Go 1.99 or later."]


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
@pytest.mark.parametrize("package", ["./nope/...", "./calcs", "./empty"])
def test_live_package_path_that_is_not_there_is_a_misuse(tmp_path: Path, package: str) -> None:
    """``go test ./misspelt/...``: go names the path it could not use; no test ran."""
    (tmp_path / "empty").mkdir()
    findings, output = _live_go(
        tmp_path,
        {"go.mod": "module example.com/live\n\ngo 1.19\n", "calc.go": _CALC},
        f"go test {package}",
    )
    assert findings.tool == "go test", output
    assert findings.failure_type is FailureType.TEST_FAILURE
    assert findings.category is ReflectionCategory.TOOL_MISUSE
    assert findings.facts[0] in output
    assert "go list ./..." in findings.steps[0]


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_gopath_mode_that_cannot_find_the_packages_is_a_misuse(tmp_path: Path) -> None:
    """GOPATH mode looks only under GOROOT and GOPATH: a setup mistake, not the code's."""
    findings, output = _live_go(
        tmp_path,
        {
            "main.go": 'package main\n\nimport "example.com/shop/price"\n\n'
            "func main() { price.X() }\n"
        },
        "go build .",
        env={"GO111MODULE": "off", "GOPATH": str(tmp_path / "gopath")},
    )
    assert findings.failure_type is FailureType.DEPENDENCY_ERROR, output
    assert findings.category is ReflectionCategory.TOOL_MISUSE
    assert 'main.go:3:8: cannot find package "example.com/shop/price" in any of:' in findings.facts


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_example_names_its_first_line_that_differs(tmp_path: Path) -> None:
    """A failing Example is quoted with the first output line it got and the one it wants."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "sum.go": "package live\n\nfunc Sum(a, b int) int { return a - b }\n",
            "sum_test.go": 'package live\n\nimport "fmt"\n\nfunc ExampleSum() {\n'
            '\tfmt.Println("sums")\n\tfmt.Println(Sum(2, 3))\n\t// Output:\n\t// sums\n\t// 5\n}\n',
        },
        "go test ./...",
    )
    assert findings.failure_type is FailureType.TEST_FAILURE, output
    assert findings.facts[0] == "--- FAIL: ExampleSum: got: -1; want: 5"


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_vet_finding_under_go_test_is_its_build_failure(tmp_path: Path) -> None:
    """A vet finding under ``go test`` stops the test build; go vet is not named."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "add.go": "package live\n\nfunc Add(a, b int) int { return a + b }\n",
            "add_test.go": 'package live\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
            '\tif Add(2, 3) != 5 {\n\t\tt.Errorf("Add = %d", "five")\n\t}\n}\n',
        },
        "go test ./...",
    )
    assert findings.failure_type is FailureType.BUILD_ERROR, output
    assert "go vet" not in findings.headline
    assert findings.facts[0].startswith("./add_test.go:7:3: ")


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_compiler_details_under_an_error_are_quoted_with_it(tmp_path: Path) -> None:
    """``have (…)`` / ``want (…)`` and a missing method, tab-indented under their error."""
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n",
            "shape.go": "package live\n\ntype Shape interface{ Area() float64 }\n\n"
            "type Square struct{ side int }\n\n"
            "func (s Square) Area() int { return s.side * s.side }\n\n"
            "func Split(s string) (string, error) {\n\treturn s, nil, 0\n}\n\n"
            "var _ Shape = Square{}\n",
        },
        "go build ./...",
    )
    assert findings.failure_type is FailureType.BUILD_ERROR, output
    text = " ".join(findings.facts)
    assert "want (string, error)" in text
    assert "have (string, nil, number)" in text
    assert "Square does not implement Shape" in text
    assert "want Area() float64" in text


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this machine")
def test_live_module_that_cannot_be_downloaded_is_a_dependency_error(tmp_path: Path) -> None:
    """go.mod requires a module the proxy cannot serve: ``[setup failed]``, nothing compiled.

    The proxy is a closed port on the loopback address, so the download is refused at once.
    """
    findings, output = _live_go(
        tmp_path,
        {
            "go.mod": "module example.com/live\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n",
            "live.go": "package live\n",
            "live_test.go": 'package live\n\nimport (\n\t"testing"\n\n\t"example.com/dep"\n)\n\n'
            "func TestUse(t *testing.T) { dep.Do() }\n",
        },
        "go test ./...",
        env={"GOPROXY": "http://127.0.0.1:9/", "GOSUMDB": "off", "GOFLAGS": "-mod=mod"},
    )
    assert "[setup failed]" in output
    assert findings.failure_type is FailureType.DEPENDENCY_ERROR, output
    assert findings.category is ReflectionCategory.MISSING_CONTEXT
    assert "example.com/dep@v1.0.0" in quoted(findings)
    assert "go mod tidy" not in " ".join(findings.steps)


def test_a_long_got_keeps_the_want_after_it() -> None:
    """``got: <long> want: <value>`` in one log message: the wanted value is quoted whole."""
    got = "x" * 300
    output = (
        "--- FAIL: TestRender (0.00s)\n"
        f'    render_test.go:40: Render(page):\n         got: "{got}"\n'
        '        want: "<p>hello</p>"\nFAIL\nFAIL\texample.com/site\t0.01s\nFAIL\n'
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="go test ./...",
        exit_code=1,
        error_output=output,
    )
    findings = analyse(failure)
    assert 'want: "<p>hello</p>"' in quoted(findings)
    assert "render_test.go:40" in quoted(findings)
