#!/usr/bin/env bash
# `make gpu-mirror`: what benchmarks/gpu_workflow.sh needs on the device machine, in git-ignored
# folders that a device call carries (64 MiB in all, the tree included): .gpu-mirror (the
# mirror's splade-tiny and the data the smoke grid and benchmarks/gpu.py read, and in
# precomputed/ the analysis sentences' spaCy negations, made here by the workflow) and .whl (the
# wheels of benchmarks/gpu_wheels.txt for the image's Python 3.12; pip download from PyPI,
# connection-pool built here: it has no wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${NEGCSE_MIRROR:-../shared/mirror}
rm -rf .gpu-mirror && mkdir -p .gpu-mirror/data/senteval .gpu-mirror/models
cp -r "$MIRROR/models/splade-tiny" .gpu-mirror/models/
cp -r "$MIRROR"/data/{raw,san,unlabeled,reranking,MANIFEST.tsv,README.md} .gpu-mirror/data/
for task in CR TREC SICK STS MR SUBJ MPQA MRPC; do cp -r "$MIRROR/data/senteval/$task" .gpu-mirror/data/senteval/; done
mkdir -p .gpu-mirror/data/senteval/SST && cp -r "$MIRROR/data/senteval/SST/binary" .gpu-mirror/data/senteval/SST/
# the STS analysis sentences and their SNCSE negations: CPU outputs of the workflow whose
# negation needs spaCy, which does not fit a device call; made here by the same rules
work=$(mktemp -d)
tar -c --exclude=./.git --exclude=./.gpu-mirror --exclude=./.whl --exclude=./results \
    --exclude=./.snakemake --exclude=./logs . | tar -x -C "$work"
repo=$PWD
(cd "$work" && NEGCSE_MIRROR=$repo/.gpu-mirror NEGCSE_OFFLINE=1 PYTHONPATH=$work/src \
    snakemake results/analysis/sts_sentences.negation.txt --configfile tests/smoke/config.yaml \
    --cores 2 --quiet all)
mkdir -p .gpu-mirror/precomputed
cp "$work"/results/analysis/sts_sentences.txt "$work"/results/analysis/sts_sentences.negation.txt \
    .gpu-mirror/precomputed/
rm -rf "$work"
mkdir -p .whl
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
for spec in $(grep -v '^#' benchmarks/gpu_wheels.txt); do
    name=${spec%%==*}
    if ls .whl | grep -qi "^${name//-/_}-${spec##*==}-"; then continue; fi
    if [ "$name" = connection-pool ]; then
        python3 -m pip wheel -q --no-deps -w .whl "$spec"
    else
        python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
            --implementation cp "${PLATFORMS[@]}" -d .whl "$spec"
    fi
done
total=$(du -scm .gpu-mirror .whl | tail -1 | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cm 2>/dev/null | tail -1 | cut -f1)
echo "carried: .gpu-mirror + .whl = ${total} MiB, tracked tree ~${tree} MiB (limit 64 MiB)"
[ $((total + tree)) -lt 64 ] || { echo "over the 64 MiB a device call carries" >&2; exit 1; }
