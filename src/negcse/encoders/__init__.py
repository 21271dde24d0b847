"""How a sentence becomes a vector: poolers, the pretrained transformer they read, prompt
templates at token level, the sentence-transformers modules saved models load, and sentence
vectors as numpy arrays."""
