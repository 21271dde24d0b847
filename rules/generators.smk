# Generators: one rule per step of every registered generator spec, named after the step. Each
# spec (src/negcse/generators/specs/<name>.py) declares its settings and steps; nothing here is
# specific to a generator (src/negcse/generators/steps.py binds a step to this config).
from negcse.generators.steps import all_steps
from negcse.workflow.guide_config import generator_context

GENERATORS = generator_context(config)


# A function, not a loop body: Snakemake evaluates a rule's shell expression again when the job
# runs, so a loop variable would give every rule the last step's command (snakemake#2832).
# snakefmt cannot parse a rule inside a function, hence fmt: off.
# fmt: off
def generator_rule(step):
    rule:
        name:
            step.name
        input:
            unpack(step.rule_inputs(GENERATORS)),
        output:
            **step.outputs,
        log:
            step.log,
        benchmark:
            step.benchmark
        wildcard_constraints:
            **step.wildcards(GENERATORS),
        conda:
            f"../envs/{step.conda}.yaml"
        threads: step.threads
        resources:
            **step.rule_resources(GENERATORS),
        params:
            **step.rule_params(GENERATORS),
        shell:
            step.shell()


# fmt: on
for _step in all_steps():
    generator_rule(_step)
