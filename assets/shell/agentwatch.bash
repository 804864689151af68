# agentwatch shell integration for bash: publishes each command's exit status to the tmux
# pane option @agentwatch_last_status ("<status> <epoch seconds>"), so agentwatch can show
# the exit code of an agent started from this prompt. Only runs inside tmux; safe with set -u;
# keeps an existing PROMPT_COMMAND (string or array); sourcing it twice changes nothing. A
# prompt that follows no command (an empty line, Ctrl-C at the prompt: $? 130) publishes
# nothing: the last command's status stays (bash 4.4+, by its command number).
if [ -n "${TMUX:-}" ] && [ -n "${TMUX_PANE:-}" ] && [ -z "${__agentwatch_hooked:-}" ]; then
    __agentwatch_hooked=1
    __agentwatch_status() {
        local s=$? now=${EPOCHREALTIME:-} n='\#'
        if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 )); then
            eval 'n=${n@P}'
            [ "$n" != "${__agentwatch_cmd:-}" ] || return "$s"
            __agentwatch_cmd=$n
        fi
        [ -n "$now" ] || printf -v now '%(%s)T' -1
        # In a subshell and in the background: no job notice, no wait at the prompt.
        ( command tmux set-option -p -t "$TMUX_PANE" @agentwatch_last_status "$s $now" >/dev/null 2>&1 & )
        return "$s"
    }
    if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
        PROMPT_COMMAND=(__agentwatch_status "${PROMPT_COMMAND[@]}")
    else
        PROMPT_COMMAND="__agentwatch_status${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
    fi
fi
