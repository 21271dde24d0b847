"""The vLLM backend's requests and the parsing of its outputs, against a stand-in engine.

vLLM needs a CUDA GPU and is not installed in the test environment, so ``StandInEngine`` plays
``vllm.LLM`` (``get_tokenizer``, ``generate``) and ``StandInParams`` ``vllm.SamplingParams``;
they record what the backend asks and answer with vLLM's ``RequestOutput`` shape (``prompt``,
``outputs[0].text``). The tokenizer is a stand-in too (a fixed chat template), so the prompts
are checked against a hand-written expectation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from negcse.llm.backend import BadAnswer, GenerationSettings, LLMError
from negcse.llm.cache import CachedLLM
from negcse.llm.vllm_backend import VLLMBackend


class StandInTokenizer:
    chat_template = "<|user|>{content}<|end|><|assistant|>"
    eos_token_id = 2

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):  # type: ignore[no-untyped-def]
        assert tokenize is False and add_generation_prompt is True
        assert [m["role"] for m in messages] == ["user"]
        return self.chat_template.format(content=messages[0]["content"])

    def get_vocab(self) -> dict[str, int]:
        return {"<|end|>": 7, "<|im_end|>": 9, "hello": 11}


@dataclass
class StandInParams:
    kwargs: dict[str, Any]


def params(**kwargs: Any) -> StandInParams:
    return StandInParams(kwargs)


@dataclass
class StandInEngine:
    """``vllm.LLM``'s offline interface: answers ``answers[text]`` (default: the prompt's
    user text reversed), in input order unless ``shuffle``."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    calls: list[tuple[list[str], list[StandInParams]]] = field(default_factory=list)
    shuffle: bool = False

    def get_tokenizer(self) -> StandInTokenizer:
        return StandInTokenizer()

    def generate(self, prompts: list[str], sampling: list[StandInParams], use_tqdm: bool):  # type: ignore[no-untyped-def]
        assert isinstance(prompts, list) and len(prompts) == len(sampling)
        self.calls.append((prompts, sampling))
        out = []
        for p in prompts:
            user = p.removeprefix("<|user|>").removesuffix("<|end|><|assistant|>")
            texts = self.answers.get(user, [f"  {user[::-1]}\n"])
            out.append(SimpleNamespace(prompt=p, outputs=[SimpleNamespace(text=t) for t in texts]))
        return out[::-1] if self.shuffle else out


def backend(engine: StandInEngine, chunk: int = 4096) -> VLLMBackend:
    return VLLMBackend(engine, params, "glm-4-9b-chat", "abc123", chunk)


def test_requests_carry_the_chat_prompt_the_sampling_settings_and_one_seed_each() -> None:
    engine = StandInEngine()
    settings = GenerationSettings(max_new_tokens=64, temperature=0.6, top_p=0.95, seed=10)
    got = list(backend(engine, chunk=2).stream(["ab", "cd", "ef"], settings))
    assert got == [(0, "ba"), (1, "dc"), (2, "fe")]  # stripped, in prompt order
    assert [c[0] for c in engine.calls] == [  # two calls of at most 2 prompts
        ["<|user|>ab<|end|><|assistant|>", "<|user|>cd<|end|><|assistant|>"],
        ["<|user|>ef<|end|><|assistant|>"],
    ]
    first = engine.calls[0][1][0].kwargs
    assert first == {
        "n": 1,
        "temperature": 0.6,
        "top_p": 0.95,
        "max_tokens": 64,
        "min_tokens": 0,
        "seed": 10,
        "stop_token_ids": [2, 7, 9],  # eos + the vocabulary's end-of-turn tokens
        "skip_special_tokens": True,
    }
    assert [c[1][k].kwargs["seed"] for c in engine.calls for k in range(len(c[1]))] == [10, 11, 12]


def test_greedy_settings_ask_for_temperature_zero() -> None:
    engine = StandInEngine()
    greedy = GenerationSettings(max_new_tokens=8, do_sample=False, min_new_tokens=8)
    list(backend(engine).stream(["x"], greedy))
    kwargs = engine.calls[0][1][0].kwargs
    assert (kwargs["temperature"], kwargs["top_p"], kwargs["min_tokens"]) == (0.0, 1.0, 8)


