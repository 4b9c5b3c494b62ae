"""Measure reflexkit's whole path per failure, and the LLM path's own overhead.

Two figures, each against a baseline measured in the same run, in interleaved rounds, judged
by the median of the per-round ratios (single timings vary twofold on shared machines):

* **pipeline**: a failure context -> heuristic reflection (redaction, classification,
  fingerprint, generator) -> append to a JSONL store -> recent(3) -> the retry-prompt section,
  per failure; against ``JsonlMemory.append`` of an already made reflection alone.
* **LLM path**: ``ClaudeGenerator.generate`` through the real anthropic SDK against the fake
  Messages API; against the same request sent with ``http.client`` on a kept-open connection
  (the server's own response time plus HTTP). The difference is what reflexkit and the SDK add.
* **redaction**: ``Redactor.redact`` of a 20 KB failure output, and redacting and reflecting
  (``service.generate``: redact the whole output, cut it, classify, reflect) a 50 MB one, each
  with planted secrets and a private key across the cut; against one UTF-8 encode of the same
  text (a single pass over every character). The extra memory of the 50 MB case is the
  ``tracemalloc`` peak above what was allocated before (the text itself).

Usage::

    python benchmarks/pipeline.py [CORPUS] [--rounds N] [--big-mb N]

``CORPUS`` is a folder of failure items (default ``../shared/corpus/failures/dev``; the
bundled demo failure is used when it is missing).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from urllib.parse import urlparse

from reflexkit import _serde
from reflexkit.containers import build_application
from reflexkit.exceptions import GenerationError
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.memory import JsonlMemory
from reflexkit.models import FailureContext
from reflexkit.redaction import Redactor
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.tasks._config import GeneratorBackend, LoadedProject, ProjectConfig, ReflexionConfig
from reflexkit.testing.fake_messages_api import FakeMessagesApi

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "failures" / "dev"
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_cart.py::test_total: total() returns 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py", "Run pytest tests/test_cart.py::test_total"],
    "confidence": 0.8,
}


def load_failures(corpus: Path) -> list[FailureContext]:
    """Return the corpus's failure contexts, or the bundled demo failure."""
    items = sorted(corpus.glob("*.json")) if corpus.is_dir() else []
    if items:
        return [
            _serde.structure(json.loads(p.read_text())["failureContext"], FailureContext)
            for p in items
        ]
    bundled = resources.files("reflexkit") / "_demo" / "failure.json"
    return [_serde.structure(_serde.loads(bundled.read_bytes()), FailureContext)]


