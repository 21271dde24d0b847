"""The papers' analyses of a trained encoder, one module each.

- :mod:`~negcse.analysis.pairs`: STS sentences, random partners, encoding once per model.
- :mod:`~negcse.analysis.overlap`: lexical overlap and the SAN hard-positive filter.
- :mod:`~negcse.analysis.rank_errors`: SNCSE's rank-based error analysis (Table 4).
- :mod:`~negcse.analysis.normalization`: GCSE's median-based score normalization (Appendix J).
- :mod:`~negcse.analysis.curves`: STS-B dev training curves from ``train_log.json``.
- :mod:`~negcse.analysis.run`: everything for one model, as one JSON-able dict.
- :mod:`~negcse.analysis.groups`: the grid's methods in groups of at most 8 with their baseline.
- :mod:`~negcse.analysis.figures` and :mod:`~negcse.analysis.latex`: figures and tables.
- :mod:`~negcse.analysis.bootstrap`: the paired bootstrap of the STS average (the verdicts).
- :mod:`~negcse.analysis.verdict_rules`: the verdicts' interval over seeds, the rule, its families and power.
"""
