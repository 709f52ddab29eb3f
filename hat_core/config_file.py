"""The one reader of YAML config files: safe parsing, dotted overrides, typed dataclasses.

Every config (stage, data, HSA, retrain, gates, repro) and every harness document is parsed
here, under the same limits: files over `MAX_BYTES`, non-UTF-8 text, nesting over `MAX_DEPTH`,
YAML alias graphs that expand past `MAX_NODES` ("billion laughs") and repeated keys are refused
with an error naming the file and, where known, the line. An empty file or a document that is
not a mapping is refused too: an empty config is never read as "all defaults".

    data = read_config(path, {"teacher.kind": "openai"}, what="data config")
    config = build_config(DataConfig, data, kind="data", source=str(path), checks=check_config)

`build` turns a mapping into a frozen dataclass (every field has a default): unknown keys are
reported with the valid keys, values of the wrong type by path, and every problem at once. A
field whose metadata is `MERGE` takes a mapping that is merged onto its default mapping (keys
outside the default are unknown). `build_config` adds a config's own value checks and raises one
`ConfigError` listing everything. `parse_yaml(..., error=HarnessError)` serves the harness loader.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from hat_core.errors import ConfigError, HatError, Problem

MAX_BYTES = 1_000_000
MAX_DEPTH = 32
MAX_NODES = 200_000
MERGE = {"merge": True}  # field metadata: a given mapping is merged onto the default mapping
T = TypeVar("T")
_BAD = object()  # a value that failed conversion: its problem is recorded, the default stays


class _Refused(Exception):
    """A document over a limit; the public functions re-raise it as the caller's error."""


# --- reading and parsing -------------------------------------------------------------------


def read_text(path: str | Path, *, what: str = "config",
              error: type[HatError] = ConfigError) -> str:
    """The UTF-8 text of a file of at most `MAX_BYTES`; `error` naming the file otherwise."""
    p = Path(path)
    if not p.is_file():
        raise error(f"{p}: no such {what} file")
    size = p.stat().st_size
    if size > MAX_BYTES:
        raise error(f"{p}: file is {size} bytes, over the {MAX_BYTES}-byte limit")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise error(f"{p}: cannot read the {what} file: {exc.strerror}") from exc
    return decode_text(raw, str(p), error=error)


def decode_text(raw: bytes, source: str, *, error: type[HatError] = ConfigError) -> str:
    """The UTF-8 text of `raw` (a file's or an upload's bytes) under the size limit, else
    `error` naming `source`, the byte and the line: the same refusal for a file and an upload."""
    if len(raw) > MAX_BYTES:
        raise error(f"{source}: {len(raw)} bytes, over the {MAX_BYTES}-byte limit")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise error(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start}, "
                    f"line {line})") from exc


def parse_yaml(text: str, *, source: str = "<text>",
               error: type[HatError] = ConfigError) -> Any:
    """Parse YAML (a superset of JSON) under the size, depth, alias and duplicate-key limits."""
    try:
        return _parse(text)
    except _Refused as exc:
        raise error(f"{source}: {exc}") from exc


def read_mapping(path: str | Path, *, what: str = "config") -> dict:
    """The mapping in a YAML file; `ConfigError` for anything else (empty, a list, bad YAML)."""
    data = parse_yaml(read_text(path, what=what), source=str(path))
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a {what} must be a mapping of settings (key: value), "
                          f"got {_type_name(data)}")
    return data


def read_config(path: str | Path | None, overrides: Mapping[str, Any] | None = None, *,
                what: str = "config") -> dict:
    """The mapping of `path` (none: an empty one) with the dotted `overrides` applied."""
    data = read_mapping(path, what=what) if path is not None else {}
    return apply_overrides(data, overrides)


def _parse(text: str) -> Any:
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise _Refused(f"document is over the {MAX_BYTES}-byte limit")
    loader = _loader(text)
    try:
        node = _compose(loader)
        if node is None:
            raise _Refused("the document is empty")
        _check_graph(node)
        return _construct(loader, node)
    finally:
        loader.dispose()


def _loader(text: str) -> yaml.SafeLoader:
    try:
        return yaml.SafeLoader(text)  # the reader refuses control characters here
    except yaml.YAMLError as exc:
        raise _Refused(f"not valid YAML or JSON: {_yaml_reason(exc)}") from exc


def _compose(loader: yaml.SafeLoader) -> yaml.Node | None:
    try:
        return loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _Refused(f"not valid YAML or JSON: {_yaml_reason(exc)}") from exc
    except RecursionError as exc:
        raise _Refused(f"nesting is deeper than {MAX_DEPTH} levels") from exc


