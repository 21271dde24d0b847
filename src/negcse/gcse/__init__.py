"""GCSE (Gaussian-decayed contrastive sentence embedding): KG-guided LLM synthesis pieces and
denoising with a frozen evaluation model (its loss, eq. 12-13: ``negcse.losses.gcse``)."""