def test_an_output_without_completion_is_a_bad_answer_and_a_reordered_one_an_error() -> None:
    engine = StandInEngine(answers={"q": []})
    ((index, answer),) = backend(engine).stream(["q"], GenerationSettings())
    assert index == 0 and isinstance(answer, BadAnswer) and answer.kind == "empty"
    with pytest.raises(LLMError, match="answers another prompt"):
        list(backend(StandInEngine(shuffle=True)).stream(["a", "b"], GenerationSettings()))


def test_answers_are_cached_under_the_vllm_backend(tmp_path: Path) -> None:
    """Through the pipeline's cache: a second run asks the engine nothing; a blank answer is
    not stored (CachedLLM's rule for every backend)."""
    engine = StandInEngine(answers={"blank": ["   "]})
    settings = GenerationSettings(max_new_tokens=32)
    with CachedLLM(backend(engine), tmp_path / "cache.sqlite") as llm:
        first = llm.generate(["ab", "blank"], settings)
    assert first[0] == "ba"
    again = StandInEngine(answers={"blank": ["   "]})
    with CachedLLM(backend(again), tmp_path / "cache.sqlite") as llm:
        assert llm.generate(["ab"], settings) == ["ba"]
        assert again.calls == []
        llm.generate(["blank"], settings)
    assert again.calls[0][0] == ["<|user|>blank<|end|><|assistant|>"]


def test_a_model_without_chat_template_and_a_missing_vllm_are_one_line() -> None:
    class NoTemplate(StandInEngine):
        def get_tokenizer(self):  # type: ignore[no-untyped-def]
            tok = StandInTokenizer()
            tok.chat_template = None  # type: ignore[assignment]
            return tok

    with pytest.raises(LLMError, match="no chat template"):
        backend(NoTemplate())
    try:  # vllm is absent here (its own environment)
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(LLMError, match="envs/vllm.yaml"):
            VLLMBackend.load("some/model")


def test_a_vllm_synthesis_job_runs_in_vllms_environment_on_a_gpu_slot() -> None:
    """The smoke grid's GCSE settings with ``backend: vllm`` and a Hugging Face model: the
    prompted synthesis jobs' conda env is envs/vllm.yaml and each takes a GPU slot; the
    transformers backend's stay in envs/llm.yaml; the pinned GGUF is refused for vLLM."""
    from negcse.generators.specs.gcse import _syntheses
    from negcse.generators.steps import all_steps
    from negcse.workflow.guide_config import generator_context
    from negcse.workflow.plan.load import workflow_config

    repo = Path(__file__).resolve().parents[2]
    step = next(s for s in all_steps() if s.name == "gcse_synthesize")
    config = workflow_config(repo, [repo / "tests/smoke/config.yaml"])
    ctx = generator_context(config)
    names = list(_syntheses(ctx))
    assert {step.rule_conda(ctx)({"synthesis": n}) for n in names} == {"../envs/llm.yaml"}
    config["generators"]["gcse"].update(backend="vllm", model="THUDM/glm-4-9b-chat-hf")
    ctx = generator_context(config)
    names = list(_syntheses(ctx))
    assert names and all("-vllm-" in n for n in names)
    for name, s in _syntheses(ctx).items():  # "w randomly" (no prompt) runs no LLM
        prompted = s["positives"] + s["negatives"] > 0
        env = "../envs/vllm.yaml" if prompted else "../envs/llm.yaml"
        assert step.rule_conda(ctx)({"synthesis": name}) == env
        assert step.rule_resources(ctx)["gpu"]({"synthesis": name}) == int(prompted)
    assert any(s["positives"] for s in _syntheses(ctx).values())
    config["generators"]["gcse"]["model"] = "smollm2-135m-instruct-q4_1"
    with pytest.raises(ValueError, match="not the pinned GGUF"):
        _syntheses(generator_context(config))
