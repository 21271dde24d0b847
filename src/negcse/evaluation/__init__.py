"""Evaluations of frozen models (STS, transfer, OssCSE splits and probe, MTEB, analyses), one
module each, registered by name (:mod:`negcse.evaluation.registry`) and run together by
``negcse evaluate``: one model load, one sentence cache."""
