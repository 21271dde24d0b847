"""``negcse gcse-synthesize``: GCSE's extraction -> KG -> synthesis -> parsing on a text file."""

from __future__ import annotations

import argparse
import contextlib
import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from negcse.commands.negate import InputError, read_sentences
from negcse.gcse.pipeline import run_pipeline
from negcse.gcse.prompts import load_prompts
from negcse.gcse.released import check_bugs
from negcse.generators.settings import add_options, from_args
from negcse.generators.specs.gcse import STAGE1, GcseSynthesis
from negcse.io_utils import write_json, write_jsonl
from negcse.llm.backend import GenerationSettings, LLMError
from negcse.llm.cache import CachedLLM, CacheStats
from negcse.llm.openai_backend import OpenAIBackend, OpenAISettings
from negcse.llm.pinned import PINNED
from negcse.llm.transformers_backend import TransformersBackend
from negcse.llm.vllm_backend import VLLMBackend
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.evaluation import embedder
    from negcse.runtime import device
else:  # torch and transformers: loaded for a neighbour model, not for --help
    embedder = LazyModule("negcse.evaluation.embedder")
    device = LazyModule("negcse.runtime.device")

NAME = "gcse-synthesize"
HELP = "GCSE data synthesis with an LLM: extract knowledge, build the entity KG, write candidates"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--input", required=True, type=Path, help="UTF-8 text, one source sentence per line"
    )
    p.add_argument(
        "--out",
        "--output",
        dest="output",
        required=True,
        type=Path,
        help="candidates, JSON lines (written atomically)",
    )
    p.add_argument(
        "--report", required=True, type=Path, help="parse report, JSON (written atomically)"
    )
    p.add_argument("--cache", type=Path, default=None, help="SQLite response cache (default: none)")
    # generators.gcse's synthesis settings (src/negcse/generators/specs/gcse.py): --mode, ...,
    # --model, --released-bug, --base-url, ...; defaults the config's, but --max-sources (all
    # lines) and --extension (off unless given)
    add_options(p.add_argument_group("settings (generators.gcse)"), GcseSynthesis)
    g = p.add_argument_group("run")
    g.add_argument("--gguf-file", default=None, help="transformers: GGUF file inside --model")
    g.add_argument(
        "--device",
        default=None,
        help="transformers: auto, cpu or cuda (default: $NEGCSE_DEVICE, else auto)",
    )
    g.add_argument("--threads", type=int, default=None, help="transformers: torch CPU threads")
    g.add_argument(
        "--max-retries", type=int, default=5, help="openai: retries on 429 / 5xx / timeouts"
    )
    g.add_argument("--timeout", type=float, default=120.0, help="openai: seconds per request")


def make_backend(args: argparse.Namespace):  # -> Backend
    """The backend the options ask for (raises ValueError or LLMError with the setting named)."""
    if args.backend == "openai":
        settings = OpenAISettings(
            base_url=args.base_url,
            model=args.model,
            api_key_env=args.api_key_env or None,
            max_in_flight=args.concurrency,
            max_retries=args.max_retries,
            timeout_s=args.timeout,
            request_budget=args.request_budget,
            setting_prefix="-",
        )
        return OpenAIBackend(settings)
    if args.backend == "vllm":  # its own environment (envs/vllm.yaml), a CUDA GPU
        return VLLMBackend.load(args.model)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    if args.model in PINNED:
        return TransformersBackend.from_pinned(args.model, args.batch_size, args.device)
    return TransformersBackend(Path(args.model), args.gguf_file, args.batch_size, args.device)


def run(args: argparse.Namespace) -> int:
    try:
        s = from_args(args, GcseSynthesis)  # bounds and cross-field checks
        sentences = read_sentences(args.input)[: s.max_sources]
        synthesis = GenerationSettings(
            s.max_new_tokens, s.temperature, s.top_p, True, s.synthesis_seed
        )
        bugs = check_bugs(s.released_bugs)
        # released steps 1-2 ask for greedy decoding, which vLLM ignores (bug 8)
        sampled = "sampled_extraction" in bugs
        extraction = GenerationSettings(
            s.max_new_tokens, s.temperature, s.top_p, sampled, s.synthesis_seed
        )
        # no prompts (Table 4's "w randomly"): eq. 10-11 for every source, no LLM loaded
        backend = make_backend(args) if s.positives + s.negatives else None
        encoder = None
        if s.neighbour_model == STAGE1 and s.mode == "released":
            raise ValueError(
                "--neighbour-model stage1 names the workflow's stage-1 run: give its model folder"
            )
        if s.neighbour_model and s.mode == "released" and backend is not None:
            # the released SentenceTransformer(path) of a plain model: mean pooling, fp32, 512
            frozen = embedder.Embedder.load(
                s.neighbour_model, "mean", device=device.resolve_device(args.device)
            )
            encoder = partial(frozen.encode, batch_size=1024)
    except (InputError, ValueError, LLMError, OSError) as err:  # OSError: model not found
        logger.error("%s", err)
        return 2
    try:
        with contextlib.ExitStack() as stack:
            llm = None if backend is None else stack.enter_context(CachedLLM(backend, args.cache))
            result = run_pipeline(
                sentences,
                llm,
                load_prompts(),
                s.mode,
                s.positives,
                s.negatives,
                s.synthesis_seed,
                s.max_chars,
                prefer_related=s.prefer_related,
                encoder=encoder,
                synthesis_settings=synthesis,
                extraction_settings=extraction,
                released_bugs=bugs,
                extension=s.extension,
            )
            stats = CacheStats() if llm is None else llm.stats
    except (LLMError, ValueError) as err:
        logger.error("%s", err)
        return 1
    write_jsonl(args.output, (source.to_json() for source in result.sources))
    fallbacks = sum(c.fallback is not None for s in result.sources for c in s.candidates)
    write_json(
        args.report,
        {
            "input": str(args.input),
            "backend": None if backend is None else backend.name,
            "llm": None if backend is None else backend.identity(),
            "mode": s.mode,
            "released_bugs": sorted(bugs),
            "neighbour_model": s.neighbour_model if encoder is not None else None,
            "extension_sentences": sum(s.extension_of is not None for s in result.sources),
            "sources": len(sentences),
            "skipped": {
                k: sum(s.skipped == k for s in result.sources) for k in ("empty", "too long")
            },
            "parse": result.report.as_dict(),
            "legend": "per prompt: parsed (strict JSON), repaired (json_repair or a plain one-line "
            "answer), failed (nothing usable): a failed synthesis completion fell back to eq. "
            "10-11 (anchor as positive, another source as negative), a failed extraction gives "
            "no knowledge for that sentence; cache.failed: answers not cached, by kind (empty, "
            "too long for max_new_tokens, holds the API key, unparsable), asked again next run",
            "totals": result.report.totals(),
            "fell_back": fallbacks,
            "plan_notes": dict(result.notes),
            "kg": result.kg.summary(),
            "cache": {
                "hits": stats.hits,
                "misses": stats.misses,
                "calls": stats.calls,
                "failed": dict(sorted(stats.failed.items())),
            },
        },
    )
    totals = result.report.totals()
    logger.info(
        "%d sources: %d completions parsed, %d repaired, %d failed (%d candidates fell back) -> %s, %s",
        len(sentences),
        totals["parsed"],
        totals["repaired"],
        totals["failed"],
        fallbacks,
        args.output,
        args.report,
    )
    return 0
