"""pip's failures: resolver conflicts, build errors, hashes, broken projects."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    captured_reflection,
    failure_of,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_pip_build_quotes_the_compiler_error_inside_it(tmp_path: Path) -> None:
    """A package whose build runs the C compiler: its error first, then pip's own line."""
    write_files(
        tmp_path,
        {
            "fastcrc/setup.py": """
            import subprocess
            from setuptools import setup
            # probe for the system library, as many C-extension packages do
            subprocess.run(["gcc", "-c", "probe.c", "-o", "probe.o"], check=True)
            setup(name="fastcrc", version="0.1")
            """,
            "fastcrc/probe.c": "#include <crc32c_missing.h>\nint probe(void) { return 0; }\n",
        },
    )
    failure = run_in_bash(
        f"{sys.executable} -m pip install --no-index --no-build-isolation ./fastcrc", tmp_path
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    text = reflection_text(reflection)
    assert "probe.c:1:10: fatal error: crc32c_missing.h: No such file or directory" in text
    assert "error: metadata-generation-failed" in text


def test_pip_require_hashes_quotes_the_lines_to_add(tmp_path: Path) -> None:
    """``--require-hashes`` without a hash: pip prints the line to add; it is the hint."""
    import zipfile  # noqa: PLC0415 -- only this test builds a wheel

    (tmp_path / "wheels").mkdir()
    with zipfile.ZipFile(tmp_path / "wheels" / "tinypkg-0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tinypkg/__init__.py", "")
        wheel.writestr(
            "tinypkg-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n"
        )
        wheel.writestr(
            "tinypkg-0.1.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("tinypkg-0.1.dist-info/RECORD", "")
    (tmp_path / "requirements.txt").write_text("tinypkg==0.1\n", encoding="utf-8")
    failure = run_in_bash(
        f"{sys.executable} -m pip install --dry-run --require-hashes --no-index "
        "--find-links wheels -r requirements.txt",
        tmp_path,
    )
    reflection = GEN.generate(failure)
    assert reflection.category is ReflectionCategory.ROOT_CAUSE
    assert "tinypkg==0.1 --hash=sha256:" in reflection_text(reflection)


def test_pip_conflict_quotes_what_the_conflict_is_caused_by() -> None:
    """The lines under ``The conflict is caused by:`` name the two pins that clash."""
    text = reflection_text(captured_reflection("pip-flask-werkzeug-conflict"))
    assert "flask 3.0.0 depends on Werkzeug>=3.0.0" in text
    assert "The user requested werkzeug==2.0.0" in text


def test_pip_crash_on_a_broken_pyproject_quotes_the_parse_error(tmp_path: Path) -> None:
    """``ERROR: Exception:`` then pip's traceback: the last line says what does not parse."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [project]
            name = "tiny"
            version = "0.1.0"
            dependencies = ["attrs" "cattrs"]
            """
        },
    )
    failure = run_in_bash(
        f"{sys.executable} -m pip install --no-index --no-build-isolation -e .", tmp_path
    )
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "TOMLDecodeError" in failure.error_output
    assert "TOMLDecodeError: " in text
    assert "(at line 4, column" in text
    assert reflection.category is ReflectionCategory.ROOT_CAUSE
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR


def test_pip_build_error_inside_the_local_project_is_its_own() -> None:
    """``pip install -e .``: setuptools' ``error:`` line in the subprocess output is the cause.

    Captured from a real run (the build needs setuptools from the package index).
    """
    reflection = captured_reflection("pip-editable-flat-layout-discovery")
    text = reflection_text(reflection)
    assert "Multiple top-level packages discovered in a flat-layout: ['bot', 'plugins']" in text
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


@pytest.mark.slow
def test_pip_build_failure_quotes_the_build_error(tmp_path: Path) -> None:
    """A package whose setup.py fails: the exception inside pip's output and pip's error names."""
    pytest.importorskip("setuptools")
    write_files(
        tmp_path,
        {
            "sensorlib/setup.py": """
            from setuptools import setup
            import numpy_is_not_installed_here
            setup(name="sensorlib", version="0.1")
            """,
        },
    )
    command = (
        f"{sys.executable} -m pip install --no-build-isolation --no-deps --no-index "
        "--disable-pip-version-check ./sensorlib"
    )
    failure = run_in_bash(command, tmp_path)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert "ModuleNotFoundError: No module named 'numpy_is_not_installed_here'" in text
    assert "error: subprocess-exited-with-error" in text
    assert "error: metadata-generation-failed" in text


