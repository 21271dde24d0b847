"""What the Snakemake workflow reads at parse time: the config and its checks, guides as workflow outputs, the GPU-hours estimate, GPU slots and the lock."""
