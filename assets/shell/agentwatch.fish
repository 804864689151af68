# agentwatch shell integration for fish: publishes each command's exit status to the tmux
# pane option @agentwatch_last_status ("<status> <epoch seconds>"), so agentwatch can show
# the exit code of an agent started from this prompt. Only runs inside tmux; sourcing it
# twice changes nothing.
if set -q TMUX; and set -q TMUX_PANE; and not set -q __agentwatch_hooked
    set -g __agentwatch_hooked 1
    function __agentwatch_status --on-event fish_postexec
        set -l s $status
        command tmux set-option -p -t "$TMUX_PANE" @agentwatch_last_status "$s "(date +%s) >/dev/null 2>&1 &
        disown 2>/dev/null
    end
end