def test_pip_build_quotes_the_backends_own_advice(tmp_path: Path) -> None:
    """A build backend that says what to do (set a variable, build from git) is quoted."""
    write_files(
        tmp_path,
        {
            "vcsver/setup.py": """
            import sys
            print("LookupError: no version from source `vcs` for this tree.", file=sys.stderr)
            print("", file=sys.stderr)
            print("Alternatively, set the version in the environment with VCSVER_PRETEND_VERSION.",
                  file=sys.stderr)
            sys.exit(1)
            """,
        },
    )
    failure = run_in_bash(
        f"{sys.executable} -m pip install --no-index --no-build-isolation ./vcsver", tmp_path
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR, failure.error_output
    text = reflection_text(reflection)
    assert "VCSVER_PRETEND_VERSION" in text
    assert "See above for" not in text


_NOT_SET_UP = [
    pytest.param(
        "mix test",
        "Unchecked dependencies for environment test:\n* ex_machina (Hex package)\n"
        '  the dependency is not available, run "mix deps.get"\n'
        "** (Mix) Can't continue due to errors on dependencies\n",
        "Unchecked dependencies for environment test:",
        ReflectionCategory.MISSING_CONTEXT,
        id="mix-deps",
    ),
    pytest.param(
        "php vendor/bin/pest",
        "PHP Warning:  require(/srv/app/vendor/autoload.php): Failed to open stream: No such "
        "file or directory in /srv/app/tests/bootstrap.php on line 3\n",
        "require(/srv/app/vendor/autoload.php): Failed to open stream",
        ReflectionCategory.MISSING_CONTEXT,
        id="php-vendor",
    ),
    pytest.param(
        "bundle exec rspec",
        "Could not find gem 'webmock (~> 3.18)' in locally installed gems.\n\n"
        "Run `bundle install` to install missing gems.\n",
        "Run `bundle install` to install missing gems.",
        ReflectionCategory.MISSING_CONTEXT,
        id="gems",
    ),
    pytest.param(
        "bundle exec rake test",
        "bundler: failed to load command: rake (/usr/bin/rake)\n"
        "/usr/lib/ruby/gems/bundler-2.4.1/lib/bundler/resolver.rb:300:in `block in "
        "verify_gemfile_dependencies_are_found!': Could not find gem 'vcr' in locally "
        "installed gems. (Bundler::GemNotFound)\n"
        "\tfrom /usr/lib/ruby/gems/bundler-2.4.1/lib/bundler/resolver.rb:280:in `map!'\n",
        "bundler: failed to load command: rake (/usr/bin/rake)",
        ReflectionCategory.MISSING_CONTEXT,
        id="gems-raised-in-bundler",
    ),
    pytest.param(
        "phpunit --testsuite unit",
        "PHP Fatal error:  Declaration of Shop\\Tests\\CartTest::tearDown() must be compatible "
        "with PHPUnit\\Framework\\TestCase::tearDown(): void in /srv/shop/tests/CartTest.php "
        "on line 19\n",
        "must be compatible with PHPUnit\\Framework\\TestCase::tearDown(): void",
        ReflectionCategory.TOOL_MISUSE,
        id="phpunit-too-new",
    ),
    pytest.param(
        "pnpm install --frozen-lockfile",
        " ERR_PNPM_META_FETCH_FAIL  GET https://registry.npmjs.org/left-pad: request to "
        "https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN "
        "registry.npmjs.org\n",
        "getaddrinfo EAI_AGAIN registry.npmjs.org",
        ReflectionCategory.MISSING_CONTEXT,
        id="registry-unreachable",
    ),
]


@pytest.mark.parametrize(("command", "output", "fact", "category"), _NOT_SET_UP)
def test_a_check_that_cannot_run_for_its_dependencies_is_a_dependency_error(
    command: str, output: str, fact: str, category: ReflectionCategory
) -> None:
    """Not installed, a runner too new, a registry out of reach: about set-up, not the code."""
    reflection = GEN.generate(failure_of(command, output, 1))
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert reflection.category is category
    assert fact in reflection_text(reflection)


def test_a_network_error_inside_a_test_run_is_not_the_installers() -> None:
    """A test that calls a host which does not resolve is the test's failure, not set-up."""
    output = (
        "--- FAIL: TestFetchRates (0.02s)\n    rates_test.go:14: dial tcp: lookup "
        "rates.example: Temporary failure in name resolution\n"
        "FAIL\nFAIL\texample.com/rates\t0.03s\n"
    )
    assert GEN.generate(failure_of("go test ./...", output, 1)).failure_type is (
        FailureType.TEST_FAILURE
    )