def _construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise _Refused(f"cannot construct the document: {_yaml_reason(exc)}") from exc
    except (ValueError, TypeError) as exc:
        raise _Refused(f"cannot construct the document: {exc}") from exc


def _check_graph(root: yaml.Node) -> None:
    """Refuse documents whose alias-expanded size or nesting exceeds the limits."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    on_path: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = _expanded_size(node, sizes)
            continue
        if depth > MAX_DEPTH:
            raise _Refused(f"nesting is deeper than {MAX_DEPTH} levels{_line(node)}")
        if key in sizes:
            continue
        if key in on_path:
            raise _Refused("the document refers to itself through an alias")
        on_path.add(key)
        _check_duplicate_keys(node)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    size = 1 + sum(sizes[id(c)] for c in _children(node))
    if size > MAX_NODES:
        raise _Refused(f"the document expands to over {MAX_NODES} nodes (YAML aliases?); "
                       f"refused{_line(node)}")
    return size


def _check_duplicate_keys(node: yaml.Node) -> None:
    """PyYAML keeps the last of two equal keys silently; refuse them instead."""
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.value in seen:
                line = key_node.start_mark.line + 1
                raise _Refused(f"duplicate key {key_node.value!r} (line {line})")
            seen.add(key_node.value)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _line(node: yaml.Node) -> str:
    mark = getattr(node, "start_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


def _yaml_reason(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(problem)


def _type_name(value: Any) -> str:
    names = {list: "a list", str: "a string", int: "a number", float: "a number",
             bool: "true/false", type(None): "nothing"}
    return names.get(type(value), type(value).__name__)


# --- overrides -----------------------------------------------------------------------------


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> dict:
    """A copy of `data` with each dotted key (`a.b.c`) set to its value."""
    out = dict(data)
    for key, value in (overrides or {}).items():
        _set_dotted(out, key, value)
    return out


def _set_dotted(data: dict, key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    node = data
    for i, part in enumerate(parents):
        child = node.get(part, {})
        if not isinstance(child, Mapping):
            where = ".".join(parents[: i + 1])
            raise ConfigError(f"cannot set {key}: {where} is not a mapping",
                              [Problem(where, f"is {child!r}, not a mapping")])
        node[part] = dict(child)  # copied: the caller's mapping stays as it was
        node = node[part]
    node[leaf] = value


def parse_overrides(pairs: Iterable[str]) -> dict[str, Any]:
    """`["teacher.kind=openai", "variants=8"]` -> dotted keys with YAML-typed values."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {pair!r}: expected key=value (e.g. teacher.kind=openai)",
                              [Problem(pair, "expected key=value")])
        key = key.strip()
        out[key] = parse_yaml(text, source=f"--set {key}") if text.strip() else None
    return out


# --- typed dataclasses ---------------------------------------------------------------------


def build(cls: type[T], data: Any, *, prefix: str = "",
          coerce: bool = False) -> tuple[T, list[Problem]]:
    """A `cls` from `data` over its defaults, and every problem found (empty when valid).

    Unknown keys, values of the wrong type and errors a nested `__post_init__` raises are
    problems; a bad value keeps its default so the config's own checks can still run.
    `coerce` converts every value to exactly its field's type and also reads numbers and
    booleans from strings and lists from comma-separated strings (command-line `--set`
    values); without it a value is checked and kept as given. `prefix` starts every path.
    """
    builder = _Builder(coerce)
    config = builder.dataclass(cls, data, prefix, cls())
    return (cls() if config is _BAD else config), builder.problems


def build_config(cls: type[T], data: Any, *, kind: str, source: str = "", prefix: str = "",
                 coerce: bool = False,
                 checks: Callable[[T], list[Problem]] | None = None) -> T:
    """`build` plus the config's own `checks`; one `ConfigError` listing every problem."""
    config, problems = build(cls, data, prefix=prefix, coerce=coerce)
    if checks is not None:
        problems = merge_problems(problems, checks(config))
    raise_problems(f"{source + ': ' if source else ''}invalid {kind} config", problems)
    return config


def merge_problems(first: list[Problem], more: list[Problem]) -> list[Problem]:
    """`first`, then the problems of `more` about paths `first` does not mention yet."""
    seen = {p.path for p in first}
    return list(dict.fromkeys(first + [p for p in more if p.path not in seen]))


def raise_problems(message: str, problems: list[Problem]) -> None:
    """Raise `ConfigError("message (N problems)")` when there is any problem."""
    if problems:
        n = len(problems)
        raise ConfigError(f"{message} ({n} problem{'s' if n != 1 else ''})", problems)


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


