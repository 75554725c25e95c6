#!/usr/bin/env bash
# Issue 10's two model workloads, adjoint vs PyTorch, at 1 and 2 threads:
#
#   bench/gpt.sh
#
# the CNN step (batch 64, 1×28×28, conv 5×5×32, pool 2, conv 5×5×64, pool 2,
# linear 1024→10) and the GPT step (4 layers, 4 heads, width 128, context 64,
# batch 12), both float32, cross-entropy, SGD: bench/train.sh with
# ONLY=CNN,GPT and THREADS=1, then 2. Each prints the median ms per step, the
# ratio adjoint ÷ PyTorch, and the peak RSS of 20 GPT steps in each. The
# issue's targets: both steps ≤ 1.0× PyTorch's time, GPT's peak RSS ≤ 0.5×.
#
# Environment: STEPS (0: 20 for CNN, 10 for GPT), PY, as bench/train.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
for t in 1 2; do
	THREADS=$t ONLY=CNN,GPT bench/train.sh
	echo
done
