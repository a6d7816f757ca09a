"""The tokenizer (looplab.latency.tokens): tiktoken from a cache seeded with bpe-openai's
shipped vocabulary, counting exactly what bpe-openai counts, with nothing downloaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from looplab.latency.tokens import _load_bpe_openai, _load_tiktoken

REPO = Path(__file__).resolve().parents[2]
SAMPLES = [
    "Hello world! It's a test.",
    "def f(x):\n    return x**2  # 123456\n",
    "日本語のテキスト ünïcödé <|endoftext|> tabs\t\tand  spaces",
    (REPO / "README.md").read_text(encoding="utf-8")[:20_000],
    (REPO / "looplab" / "config.py").read_text(encoding="utf-8"),
]


def test_tiktoken_loads_from_the_seeded_cache_and_counts_as_bpe_openai(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no TIKTOKEN_CACHE_DIR, the first load seeds `<cache>/tiktoken` (the file whose
    SHA-256 tiktoken checks), names itself tiktoken, leaves the environment as it was, and
    every sample counts the same as with bpe-openai."""
    pytest.importorskip("tiktoken")
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    fast, shipped = _load_tiktoken(), _load_bpe_openai()
    assert fast is not None and shipped is not None
    assert fast.name == "o200k_base (tiktoken)"
    assert [p.name for p in (tmp_path / "tiktoken").iterdir()] == [
        "fb374d419588a4632f3f557e76b4b70aebbca790"  # sha1 of the o200k URL, tiktoken's key
    ]
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
    for text in SAMPLES:
        assert fast.count(text) == shipped.count(text), text[:40]
