#!/usr/bin/env bash
# Who needs you, how soon, and at what cost (issue 29). For each N: a private tmux server
# with N fake claude panes, a third of them flipping between a working spinner and a
# permission prompt every 3-7 s (the truth, written by the fake agent), the rest busy-looking
# and silent; `agentwatch daemon` (or, UI=1, the dashboard at 160x45) of each build on it in
# turn (a fresh server per build). Measured: the lag from each prompt (and each return to
# work) on screen to its `waiting` (`working`) line in the journal, and the share never
# journaled; the dashboard's waiting count against the truth (UI=1); `status --json` against
# the truth; CPU of agentwatch, its children and the tmux server; RSS; deaths to `died`.
# Ends with Markdown tables, the builds side by side.
#
#   bench/churn.sh SECS N1,N2,... name=/path/to/agentwatch [name2=/path/to/agentwatch ...]
#   e.g. bench/churn.sh 60 30,300 before=/tmp/before/agentwatch after=target/release/agentwatch
#
# No build here: build the binaries first, e.g.
#   cargo build --release --bin agentwatch --example fake_agent
# UI=1 the dashboard; SESSIONS=1 one session per agent; BUSY=1 busy-looking silent panes only
# (the cost case); CHURN="3 7"; SPIN_MS=100 (the spinner's period); STATUS_SECS=20; DEATHS=5;
# BASE_SECS=10; FAKE=/path/to/fake_agent (default target/release/examples/fake_agent); KEEP=1
# keeps the temp dirs.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/churn.py "$@"
