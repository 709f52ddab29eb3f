"""BFCL-style matching of one argument value against its allowed values.

Rules (after BFCL's AST checker, re-implemented): the schema type is checked first (BFCL
types `string, integer, float, boolean, array, tuple, dict, any` and their JSON-Schema names;
an int is accepted for a float at the top level; a bool is never a number). Two rules of
BFCL's own checker decide the edge cases:

- **strict list items** (`items_exact`): the items of an `array`/`tuple` are checked one level
  deep and exactly: an int inside a list whose items are `float` is a `wrong_type`, unless the
  allowed list's first value is an int too; an allowed value that is not a list (the optional
  marker `""`) admits any items.
- **listed answer of another type** (`listed_answer`): a value whose type differs from the
  schema type is still accepted when it has the type of the first allowed value (not `""`)
  and equals one of the allowed values exactly (a boolean for a `string` parameter listed as
  `[true]`, a variable name for an `integer`); BFCL calls this the "variable" case.

Strings compare after `normalise`: lowercase, spaces and `,./-_*^` removed, single quotes as
double. Lists compare element-wise in order (strings normalised); dicts key by key (keys must
be allowed; a key whose allowed values contain "" may be left out); lists of dicts dict by
dict. Everything else must equal one allowed value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PUNCT = re.compile(r"[ ,./\-_*^]")
TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "str": (str,), "integer": (int,), "int": (int,),
    "float": (float, int), "number": (float, int), "double": (float, int),
    "boolean": (bool,), "bool": (bool,), "array": (list,), "list": (list,),
    "tuple": (list,), "dict": (dict,), "object": (dict,), "any": (object,),
}
# BFCL's own type names: a list item must have exactly this type (its nested check is strict)
EXACT_ITEM_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float,
                                     "boolean": bool, "array": list, "tuple": list, "dict": dict}
OPTIONAL = ""


@dataclass(frozen=True)
class Mismatch:
    """Why a value is not accepted: `wrong_type` or `wrong_value`, and a message."""

    error_type: str
    message: str


def normalise(text: str) -> str:
    """BFCL's string standardisation: no spaces or `,./-_*^`, lowercase, ' as "."""
    return _PUNCT.sub("", text).lower().replace("'", '"')


def type_ok(value: object, type_name: str | None) -> bool:
    """Whether `value` has the schema type (unknown or missing types accept anything)."""
    allowed = TYPES.get(str(type_name).lower(), (object,))
    if isinstance(value, bool) and bool not in allowed and object not in allowed:
        return False
    return isinstance(value, allowed)


def answer_type(allowed: list) -> type | None:
    """The Python type of the first allowed value that is not the optional marker `""`."""
    return next((type(a) for a in allowed if not (isinstance(a, str) and a == OPTIONAL)), None)


def listed_answer(value: object, schema_type: str | None, allowed: list) -> bool:
    """BFCL's "variable" rule applies: `value` is not of the schema type but of the type of
    the first allowed value; it is then compared with the allowed values exactly (no string
    normalisation), and its schema type is not held against it."""
    return not type_ok(value, schema_type) and answer_type(allowed) is type(value)


def _item_ok(item: object, item_type: str, option: list) -> bool:
    exact = EXACT_ITEM_TYPES.get(str(item_type).lower())
    own = type(item) is answer_type(option)
    return own or (type(item) is exact if exact else type_ok(item, item_type))


def items_exact(value: list, item_type: str, allowed: list) -> bool:
    """Whether one allowed value admits every item of `value`: an allowed list admits an item
    of exactly `item_type` (an int is not a float; JSON-Schema names such as `number` keep
    the top-level rule) or of its own first value's type; an allowed value that is not a list
    (the optional marker `""`) admits every item."""
    return any(not isinstance(option, list)
               or all(_item_ok(v, item_type, option) for v in value) for option in allowed)


def _type_mismatch(param: str, value: object, schema: dict, allowed: list) -> Mismatch | None:
    expected = schema.get("type")
    if not type_ok(value, expected):
        return Mismatch("wrong_type", f"{param}: expected {expected}, got "
                                      f"{type(value).__name__} {value!r}")
    items = (schema.get("items") or {}).get("type")
    if isinstance(value, list) and items and not items_exact(value, items, allowed):
        bad = next((v for v in value if not _item_ok(v, items, [])), None)
        return Mismatch("wrong_type", f"{param}: items must be exactly {items}, got "
                                      f"{type(bad).__name__} {bad!r}")
    return None


def _canon(value: object) -> object:
    """Comparable form: strings normalised, ints as floats, lists element-wise."""
    if isinstance(value, str):
        return normalise(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


def _dict_ok(value: dict, allowed: dict) -> bool:
    if not isinstance(allowed, dict) or any(k not in allowed for k in value):
        return False
    for key, options in allowed.items():
        options = options if isinstance(options, list) else [options]
        if key not in value:
            if OPTIONAL not in options:
                return False
        elif _canon(value[key]) not in [_canon(o) for o in options]:
            return False
    return True


def _list_of_dicts_ok(value: list, allowed: object) -> bool:
    return (isinstance(allowed, list) and len(allowed) == len(value)
            and all(isinstance(v, dict) and _dict_ok(v, a)
                    for v, a in zip(value, allowed, strict=True)))


def value_ok(value: object, allowed: list) -> bool:
    """Whether `value` matches one of the allowed values under the rules above."""
    options = [a for a in allowed if not (isinstance(a, str) and a == OPTIONAL)]
    if isinstance(value, dict):
        return any(_dict_ok(value, a) for a in options)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return any(_list_of_dicts_ok(value, a) for a in options)
    if isinstance(value, str):
        return normalise(value) in [normalise(a) for a in options if isinstance(a, str)]
    canon = _canon(value)
    return any(type(_canon(a)) is type(canon) and _canon(a) == canon for a in options)


def check_argument(param: str, value: object, schema: dict, allowed: list) -> Mismatch | None:
    """None if `value` has the schema's type and is one of `allowed`, or is a listed answer of
    another type (`listed_answer`); else why not."""
    if listed_answer(value, schema.get("type"), allowed):
        return None if value in allowed else Mismatch(
            "wrong_value", f"{param}: {value!r} is not one of {allowed!r} (compared exactly: "
                           f"not of the schema type {schema.get('type')})")
    mismatch = _type_mismatch(param, value, schema, allowed)
    if mismatch:
        return mismatch
    if not value_ok(value, allowed):
        return Mismatch("wrong_value", f"{param}: {value!r} is not one of {allowed!r}")
    return None
