"""The direct reading of valid JSON (#19): the converter's results without loading cattrs.

``structure`` first reads valid data with the converter's own hooks and the models'
validators; whatever that reading rejects or doesn't know goes to the converter. What must
hold: when the direct reading gives a model, the converter gives an equal one; and (so that
valid data always takes the fast path) what it rejects, the converter rejects.
"""

from __future__ import annotations

import enum
import json
import subprocess
import sys
import types
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reflexkit import _serde
from reflexkit.insights.lessons import Lesson
from reflexkit.models import FailureContext, Reflection
from reflexkit.tasks.config import ProjectConfig, load_project
from reflexkit.tasks.task import Task
from reflexkit.testing.memory_contract import make_reflection

_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.text(max_size=4),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(0, 2), max_size=2),
)
_IDS = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)


def _mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """*valid* nine times in ten, else junk of any JSON kind."""
    return st.integers(0, 9).flatmap(lambda n: _JUNK if n == 0 else valid)


def _json_for(t: Any) -> st.SearchStrategy[Any]:  # noqa: C901, PLR0911 -- one case per kind
    """JSON that is mostly valid for type *t*, and sometimes not."""
    if t is str:
        return _mostly(st.one_of(_IDS, st.text(max_size=8)))
    if t is bool:
        return _mostly(st.booleans())
    if t is int:
        return _mostly(st.integers(-2, 300_000))
    if t is float:
        return _mostly(st.one_of(st.floats(0, 2, allow_nan=False), st.integers(0, 3)))
    if t is datetime:
        moments = st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat())
        return _mostly(st.one_of(moments, st.just("2026-01-31T12:00:00Z")))
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return _mostly(st.sampled_from([m.value for m in t]))
    args = get_args(t)
    if get_origin(t) in {Union, types.UnionType}:
        return st.one_of(*(st.none() if a is type(None) else _json_for(a) for a in args))
    if get_origin(t) is tuple:
        return _mostly(st.lists(_json_for(args[0]), max_size=3))
    if get_origin(t) is dict:
        keys = st.one_of(_IDS, st.text(max_size=4))  # JSON keys are strings
        return _mostly(st.dictionaries(keys, _json_for(args[1]), max_size=3))
    if isinstance(t, type) and attrs.has(t):
        attrs.resolve_types(t)
        fields = {_serde.camel(f.name): f for f in attrs.fields(t)}
        required = {k: _json_for(f.type) for k, f in fields.items() if f.default is attrs.NOTHING}
        optional = {k: _json_for(f.type) for k, f in fields.items() if k not in required}
        objects = st.fixed_dictionaries(required, optional=optional)
        typo = st.builds(lambda a, b: {**a, **b}, objects, st.fixed_dictionaries({"typo": _JUNK}))
        return _mostly(st.integers(0, 9).flatmap(lambda n: typo if n == 0 else objects))
    return _JUNK


def _made_alike(model: Any, other: Any, data: dict[str, Any]) -> Any:
    """*model* with the values its factories made (fresh ids, the time) taken from *other*."""
    made = [
        f.name
        for f in attrs.fields(type(model))
        if isinstance(f.default, attrs.Factory) and _serde.camel(f.name) not in data  # type: ignore[arg-type]
    ]
    return attrs.evolve(model, **{name: getattr(other, name) for name in made})


_MODELS = [ProjectConfig, FailureContext, Reflection, Task, Lesson]


@pytest.mark.parametrize("model", _MODELS, ids=lambda m: m.__name__)
def test_the_direct_reading_agrees_with_the_converter(model: type) -> None:
    """The same verdict on every input, and the same model when it is valid."""
    read = _serde._reader(model)
    assert read is not None, f"{model.__name__} is not read directly"

    data_of_model = _json_for(model)

    @settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
    @given(st.deferred(lambda: data_of_model))  # deferred: a short repr in reports
    def agrees(data: Any) -> None:
        try:
            direct = read(data)
        except Exception:  # noqa: BLE001 -- rejected: the converter must reject it too
            with pytest.raises(Exception):  # noqa: B017, PT011 -- whichever error it raises
                _serde.converter.structure(data, model)
            return
        converted = _serde.converter.structure(data, model)
        assert _made_alike(direct, converted, data) == converted

    agrees()


def _samples() -> list[object]:
    return [
        ProjectConfig(),
        load_project(cwd=Path(__file__).parent).config,
        FailureContext(
            task_id="t", subtask_id="s", attempt_number=2, error_output="boom", exit_code=1
        ),
        make_reflection(),
        attrs.evolve(make_reflection(), redactions={"jwt": 2}, fingerprint="0" * 16),
    ]


@pytest.mark.parametrize("sample", _samples(), ids=lambda s: type(s).__name__)
def test_valid_records_are_read_directly(sample: object) -> None:
    """What the converter writes, the direct reading reads back: the fast path is taken."""
    read = _serde._reader(type(sample))
    assert read is not None
    data = _serde.unstructure(sample)
    assert read(data) == sample
    assert _serde.structure(data, type(sample)) == sample


def test_a_type_it_does_not_know_goes_to_the_converter() -> None:
    """A list (cattrs' own hook) is structured by the converter, strictly as before."""
    assert _serde._reader(list[int]) is None
    assert _serde.structure([1, 2], list[int]) == [1, 2]
    with pytest.raises(_serde.ConfigError, match=r"\$\[1\]: expected an integer"):
        _serde.structure([1, "2"], list[int])


_FRESH = """
import json, sys
from reflexkit import _serde
from reflexkit.exceptions import ConfigError
from reflexkit.tasks.config import ProjectConfig, load_project
steps = {"import": "cattrs" in sys.modules}
_serde.structure({"reflexion": {"backend": "heuristic"}}, ProjectConfig)
steps["valid"] = "cattrs" in sys.modules
try:
    _serde.structure({"reflexion": {"maxTokens": "many"}}, ProjectConfig, source="p.json")
except ConfigError as err:
    steps["errors"] = err.errors
steps["invalid"] = "cattrs" in sys.modules
print(json.dumps(steps))
"""


def test_cattrs_loads_only_for_what_the_direct_reading_rejects() -> None:
    """In a fresh process: no cattrs to import or to read valid data; an error loads it."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == {
        "import": False,
        "valid": False,
        "errors": [
            'p.json: $.reflexion.maxTokens: expected an integer from 256 to 128000, got "many"'
        ],
        "invalid": True,
    }
