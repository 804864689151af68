# agentwatch shell integration for zsh: publishes each command's exit status to the tmux
# pane option @agentwatch_last_status ("<status> <epoch seconds>"), so agentwatch can show
# the exit code of an agent started from this prompt. Only runs inside tmux; safe with
# set -u (nounset); keeps other precmd and preexec hooks; sourcing it twice changes nothing.
# A prompt that follows no command (an empty line, Ctrl-C at the prompt) publishes nothing:
# the last command's status stays.
if [[ -n ${TMUX:-} && -n ${TMUX_PANE:-} && -z ${__agentwatch_hooked:-} ]]; then
    typeset -g __agentwatch_hooked=1 __agentwatch_cmd=1
    zmodload zsh/datetime 2>/dev/null
    __agentwatch_ran() {
        typeset -g __agentwatch_cmd=1
    }
    __agentwatch_status() {
        local s=$?
        # The first prompt, or one after a command: anything else is no command's status.
        [[ ${__agentwatch_cmd:-0} != 0 ]] || return $s
        typeset -g __agentwatch_cmd=0
        # In a subshell and in the background: no job notice, no wait at the prompt.
        ( command tmux set-option -p -t "$TMUX_PANE" @agentwatch_last_status "$s ${EPOCHREALTIME:-${EPOCHSECONDS:-0}}" >/dev/null 2>&1 & )
        return $s
    }
    # First in line, so that $? is still the command's own status.
    typeset -ga precmd_functions
    precmd_functions=(__agentwatch_status ${precmd_functions[@]})
    typeset -ga preexec_functions
    preexec_functions+=(__agentwatch_ran)
fi
