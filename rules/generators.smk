# Generators: one rule per step of every registered generator spec, named after the step. Each
# spec (src/negcse/generators/specs/<name>.py) declares its settings and steps; nothing here is
# specific to a generator (src/negcse/generators/steps.py binds a step to this config).
from negcse.generators.steps import StepContext, all_steps
from negcse.workflow.guide_config import guide_models


def _guide_run(method, name, backbone, seed):
    """A method's guide `name` as (--model argument, the run folder trained here or None)."""
    return (
        guide_models(config, method, backbone, seed).get(name),
        guide_outputs(config, method, backbone, seed).get(name),
    )


GENERATORS = StepContext(
    config,
    column_readers(config),
    corpus_of=lambda method: method_corpus(config, method),
    guide=_guide_run,
)

for _step in all_steps():

    rule:
        name:
            _step.name
        input:
            unpack(_step.rule_inputs(GENERATORS)),
        output:
            **_step.outputs,
        log:
            _step.log,
        benchmark:
            _step.benchmark
        wildcard_constraints:
            **_step.wildcards(GENERATORS),
        conda:
            f"../envs/{_step.conda}.yaml"
        threads: _step.threads
        resources:
            **_step.rule_resources(GENERATORS),
        params:
            **_step.rule_params(GENERATORS),
        shell:
            _step.shell()
