# The generators' settings, variants and input/params functions, read by the rule files of
# rules/generators/ (each generator's facts: its spec in src/negcse/generators/specs/).
from negcse.generators.specs.una import (
    TFIDF_TABLE,
    TFIDF_TABLE_WITH_PARAPHRASES,
    tfidf_table,
)
from negcse.generators.specs.negation import VARIANTS as NEGATION_VARIANTS
from negcse.generators.specs.negation import variant_args as negation_variant_args
from negcse.generators.specs.osscse_paraphrase import (
    BACKTRANSLATION,
    SURFACE_EDITS,
    candidates as osscse_candidates,
)
from negcse.generators.specs.san import LEXICON, lexicon_id, lexicon_path
from negcse.generators.specs.gcse import (
    CACHE as GCSE_CACHE,
    CANDIDATES as GCSE_CANDIDATES,
    DENOISE_REPORT as GCSE_DENOISE_REPORT,
    SYNTHESIS_REPORT as GCSE_SYNTHESIS_REPORT,
    denoise_args as gcse_denoise_args,
    stage1_models as gcse_stage1_models,
    synthesis_args as gcse_synthesis_args,
    synthesis_id as gcse_synthesis_id,
    triplets_of as gcse_triplets_of,
)


def generator_settings(name):
    """A generator's settings (defaults < generators.<name>)."""
    return generators.settings(config, name)


def generator_variants(name):
    """Variant name -> settings over every configured method reading the generator's columns."""
    return generators.variants(config, name)


def generator_output(name):
    """The output pattern of a generator's column files."""
    return generators.spec(name).output


def variant_args(name, variants):
    """Params function of a generator's job: the command-line options of the settings of its
    {variant} wildcard (of the generator's only settings if it has no variants)."""
    gen = generators.spec(name)

    def of(wildcards):
        if gen.variant is None:
            return gen.args(generators.settings(config, name))
        return gen.args(variants[wildcards.variant])

    return of


def command_generators():
    """The generators with no rule file of their own (a spec with a `command`)."""
    return [g for g in generators.specs().values() if g.command is not None]


def generator_log(gen, folder):
    """The log (folder logs) or benchmark (benchmarks/rules) file beside a generator's output."""
    stem = gen.output.removeprefix("results/").rsplit(".", 1)[0]
    ext = "log" if folder == "logs" else "tsv"
    return f"{folder}/{stem}.{ext}"


PARAPHRASE = generator_settings("paraphrase")


UNA_VARIANTS = generator_variants("una")


def una_tfidf_input(wildcards):
    """The TF-IDF table a negatives variant samples from."""
    settings = UNA_VARIANTS[wildcards.variant]
    return tfidf_table(wildcards.corpus, settings["with_paraphrases"])


NEGATION = generator_settings("negation")


def negation_args(wildcards):
    return negation_variant_args(wildcards.variant)


OSSCSE_PARAPHRASE = generator_settings("osscse_paraphrase")


def paraphrase_candidates(wildcards):
    """The candidate files of the configured source, name -> path."""
    return osscse_candidates(OSSCSE_PARAPHRASE, wildcards.corpus)


def translation_args(wildcards):
    """``--forward A --backward B`` of a pivot."""
    return "--forward {} --backward {}".format(
        *map(shlex.quote, OSSCSE_PARAPHRASE["pivots"][wildcards.pivot])
    )


def candidate_args(wildcards, input):
    """``--candidates name=file ...`` for select-paraphrases (the rule's named inputs)."""
    names = input.keys()  # a Snakemake Namedlist iterates over its files, not its names
    return quoted(f"{name}={input[name]}" for name in names if name != "corpus")


SAN_VARIANTS = generator_variants("san")
# lexicon id -> (MLM name, lexicon source), over the variants
SAN_MLMS = {
    lexicon_id(s["mlm"], s["lexicon"]): (s["mlm"], s["lexicon"])
    for s in SAN_VARIANTS.values()
}


def san_lexicon_input(wildcards):
    settings = SAN_VARIANTS[wildcards.variant]
    return lexicon_path(settings["mlm"], settings["lexicon"])


def lexicon_mlm_param(wildcards):
    """The ``negcse pos-lexicon`` options of a lexicon id: MLM and source."""
    mlm, source = SAN_MLMS[wildcards.mlm]
    return f"--mlm {shlex.quote(mlm)} --source {shlex.quote(source)}"


# GCSE: "<triplets id>/<column>" variants -> settings; one synthesis per candidates id.
GCSE_TRIPLETS = {gcse_triplets_of(v): s for v, s in generator_variants("gcse").items()}
GCSE_SYNTHESES = {gcse_synthesis_id(s): s for s in GCSE_TRIPLETS.values()}


def gcse_synthesis_settings(wildcards):
    return gcse_synthesis_args(GCSE_SYNTHESES[wildcards.synthesis])


def gcse_synthesis_gpu(wildcards):
    """A local LLM takes a GPU slot; an endpoint, or no prompt ("w randomly"), does not."""
    s = GCSE_SYNTHESES[wildcards.synthesis]
    return int(s["backend"] == "transformers" and s["positives"] + s["negatives"] > 0)


def gcse_synthesis_prefix(wildcards):
    """`python -m negcse.workflow.gpu_slots --` for a local LLM (one GPU of its own), else nothing."""
    return (
        "python -m negcse.workflow.gpu_slots --"
        if gcse_synthesis_gpu(wildcards)
        else ""
    )


def gcse_candidates(wildcards):
    settings = GCSE_TRIPLETS[wildcards.triplets]
    return GCSE_CANDIDATES.format(
        corpus=wildcards.corpus, synthesis=gcse_synthesis_id(settings)
    )


def _gcse_stage1(wildcards):
    try:
        return gcse_stage1_models(
            config,
            wildcards.triplets,
            wildcards.backbone,
            wildcards.seed,
            wildcards.corpus,
        )
    except ValueError as err:
        raise WorkflowError(str(err)) from None


def gcse_denoise_inputs(wildcards):
    """The candidates and the stage-1 run (trained first: SimCSE's train rule)."""
    inputs = {"candidates": gcse_candidates(wildcards)}
    run = _gcse_stage1(wildcards)[1]
    if run is not None:
        inputs["stage1"] = run
    return inputs


def gcse_denoise_settings(wildcards):
    """``--model STAGE1`` and the denoising options of the variant."""
    model = shlex.quote(_gcse_stage1(wildcards)[0])
    options = gcse_denoise_args(GCSE_TRIPLETS[wildcards.triplets])
    return f"--model {model} {options}"
