"""Building the embedded base model: corpus -> tokenizer -> pre-training -> probe -> model dir.

`build_base_model(out, size="tiny", seed=0, cache_dir=...)` writes a Hugging Face model
directory (config, weights, tokenizer with TRL's qwen3 chat template, `hat_base.json` manifest)
to `out`. A build is keyed by `config_hash(size, seed)`; with a `cache_dir`, a finished build
is stored there and reused (copied to `out`) unless `force=True`; concurrent builds may share
one cache (see `_place`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers

from hat_core.basemodel.corpus import encode_corpus, generate_corpus, render_sample
from hat_core.basemodel.coverage import coverage_chars
from hat_core.basemodel.model import make_model
from hat_core.basemodel.pretrain import pretrain
from hat_core.basemodel.probe import probe
from hat_core.basemodel.sizes import BaseSize, get_size
from hat_core.basemodel.tokenizer import (
    train_tokenizer,
    train_wordchar_tokenizer,
    train_wordpart_tokenizer,
)
from hat_core.errors import ConfigError, Problem

# Bump whenever the corpus, tokenizer, architecture or training code changes what a build makes.
CODE_VERSION = "hat-base-2"
MANIFEST = "hat_base.json"
Event = Callable[[str, dict], None]


@dataclass(frozen=True)
class BuildResult:
    path: Path
    manifest: dict
    reused: bool
    cache_path: Path | None


def config_hash(size: BaseSize, seed: int) -> str:
    """The content hash that names a build: size config, seed and `CODE_VERSION`."""
    key = json.dumps({"size": size.as_dict(), "seed": seed, "code": CODE_VERSION}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()


def read_manifest(path: Path) -> dict | None:
    """The `hat_base.json` of a model dir, or None if there is none."""
    file = Path(path) / MANIFEST
    return json.loads(file.read_text()) if file.is_file() else None


def cache_entry(cache_dir: Path, size: BaseSize, seed: int) -> Path:
    return Path(cache_dir) / f"{size.name}-seed{seed}-{config_hash(size, seed)[:16]}"


def is_built(path: Path, size: BaseSize, seed: int) -> bool:
    """Whether `path` holds the finished build of `size` and `seed`."""
    return _is_build(path, config_hash(size, seed))


def _is_build(path: Path, digest: str) -> bool:
    manifest = read_manifest(path)
    return manifest is not None and manifest.get("config_hash") == digest


def _staging(target: Path, kind: str) -> Path:
    """A staging folder of this call beside `target`: `<name>.<kind>-<host>-<pid>-<id>`."""
    return target.with_name(f"{target.name}.{kind}-{_host()}-{os.getpid()}-"
                            f"{uuid.uuid4().hex[:8]}")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", socket.gethostname())[:40] or "host"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def sweep_staging(target: Path) -> list[Path]:
    """Remove the staging folders beside `target` left by builds that died (SIGKILL, power):
    those of this host whose process no longer runs. A live build's folder, and any other
    host's (a cache on a shared disk), are left alone. Returns what was removed."""
    target = Path(target)
    if not target.parent.is_dir():
        return []
    pattern = re.compile(rf"{re.escape(target.name)}\.(?:partial|building|old)-"
                         rf"{re.escape(_host())}-(\d+)-[0-9a-f]{{8}}")
    removed = []
    for path in target.parent.iterdir():
        match = pattern.fullmatch(path.name)
        if match and int(match.group(1)) != os.getpid() and not _pid_alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


_PLACE_TRIES = 20  # renames before a placement gives up on an entry others keep changing


def _place(src: Path, dst: Path, digest: str | None = None) -> None:
    """Copy the model dir `src` to `dst` through a staging dir of this call, replacing `dst`.

    `dst` only ever changes by renames, so nobody sees it half-written or half-removed: the
    staged copy is renamed in, and an older `dst` is first renamed aside (to a staging name
    that `sweep_staging` knows) and removed there. With `digest`, a `dst` that already holds
    that build is kept as it is, so a process still copying from it is not disturbed.
    Processes placing one build at once (two builds filling one cache) each stage their own
    copy; a process that finds the build in place when its rename fails keeps the winner's.
    """
    if digest and _is_build(dst, digest):
        return
    staging = _staging(dst, "partial")
    try:
        shutil.copytree(src, staging)
        for _ in range(_PLACE_TRIES):
            try:
                staging.rename(dst)   # atomic; fails while `dst` holds anything
                return
            except OSError:
                if digest and _is_build(dst, digest):
                    return
            aside = _staging(dst, "old")
            try:
                dst.rename(aside)
            except FileNotFoundError:  # another placement moved it first: try again
                continue
            shutil.rmtree(aside, ignore_errors=True)
        raise OSError(f"could not place {src} at {dst}: it kept changing under "
                      f"{_PLACE_TRIES} tries (other builds writing the same entry)")
    finally:
        shutil.rmtree(staging, ignore_errors=True)



def _check_out(out: Path, digest: str, force: bool) -> None:
    if force or not out.exists() or _is_build(out, digest):
        return
    if out.is_file() or any(out.iterdir()):
        raise ConfigError(f"{out} exists and holds something else",
                          [Problem("--out", "choose an empty or new directory, or pass --force "
                                            "to replace it")])


