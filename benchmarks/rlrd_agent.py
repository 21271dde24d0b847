"""Cost of RLRD's teacher-weighting agent at BERT-base shapes (batch 128, dim 768).

Runs one PPO window (125 steps) of :class:`negcse.methods.teacher_agent.TeacherAgent` on random
views and teacher embeddings and reports the median time of a step (both teachers' states,
``act`` and ``learn``), the time of the step that runs the PPO update, and the size of the
agent's checkpoint state with a full window stored. Usage (benchmarks/rlrd_agent.md)::

    OMP_NUM_THREADS=1 python benchmarks/rlrd_agent.py --device cpu
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import torch

from negcse.losses import cosine_matrix
from negcse.methods.teacher_agent import AgentSettings, TeacherAgent, agent_states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--dim", type=int, default=768)
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    agent = TeacherAgent(AgentSettings())
    window = agent.s.update_steps

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    times, size, stored, update = [], 0, 0, 0.0
    for step in range(window):
        views = [torch.randn(args.batch, args.dim, device=device) for _ in range(2)]
        teachers = [torch.randn(args.batch, 64, device=device) for _ in range(2)]
        sync()
        start = time.perf_counter()
        sims = [cosine_matrix(t, t) for t in teachers]  # the teachers' lists
        states = agent_states(*views, sims, 0.05, "listmle")
        agent.act(states)
        if step == window - 1:  # the full window, as a checkpoint before the update holds it
            buffer = io.BytesIO()
            torch.save(agent.state_dict(), buffer)
            size, stored = buffer.tell(), len(agent.memory[0])
        agent.learn(-torch.rand((), device=device))
        sync()
        elapsed = time.perf_counter() - start
        if step == window - 1:
            update = elapsed
        elif step > 0:  # the first step builds the agent
            times.append(elapsed)
    print(
        f"{device}, batch {args.batch}, dim {args.dim}: {1e3 * statistics.median(times):.1f} ms "
        f"a step, {update:.2f} s for the step with the PPO update ({agent.updates} update), "
        f"{size / 2**20:.0f} MiB of agent state with {stored} steps stored"
    )


if __name__ == "__main__":
    main()
