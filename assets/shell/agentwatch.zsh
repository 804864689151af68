# agentwatch shell integration for zsh: publishes each command's exit status to the tmux
# pane option @agentwatch_last_status ("<status> <epoch seconds>"), so agentwatch can show
# the exit code of an agent started from this prompt. Only runs inside tmux; safe with
# set -u (nounset); keeps other precmd hooks; sourcing it twice changes nothing.
if [[ -n ${TMUX:-} && -n ${TMUX_PANE:-} && -z ${__agentwatch_hooked:-} ]]; then
    typeset -g __agentwatch_hooked=1
    zmodload zsh/datetime 2>/dev/null
    __agentwatch_status() {
        local s=$?
        # In a subshell and in the background: no job notice, no wait at the prompt.
        ( command tmux set-option -p -t "$TMUX_PANE" @agentwatch_last_status "$s ${EPOCHREALTIME:-${EPOCHSECONDS:-0}}" >/dev/null 2>&1 & )
        return $s
    }
    # First in line, so that $? is still the command's own status.
    typeset -ga precmd_functions
    precmd_functions=(__agentwatch_status ${precmd_functions[@]})
fi
