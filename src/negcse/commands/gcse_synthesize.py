"""``negcse gcse-synthesize``: GCSE's extraction -> KG -> synthesis -> parsing on a text file."""

from __future__ import annotations

import argparse
import contextlib
import logging
from pathlib import Path

from negcse.commands.negate import InputError, read_sentences
from negcse.gcse.neighbours import mean_pooling_encoder
from negcse.gcse.pipeline import run_pipeline
from negcse.gcse.prompts import load_prompts
from negcse.gcse.released import check_bugs
from negcse.io_utils import write_json, write_jsonl
from negcse.llm.backend import GenerationSettings, LLMError
from negcse.llm.cache import CachedLLM, CacheStats
from negcse.llm.openai_backend import OpenAIBackend, OpenAISettings
from negcse.llm.pinned import PINNED
from negcse.llm.transformers_backend import TransformersBackend

NAME = "gcse-synthesize"
HELP = "GCSE data synthesis with an LLM: extract knowledge, build the entity KG, write candidates"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--input", required=True, type=Path, help="UTF-8 text, one source sentence per line"
    )
    p.add_argument(
        "--output", required=True, type=Path, help="candidates, JSON lines (written atomically)"
    )
    p.add_argument(
        "--report", required=True, type=Path, help="parse report, JSON (written atomically)"
    )
    p.add_argument("--cache", type=Path, default=None, help="SQLite response cache (default: none)")
    p.add_argument(
        "--mode",
        choices=("paper", "released"),
        default="released",
        help="released: the released pipeline's prompts and shares (default); paper: the "
        "paper's Figure 8-9 prompts",
    )
    p.add_argument(
        "--extension",
        action="store_true",
        help="also make extension sentences (Rewriting Prompt 4, released steps 5-6) and "
        "synthesize for them as extra sources",
    )
    p.add_argument(
        "--released-bug",
        action="append",
        default=[],
        metavar="NAME",
        help="reproduce a released bug (repeatable): subject_key, identity_revision, "
        "keep_unparsed, sampled_extraction, extension_quirks (negcse.gcse.released)",
    )
    p.add_argument(
        "--prefer-related",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="paper mode: an entity revision's replacement comes from T_p (eq. 7, same type and "
        "a shared soft-edge neighbour) when it has one, else T_r (default); "
        "--no-prefer-related: uniformly from T(t) = T_r U T_p (eq. 8 as a set, = T_r)",
    )
    p.add_argument(
        "--neighbour-model",
        default=None,
        metavar="MODEL",
        help="released mode: a frozen encoder (folder or name; mean pooling, as the released "
        "SentenceTransformer loader) whose 10th / 5th nearest entity / main part is a positive "
        "revision's replacement, as the released KG's 'related' (default: none, the KG's own "
        "related replacement)",
    )
    p.add_argument(
        "--positives", type=int, default=1, help="positive prompts per source (default 1)"
    )
    p.add_argument(
        "--negatives", type=int, default=1, help="negative prompts per source (default 1)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-chars", type=int, default=2000, help="longer source lines are skipped")
    p.add_argument(
        "--max-sources", type=int, default=None, help="only the first N lines (default: all)"
    )
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--temperature", type=float, default=0.6)
    p.add_argument("--top-p", type=float, default=0.95)
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=("transformers", "openai"), default="transformers")
    g.add_argument(
        "--model",
        default="smollm2-135m-instruct-q4_1",
        help="transformers: a pinned model name, a model folder, or a folder with "
        "--gguf-file; openai: the served model name",
    )
    g.add_argument("--gguf-file", default=None, help="transformers: GGUF file inside --model")
    g.add_argument(
        "--batch-size", type=int, default=8, help="transformers: prompts per generate call"
    )
    g.add_argument(
        "--device", default=None, help="transformers: cpu or cuda (default: cuda if present)"
    )
    g.add_argument("--threads", type=int, default=None, help="transformers: torch CPU threads")
    g.add_argument(
        "--base-url", default=None, help="openai: endpoint, e.g. http://127.0.0.1:8000/v1"
    )
    g.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="openai: NAME of the variable that holds the key ('' for none)",
    )
    g.add_argument("--max-in-flight", type=int, default=8, help="openai: requests at once")
    g.add_argument(
        "--max-retries", type=int, default=5, help="openai: retries on 429 / 5xx / timeouts"
    )
    g.add_argument("--timeout", type=float, default=120.0, help="openai: seconds per request")
    g.add_argument(
        "--request-budget", type=int, default=None, help="openai: most requests this run"
    )


def make_backend(args: argparse.Namespace):  # -> Backend
    """The backend the options ask for (raises ValueError or LLMError with the setting named)."""
    if args.backend == "openai":
        if not args.base_url:
            raise ValueError("--base-url is required with --backend openai")
        settings = OpenAISettings(
            base_url=args.base_url,
            model=args.model,
            api_key_env=args.api_key_env or None,
            max_in_flight=args.max_in_flight,
            max_retries=args.max_retries,
            timeout_s=args.timeout,
            request_budget=args.request_budget,
            setting_prefix="-",
        )
        return OpenAIBackend(settings)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    if args.model in PINNED:
        return TransformersBackend.from_pinned(args.model, args.batch_size, args.device)
    return TransformersBackend(Path(args.model), args.gguf_file, args.batch_size, args.device)


def run(args: argparse.Namespace) -> int:
    try:
        sentences = read_sentences(args.input)[: args.max_sources]
        synthesis = GenerationSettings(
            args.max_new_tokens, args.temperature, args.top_p, True, args.seed
        )
        bugs = check_bugs(args.released_bug)
        # released steps 1-2 ask for greedy decoding, which vLLM ignores (bug 8)
        sampled = "sampled_extraction" in bugs
        extraction = GenerationSettings(
            args.max_new_tokens, args.temperature, args.top_p, sampled, args.seed
        )
        # no prompts (Table 4's "w randomly"): eq. 10-11 for every source, no LLM loaded
        backend = make_backend(args) if args.positives + args.negatives else None
        encoder = None
        if args.neighbour_model and args.mode == "released" and backend is not None:
            encoder = mean_pooling_encoder(args.neighbour_model, args.device)
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
                args.mode,
                args.positives,
                args.negatives,
                args.seed,
                args.max_chars,
                prefer_related=args.prefer_related,
                encoder=encoder,
                synthesis_settings=synthesis,
                extraction_settings=extraction,
                released_bugs=bugs,
                extension=args.extension,
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
            "mode": args.mode,
            "released_bugs": sorted(bugs),
            "neighbour_model": args.neighbour_model if encoder is not None else None,
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
