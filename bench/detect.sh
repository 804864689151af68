#!/usr/bin/env bash
# Detection latency and cost (issue 9). For N agent panes on a private tmux server, with each
# transport (control mode, fork+exec): panes are killed at random times and the
# death-to-detection latency is read from agentwatch's journal; agentwatch's and the tmux
# server's CPU, agentwatch's RSS and the tmux processes it starts are measured. Then the
# peers' approaches run on the same server as plain loops (capture-pane per pane every
# 500 ms; list-panes -a every 2 s) and the ratios are printed.
#
#   bench/detect.sh [SECONDS=30] [N...=10 100 300]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin agentwatch --example fake_agent
exec python3 bench/detect.py "$@"
