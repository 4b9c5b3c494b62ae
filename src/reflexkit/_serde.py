"""The one converter: camelCase JSON in and out for every model, strict on the way in.

project.json, task files, JSONL records, CLI input and LLM replies all go through
:data:`converter`. Keys are camelCase, unknown keys are rejected, primitives are exact
(``"false"`` is not a bool, ``"3"`` is not an int, ``1.5`` is not an int), enums are read and
written by value and datetimes as ISO 8601 in UTC with a ``Z``.

:func:`structure` wraps the converter and turns its errors into a :class:`ConfigError` whose
lines name the JSON path the user wrote (``$.reflexion.maxReflectionsPerRetry``).

"""

from __future__ import annotations

import enum
import functools
import io
import os
import re
import select
import stat
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, TypeVar, get_args, get_origin

import attrs
import cattrs
import orjson
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from reflexkit.exceptions import ConfigError

__all__ = [
    "MAX_JSON_BYTES",
    "camel",
    "converter",
    "dumps",
    "format_errors",
    "loads",
    "read_file",
    "read_limited",
    "structure",
    "structure_raw",
    "unstructure",
]

T = TypeVar("T")

_CAMEL_SPLIT = re.compile(r"_([a-z0-9])")


@functools.cache
def camel(name: str) -> str:
    """Return the camelCase JSON key of a snake_case attribute name."""
    return _CAMEL_SPLIT.sub(lambda m: m.group(1).upper(), name)


_SHOW_MAX = 60


def _show(value: object) -> str:
    """Render a value as the user wrote it in JSON, shortened.

    Never raises: an integer too long for ``str()`` (over 4,300 digits) is described by its
    size, a structure too deep to render by its kind.
    """
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        try:
            text = repr(value)
        except (ValueError, RecursionError):  # a huge int, a structure nested too deep
            return _describe(value)
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


