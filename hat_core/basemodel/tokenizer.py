"""The base model's tokenizers, trained on the project's own corpus.

Two kinds (`KINDS`):
- `bpe`: byte-level BPE (`train_tokenizer`); the `test`, `tiny` and `small` sizes.
- `wordchar` (`train_wordchar_tokenizer`): a `tokenizers` WordLevel model behind a regex Split.
  A prose word (letters only, not touching a letter, digit, `_` or `-`) that the corpus uses
  often is one token; everything else is one token per character: identifiers such as
  `get_price`/`getPrice`, ids, numbers, CJK text and unseen words. An unseen tool name is thus
  spelled with well-trained character tokens, which is what lets a tiny model copy names it
  never saw (see `/work/shared/design/toyhat-feasibility.md`). The `toy` sizes use it.
- `wordpart` (`train_wordpart_tokenizer`): `wordchar` that also reads the words *inside*
  identifiers. A name splits at its case-style boundaries (`hat_core.hsa.names.words`), and a
  known part is one token, with its separator: `query_price` -> `query`, `_price`;
  `getPrice` -> `get`, `Price`; `find-products` -> `find`, `-products`. Unknown parts, opaque
  names, ids and numbers stay one token per character. A name is then copied in two or three
  steps instead of ten, so a small model is less likely to lose track after a shared prefix
  (`query_order` written for `query_price`: docs/results.md, "What the demo's base must know").
  Its words are the corpus's most frequent parts plus a `lexicon` (always in, in the forms
  `word`, `Word`, `_word` and `-word`), so the stand-in for a pretrained tokenizer knows the
  English a harness is written in even where the base corpus never used it.

`train_tokenizer(texts, vocab_size)` returns a `PreTrainedTokenizerFast` whose chat template is
TRL's `qwen3.jinja` byte for byte (read from the installed trl package), with the Qwen3 special
and added tokens. `load_tokenizer(path)` loads a saved one with left padding, which
`save_pretrained` does not keep.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    pre_tokenizers,
    trainers,
)
from transformers import AutoTokenizer, PreTrainedTokenizerFast

PAD = "<|endoftext|>"
BOS = "<|im_start|>"
EOS = "<|im_end|>"
SPECIAL_TOKENS = (PAD, BOS, EOS)
# TRL parses tool calls and reasoning by these strings: they must stay non-special so that
# decoding with skip_special_tokens=True keeps them.
MARKUP_TOKENS = ("<think>", "</think>", "<tool_call>", "</tool_call>",
                 "<tool_response>", "</tool_response>")
KINDS = ("bpe", "wordchar", "wordpart")
UNK = "<unk>"
_PROSE_WORD = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z]{2,}(?![A-Za-z0-9_\-])")
_EDGE = r"(?<![A-Za-z0-9_\-])(?:{words})(?![A-Za-z0-9_\-])"
# `wordpart`: the parts of a name or a prose word, each starting where a case-style split
# (`hat_core.hsa.names.words`) starts one. Lower case: not after a letter; capitalised or
# separated (`Price` in `getPrice`, `_price`, `-Price`): after anything. Every part ends where
# the next one would start (`(?![a-z])`: before `_`, `-`, a digit, an upper-case letter or a
# space).
_PART_PATTERNS = {
    "lower": r"(?<![A-Za-z])(?:{words})(?![a-z])",
    "other": r"(?:{words})(?![a-z])",
}
_PART = re.compile(r"[_\-]?[A-Z]?[a-z]+(?![a-z])")


def qwen3_chat_template() -> str:
    """TRL's `chat_templates/qwen3.jinja`, exactly as installed."""
    return resources.files("trl").joinpath("chat_templates/qwen3.jinja").read_text("utf-8")


