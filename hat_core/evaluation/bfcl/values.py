"""BFCL-style matching of one argument value against its allowed values.

Rules (after BFCL's AST checker, re-implemented): the schema type is checked first (BFCL
types `string, integer, float, boolean, array, tuple, dict, any` and their JSON-Schema names;
an int is accepted for a float; a bool is never a number; `array`/`tuple` items are checked one
level deep). Strings compare after `normalise`: lowercase, spaces and `,./-_*^` removed, single
quotes as double. Lists compare element-wise in order (strings normalised); dicts key by key
(keys must be allowed; a key whose allowed values contain "" may be left out); lists of dicts
dict by dict. Everything else must equal one allowed value.
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


def _type_mismatch(param: str, value: object, schema: dict) -> Mismatch | None:
    expected = schema.get("type")
    if not type_ok(value, expected):
        return Mismatch("wrong_type", f"{param}: expected {expected}, got "
                                      f"{type(value).__name__} {value!r}")
    items = (schema.get("items") or {}).get("type")
    if isinstance(value, list) and items:
        bad = [v for v in value if not type_ok(v, items)]
        if bad:
            return Mismatch("wrong_type", f"{param}: items must be {items}, got {bad[0]!r}")
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
    """None if `value` has the schema's type and is one of `allowed`; else why not."""
    mismatch = _type_mismatch(param, value, schema)
    if mismatch:
        return mismatch
    if not value_ok(value, allowed):
        return Mismatch("wrong_value", f"{param}: {value!r} is not one of {allowed!r}")
    return None
