"""The one generated model the repository holds: `examples/models/toy-long`, the CPU recipe's
base (docs/base-model.md "The shipped base"). Its files match their checksums, it is what
`hat base build --size toy-long --seed 0` writes with today's code version, it loads, and it
stays under the 10 MB the repository allows."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hat_core.basemodel.build import CODE_VERSION, MANIFEST, read_manifest
from hat_core.basemodel.sizes import SIZES

SHIPPED = Path(__file__).resolve().parents[3] / "examples" / "models" / "toy-long"
SUMS = SHIPPED / "SHA256SUMS"


def _sums() -> dict[str, str]:
    out = {}
    for line in SUMS.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        out[name.lstrip("*")] = digest
    return out


def test_every_file_matches_its_checksum_and_none_is_unlisted():
    sums = _sums()
    present = {p.name for p in SHIPPED.iterdir() if p.is_file()} - {SUMS.name, "README.md"}
    assert present == set(sums) and MANIFEST in sums and "model.safetensors" in sums
    for name, digest in sums.items():
        assert hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest() == digest, name
    assert sum((SHIPPED / n).stat().st_size for n in sums) < 10 * 2**20


def test_it_is_the_toy_long_build_of_todays_code():
    manifest = read_manifest(SHIPPED)
    assert (manifest["size"], manifest["seed"], manifest["code_version"]) == (
        "toy-long", 0, CODE_VERSION), "rebuild it: see examples/models/toy-long/README.md"
    # the architecture and recipe of the size today (bf16 and compiling follow the CPU
    # that built it, hat_core.basemodel.sizes.on_this_cpu)
    expected = SIZES["toy-long"].as_dict()
    built = manifest["size_config"]
    assert {k: v for k, v in built.items() if k not in ("bf16", "compile")} == {
        k: v for k, v in expected.items() if k not in ("bf16", "compile")}


@pytest.mark.slow
def test_it_loads_and_renders_a_chat():
    from transformers import AutoModelForCausalLM

    from hat_core.basemodel import load_tokenizer

    model = AutoModelForCausalLM.from_pretrained(SHIPPED)
    tokenizer = load_tokenizer(SHIPPED)
    text = tokenizer.apply_chat_template([{"role": "user", "content": "多少钱"}],
                                         add_generation_prompt=True, tokenize=False)
    assert "多少钱" in text and len(tokenizer(text)["input_ids"]) > 2
    assert model.config.vocab_size >= len(tokenizer)
    assert sum(p.numel() for p in model.parameters()) == read_manifest(SHIPPED)["parameters"]
