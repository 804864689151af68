#!/usr/bin/env bash
# Load bench (issue 7): N agent panes across S sessions on a private tmux server, D of them
# dying in the same instant. Reports how long agentwatch took to see each death (from its
# journal), that each was resumed exactly once, and how fast a key was answered meanwhile.
#
#   bench/load.sh [PANES=200] [SESSIONS=40] [DYING=20]
#
# Everything runs on private sockets in a temp dir; only processes it started are killed.
set -euo pipefail
PANES=${1:-200}; SESSIONS=${2:-40}; DYING=${3:-20}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin agentwatch --example fake_agent
AW=$PWD/target/release/agentwatch
FAKE=$PWD/target/release/examples/fake_agent
D=$(mktemp -d)
trap 'tmux -S "$D/ui.sock" kill-server 2>/dev/null; tmux -S "$D/a.sock" kill-server 2>/dev/null; rm -rf "$D"' EXIT
mkdir -p "$D/bin" "$D/agents" "$D/state" "$D/data"
ln -s "$FAKE" "$D/bin/claude"
export PATH="$D/bin:$PATH" FAKE_AGENT_DIR="$D/agents" XDG_STATE_HOME="$D/state" XDG_DATA_HOME="$D/data"
unset TMUX TMUX_PANE
echo "hang" > "$D/agents/claude.plan"
tmux -S "$D/a.sock" -f /dev/null start-server \; set -s exit-empty off
for i in $(seq 0 $((PANES - 1))); do
    "$AW" -S "$D/a.sock" spawn claude --target "s$((i % SESSIONS))" >> "$D/panes"
done
step=$((PANES / DYING))
awk -v s="$step" 'NR % s == 1' "$D/panes" | head -n "$DYING" > "$D/dying"
while read -r p; do
    printf 'hang\n---\nwait go\nexit 1\n---\nhang\n' > "$D/agents/${p#%}.plan"
    tmux -S "$D/a.sock" respawn-pane -k -t "$p"
done < "$D/dying"
printf '[auto_resume]\nbackoff_secs = [1]\n' > "$D/cfg.toml"
tmux -S "$D/ui.sock" -f /dev/null new-session -d -x 200 -y 50 \
    "env XDG_STATE_HOME=$D/state XDG_DATA_HOME=$D/data $AW -S $D/a.sock -c $D/cfg.toml"
for _ in $(seq 100); do
    tmux -S "$D/ui.sock" capture-pane -p | grep -q "$PANES running" && break
    sleep 0.1
done
sleep 1
go_ms=$(date +%s%3N)
touch "$D/agents/go"
t0=$(date +%s%3N)
tmux -S "$D/ui.sock" send-keys '?'
for _ in $(seq 300); do
    tmux -S "$D/ui.sock" capture-pane -p | grep -q "keys · Esc" && break
    sleep 0.01
done
key_ms=$(( $(date +%s%3N) - t0 ))
tmux -S "$D/ui.sock" send-keys Escape
for _ in $(seq 300); do
    n=$(grep -c '"event":"resumed"' "$D/state/agentwatch/journal.jsonl" 2>/dev/null) || true
    [ "${n:-0}" -ge "$DYING" ] && break
    sleep 0.1
done
sleep 2
python3 - "$D" "$go_ms" "$DYING" "$key_ms" "$PANES" "$SESSIONS" <<'PY'
import json, sys, statistics
d, go, dying, key_ms, panes, sessions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
ev = [json.loads(l) for l in open(f"{d}/state/agentwatch/journal.jsonl") if l.strip()]
died = sorted(e["ts"] - go for e in ev if e["event"] == "died")
resumed = [e for e in ev if e["event"] == "resumed"]
runs = {}
for l in open(f"{d}/agents/log.jsonl"):
    e = json.loads(l); runs[e["pane"]] = runs.get(e["pane"], 0) + 1
dying_panes = [p.strip() for p in open(f"{d}/dying")]
bad = [p for p in dying_panes if runs.get(p) != 3]
q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None
print(f"panes={panes} sessions={sessions} dying={dying}")
print(f"deaths seen: {len(died)}/{dying}; detection ms p50={q(died,.5)} p95={q(died,.95)} max={died[-1] if died else None}")
print(f"resumed: {len(resumed)}/{dying}; panes not resumed exactly once: {bad or 'none'}")
print(f"help key answered in {key_ms} ms during the burst")
sys.exit(0 if len(died) == dying and len(resumed) == dying and not bad else 1)
PY
