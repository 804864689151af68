#!/usr/bin/env bash
# Cost flat in the number of panes (issue 16). For each N: a private tmux server with N fake
# agent panes, and `agentwatch daemon` of each build on it in turn (a fresh server per build):
# time until every pane is protected (remain-on-exit), steady CPU of agentwatch, its child
# processes and the tmux server, tmux processes started per minute, death-to-journal latency
# for single deaths and for a burst, RSS. Ends with a Markdown table and the first/second
# build's CPU ratios.
#
#   bench/scale.sh SECS N1,N2,... name=/path/to/agentwatch [name2=/path/to/agentwatch ...]
#   e.g. bench/scale.sh 30 10,100,1000 before=/tmp/before/release/agentwatch after=target/release/agentwatch
#
# No build here: build the binaries first, e.g.
#   cargo build --release --bin agentwatch --example fake_agent
# FAKE=/path/to/fake_agent (default target/release/examples/fake_agent); KEEP=1 keeps the
# temp dirs (journals, daemon logs).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/scale.py "$@"
