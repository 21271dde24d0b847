# Generators: one rule per step of every registered generator spec, named after the step. Each
# spec (src/negcse/generators/specs/<name>.py) declares its settings and steps; nothing here is
# specific to a generator (src/negcse/generators/steps.py binds a step to this config).
from negcse.generators.steps import all_steps, job_shell
from negcse.workflow.guide_config import generator_context

GENERATORS = generator_context(config)

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
            _step.rule_conda(GENERATORS)
        threads: _step.threads
        resources:
            **_step.rule_resources(GENERATORS),
        params:
            **_step.rule_params(GENERATORS),
        shell:
            # evaluated again when a job runs: then locals() names the job's rule
            job_shell(locals(), _step)
