# Evaluation of every trained model, each untrained backbone (a baseline row) and each released
# checkpoint (params.yaml `released`, with the pooler its authors' evaluation used): one rule
# definition, one rule per kind of model (evaluate_model, evaluate_untrained,
# evaluate_released). Each job runs every evaluation that declares a workflow job
# (src/negcse/evaluation/: STS, the SentEval transfer tasks, OssCSE's Cont./Oppn. splits and
# probe and, for trained models, the papers' analyses) as one `negcse evaluate --only ...`:
# torch is imported once, the model loaded once, and each STS sentence encoded once (each
# evaluation alone costs ~5 s of imports plus its own encoding pass; benchmarks/base.md).
for _subject in SUBJECTS:

    rule:
        name:
            _subject.rule
        input:
            **PLAN.evaluation_inputs(_subject),
        output:
            **evaluation_outputs(_subject),
        log:
            _subject.log,
        benchmark:
            _subject.benchmark
        wildcard_constraints:
            released=PLAN.released_pattern(),
        conda:
            "../envs/negcse.yaml"
        threads: 2
        resources:
            gpu=1,
            mem_mb=32000,
            runtime=60,
        params:
            args=evaluation_args,
        shell:
            "python -m negcse.workflow.gpu_slots -- python -m negcse evaluate {params.args} 2> {log:q}"