def _describe(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an integer of {value.bit_length()} bits"
    return f"{kind(value)} nested too deep to show"


def kind(value: object) -> str:
    """Name the JSON kind of a value: 'a string', 'a list', 'null' ..."""
    if value is None:
        return "null"
    for py, name in (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        (str, "a string"),
        (list, "a list"),
        (dict, "an object"),
    ):
        if isinstance(value, py):
            return name
    return type(value).__name__


# --- strict primitive hooks ---------------------------------------------------------------


def _exact(
    kinds: type | tuple[type, ...], expected: str, convert: Callable[[Any], object] | None = None
) -> Callable[[object, type], object]:
    """A structure hook that takes a value of *kinds* as it is (a bool only for a bool)."""

    def hook(value: object, _t: type) -> object:
        if isinstance(value, kinds) and (kinds is bool or not isinstance(value, bool)):
            return value if convert is None else convert(value)
        msg = f"expected {expected}, got {_show(value)}"
        raise TypeError(msg)

    return hook


def _datetime(value: object, _t: type) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            # A time with no zone is taken as UTC; every time is kept in UTC.
            if parsed.tzinfo is None:
                return parsed.replace(tzinfo=UTC)
            return parsed.astimezone(UTC)
    msg = f'expected an ISO 8601 date-time such as "2026-01-31T12:00:00Z", got {_show(value)}'
    raise TypeError(msg)


def _unstructure_datetime(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat() + "Z"


def _enum_hook(cls: type[enum.Enum]) -> Callable[[object, type], enum.Enum]:
    values = {member.value: member for member in cls}
    expected = ", ".join(str(v) for v in values)

    def hook(value: object, _t: type) -> enum.Enum:
        if isinstance(value, str) and value in values:
            return values[value]
        msg = f"expected one of {expected}, got {_show(value)}"
        raise ValueError(msg)

    return hook


def _register_enums(conv: cattrs.Converter, t: Any) -> None:  # noqa: ANN401
    """Give each enum in a field's type its own strict hook.

    The hook must be registered for the exact class: the ``str`` hook is found through
    singledispatch, so it would otherwise catch every StrEnum before any predicate is asked.
    """
    for candidate in (t, *get_args(t)):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            conv.register_structure_hook(candidate, _enum_hook(candidate))


def _is_homogeneous_tuple(t: Any) -> bool:  # noqa: ANN401 -- any type expression
    args = get_args(t)
    return get_origin(t) is tuple and len(args) == 2 and args[1] is Ellipsis  # noqa: PLR2004


def _only(
    kinds: type | tuple[type, ...], expected: str, inner: Callable[[Any, Any], Any]
) -> Callable[[object, Any], Any]:
    """*inner*, after a check that the value is one of *kinds* (a string is not a list)."""

    def hook(value: object, t: Any) -> Any:  # noqa: ANN401
        if not isinstance(value, kinds):
            msg = f"expected {expected}, got {_show(value)}"
            raise TypeError(msg)
        return inner(value, t)

    return hook


def _make_tuple_hook(conv: cattrs.Converter) -> Callable[[Any], Callable[[object, Any], Any]]:
    def factory(t: Any) -> Callable[[object, Any], Any]:  # noqa: ANN401
        return _only((list, tuple), "a list", homogenous_tuple_structure_factory(t, conv))

    return factory


def _make_dict_hook(conv: cattrs.Converter) -> Callable[[Any], Callable[[object, Any], Any]]:
    def factory(t: Any) -> Callable[[object, Any], Any]:  # noqa: ANN401
        key_type, value_type = get_args(t)
        key_hook = conv.get_structure_hook(key_type)
        value_hook = conv.get_structure_hook(value_type)

        def hook(value: object, _t: Any) -> dict[Any, Any]:  # noqa: ANN401
            if not isinstance(value, dict):
                msg = f"expected an object, got {_show(value)}"
                raise TypeError(msg)
            return {key_hook(k, key_type): value_hook(v, value_type) for k, v in value.items()}

        return hook

    return factory


def _is_dict(t: Any) -> bool:  # noqa: ANN401
    return get_origin(t) is dict and len(get_args(t)) == 2  # noqa: PLR2004


# --- attrs classes: camelCase keys, validators run per field so every error is reported ----


def _is_optional(t: Any) -> bool:  # noqa: ANN401
    return type(None) in get_args(t)


def _validated(base: Callable[[Any, Any], Any], field: attrs.Attribute[Any]) -> Callable[..., Any]:
    validator = field.validator

    expected = getattr(validator, "expected", None)

    def hook(value: object, t: Any) -> Any:  # noqa: ANN401
        try:
            result = base(value, t)
        except TypeError:
            # "expected an integer, got "three"" becomes "expected an integer >= 1, got ...".
            if expected is None or (value is None and _is_optional(t)):
                raise
            msg = f"expected {expected}, got {_show(value)}"
            raise TypeError(msg) from None
        if validator is not None:
            validator(None, field, result)
        return result

    return hook


def _holds_model(t: Any) -> bool:  # noqa: ANN401 -- any type expression
    """Whether *t* is, or holds, an attrs class (``Section``, ``tuple[Recipe, ...]``)."""
    return (isinstance(t, type) and attrs.has(t)) or any(map(_holds_model, get_args(t)))


def _on_first_value(conv: cattrs.Converter, t: Any) -> Callable[[object, Any], Any]:  # noqa: ANN401
    """*t*'s hook, made when a value of it first arrives, not with the enclosing class's.

    A project.json that leaves out a section never builds the section's reader.
    """
    made: list[Callable[[object, Any], Any]] = []

    def hook(value: object, _t: Any) -> Any:  # noqa: ANN401
        if not made:
            made.append(conv.get_structure_hook(t))
        return made[0](value, t)

    return hook


def _field_hook(conv: cattrs.Converter, field: attrs.Attribute[Any]) -> Callable[..., Any] | None:
    """The hook of one field: validated, built on first use (a model), or cattrs' own."""
    if field.validator is not None:
        return _validated(conv.get_structure_hook(field.type), field)
    return _on_first_value(conv, field.type) if _holds_model(field.type) else None


def _make_attrs_structure(
    conv: cattrs.Converter,
) -> Callable[[type], Callable[[object, type], Any]]:
    def factory(cls: type) -> Callable[[object, type], Any]:
        attrs.resolve_types(cls)
        overrides: dict[str, Any] = {}
        for field in attrs.fields(cls):
            _register_enums(conv, field.type)
            overrides[field.name] = override(
                rename=camel(field.name), struct_hook=_field_hook(conv, field)
            )
        inner: Callable[[Any, Any], Any] = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **overrides
        )
        return _only(Mapping, "an object", inner)

    return factory


def _make_attrs_unstructure(conv: cattrs.Converter) -> Callable[[type], Callable[[Any], Any]]:
    def factory(cls: type) -> Callable[[Any], Any]:
        attrs.resolve_types(cls)
        overrides: dict[str, Any] = {
            f.name: override(rename=camel(f.name)) for f in attrs.fields(cls)
        }
        unstructure_fn: Callable[[Any], Any] = make_dict_unstructure_fn(cls, conv, **overrides)
        return unstructure_fn

    return factory


def _build() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    for exact, hook in (
        (str, _exact(str, "a string")),
        (int, _exact(int, "an integer")),
        (float, _exact((int, float), "a number", float)),
        (bool, _exact(bool, "true or false")),
        (datetime, _datetime),
    ):
        conv.register_structure_hook(exact, hook)
    conv.register_unstructure_hook(datetime, _unstructure_datetime)
    conv.register_unstructure_hook_func(
        lambda t: isinstance(t, type) and issubclass(t, enum.Enum), lambda e: e.value
    )
    conv.register_structure_hook_factory(
        lambda t: isinstance(t, type) and issubclass(t, enum.Enum), _enum_hook
    )
    conv.register_structure_hook_factory(_is_homogeneous_tuple, _make_tuple_hook(conv))
    conv.register_unstructure_hook_func(_is_homogeneous_tuple, list)
    conv.register_structure_hook_factory(_is_dict, _make_dict_hook(conv))
    conv.register_structure_hook_factory(attrs.has, _make_attrs_structure(conv))
    conv.register_unstructure_hook_factory(attrs.has, _make_attrs_unstructure(conv))
    return conv


converter = _build()
"""The one converter: ``converter.structure(data, Reflection)``, ``converter.unstructure(r)``.

It raises cattrs' own exceptions; :func:`structure` turns them into a :class:`ConfigError`.
"""


def structure_raw(data: object, cls: type[T]) -> T:
    """Build a model from JSON data; raise the converter's own exceptions when it doesn't fit."""
    return converter.structure(data, cls)


# --- errors with JSON paths ------------------------------------------------------------------


def _attr_keys(cls: object) -> list[str]:
    return [camel(f.name) for f in attrs.fields(cls)] if attrs.has(cls) else []  # type: ignore[arg-type]


@functools.singledispatch
def _walk(exc: BaseException, path: str) -> list[str]:
    """The error lines of *exc* at JSON *path*, by its most specific class."""
    return [f"{path}: {exc}"]


@_walk.register
def _(exc: ClassValidationError, path: str) -> list[str]:
    with_notes, others = exc.group_exceptions()
    return [
        *(line for sub, note in with_notes for line in _walk(sub, f"{path}.{camel(note.name)}")),
        *(line for sub in others for line in _walk(sub, path)),
    ]


@_walk.register
def _(exc: IterableValidationError, path: str) -> list[str]:
    lines = []
    for sub in exc.exceptions:
        notes = getattr(sub, "__notes__", [])
        index = next((n.index for n in notes if isinstance(n, IterableValidationNote)), None)
        lines += _walk(sub, f"{path}[{index}]" if index is not None else path)
    return lines


@_walk.register
def _(exc: ForbiddenExtraKeysError, path: str) -> list[str]:
    import difflib  # noqa: PLC0415 -- only for a typo

    known = _attr_keys(exc.cl)
    lines = []
    for key in sorted(exc.extra_fields):
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        hint = (
            f' (did you mean "{close[0]}"?)' if close else f" (expected one of: {', '.join(known)})"
        )
        lines.append(f"{path}.{key}: unknown key{hint}")
    return lines


@_walk.register
def _(_exc: KeyError, path: str) -> list[str]:
    return [f"{path}: required, but missing"]


@_walk.register
def _(exc: BaseExceptionGroup, path: str) -> list[str]:
    return [line for sub in exc.exceptions for line in _walk(sub, path)]


def format_errors(exc: BaseException, *, source: str = "") -> list[str]:
    """Turn a converter error into ``"<source>: $.json.path: what was expected"`` lines.

    Args:
        exc: The exception the converter raised.
        source: What was read (a file name, "input"); prefixed to every line when given.

    Returns:
        One line per problem, in the order the converter met them.
    """
    prefix = f"{source}: " if source else ""
    return [prefix + line for line in _walk(exc, "$")]


def structure(data: object, cls: type[T], *, source: str = "") -> T:
    """Build a model from JSON data, reporting every problem at once.

    Args:
        data: Parsed JSON (dicts, lists, strings, numbers, booleans, null).
        cls: The model to build, e.g. :class:`~reflexkit.models.FailureContext`.
        source: What was read, prefixed to each error line ("project.json", "input").

    Returns:
        The model.

    Raises:
        ConfigError: The data does not fit the model; ``errors`` names each JSON path.
    """
    try:
        return structure_raw(data, cls)
    except (ValueError, TypeError, KeyError) as err:
        raise ConfigError(format_errors(err, source=source)) from err
    except cattrs.BaseValidationError as err:
        raise ConfigError(format_errors(err, source=source)) from err


def unstructure(obj: object) -> Any:  # noqa: ANN401 -- JSON data
    """Return the camelCase JSON data of a model."""
    return converter.unstructure(obj)


_ORJSON_MESSAGES = {
    "number is infinity when parsed as double": "a number too large (more than 64 bits)",
    "depth limit exceeded": "nested more than 1024 levels deep",
}


def loads(text: str | bytes, *, source: str = "") -> Any:  # noqa: ANN401 -- JSON data
    r"""Parse JSON text; a syntax error becomes a ConfigError with its line and column.

    Strict: ``NaN`` and ``Infinity``, a lone surrogate escape (``"\ud800"``), a number
    beyond 64 bits, nesting deeper than 1024 levels and a key repeated in one object are all
    errors (parsers disagree on which of two repeated keys counts, so neither does here).

    Raises:
        ConfigError: The text is not valid JSON, or empty.
    """
    prefix = f"{source}: " if source else ""
    text = _without_bom(text)
    if not text.strip():
        raise ConfigError([f"{prefix}the file is empty; expected a JSON object"])
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        message = _ORJSON_MESSAGES.get(err.msg, err.msg)
        raise ConfigError(
            [f"{prefix}invalid JSON at line {err.lineno}, column {err.colno}: {message}"]
        ) from None
    if isinstance(data, dict | list) and _repeats_a_key(text, _keys_kept(data)):
        _name_repeated_key(text, prefix)
    return data


def _repeats_a_key(text: str | bytes, kept: int) -> bool:
    """Whether *text* (valid JSON) writes more keys than the *kept* its parse holds.

    Every key writes a colon outside its strings, so a text with no more colons than kept
    keys repeats none: one count, where no string holds a colon (most big inputs).
    """
    colons = text.count(":") if isinstance(text, str) else text.count(b":")
    return colons != kept and _keys_written(text) != kept


def _keys_written(text: str | bytes) -> int:
    """How many keys *text* (valid JSON) writes, repeated ones included.

    In valid JSON a colon outside a string is a key's and nothing else's, so the keys are
    the colons left once the strings are taken out. Every backslash in a string starts an
    escape, so dropping the escaped backslashes (left to right) and then the escaped quotes
    leaves only the quotes that open and close strings: the text between the odd and even
    ones. A few passes of ``bytes`` methods, linear in the text and about as fast as reading
    it whatever its escapes (a regular expression over the strings took a second or more
    for 32 MiB of escaped quotes).
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(data.split(b'"')[::2]).count(b":")


def _keys_kept(data: object) -> int:
    """How many keys the parsed *data* holds: fewer than written when one was repeated."""
    count, stack = 0, [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(v for v in value.values() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, dict | list))
    return count


def _name_repeated_key(text: str | bytes, prefix: str) -> None:
    """Raise a ConfigError naming the first key repeated in one object.

    Only when the counts say a key was repeated: the stdlib parser reports every key (orjson
    keeps the last), but parsing the whole text twice doubled the cost of a big input.
    """
    import json  # noqa: PLC0415 -- only to name the key

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise _RepeatedKeyError(key)
            seen[key] = value
        return seen

    try:
        json.loads(text, object_pairs_hook=pairs)
    except _RepeatedKeyError as err:
        raise ConfigError(
            [
                (
                    f'{prefix}invalid JSON: the key "{_show_key(err.key)}" is repeated in one '
                    "object (keep one of them)"
                )
            ]
        ) from None
    except RecursionError:  # orjson took it (under 1024 levels): the stdlib recurses less
        raise ConfigError([f"{prefix}invalid JSON: nested too deep"]) from None


def _show_key(key: str) -> str:
    return key if len(key) <= _SHOW_MAX else key[: _SHOW_MAX - 3] + "..."


class _RepeatedKeyError(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


MAX_JSON_BYTES = 32 * 1024 * 1024
"""The most a JSON input (a failure, project.json, a task file) may hold: 32 MiB."""

_CHUNK = 1024 * 1024


def read_limited(stream: IO[bytes], *, source: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """Read a whole stream, but no more than *limit* bytes (``/dev/zero`` ends, too).

    Raises:
        ConfigError: The stream holds more than *limit* bytes.
    """
    chunks: list[bytes] = []
    size = 0
    # A buffered stream returns less than asked only at the end; asking again would wait
    # for more on a terminal (whose Ctrl-D ends one read, not the stream).
    buffered = isinstance(stream, io.BufferedIOBase)
    while True:
        want = min(_CHUNK, limit + 1 - size)
        chunk = stream.read(want)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if buffered and len(chunk) < want:
            return b"".join(chunks)
        if size > limit:
            raise ConfigError(
                [
                    (
                        f"{source}: more than {limit // (1024 * 1024)} MiB; expected one JSON "
                        "document (cut long output down to its head and tail first)"
                    )
                ]
            )


def read_named(name: str, *, limit: int = MAX_JSON_BYTES) -> tuple[str, bytes]:
    """Read the file a command line names, or standard input for ``-``; bounded by *limit*.

    Returns:
        Where it came from, to name it in messages (``stdin`` or the path), and its bytes.

    Raises:
        ConfigError: As :func:`read_limited` and :func:`read_file` say.
    """
    if name == "-":
        return "stdin", read_limited(sys.stdin.buffer, source="stdin", limit=limit)
    return name, read_file(name, source=name, limit=limit)


def read_file(
    path: str | os.PathLike[str],
    *,
    source: str,
    limit: int = MAX_JSON_BYTES,
    fifo_wait_s: float = 0.0,
) -> bytes:
    """Read a JSON file: a regular file, or a pipe (``<(...)``); bounded by *limit*.

    A FIFO that nobody writes to is not waited for forever: only *fifo_wait_s* seconds for
    its writer to come (``--input`` waits a few, as for a writer started a moment later;
    project.json and task files none). A device (``/dev/zero``, ``/dev/urandom``, a
    terminal) or a folder is refused, and an unreadable file is one line.

    Raises:
        ConfigError: The file is missing, unreadable, not a file, or larger than *limit*.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError([f"{source}: no such file"]) from None
    except ValueError:  # a NUL in the name
        raise ConfigError([f"{source}: not a valid file name"]) from None
    except OSError as err:
        raise ConfigError([f"{source}: cannot read: {err.strerror or err}"]) from None
    with os.fdopen(fd, "rb", buffering=0) as stream:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError([f"{source}: is a folder; expected a JSON file"])
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise ConfigError([f"{source}: is a device or socket, not a file; expected JSON"])
        if stat.S_ISFIFO(mode) and fifo_wait_s > 0:
            waiting = select.poll()  # no writer yet: nothing to poll until one writes
            waiting.register(fd, select.POLLIN)
            waiting.poll(int(fifo_wait_s * 1000))
        os.set_blocking(fd, True)  # opened without blocking only so a FIFO can't hang open()
        try:
            raw = read_limited(stream, source=source, limit=limit)
        except OSError as err:
            raise ConfigError([f"{source}: cannot read: {err.strerror or err}"]) from None
    if not raw and stat.S_ISFIFO(mode):
        waited = f" within {fifo_wait_s:g} s" if fifo_wait_s > 0 else ""
        raise ConfigError([f"{source}: a FIFO with nothing written to it{waited}; expected JSON"])
    return raw


def _without_bom(text: str | bytes) -> str | bytes:
    """Drop a byte order mark (editors on Windows write one); UTF-16 text is decoded.

    JSON is UTF-8 without one, but RFC 8259 lets a parser ignore it, and a project.json saved
    by Notepad or a failure written by PowerShell should read, not fail on its first byte.
    """
    if isinstance(text, str):
        return text.removeprefix("\ufeff")
    if text.startswith(_UTF8_BOM):
        return text[len(_UTF8_BOM) :]
    if text.startswith(_UTF16_BOMS):
        try:
            return text.decode("utf-16")
        except UnicodeDecodeError:
            return text  # orjson says what is wrong with it
    return text


_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def dumps(obj: object, *, indent: bool = False) -> bytes:
    """Serialise a model (or JSON data) to camelCase JSON bytes."""
    return orjson.dumps(unstructure(obj), option=orjson.OPT_INDENT_2 if indent else 0)