class _Builder:
    """Converts parsed values into typed fields, recording problems instead of raising."""

    def __init__(self, coerce: bool):
        self.coerce = coerce
        self.problems: list[Problem] = []

    def note(self, where: str, message: str) -> object:
        self.problems.append(Problem(where or "config", message))
        return _BAD

    def dataclass(self, cls: type, data: Any, where: str, base: Any) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            return self.note(where, f"must be a mapping, got {_type_name(data)}")
        return self.make(base, self.fields(cls, data, where, base), where)

    def fields(self, cls: type, data: Mapping, where: str, base: Any) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        known = {f.name: f for f in dataclasses.fields(cls) if f.init}
        values = {}
        for key, value in data.items():
            path = _join(where, key)
            if key not in known:
                self.note(path, f"unknown key; valid keys: {', '.join(known)}")
                continue
            merge = bool(known[key].metadata.get("merge"))
            value = self.convert(hints[key], value, path, getattr(base, key), merge)
            if value is not _BAD:
                values[key] = value
        return values

    def make(self, base: Any, values: dict[str, Any], where: str) -> Any:
        try:
            return dataclasses.replace(base, **values)
        except ConfigError as exc:  # a __post_init__ check: its problems, under this path
            self.problems += [Problem(_join(where, p.path), p.message) for p in exc.problems]
            return _BAD if exc.problems else self.note(where, str(exc))
        except (TypeError, ValueError) as exc:
            return self.note(where, str(exc))

    def convert(self, hint: Any, value: Any, where: str, default: Any, merge: bool) -> Any:
        if hint is Any:
            return value
        if dataclasses.is_dataclass(hint):
            return self.dataclass(hint, value, where,
                                  default if isinstance(default, hint) else hint())
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            return self.optional(args, value, where, default, merge)
        if origin is tuple:
            return self.sequence(args[0], value, where)
        if origin in (dict, Mapping):
            return self.mapping(args[1], value, where, default if merge else None)
        return self.scalar(hint, value, where)

    def optional(self, args: tuple, value: Any, where: str, default: Any, merge: bool) -> Any:
        if value is None and type(None) in args:
            return None
        hint = next(a for a in args if a is not type(None))
        return self.convert(hint, value, where, default, merge)

    def sequence(self, kind: Any, value: Any, where: str) -> Any:
        if self.coerce and isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            return self.note(where, f"must be a list, got {_type_name(value)}")
        items = [self.convert(kind, v, f"{where}[{i}]", None, False)
                 for i, v in enumerate(value)]
        return tuple(v for v in items if v is not _BAD)

    def mapping(self, kind: Any, value: Any, where: str, base: Mapping | None) -> Any:
        if not isinstance(value, Mapping):
            return self.note(where, f"must be a mapping, got {_type_name(value)}")
        out = dict(base or {})
        for key, item in value.items():
            path = _join(where, key)
            if base is not None and key not in base:
                self.note(path, f"unknown key; valid keys: {', '.join(map(str, base))}")
                continue
            converted = self.convert(kind, item, path, out.get(key), False)
            if converted is not _BAD:
                out[str(key)] = converted
        return out

    def scalar(self, kind: type, value: Any, where: str) -> Any:
        if self.coerce and isinstance(value, str) and kind is not str:
            value = _from_text(kind, value)
        converted = _scalar(kind, value, self.coerce)
        if converted is _BAD:
            return self.note(where, f"must be {getattr(kind, '__name__', kind)}, got {value!r}")
        return converted


def _scalar(kind: type, value: Any, convert: bool) -> Any:
    """`value` if it is a `kind` (an int for a float, a number for a str); `convert` also
    turns it into exactly `kind` (an integral float into an int). Without `convert` a
    number keeps its type, so the hash of an existing config does not move."""
    if isinstance(value, bool) or kind is bool:
        return value if isinstance(value, bool) and kind is bool else _BAD
    if kind is int:
        whole = convert and isinstance(value, float) and value.is_integer()
        return int(value) if isinstance(value, int) or whole else _BAD
    if kind is float:
        return (float(value) if convert else value) if isinstance(value, (int, float)) else _BAD
    if kind is str:
        return str(value) if isinstance(value, (str, int, float)) else _BAD
    return value if isinstance(kind, type) and isinstance(value, kind) else _BAD


def _from_text(kind: type, text: str) -> Any:
    """A command-line string read as `kind` where it can be; else the string itself."""
    if kind is bool:
        return {"true": True, "yes": True, "1": True,
                "false": False, "no": False, "0": False}.get(text.strip().lower(), text)
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            return text
    return text
