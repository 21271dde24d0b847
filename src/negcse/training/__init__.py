"""Training: the shared trainer, token batching, the trainable sentence encoder, aligned training columns and frozen guides."""
