"""`hat_core.config_file`: the limits of the one YAML reader (with the line where known), the
refusal of empty and non-mapping files, dotted overrides, and the typed builder that reports
unknown keys with the valid ones and every problem at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from hat_core.config_file import (
    MAX_DEPTH,
    MERGE,
    apply_overrides,
    build,
    build_config,
    parse_overrides,
    parse_yaml,
    read_config,
    read_mapping,
)
from hat_core.errors import ConfigError, HarnessError, Problem


@dataclass(frozen=True)
class Inner:
    r: int = 8
    alpha: float = 16.0


@dataclass(frozen=True)
class Checked:
    share: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.share <= 1:
            raise ConfigError("bad", [Problem("share", "must be in [0, 1]")])


@dataclass(frozen=True)
class Outer:
    name: str = "x"
    steps: int = 1
    flag: bool = False
    limit: int | None = 3
    kinds: tuple[str, ...] = ()
    seeds: tuple[int, ...] = (0,)
    inner: Inner = Inner()
    checked: Checked = Checked()
    weights: dict[str, float] = field(default_factory=lambda: {"a": 1.0})
    odds: Mapping[str, Inner] = field(default_factory=lambda: {"p": Inner(1), "q": Inner(2)},
                                      metadata=MERGE)
    extra: Mapping[str, object] = field(default_factory=dict)


def _write(tmp_path, text: str | bytes, name: str = "c.yaml"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _bomb() -> str:
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        lines.append(f"{chr(ord('a') + i)}: &{chr(ord('a') + i)} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, words", [
    ("seed: 1\nlora: {r: 4\nname: x\n", ["not valid YAML", "line 3"]),
    ("seed: 1\nseed: 2\n", ["duplicate key 'seed' (line 2)"]),
    (b"seed: 1\nname: caf\xe9\n", ["not UTF-8", "line 2"]),
    ("a:\n  b: " + "[" * (MAX_DEPTH + 3) + "]" * (MAX_DEPTH + 3) + "\n",
     [f"deeper than {MAX_DEPTH} levels", "line 2"]),
    ("x: " + "[" * 50_000, ["deeper than"]),
    (_bomb(), ["expands to over", "line"]),
    ("", ["empty"]),
    ("# only a comment\n", ["empty"]),
    ("- a\n- b\n", ["must be a mapping", "got a list"]),
    ("just text\n", ["must be a mapping", "got a string"]),
    ("a: !!python/object:os.system {}\n", ["cannot construct", "line 1"]),
])
def test_bad_files_name_the_file_and_the_reason(tmp_path, text, words):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        read_mapping(path, what="data config")
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    for word in words:
        assert word in message


def test_missing_and_oversized_files(tmp_path):
    with pytest.raises(ConfigError, match="no such data config file"):
        read_mapping(tmp_path / "none.yaml", what="data config")
    big = _write(tmp_path, "# " + "x" * 1_000_001)
    with pytest.raises(ConfigError, match="over the 1000000-byte limit"):
        read_mapping(big)


def test_the_error_class_is_the_callers():
    with pytest.raises(HarnessError, match="<h>: duplicate key"):
        parse_yaml("a: 1\na: 2\n", source="<h>", error=HarnessError)


def test_overrides_set_dotted_keys_on_a_copy(tmp_path):
    path = _write(tmp_path, "inner: {r: 4}\nname: file\n")
    data = read_mapping(path)
    merged = apply_overrides(data, {"inner.alpha": 2.0, "name": "cli", "new.deep.key": 1})
    assert merged == {"inner": {"r": 4, "alpha": 2.0}, "name": "cli",
                      "new": {"deep": {"key": 1}}}
    assert data == {"inner": {"r": 4}, "name": "file"}  # the file's mapping is untouched
    assert read_config(None, {"steps": 2}) == {"steps": 2}


def test_an_override_below_a_scalar_is_refused():
    with pytest.raises(ConfigError, match="cannot set name.sub: name is not a mapping"):
        apply_overrides({"name": "x"}, {"name.sub": 1})


def test_parse_overrides_reads_yaml_values():
    got = parse_overrides(["steps=3", "inner.alpha=0.5", "flag=true", "kinds=[a, b]", "name="])
    assert got == {"steps": 3, "inner.alpha": 0.5, "flag": True, "kinds": ["a", "b"],
                   "name": None}
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_overrides(["steps"])
    with pytest.raises(ConfigError, match="--set x: not valid YAML"):
        parse_overrides(["x=[1"])


def test_a_valid_mapping_builds_the_typed_dataclass():
    config, problems = build(Outer, {
        "name": "n", "steps": 4, "flag": True, "limit": None, "kinds": ["a"], "seeds": [1, 2],
        "inner": {"r": 2}, "weights": {"b": 2}, "odds": {"q": {"alpha": 3}},
        "extra": {"any": [1]}})
    assert problems == []
    assert (config.name, config.steps, config.flag, config.limit) == ("n", 4, True, None)
    assert (config.kinds, config.seeds) == (("a",), (1, 2))
    assert config.inner == Inner(r=2)
    assert config.weights == {"b": 2.0}  # a plain mapping replaces the default
    assert config.odds == {"p": Inner(1), "q": Inner(2, 3.0)}  # MERGE: onto the default
    assert config.extra == {"any": [1]}


def test_unknown_keys_are_listed_with_the_valid_ones():
    _, problems = build(Outer, {"nmae": 1, "inner": {"rank": 4}, "odds": {"z": {}}},
                        prefix="cfg")
    text = [str(p) for p in problems]
    assert text[0] == ("cfg.nmae: unknown key; valid keys: name, steps, flag, limit, kinds, "
                       "seeds, inner, checked, weights, odds, extra")
    assert text[1] == "cfg.inner.rank: unknown key; valid keys: r, alpha"
    assert text[2] == "cfg.odds.z: unknown key; valid keys: p, q"


def test_every_problem_is_reported_at_once_and_bad_values_keep_defaults():
    config, problems = build(Outer, {
        "steps": 2.5, "flag": "yes", "limit": "many", "kinds": "a", "seeds": [1, "two"],
        "inner": [1], "checked": {"share": 3}, "weights": {"a": "heavy"}, "extra": 5})
    assert {p.path: p.message for p in problems} == {
        "steps": "must be int, got 2.5",
        "flag": "must be bool, got 'yes'",
        "limit": "must be int, got 'many'",
        "kinds": "must be a list, got a string",
        "seeds[1]": "must be int, got 'two'",
        "inner": "must be a mapping, got a list",
        "checked.share": "must be in [0, 1]",
        "weights.a": "must be float, got 'heavy'",
        "extra": "must be a mapping, got a number",
    }
    assert config.steps == 1 and config.inner == Inner() and config.checked == Checked()


def test_coerce_reads_command_line_strings():
    config, problems = build(Outer, {"steps": "7", "flag": "true", "kinds": "a, b",
                                     "inner": {"alpha": "0.5"}}, coerce=True)
    assert problems == []
    assert (config.steps, config.flag, config.kinds, config.inner.alpha) == (
        7, True, ("a", "b"), 0.5)


def test_numbers_keep_their_type_unless_coerced():
    kept, _ = build(Outer, {"inner": {"alpha": 2}, "name": 5})
    assert type(kept.inner.alpha) is int and kept.name == "5"  # the config hash stays put
    converted, _ = build(Outer, {"inner": {"alpha": 2}, "steps": 3.0}, coerce=True)
    assert type(converted.inner.alpha) is float and converted.steps == 3
    _, problems = build(Outer, {"steps": 3.0})
    assert [str(p) for p in problems] == ["steps: must be int, got 3.0"]


def test_build_config_gathers_its_own_checks_without_repeating_a_path():
    def checks(config: Outer) -> list[Problem]:
        return [Problem("steps", "must be >= 1"), Problem("name", "must not be 'x'")]

    with pytest.raises(ConfigError) as err:
        build_config(Outer, {"steps": "many"}, kind="test", source="f.yaml", checks=checks)
    assert str(err.value) == "f.yaml: invalid test config (2 problems)"
    assert [str(p) for p in err.value.problems] == [
        "steps: must be int, got 'many'", "name: must not be 'x'"]
