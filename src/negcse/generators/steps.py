"""A generator's steps: each one job pattern that the workflow turns into a Snakemake rule.

A spec lists its steps (``GeneratorSpec.steps``), the last of which writes the columns'
files (``spec.output``). ``rules/generators.smk`` makes one rule per step of every registered
spec, named after the step, from ``rule_*`` below: nothing in the rule files is specific to a
generator. A step's functions receive the :class:`StepContext` (the config and what the
workflow tells the generators about its methods) and the job's wildcards (a mapping).

``command`` is a shell template: ``{input.<name>:q}``, ``{output.<name>:q}``,
``{wildcards.<name>:q}``, ``{threads}`` and ``{params.<name>}``, each param a function returning
text already shell-quoted (``negcse.generators.settings.options`` quotes every value); the rule
appends `` 2> {log:q}``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from negcse.generators import registry
from negcse.generators.registry import GeneratorSpec, Settings

Wildcards = Mapping[str, Any]
CORPUS = "results/data/corpus/{corpus}.txt"  # the rule corpus's output
#: the prefix of a command that takes one GPU slot (negcse.workflow.gpu_slots)
GPU_SLOT = "python -m negcse.workflow.gpu_slots -- "


@dataclass(frozen=True)
class StepContext:
    """What a step reads of the workflow: the config, the columns each configured method
    reads (``readers``: method -> columns), and three functions the workflow provides: a
    method's corpus, a method's guide run as (``--model`` argument, the run folder this
    workflow trains or None) for a guide name, backbone and seed, and a method's seeds on a
    backbone."""

    config: Mapping[str, Any]
    readers: Mapping[str, Iterable[str]]
    corpus_of: Callable[[str], str] = lambda method: ""
    guide: Callable[[str, str, str, str], tuple[str | None, str | None]] = (
        lambda method, name, backbone, seed: (None, None)
    )
    #: the seeds a method runs with on a backbone (method, backbone) -> seeds
    seeds: Callable[[str, str], Sequence[int]] = lambda method, backbone: ()

    _memo: dict[tuple[str, ...], Any] = field(default_factory=dict, compare=False, repr=False)

    def settings(self, name: str, method: str | None = None) -> Settings:
        """``name``'s settings (a method's, if given); computed once per context."""
        key = ("settings", name, method or "")
        if key not in self._memo:
            self._memo[key] = registry.settings(self.config, name, method)
        return self._memo[key]  # type: ignore[no-any-return]

    def variants(self, name: str) -> dict[str, Settings]:
        """Variant name -> settings of ``name`` over the configured methods (computed once)."""
        key = ("variants", name)
        if key not in self._memo:
            self._memo[key] = registry.variants(self.config, name, self.readers)
        return self._memo[key]  # type: ignore[no-any-return]

    def mirror_arg(self) -> str:
        """``--mirror DIR`` when the config names a mirror (else $NEGCSE_MIRROR applies)."""
        mirror = self.config.get("mirror")
        return f"--mirror {shlex.quote(mirror)}" if mirror else ""


def corpus_input(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    return {"corpus": CORPUS.format(corpus=wc["corpus"])}


def alternation(values: Iterable[Any]) -> str:
    """A wildcard constraint matching exactly ``values`` (none: nothing but the empty name)."""
    return "|".join(re.escape(str(v)) for v in values)


@dataclass(frozen=True)
class Step:
    """One job pattern of a generator. ``inputs``: named input files of a job (None: no
    input); ``params``: name -> function of the job; ``wildcards``: name -> constraint (a
    function of the context: the configured variants); ``resources``: values or functions
    of the job (gpu slots, mem_mb, runtime); ``conda``: the environment envs/<conda>.yaml, or a
    function of the job naming it (GCSE's synthesis: vLLM's own environment)."""

    name: str
    outputs: Mapping[str, str]
    command: str
    log: str
    benchmark: str
    inputs: Callable[[StepContext, Wildcards], Mapping[str, str]] | None = corpus_input
    params: Mapping[str, Callable[[StepContext, Wildcards], Any]] = field(default_factory=dict)
    wildcards: Callable[[StepContext], Mapping[str, str]] = lambda ctx: {}
    threads: int = 1
    resources: Mapping[str, int | Callable[[StepContext, Wildcards], int]] = field(
        default_factory=dict
    )
    conda: str | Callable[[StepContext, Wildcards], str] = "negcse"

    # The rule's directives, bound to a context (rules/generators.smk).
    def rule_inputs(self, ctx: StepContext) -> Callable[[Wildcards], Mapping[str, str]]:
        inputs = self.inputs

        def of(wildcards: Wildcards) -> Mapping[str, str]:
            return {} if inputs is None else inputs(ctx, wildcards)

        return of

    def rule_params(self, ctx: StepContext) -> dict[str, Callable[[Wildcards], Any]]:
        return {name: _bind(ctx, fn) for name, fn in self.params.items()}

    def rule_conda(self, ctx: StepContext) -> str | Callable[[Wildcards], str]:
        """The rule's ``conda`` directive: the env file relative to rules/ (a function where
        the job chooses)."""
        conda = self.conda
        if isinstance(conda, str):
            return f"../envs/{conda}.yaml"
        return lambda wildcards: f"../envs/{conda(ctx, wildcards)}.yaml"

    def rule_resources(self, ctx: StepContext) -> dict[str, Any]:
        return {k: v if isinstance(v, int) else _bind(ctx, v) for k, v in self.resources.items()}

    def shell(self) -> str:
        return self.command + " 2> {log:q}"


def _bind(
    ctx: StepContext, fn: Callable[[StepContext, Wildcards], Any]
) -> Callable[[Wildcards], Any]:
    def of(wildcards: Wildcards) -> Any:
        return fn(ctx, wildcards)

    return of


def job_shell(scope: Mapping[str, Any], step: Step) -> str:
    """A generator rule's shell command: ``step``'s while Snakemake reads the rule (``scope``
    is the rule file's, no ``rule`` in it), the job's rule's when it runs a job (``scope`` is
    the job's run function's, whose ``rule`` names it): Snakemake evaluates the expression
    again then, when a loop variable holds the last step (snakemake#2832)."""
    name = scope.get("rule")
    if not isinstance(name, str):
        return step.shell()
    return next(s for s in all_steps() if s.name == name).shell()


def all_steps() -> list[Step]:
    """Every registered generator's steps, in registration order; a name twice is an error."""
    found: dict[str, Step] = {}
    for gen in registry.specs().values():
        for step in gen.steps:
            if not isinstance(step, Step):
                raise TypeError(f"generator {gen.name}: {step!r} is not a Step")
            if step.name in found:
                raise ValueError(f"generator {gen.name}: step '{step.name}' defined twice")
            found[step.name] = step
    return list(found.values())


def column_output(
    config: Mapping[str, Any],
    column: str,
    method: str,
    seed: int | str,
    corpus: str,
    backbone: str | None = None,
) -> tuple[str, str]:
    """The file of ``column`` that a train job of ``method``, ``seed`` (and ``backbone``, for
    a generator whose output depends on it) reads, and the step (rule) that writes it."""
    gen: GeneratorSpec = registry.producer(column)
    path = registry.column_file(config, column, method, seed, corpus, backbone)
    return path, gen.steps[-1].name if gen.steps else ""
