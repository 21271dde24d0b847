"""Text for readers: LaTeX and Markdown escaping, the one names pattern, display names and
families, and word-level match error rate."""
