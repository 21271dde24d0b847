"""What a local backend sends its model: the chat-templated prompt and the stop tokens (the
transformers and vLLM backends share them, so both ask the same text)."""

from __future__ import annotations

from typing import Any

# end-of-turn tokens of common chat templates, used as extra stop tokens when present
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>")


def chat_text(tokenizer: Any, prompt: str) -> str:
    """``prompt`` as one user turn of the tokenizer's chat template, the assistant's turn open."""
    messages = [{"role": "user", "content": prompt}]
    return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))


def stop_token_ids(tokenizer: Any) -> list[int]:
    """The end-of-sequence id and the end-of-turn tokens the vocabulary has."""
    vocab = tokenizer.get_vocab()
    stops = {t for t in (tokenizer.eos_token_id,) if t is not None}
    stops.update(vocab[tok] for tok in END_OF_TURN if tok in vocab)
    return sorted(stops)
