#!/usr/bin/env bash
# The cost of finding agents anywhere in panes' process trees (issue 13): N panes, a third
# each of an agent, a wrapper running it as a child and a `bash -c` running it; the daemon's
# CPU, RSS and tmux processes in steady state, and how many agents it sees running. With a
# BASELINE binary (an older build), both run in turn on the same server, twice each
# interleaved, and the ratio of the means is printed.
#
#   bench/tree.sh [SECONDS=60] [N=300] [BASELINE_BINARY]
#   TREE_SHAPES=agent bench/tree.sh ...   # every pane the agent itself, for a like-for-like cost
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin agentwatch --example fake_agent
secs=${1:-60}
n=${2:-300}
args=("now=target/release/agentwatch")
if [ -n "${3:-}" ]; then
    # Interleaved, twice each: the machine's noise drifts over minutes.
    args=("before=$3" "now=target/release/agentwatch" "before=$3" "now=target/release/agentwatch")
fi
exec python3 bench/tree.py "$secs" "$n" "${args[@]}"
