"""Issue 25: how much the released RankCSE / RLRD teacher-list details change the lists.

Three measurements on small tensors (CPU, seconds), printed as one table:

1. fp16 cast (released RankCSE with ``--fp16``): the teachers' embeddings are cast to fp16
   before the cosines. A synthetic trained-like space (batch 128, dim 768, off-diagonal cosines
   0.41-0.95 for the 5-95% quantiles): exact ties in the sorted lists, pair orders flipped
   against fp32 cosines, and ListMLE's value and gradient against the fp32 lists.
2. Teacher forward in fp16 autocast (our guides run under the training autocast) against the
   released fp32 forward: splade-tiny (the mirror), 128 wiki lines, [CLS].
3. RLRD's second teacher on the bare sentence (``teacher_inputs: sentence``) against the
   released prompt-wrapped inputs (anchor prompt rows, positive prompt columns): splade-tiny,
   the same lines, [CLS]; pair orders flipped and the ListMLE value at the student's lists.

    NEGCSE_MIRROR=../shared/mirror PYTHONPATH=src python benchmarks/rank_teacher_lists.py
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from negcse.encoders.poolers import get_pooler
from negcse.losses import cosine_matrix
from negcse.losses.ranking import list_mle
from negcse.training.model import SentenceEncoder

B, D, TAU = 128, 768, 0.05


def pair_flips(a: Tensor, b: Tensor) -> float:
    """Share of (row, j, k) item pairs whose order differs between lists a and b (a tie in b
    where a has none counts 1/2)."""
    da, db = a.unsqueeze(2) - a.unsqueeze(1), b.unsqueeze(2) - b.unsqueeze(1)
    flips = ((da * db) < 0).float().sum() + 0.5 * ((db == 0) & (da != 0)).float().sum()
    n = a.size(0) * a.size(1) * (a.size(1) - 1)
    return float(flips / n)


def trained_like(n: int, gen: torch.Generator) -> Tensor:
    return torch.randn(1, D, generator=gen) + torch.randn(n, D, generator=gen) * 1.5 * torch.rand(
        n, 1, generator=gen
    )


def fp16_cast(trials: int = 5) -> list[str]:
    out = []
    for trial in range(trials):
        gen = torch.Generator().manual_seed(trial)
        t1 = trained_like(B, gen)
        t2 = t1 + 0.05 * torch.randn(B, D, generator=gen)
        s32 = cosine_matrix(t1, t2) / TAU
        s16 = (F.cosine_similarity(t1.half()[:, None], t2.half()[None], dim=-1) / TAU).float()
        ties = float((s16.sort(-1).values.diff(dim=-1) == 0).float().mean())
        student = cosine_matrix(trained_like(B, gen), trained_like(B, gen)).requires_grad_(True)
        losses, grads = [], []
        for teacher in (s32, s16):
            loss = list_mle(student, teacher, TAU, generator=torch.Generator().manual_seed(trial))
            losses.append(float(loss.detach()))
            grads.append(torch.autograd.grad(loss, student)[0])
        out.append(
            f"fp16 cast | trial {trial} | adjacent ties {ties:.3f} | pair flips "
            f"{pair_flips(s32, s16):.5f} | ListMLE rel {abs(losses[1] - losses[0]) / losses[0]:.1e}"
            f" | grad rel {float((grads[1] - grads[0]).norm() / grads[0].norm()):.3f}"
        )
    return out


def splade(mirror: Path) -> list[str]:
    model = SentenceEncoder.from_pretrained(str(mirror / "models/splade-tiny"), 0.0).eval()
    tok = model.tokenizer
    wiki = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    lines = wiki.read_text(encoding="utf-8").splitlines()[:B]
    cls = get_pooler("cls_before_pooler", tokenizer=tok)

    def embed(pooler_name: str | None, fp16: bool = False) -> Tensor:
        wrap = cls if pooler_name is None else get_pooler(pooler_name, tokenizer=tok)
        batch = wrap.tokenize(tok, lines, 32)
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16, enabled=fp16):
            return model.embed_batch(batch, cls, False).float()

    bare = cosine_matrix(embed(None), embed(None))
    bare16 = cosine_matrix(embed(None, fp16=True), embed(None, fp16=True))
    off = ~torch.eye(B, dtype=torch.bool)
    prompted = cosine_matrix(embed("prompt_sncse_anchor"), embed("prompt_sncse_positive"))
    gen = torch.Generator().manual_seed(0)
    student = prompted + 0.02 * torch.randn(B, B, generator=gen)  # a student near the teacher
    mle = [
        float(list_mle(student, t, TAU, generator=torch.Generator().manual_seed(0)))
        for t in (prompted, bare)
    ]
    return [
        f"fp16 forward | splade-tiny | max |dcos| {float((bare16 - bare)[off].abs().max()):.1e}"
        f" | mean |dcos| {float((bare16 - bare)[off].abs().mean()):.1e} | pair flips "
        f"{pair_flips(bare, bare16):.5f}",
        f"RLRD teacher2 inputs | splade-tiny | pair flips bare vs prompts "
        f"{pair_flips(prompted, bare):.3f} | diagonal cos prompts "
        f"{float(prompted.diag().mean()):.3f} vs bare 1.000 | ListMLE prompts {mle[0]:.1f} vs "
        f"bare {mle[1]:.1f}",
    ]


def main() -> None:
    mirror = Path(os.environ.get("NEGCSE_MIRROR", "../shared/mirror"))
    for line in [*fp16_cast(), *splade(mirror)]:
        print(line)


if __name__ == "__main__":
    main()
