"""Where the data and models come from: the mirror/cache/network resolver, downloads, the corpus and the evaluation datasets."""
