"""One module per generator, each registering its ``GeneratorSpec`` (negcse.generators.registry).
Imported at workflow parse time: no torch, spaCy or numpy here."""
