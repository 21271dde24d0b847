"""LLM layer: generation backends (local transformers, OpenAI-compatible endpoints), a SQLite
response cache and tolerant JSON parsing of completions."""