def build_base_model(out: Path, size: str = "tiny", seed: int = 0, cache_dir: Path | None = None,
                     force: bool = False, on_event: Event | None = None) -> BuildResult:
    """Build (or reuse) the base model of `size` and `seed` into `out`."""
    out, spec = Path(out), get_size(size)
    digest = config_hash(spec, seed)
    emit = on_event or (lambda stage, info: None)
    _check_out(out, digest, force)
    entry = cache_entry(cache_dir, spec, seed) if cache_dir else None
    for target in (out, entry):
        if target is not None:
            for path in sweep_staging(target):
                emit("swept", {"path": str(path)})
    if not force and _is_build(out, digest):
        emit("reused", {"path": str(out)})
        return BuildResult(out, read_manifest(out), True, entry)
    if not force and entry and _is_build(entry, digest):
        _place(entry, out)
        emit("reused", {"path": str(entry)})
        return BuildResult(out, read_manifest(out), True, entry)
    staging = _staging(out, "building")
    try:
        manifest = _train_into(staging, spec, seed, digest, emit)
        _place(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if entry:
        entry.parent.mkdir(parents=True, exist_ok=True)
        _place(out, entry, None if force else digest)
    return BuildResult(out, manifest, False, entry)


def harness_lexicon() -> tuple[str, ...]:
    """The English and pinyin words of harness names that a `wordpart` tokenizer always holds:
    the words HSA renames (`hat_core.hsa.vocab`'s keys) and every word of its training pool,
    never a held-out word (held-out names stay spelled in characters, as unseen words are)."""
    from hat_core.hsa.vocab import HELDOUT, TRAIN, english_words, pinyin_forms
    words = set(english_words(TRAIN)) | {s for f in pinyin_forms(TRAIN) for s in f}
    words |= {w for key in TRAIN.synonyms for w in re.findall(r"[a-z]+", key)}
    held = english_words(HELDOUT) | {s for f in pinyin_forms(HELDOUT) for s in f}
    return tuple(sorted(w for w in words if re.fullmatch(r"[a-z]{2,}", w)
                        and (w not in held or w in _shared_syllables())))


def _shared_syllables() -> set[str]:
    """Pinyin syllables both pools use (`shang` of `shang_pin` and of held-out `shang_xian`):
    a held-out form is told apart by its syllables together, not by one of them."""
    from hat_core.hsa.vocab import HELDOUT, TRAIN, pinyin_forms
    return ({s for f in pinyin_forms(TRAIN) for s in f}
            & {s for f in pinyin_forms(HELDOUT) for s in f})


def _tokenizer(spec: BaseSize, texts: list[str]):
    if spec.tokenizer_kind == "wordpart":
        return train_wordpart_tokenizer(texts, max_words=spec.vocab_size, min_word_count=5,
                                        extra_chars=coverage_chars(),
                                        lexicon=harness_lexicon())
    if spec.tokenizer_kind == "wordchar":
        return train_wordchar_tokenizer(texts, max_words=spec.vocab_size, min_word_count=5,
                                        extra_chars=coverage_chars())
    return train_tokenizer(texts, spec.vocab_size)


def _train_into(path: Path, spec: BaseSize, seed: int, digest: str, emit: Event) -> dict:
    started = time.perf_counter()
    samples = generate_corpus(seed, spec.corpus_docs, spec.tool_mix())
    emit("corpus", {"samples": len(samples)})
    tokenizer = _tokenizer(spec, [render_sample(s, spec.render_profile)
                                  for s in samples[:spec.tokenizer_docs]])
    data = encode_corpus(samples, tokenizer, spec.seq_len, spec.render_profile)
    emit("tokenizer", {"vocab": len(tokenizer), "rows": int(data.input_ids.shape[0])})
    model = make_model(spec, tokenizer, seed)
    result = pretrain(model, data, spec, seed,
                      lambda step, total, loss: emit("step", {"step": step, "total": total,
                                                              "loss": loss}))
    path.mkdir(parents=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    emit("probe", {"n": spec.probe_n})
    scores = probe(model, tokenizer, n=spec.probe_n, seed=seed, profile=spec.render_profile)
    manifest = {
        "size": spec.name, "seed": seed, "config_hash": digest, "code_version": CODE_VERSION,
        "tokenizer_kind": spec.tokenizer_kind, "render_profile": spec.render_profile,
        "size_config": spec.as_dict(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": len(tokenizer),
        "corpus": {"samples": data.samples, "dropped_too_long": data.dropped,
                   "kinds": dict(Counter(s.kind for s in samples)),
                   "langs": dict(Counter(s.lang for s in samples)),
                   "rows": int(data.input_ids.shape[0]), "tokens": data.tokens,
                   "target_tokens": data.target_tokens},
        "training": {"steps": result.steps, "final_loss": result.final_loss,
                     "loss_curve": result.loss_curve, "compiled": result.compiled,
                     "bf16": spec.bf16, "train_seconds": result.train_seconds,
                     "threads": torch.get_num_threads()},
        "probe": scores.as_dict(),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "python": platform.python_version()},
    }
    (path / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest
