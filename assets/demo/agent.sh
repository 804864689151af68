#!/bin/sh
# agentwatch demo: a simulated AI coding agent, for `agentwatch demo` only.
#
# Installed (copied) as `claude`, `codex`, `gemini` and `aider` in the demo's temp bin/
# directory; it looks like the agent it is named after. It reads and changes nothing: it
# prints plausible coloured work, then behaves as its scenario says:
#
#   crash   exits 1 after ~8 s with an API 529 error; a resumed run works forever
#   oom     runs out of JavaScript heap after ~12 s and is killed by SIGKILL; a resumed
#           run works forever
#   finish  finishes after ~6 s and exits 0
#   flaky   every run dies of ECONNRESET (exit 1) after a few lines: a crash loop
#   steady  works forever (the default)
#
# The scenario comes from the tmux window name (api, web, docs, flaky, infra), else from
# $DEMO_SCENARIO, else `steady`. Resume arguments (`--resume <id>`, `resume <id>`,
# `--restore-chat-history`) make it a resumed run. POSIX sh: runs under dash.

kind=$(basename "$0")
sid=""
resumed=""
while [ $# -gt 0 ]; do
    case $1 in
        --session-id)
            if [ $# -gt 1 ]; then sid=$2; shift; fi
            ;;
        --resume | resume)
            resumed=1
            if [ $# -gt 1 ]; then sid=$2; shift; fi
            ;;
        --restore-chat-history)
            resumed=1
            ;;
    esac
    shift
done

win=""
if [ -n "${TMUX_PANE-}" ]; then
    win=$(tmux display-message -p -t "$TMUX_PANE" '#{window_name}' 2>/dev/null) || win=""
fi
case $win in
    api) scenario=crash ;;
    web) scenario=oom ;;
    docs) scenario=finish ;;
    flaky) scenario=flaky ;;
    infra) scenario=steady ;;
    *) scenario=${DEMO_SCENARIO:-steady} ;;
esac

E=$(printf '\033')
N="$E[0m"
B="$E[1m"
D="$E[2m"
I="$E[3m"
R="$E[31m"
G="$E[32m"
Y="$E[33m"
BL="$E[34m"
M="$E[35m"
C="$E[36m"
O="$E[38;5;173m"

say() {
    printf '%s\n' "$*"
}

# A small pseudo-random generator (dash has no $RANDOM): sets r to 0..$1-1.
seed=$(($$ % 9973 + 17))
rand() {
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    r=$((seed / 65536 % $1))
}

new_uuid() {
    if [ -r /proc/sys/kernel/random/uuid ]; then
        cat /proc/sys/kernel/random/uuid
    else
        h=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
        printf '%s-%s-4%s-a%s-%s\n' "$(echo "$h" | cut -c1-8)" \
            "$(echo "$h" | cut -c9-12)" "$(echo "$h" | cut -c14-16)" \
            "$(echo "$h" | cut -c18-20)" "$(echo "$h" | cut -c21-32)"
    fi
}

cwd=$(pwd -P)
if [ ${#cwd} -gt 48 ]; then
    shown="…/$(basename "$(dirname "$cwd")")/$(basename "$cwd")"
else
    shown=$cwd
fi

# What this agent is working on, by project (window) name.
case $win in
    api) f1=src/api/handlers.rs f2=src/api/routes.rs f3=tests/api.rs tc="cargo test" ;;
    web) f1=src/App.tsx f2=src/hooks/useCart.ts f3=package.json tc="npm test" ;;
    docs) f1=docs/install.md f2=docs/config.md f3=README.md tc="mdbook build" ;;
    flaky) f1=sync/client.go f2=sync/retry.go f3=sync/client_test.go tc="go test ./sync" ;;
    infra) f1=terraform/main.tf f2=terraform/vars.tf f3=.github/workflows/ci.yml tc="terraform validate" ;;
    *) f1=src/main.rs f2=src/lib.rs f3=tests/smoke.rs tc="make test" ;;
esac

# Codex records its sessions in rollout files; the demo writes one (only under the demo's
# own $CODEX_HOME) so that agentwatch can find the id of a codex it did not start with one.
if [ "$kind" = codex ] && [ -z "$resumed" ] && [ -n "${CODEX_HOME-}" ]; then
    sid=$(new_uuid)
    day=$(date +%Y/%m/%d)
    now=$(date +%Y-%m-%dT%H:%M:%S)
    json_cwd=$(printf '%s' "$cwd" | sed 's/\\/\\\\/g; s/"/\\"/g')
    mkdir -p "$CODEX_HOME/sessions/$day" &&
        printf '{"timestamp":"%s","type":"session_meta","payload":{"id":"%s","timestamp":"%s","cwd":"%s","originator":"codex_cli_rs","cli_version":"0.46.0"}}\n' \
            "$now" "$sid" "$now" "$json_cwd" \
            >"$CODEX_HOME/sessions/$day/rollout-$(date +%Y-%m-%dT%H-%M-%S)-$sid.jsonl"
fi

short=$(printf '%s' "$sid" | cut -c1-8)

header() {
    case $kind in
        claude)
            say "$O$B✻ Welcome to Claude Code!$N"
            say ""
            say "$D  /help for help, /status for your current setup$N"
            say "$D  cwd: $shown$N"
            say "$D  model: claude-sonnet-4-5 · session ${short:-new}$N"
            ;;
        codex)
            say "$B>_ OpenAI Codex$N (v0.46.0)"
            say ""
            say "  model:     gpt-5-codex high   $D/model to change$N"
            say "  directory: $shown"
            ;;
        gemini)
            say "$BL$B✦ Gemini CLI$N ${D}v0.9.0$N"
            say ""
            say "$D  Using: gemini-2.5-pro · 1 GEMINI.md file$N"
            say "$D  cwd: $shown$N"
            ;;
        aider)
            say "${B}Aider v0.86.1$N"
            say "Main model: anthropic/claude-sonnet-4-5 with diff edit format"
            say "Git repo: .git with 42 files"
            say "Repo-map: using 4096 tokens, auto refresh"
            ;;
        *)
            say "$B$kind$N (simulated agent)"
            say "$D  cwd: $shown$N"
            ;;
    esac
    say ""
}

# A line of reasoning about this project: sets th.
thought() {
    rand 3
    case $win-$r in
        api-0) th="The 529s come from retries without backoff" ;;
        api-1) th="Handlers share one client; add a timeout there" ;;
        web-0) th="Planning the cart hook refactor" ;;
        web-1) th="useCart re-renders on every keystroke" ;;
        docs-0) th="The install guide predates the config file" ;;
        docs-1) th="Linking config.md from the README" ;;
        flaky-0) th="The sync client never closes idle conns" ;;
        flaky-1) th="Retry only idempotent requests" ;;
        infra-0) th="Pinning the provider avoids the drift" ;;
        infra-1) th="CI should run terraform validate" ;;
        *-0) th="Reading the tests before changing anything" ;;
        *-1) th="Checking the callers of $f2" ;;
        *) th="Next: make $tc pass" ;;
    esac
}

tok=0
last=""
tokens() {
    rand 900
    tok=$((tok + 400 + r))
    k="$((tok / 1000)).$((tok % 1000 / 100))k"
}

work() {
    tokens
    rand 7
    if [ "$r" = "$last" ]; then r=$(((r + 1) % 7)); fi
    last=$r
    case $kind in
        claude)
            case $r in
                0) say "$G●$N Read($f1)" && say "$D  ⎿  Read $((80 + tok % 200)) lines$N" ;;
                1) say "$G●$N Update($f2)" && say "$D  ⎿  $G+$((3 + tok % 17))$N$D additions, $R-$((tok % 5))$N$D removals$N" ;;
                2) say "$G●$N Bash($tc)" && say "  ⎿  $G✓ $((8 + tok % 9)) tests passed$N" ;;
                3) say "$G●$N Search(pattern: \"fn retry\", path: \"src\")" && say "$D  ⎿  Found 4 files$N" ;;
                4)
                    rand 4
                    case $r in
                        0) v=Thinking ;; 1) v=Pondering ;; 2) v=Reticulating ;; *) v=Noodling ;;
                    esac
                    say "$O✻$N $O$v…$N $D(esc to interrupt · ↓ $k tokens)$N"
                    ;;
                5) say "$G●$N Update Todos" && say "$D  ⎿  ☒ Read $f1  ☐ Update $f3$N" ;;
                *) thought && say "● $th." ;;
            esac
            ;;
        codex)
            case $r in
                0) say "$B• Explored$N" && say "$D  └ Read $f1$N" ;;
                1) say "$B• Ran$N $tc" && say "  └ $G✓ $((20 + tok % 40)) passed$N ${D}($((tok % 4)).$((tok % 10))s)$N" ;;
                2) say "$B• Edited$N $f2 ($G+$((2 + tok % 20))$N $R-$((tok % 6))$N)" ;;
                3) thought && say "$M${I}thinking$N" && say "$I$th$N" ;;
                4) say "$B• Updated Plan$N" && say "$D  └ ✔ Split component  □ Add tests$N" ;;
                5) say "${D}tokens used: $k$N" ;;
                *) say "$B• Explored$N" && say "$D  └ Search useCart in src$N" ;;
            esac
            ;;
        gemini)
            case $r in
                0) say "$G✔$N ${B}ReadFile$N $f1" ;;
                1) say "$G✔$N ${B}WriteFile$N $f2" && say "$D  Wrote $((20 + tok % 40)) lines$N" ;;
                2) say "$G✔$N ${B}Shell$N $tc" && say "  $G✓ build finished in 1.$((tok % 10))s$N" ;;
                3) thought && say "$BL✦$N $th." ;;
                4) say "$C⠋$N ${D}Considering the options… (esc to cancel, $((tok % 9 + 1))s)$N" ;;
                5) say "$G✔$N ${B}SearchText$N 'auto_resume' in docs" && say "$D  Found 7 matches$N" ;;
                *) say "$G✔$N ${B}ReadFile$N $f3" ;;
            esac
            ;;
        aider)
            case $r in
                0) say "${G}Applied edit to $f1$N" ;;
                1) say "${Y}Commit $(printf '%07x' $((tok * 7919 % 268435455))) fix: pin provider version$N" ;;
                2) say "${D}Tokens: $k sent, $((tok % 900)) received. Cost: \$0.0$((tok % 9)) msg$N" ;;
                3) say "Running $tc" && say "${G}Success! The configuration is valid.$N" ;;
                4) thought && say "$BL$th.$N" ;;
                5) say "${D}Added $f3 to the chat.$N" ;;
                *) say "${G}Applied edit to $f2$N" ;;
            esac
            ;;
        *)
            say "$G●$N working on $f1 ($k tokens)"
            ;;
    esac
}

# Time is counted in tenths of a second slept.
t=0
nap() {
    rand 8
    d=$((5 + r * 10 / 7))
    sleep "$((d / 10)).$((d % 10))"
    t=$((t + d))
}

header
if [ -n "$resumed" ]; then
    if [ -n "$sid" ]; then
        say "$C↻ Resuming session $sid…$N"
    else
        say "$C↻ Restoring chat history…$N"
    fi
    say "$D  ⎿  Restored $((12 + $$ % 30)) messages$N"
fi

# How long this run lasts (tenths of a second); 0 = forever.
case $scenario in
    crash) limit=80 ;;
    oom) limit=120 ;;
    finish) limit=60 ;;
    flaky) limit=15 ;;
    *) limit=0 ;;
esac
if [ -n "$resumed" ] && { [ "$scenario" = crash ] || [ "$scenario" = oom ]; }; then
    limit=0
fi
# A fresh flaky run lasts longer, so that the dashboard sees it alive before it dies.
if [ "$scenario" = flaky ] && [ -z "$resumed" ]; then
    limit=40
fi

while [ "$limit" -eq 0 ] || [ "$t" -lt "$limit" ]; do
    work
    nap
done

case $scenario in
    crash)
        say "$D  ⎿  Retrying in 8s… (attempt 10/10)$N"
        say "$R  ⎿  API Error: 529 Overloaded$N"
        say "${R}Error: 529 {\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}$N"
        exit 1
        ;;
    oom)
        say ""
        say "$D<--- Last few GCs --->$N"
        say "$D[$$:0x5d1c3a0] 11873 ms: Mark-Compact 4041.7 -> 4027.5 MB$N"
        say "${R}FATAL ERROR: Reached heap limit Allocation failed$N"
        say "${R} - JavaScript heap out of memory$N"
        kill -9 $$
        ;;
    finish)
        say ""
        say "$G$B✓ All tasks complete$N"
        say "$D  3 files changed · $k tokens · $((t / 10))s$N"
        exit 0
        ;;
    flaky)
        say "${R}Error: ECONNRESET$N"
        say "$D    at TLSSocket.onConnectEnd (node:_tls_wrap:1727:19)$N"
        exit 1
        ;;
esac
exit 0
