"""Building, caching and loading the base model (the `test` size)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import torch
from basemodel_threads import one_thread
from transformers import AutoModelForCausalLM, AutoTokenizer

from hat_core.basemodel import (
    MANIFEST,
    build_base_model,
    check_model_dir,
    config_hash,
    get_size,
    load_base,
    qwen3_chat_template,
)
from hat_core.errors import ConfigError, NotFoundError


def _weights_hash(model) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


def test_build_writes_a_loadable_chat_model(test_build):
    path = test_build.path
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    assert model.config.model_type == "qwen3" and model.config.tie_word_embeddings
    assert tokenizer.chat_template == qwen3_chat_template()
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "你好"}],
                                           add_generation_prompt=True, return_tensors="pt",
                                           return_dict=True)
    out = model.generate(**prompt, max_new_tokens=5, do_sample=False)
    assert out.shape[1] > prompt["input_ids"].shape[1]


def test_manifest_records_the_build(test_build):
    manifest = json.loads((test_build.path / MANIFEST).read_text())
    assert manifest == test_build.manifest
    assert manifest["config_hash"] == config_hash(get_size("test"), 0)
    assert manifest["parameters"] > 0 and manifest["vocab_size"] > 500
    assert manifest["training"]["steps"] == get_size("test").steps
    assert {"tool_call_valid", "instruction_followed"} <= set(manifest["probe"])
    assert set(manifest["versions"]) >= {"torch", "transformers"}


def test_second_build_reuses_the_cache(test_build, base_cache, tmp_path):
    again = build_base_model(tmp_path / "copy", size="test", seed=0,
                             cache_dir=base_cache / "base-models")
    assert again.reused
    assert again.manifest == test_build.manifest
    assert (tmp_path / "copy" / "model.safetensors").read_bytes() == \
        (test_build.path / "model.safetensors").read_bytes()


def test_same_seed_gives_identical_weights(test_build, tmp_path):
    with one_thread():
        fresh = build_base_model(tmp_path / "fresh", size="test", seed=0)
    assert not fresh.reused
    first, _ = load_base(test_build.path)
    second, _ = load_base(fresh.path)
    assert _weights_hash(first) == _weights_hash(second)


def test_other_seed_gives_other_hash():
    assert config_hash(get_size("test"), 0) != config_hash(get_size("test"), 1)
    assert config_hash(get_size("test"), 0) != config_hash(get_size("tiny"), 0)


def test_unknown_size_lists_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError) as err:
        build_base_model(tmp_path / "x", size="huge")
    assert "tiny" in err.value.report()


def test_refuses_to_overwrite_a_foreign_dir(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ConfigError, match="exists"):
        build_base_model(tmp_path, size="test", seed=0)


def test_load_base_missing_dir(tmp_path):
    with pytest.raises(NotFoundError, match="does not exist"):
        load_base(tmp_path / "nope")


def test_load_base_incomplete_dir_lists_what_is_missing(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError) as err:
        load_base(tmp_path)
    report = err.value.report()
    assert "weights" in report and "tokenizer" in report and "\n  - config.json" not in report


def test_load_base_returns_left_padding_tokenizer(test_build):
    model, tokenizer = load_base(test_build.path)
    assert check_model_dir(test_build.path) == []
    assert tokenizer.padding_side == "left"
    assert not model.training
    assert isinstance(next(model.parameters()), torch.Tensor)


def _fake_build(folder, digest: str, weights: bytes = b"w" * 200_000):
    """A model dir as `_place` sees one: a manifest naming `digest` and a weights file."""
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text(json.dumps({"config_hash": digest}))
    for i in range(20):
        (folder / f"shard-{i}.bin").write_bytes(weights)
    return folder


def test_builds_placing_one_cache_entry_at_once_all_succeed(tmp_path):
    """Two builds filling one cache (two test workers, two `hat base build`s) each place the
    same finished build; every placement ends with the entry whole and no staging left."""
    from concurrent.futures import ThreadPoolExecutor

    from hat_core.basemodel.build import _place

    sources = [_fake_build(tmp_path / f"src{i}", "d1") for i in range(6)]
    entry = tmp_path / "cache" / "test-seed0-d1"
    entry.parent.mkdir()
    for stale in (None, "d0"):   # an empty cache, then an older build in the entry
        if stale:
            _fake_build(entry, stale)
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda src: _place(src, entry, "d1"), sources))   # re-raises errors
        assert json.loads((entry / MANIFEST).read_text()) == {"config_hash": "d1"}
        assert (sorted(p.name for p in entry.iterdir())
                == sorted(p.name for p in sources[0].iterdir()))
        assert [p.name for p in entry.parent.iterdir()] == [entry.name]
        shutil.rmtree(entry)


def test_forced_placements_at_once_leave_one_whole_entry(tmp_path):
    """Without a digest (`--force`) every placement replaces the entry; racing ones still end
    with one whole copy, never a mix or a half-removed folder, and no staging left."""
    from concurrent.futures import ThreadPoolExecutor

    from hat_core.basemodel.build import _place

    sources = [_fake_build(tmp_path / f"src{i}", f"d{i}", weights=bytes([i]) * 200_000)
               for i in range(6)]
    entry = tmp_path / "cache" / "entry"
    entry.parent.mkdir()
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda src: _place(src, entry), sources))
    digest = json.loads((entry / MANIFEST).read_text())["config_hash"]
    winner = sources[int(digest[1:])]
    assert (entry / "shard-0.bin").read_bytes() == (winner / "shard-0.bin").read_bytes()
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]


def test_placing_keeps_an_entry_that_already_holds_the_build(tmp_path):
    """A finished entry is not replaced (a reader may be copying from it); a stale one is."""
    from hat_core.basemodel.build import _place

    entry = _fake_build(tmp_path / "entry", "d1", weights=b"first")
    _place(_fake_build(tmp_path / "same", "d1", weights=b"second"), entry, "d1")
    assert (entry / "shard-0.bin").read_bytes() == b"first"
    _place(_fake_build(tmp_path / "newer", "d2", weights=b"third"), entry, "d2")
    assert (entry / "shard-0.bin").read_bytes() == b"third"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry", "newer", "same"]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sweep_removes_only_dead_builds_staging_of_this_host(tmp_path):
    """A build killed with SIGKILL leaves its staging folder; the next build removes it. A live
    process's folder, another host's (a shared cache disk) and unrelated names stay."""
    import os

    from hat_core.basemodel.build import _host, sweep_staging

    target = tmp_path / "test-seed0-abc"
    dead, live = _dead_pid(), os.getppid()
    names = {
        "dead_partial": f"{target.name}.partial-{_host()}-{dead}-0123abcd",
        "dead_building": f"{target.name}.building-{_host()}-{dead}-89abcdef",
        "dead_old": f"{target.name}.old-{_host()}-{dead}-4567abcd",
        "live": f"{target.name}.partial-{_host()}-{live}-0123abcd",
        "other_host": f"{target.name}.partial-otherhost-{dead}-0123abcd",
        "other_entry": f"test-seed1-abc.partial-{_host()}-{dead}-0123abcd",
        "unrelated": f"{target.name}.partial-notes",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "weights").write_bytes(b"w")
    removed = sweep_staging(target)
    assert sorted(p.name for p in removed) == sorted([names["dead_partial"],
                                                      names["dead_building"], names["dead_old"]])
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {names[k] for k in ("live", "other_host", "other_entry", "unrelated")}
    assert sweep_staging(tmp_path / "missing" / "entry") == []


def test_build_sweeps_a_killed_builds_staging_before_reusing(test_build, tmp_path):
    """`build_base_model` sweeps beside its output and its cache entry, then reuses."""
    import shutil

    from hat_core.basemodel.build import _host

    out = tmp_path / "out"
    shutil.copytree(test_build.path, out)
    left_over = tmp_path / f"out.building-{_host()}-{_dead_pid()}-0123abcd"
    left_over.mkdir()
    cache = test_build.cache_path.parent
    in_cache = cache / f"{test_build.cache_path.name}.partial-{_host()}-{_dead_pid()}-0123abcd"
    in_cache.mkdir()
    events = []
    with one_thread():
        result = build_base_model(out, size="test", seed=0, cache_dir=cache,
                                  on_event=lambda stage, info: events.append((stage, info)))
    assert result.reused
    assert not left_over.exists() and not in_cache.exists()
    assert sorted(info["path"] for stage, info in events if stage == "swept") == sorted(
        [str(left_over), str(in_cache)])
