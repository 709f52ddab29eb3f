"""The official IFEval checker (lm-eval 0.4.13's port of Google's code), run offline.

lm-eval's `instructions_util` calls `nltk.download("punkt_tab")` when it is imported and finds
no Punkt model, and it splits sentences with NLTK's Punkt model in two places: `count_sentences`
(`length_constraints:number_sentences`) and `nltk.word_tokenize`
(`change_case:capital_word_frequency`). Here the import never downloads, and inside
`offline(splitter)` both places use the caller's `SentenceSplitter`: NLTK's trained English
Punkt parameters read from an nltk data directory, or an untrained `PunktSentenceTokenizer`
that needs no data. The scoring itself is lm-eval's `test_instruction_following_strict/_loose`
unchanged (they drop falsy kwargs, as the Hugging Face copy of IFEval fills every key with null).

Inside `offline`, Python's global `random` is re-seeded per prompt and langdetect is seeded, so
a run is reproducible; both are restored afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import nltk
import nltk.tokenize
from nltk.data import FileSystemPathPointer
from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

from hat_core.errors import NotFoundError

PUNKT_ENGLISH = Path("tokenizers") / "punkt_tab" / "english"
UNTRAINED = "untrained"
_LOCK = threading.RLock()
_PROBE_SEEDS = (1, 2, 3, 4, 5, 6)


@dataclass(frozen=True)
class SentenceSplitter:
    """The Punkt tokenizer the checker splits sentences with, and where it came from."""

    tokenizer: PunktSentenceTokenizer = field(compare=False)
    source: str  # "punkt_tab:<dir>" or "untrained"


@dataclass(frozen=True)
class Check:
    """The checker's answer for one prompt and response."""

    strict: tuple[bool, ...]
    loose: tuple[bool, ...]


def load_splitter(nltk_data: str | Path | None = None) -> SentenceSplitter:
    """Punkt English from `nltk_data` (an nltk data root), or the untrained tokenizer if None.

    Never downloads. A directory that is given but lacks `tokenizers/punkt_tab/english`
    raises `NotFoundError` rather than silently falling back.
    """
    if nltk_data is None:
        return SentenceSplitter(PunktSentenceTokenizer(), UNTRAINED)
    lang_dir = Path(nltk_data) / PUNKT_ENGLISH
    if not (lang_dir / "sent_starters.txt").is_file():
        raise NotFoundError(f"no Punkt English model under {nltk_data} (expected {lang_dir}/)")
    root = str(Path(nltk_data).resolve())
    # nltk >= 3.10 opens model files only under a root in `nltk.data.path`.
    with _LOCK, _patched(nltk.data, "path", [root, *nltk.data.path]):
        params = load_punkt_params(FileSystemPathPointer(str(lang_dir.resolve())))
    return SentenceSplitter(PunktSentenceTokenizer(params), f"punkt_tab:{Path(nltk_data)}")


def _no_download(*_args, **_kwargs) -> bool:
    return False


@functools.cache
def checker_modules() -> tuple[ModuleType, ModuleType, ModuleType]:
    """lm-eval's (`utils`, `instructions_registry`, `instructions_util`), imported offline."""
    with _LOCK, _patched(nltk, "download", _no_download), \
            contextlib.redirect_stdout(io.StringIO()):
        names = ("utils", "instructions_registry", "instructions_util")
        return tuple(importlib.import_module(f"lm_eval.tasks.ifeval.{n}") for n in names)


def registry() -> dict:
    """The checker's instruction classes by id (`INSTRUCTION_DICT`)."""
    return dict(checker_modules()[1].INSTRUCTION_DICT)


@contextlib.contextmanager
def _patched(obj: object, name: str, value: object) -> Iterator[None]:
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


@contextlib.contextmanager
def offline(splitter: SentenceSplitter) -> Iterator[None]:
    """Route the checker's sentence splitting to `splitter`; no downloads; seeded randomness."""
    import langdetect

    _, _, util = checker_modules()
    tokenizer = splitter.tokenizer
    state = random.getstate()
    with _LOCK, _patched(util, "_get_sentence_tokenizer", lambda: tokenizer), \
            _patched(nltk.tokenize, "_get_punkt_tokenizer", lambda language="english": tokenizer), \
            _patched(nltk, "download", _no_download), \
            _patched(langdetect.DetectorFactory, "seed", 0):
        try:
            yield
        finally:
            random.setstate(state)


def check(key: int, prompt: str, ids: list[str], kwargs: list[dict], response: str) -> Check:
    """lm-eval's strict and loose verdicts per instruction; call inside `offline(...)`."""
    utils = checker_modules()[0]
    inp = utils.InputExample(key=key, instruction_id_list=ids, prompt=prompt, kwargs=kwargs)
    random.seed(f"ifeval:{key}")
    strict = utils.test_instruction_following_strict(inp, response)
    random.seed(f"ifeval:{key}")
    loose = utils.test_instruction_following_loose(inp, response)
    return Check(tuple(strict.follow_instruction_list), tuple(loose.follow_instruction_list))


def _built_args(instruction_id: str, kwargs: dict, prompt: str, seed: int) -> dict | None:
    """Build the instruction as lm-eval does, under `seed`; the global `random` is restored."""
    state = random.getstate()
    try:
        random.seed(seed)
        instruction = registry()[instruction_id](instruction_id)
        instruction.build_description(**{k: v for k, v in kwargs.items() if v})
        args = instruction.get_instruction_args()
        if args and "prompt" in args:
            instruction.build_description(prompt=prompt)
            args = instruction.get_instruction_args()
        return args
    finally:
        random.setstate(state)


def is_random_dependent(instruction_id: str, kwargs: dict, prompt: str) -> bool:
    """True if the official code draws part of this instruction at random (e.g. a `letter`
    that is not a letter): building it under different seeds gives different arguments."""
    built = [_built_args(instruction_id, kwargs, prompt, s) for s in _PROBE_SEEDS]
    return any(b != built[0] for b in built[1:])


def instruction_problem(instruction_id: str, kwargs: object, prompt: str) -> str | None:
    """Why the checker cannot build this instruction (unknown id, bad kwargs), or None."""
    classes = registry()
    if instruction_id not in classes:
        return f"unknown instruction id {instruction_id!r}"
    if not isinstance(kwargs, dict):
        return f"kwargs of {instruction_id} must be an object"
    try:
        _built_args(instruction_id, kwargs, prompt, 0)
    except (TypeError, ValueError, KeyError) as exc:
        return f"{instruction_id} rejects kwargs {kwargs}: {exc}"
    return None