def _strip_markup(text: str) -> str:
    for token in SPECIAL_TOKENS + MARKUP_TOKENS:
        text = text.replace(token, " ")
    return text


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE of `vocab_size` on `texts` and wrap it for transformers.

    Markup and special tokens are removed from the training text and added whole afterwards,
    so BPE never spends merges on them. Deterministic for the same texts.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(SPECIAL_TOKENS) - len(MARKUP_TOKENS),
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        max_token_length=12,
    )
    tok.train_from_iterator((_strip_markup(t) for t in texts), trainer=trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return wrap_tokenizer(tok)


def train_wordchar_tokenizer(texts: Iterable[str], max_words: int = 1500,
                             min_word_count: int = 5,
                             extra_chars: str = "") -> PreTrainedTokenizerFast:
    """A word/character tokenizer (see module doc) from `texts`: every character they use,
    plus the `max_words` most frequent prose words seen at least `min_word_count` times.
    Printable ASCII and `extra_chars` are always in (characters only: `extra_chars` adds no
    words). Other characters never seen map to `<unk>`. Deterministic for the same inputs."""
    chars: set[str] = set(string.printable) | set(extra_chars)
    words: Counter = Counter()
    for text in texts:
        text = _strip_markup(text)
        chars.update(text)
        words.update(_PROSE_WORD.findall(text))
    kept = sorted((w for w, c in words.most_common(max_words) if c >= min_word_count),
                  key=lambda w: (-len(w), w))
    vocab = [UNK] + sorted(chars) + sorted(kept)
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token=UNK))
    alternatives = ([_EDGE.format(words="|".join(map(re.escape, kept)))] if kept else []) + [
        r"[\s\S]"]
    tok.pre_tokenizer = pre_tokenizers.Split(
        pattern=Regex("|".join(alternatives)), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return wrap_tokenizer(tok)


def _part_kind(word: str) -> str | None:
    if re.fullmatch(r"[a-z]{2,}", word):
        return "lower"
    if re.fullmatch(r"[_\-]?[A-Z][a-z]+|[_\-][a-z]{2,}", word):
        return "other"
    return None


def part_forms(word: str) -> tuple[str, ...]:
    """The forms a lexicon word takes in names and prose: `price`, `Price`, `_price`, `-price`."""
    cap = word[:1].upper() + word[1:]
    return (word, cap, "_" + word, "-" + word)


def train_wordpart_tokenizer(texts: Iterable[str], max_words: int = 1500,
                             min_word_count: int = 5, extra_chars: str = "",
                             lexicon: Iterable[str] = ()) -> PreTrainedTokenizerFast:
    """A word-part/character tokenizer (see module doc) from `texts`: every character they use,
    the `max_words` most frequent word parts seen at least `min_word_count` times, and every
    form of each `lexicon` word (lower-case letters, two or more). Deterministic."""
    chars: set[str] = set(string.printable) | set(extra_chars)
    parts: Counter = Counter()
    for text in texts:
        text = _strip_markup(text)
        chars.update(text)
        parts.update(p for p in _PART.findall(text) if _part_kind(p))
    kept = {w for w, c in parts.most_common(max_words) if c >= min_word_count}
    for word in lexicon:
        if not re.fullmatch(r"[a-z]{2,}", word):
            raise ValueError(f"lexicon word {word!r} is not two or more lower-case letters")
        kept.update(part_forms(word))
    by_kind: dict[str, list[str]] = {kind: [] for kind in _PART_PATTERNS}
    for word in kept:
        by_kind[_part_kind(word)].append(word)
    vocab = [UNK] + sorted(chars) + sorted(kept)
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token=UNK))
    alternatives = [
        _PART_PATTERNS[kind].format(
            words="|".join(map(re.escape, sorted(words, key=lambda w: (-len(w), w)))))
        for kind, words in by_kind.items() if words] + [r"[\s\S]"]
    tok.pre_tokenizer = pre_tokenizers.Split(
        pattern=Regex("|".join(alternatives)), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return wrap_tokenizer(tok)


def wrap_tokenizer(tok: Tokenizer) -> PreTrainedTokenizerFast:
    """A transformers tokenizer around `tok` with the Qwen3 chat template and token roles."""
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS,
        pad_token=PAD,
        padding_side="left",
        model_max_length=4096,
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = qwen3_chat_template()
    return fast


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerFast:
    """Load a saved tokenizer with `padding_side="left"` (generation and TRL need it)."""
    return AutoTokenizer.from_pretrained(str(path), padding_side="left")
