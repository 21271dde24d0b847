"""Training: the shared trainer, token batching, the trainable sentence encoder, aligned training columns, frozen guides and RLRD's teacher-weighting agent."""