def interleave(
    rounds: int, measured: Callable[[], float], baseline: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Run both *rounds* times in alternating order; return their per-round seconds."""
    ms: list[float] = []
    bs: list[float] = []
    for r in range(rounds):
        pair = (baseline, measured) if r % 2 else (measured, baseline)
        results = {fn: fn() for fn in pair}
        ms.append(results[measured])
        bs.append(results[baseline])
    return ms, bs


def bench_pipeline(failures: list[FailureContext], work: Path, rounds: int) -> tuple[float, ...]:
    """Return (pipeline s/failure, append s/failure, median ratio)."""
    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=work))
    service = app.reflection.service()
    made = [service.generate(f) for f in failures]
    bare = JsonlMemory(work / "bare.jsonl")

    def pipeline() -> float:
        start = time.perf_counter()
        for failure in failures:
            service.save(service.generate(failure))
            service.format_for_prompt(service.get_recent(failure.subtask_id, limit=3))
        return (time.perf_counter() - start) / len(failures)

    def append_only() -> float:
        start = time.perf_counter()
        for reflection in made:
            bare.append(reflection)
        return (time.perf_counter() - start) / len(made)

    ms, bs = interleave(rounds, pipeline, append_only)
    app.shutdown_resources()
    bare.close()
    ratio = statistics.median(m / b for m, b in zip(ms, bs, strict=True))
    return statistics.median(ms), statistics.median(bs), ratio


def bench_llm(failure: FailureContext, rounds: int, calls: int) -> tuple[float, float]:
    """Return (generate s/call, raw HTTP s/call) against the fake Messages API."""
    with (
        FakeMessagesApi() as api,
        ClaudeGenerator(
            Claude(api_key="bench", base_url=api.url, retry=RetryPolicy.no_wait()),
            timeout_ms=10_000,
        ) as claude,
    ):
        body = json.dumps(claude.prompt(failure).request).encode()
        address = urlparse(api.url)
        conn = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port)
        api.reply(REPLY)
        claude.generate(failure)  # warm up: the SDK import and the connection

        def generate() -> float:
            for _ in range(calls):
                api.reply(REPLY)
            start = time.perf_counter()
            for _ in range(calls):
                claude.generate(failure)
            return (time.perf_counter() - start) / calls

        def raw() -> float:
            for _ in range(calls):
                api.reply(REPLY)
            start = time.perf_counter()
            for _ in range(calls):
                conn.request("POST", "/v1/messages", body, {"content-type": "application/json"})
                conn.getresponse().read()
            return (time.perf_counter() - start) / calls

        ms, bs = interleave(rounds, generate, raw)
        conn.close()
    return statistics.median(ms), statistics.median(bs)


def bench_budget(failure: FailureContext, budget_ms: int = 500) -> dict[str, float]:
    """Return how long generate took, in ms, when the server hangs or asks to wait too long."""
    took: dict[str, float] = {}
    with (
        FakeMessagesApi() as api,
        ClaudeGenerator(Claude(api_key="bench", base_url=api.url), timeout_ms=budget_ms) as claude,
    ):
        api.reply(REPLY)
        claude.generate(failure)  # warm up
        for name, script in (
            ("hang", lambda: api.hang(10)),
            ("Retry-After 60 s", lambda: api.rate_limited(retry_after_s=60)),
            ("529 four times", lambda: [api.overloaded() for _ in range(4)]),
        ):
            script()
            start = time.perf_counter()
            with contextlib.suppress(GenerationError):
                claude.generate(failure)
            took[name] = (time.perf_counter() - start) * 1e3
            api.reset()
    return took


# Fake secrets in real formats, planted in the benchmark's outputs.
PLANTED = (
    "E       client = Client(token='ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf')\n"
    "E       DATABASE_URL=postgresql://orders:p4/ss+w@rd99@db.internal:5432/orders\n"
    "E       DB_PASSWORD=correcthorsebatterystaple\n"
)
KEY = "\n".join(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        *(
            f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:02d}Fake+Line"
            for i in range(40)
        ),
        "-----END RSA PRIVATE KEY-----",
    ]
)


def failure_output(failures: list[FailureContext], size: int) -> str:
    """Return *size* characters of real failure output with secrets planted in it.

    The corpus outputs are repeated, each repetition starting with a few planted secrets,
    and a private key sits in the middle, across where a head+tail cut falls.
    """
    unit = PLANTED + "\n".join(f.error_output for f in failures) + "\n"
    text = unit * (size // len(unit) + 1)
    middle = text.rfind("\n", 0, size // 2) + 1
    return (text[:middle] + KEY + "\n" + text[middle:])[:size]


def bench_redaction(
    failures: list[FailureContext], work: Path, rounds: int, big_mb: int
) -> dict[str, float]:
    """Return redaction figures: seconds, baselines and the extra memory in MB."""
    redactor = Redactor(environ={})
    small = failure_output(failures, 20_000)
    calls = 200

    def redact_small() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            redactor.redact(small)
        return (time.perf_counter() - start) / calls

    def encode_small() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            small.encode("utf-8", "surrogatepass")
        return (time.perf_counter() - start) / calls

    small_ms, small_bs = interleave(rounds, redact_small, encode_small)

    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=work))
    service = app.reflection.service()
    big = failure_output(failures, big_mb * 1_000_000)
    failure = FailureContext(
        task_id="t", subtask_id="big", attempt_number=1, command="make", error_output=big
    )
    reflection = service.generate(failure)  # warm up, and check what came out
    leaked = [
        s
        for s in ("R4nd0mFakeT0ken", "p4/ss", "correcthorse", "Fake+Line")
        if s in repr(reflection)
    ]

    def reflect_big() -> float:
        start = time.perf_counter()
        service.generate(failure)
        return time.perf_counter() - start

    def encode_big() -> float:
        start = time.perf_counter()
        big.encode("utf-8", "surrogatepass")
        return time.perf_counter() - start

    big_rounds = max(rounds // 2, 2)
    big_ms, big_bs = interleave(big_rounds, reflect_big, encode_big)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    service.generate(failure)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    app.shutdown_resources()
    return {
        "small_s": statistics.median(small_ms),
        "small_base_s": statistics.median(small_bs),
        "small_ratio": statistics.median(m / b for m, b in zip(small_ms, small_bs, strict=True)),
        "big_chars": len(big),
        "big_s": statistics.median(big_ms),
        "big_base_s": statistics.median(big_bs),
        "big_ratio": statistics.median(m / b for m, b in zip(big_ms, big_bs, strict=True)),
        "big_extra_mb": peak / 1e6,
        "leaked": len(leaked),
        "redactions": sum(reflection.redactions.values()),
    }


def print_redaction(figures: dict[str, float]) -> None:
    """Print the redaction figures against their targets."""
    print("\nredaction (secrets planted; baseline: one UTF-8 encode of the same text)")
    print(f"{'figure':52}  {'measured':>10}  {'baseline':>10}  {'ratio':>8}")
    print(f"{'-' * 52}  {'-' * 10}  {'-' * 10}  {'-' * 8}")
    print(
        f"{'redact 20 KB (target < 2 ms)':52}  {figures['small_s'] * 1e3:8.3f}ms  "
        f"{figures['small_base_s'] * 1e3:8.3f}ms  {figures['small_ratio']:7.1f}x"
    )
    label = f"redact + reflect {figures['big_chars'] / 1e6:.0f} MB (target < 1 s)"
    print(
        f"{label:52}  {figures['big_s'] * 1e3:8.1f}ms  "
        f"{figures['big_base_s'] * 1e3:8.1f}ms  {figures['big_ratio']:7.1f}x"
    )
    print(f"extra memory of that (target < 100 MB): {figures['big_extra_mb']:.1f} MB")
    print(
        f"secrets counted: {figures['redactions']:.0f}; "
        f"planted secrets in the reflection: {figures['leaked']:.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run both figures and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=50, help="size of the large output")
    args = parser.parse_args(argv)
    failures = load_failures(args.corpus)
    with tempfile.TemporaryDirectory(prefix="reflexkit-pipeline-") as tmp:
        per, append, ratio = bench_pipeline(failures, Path(tmp), args.rounds)
    with tempfile.TemporaryDirectory(prefix="reflexkit-redaction-") as tmp:
        redaction = bench_redaction(failures, Path(tmp), args.rounds, args.big_mb)
    llm, raw = bench_llm(failures[0], args.rounds, calls=30)
    print(f"failures: {len(failures)} ({args.corpus if args.corpus.is_dir() else 'bundled demo'})")
    print(f"{'figure':52}  {'measured':>10}  {'baseline':>10}  {'ratio':>8}")
    print(f"{'-' * 52}  {'-' * 10}  {'-' * 10}  {'-' * 8}")
    print(
        f"{'pipeline per failure vs append alone':52}  {per * 1e3:8.3f}ms  "
        f"{append * 1e3:8.3f}ms  {ratio:7.1f}x"
    )
    print(
        f"{'LLM generate vs raw HTTP to the fake server':52}  {llm * 1e3:8.3f}ms  "
        f"{raw * 1e3:8.3f}ms  {llm / raw:7.1f}x"
    )
    print(
        f"\nLLM path overhead beyond the server's own response: {(llm - raw) * 1e3:.2f} ms a call"
    )
    print_redaction(redaction)
    budget = 500
    print(f"\ngenerate with a {budget} ms budget (target: within the budget + 250 ms):")
    for name, ms in bench_budget(failures[0], budget).items():
        verdict = "PASS" if ms <= budget + 250 else "FAIL"
        print(f"  {name:20}  returned after {ms:7.1f} ms  {verdict}")
    return 1 if redaction["leaked"] else 0


if __name__ == "__main__":
    sys.exit(main())
