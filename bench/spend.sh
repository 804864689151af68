#!/usr/bin/env bash
# What following the agents' files costs (issue 31): AGENTS claude transcripts of MB each,
# read by agentwatch's follower as the dashboard and daemon do (first read, an ask with
# nothing new, an ask after one message appended to each), CPU and memory.
#
#   bench/spend.sh [AGENTS] [MB]      (default 300 agents, 50 MB each: 15 GB of disk)
set -euo pipefail
cd "$(dirname "$0")/.."
agents=${1:-300}
mb=${2:-50}
cargo build -q --release --example spend_bench
dir=$(mktemp -d "${TMPDIR:-/tmp}/aw-spend-XXXXXX")
trap 'rm -rf "$dir"' EXIT
# The page cache would make the first read a memory read: dropped where allowed.
target/release/examples/spend_bench "$dir" "$agents" "$mb"
