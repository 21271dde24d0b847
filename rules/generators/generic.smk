# Generators with no rule file of their own: one rule per spec that gives a `command` (see
# src/negcse/generators/registry.py), named after the generator. Its log and benchmark lie
# beside the output's path under logs/ and benchmarks/rules/.
for _gen in command_generators():

    rule:
        name:
            _gen.name
        input:
            corpus="results/data/corpus/{corpus}.txt",
        output:
            _gen.output,
        log:
            generator_log(_gen, "logs"),
        benchmark:
            generator_log(_gen, "benchmarks/rules")
        wildcard_constraints:
            variant=_alternation(generator_variants(_gen.name)) or "[^/]+",
        conda:
            f"../../envs/{_gen.conda}.yaml"
        threads: _gen.threads
        resources:
            **_gen.resources,
        params:
            settings=variant_args(_gen.name, generator_variants(_gen.name)),
        shell:
            _gen.command + " 2> {log:q}"
