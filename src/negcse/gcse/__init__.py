"""GCSE (Gaussian-decayed contrastive sentence embedding): KG-guided LLM synthesis pieces,
denoising with a frozen evaluation model, and the Gaussian-decayed loss (eq. 12-13)."""
