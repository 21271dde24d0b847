"""negcse: reproducibility suite for unsupervised sentence embeddings with synthetic negatives."""

__version__ = "0.1.0"
