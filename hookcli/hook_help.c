/* pigeon-hook's help, in the one help source (broker/cli/help.h). */
#include "help.h"

const struct cli_cmd cli_hook_help = {
    .name = "pigeon-hook",
    .summary = "the hook AI coding hosts run",
    .synopsis = {"[HOST EVENT] [--agent NAME]", "claude Stop --rewake",
        "--version"},
    .text =
        "Run by an AI coding host on session start, on every prompt, after each tool call and before the agent stops: reads the host's JSON payload on standard input, claims the agent's queued messages and prints them in the host's envelope on standard output (at a stop: makes the agent go on with them). Always exits 0 for a host (but --rewake, below); a failure prints the neutral output and is logged to $PIGEON_HOME/hook.log.\n\n"
        "HOST and EVENT name the host and its event; without them both are detected from the payload. Never coloured, whatever the terminal. Run by hand with standard input on a terminal, it reads nothing: it prints this help on standard error and exits 1 (2 would tell Claude Code to block).",
    .opts = {{"agent", 256, "NAME", CLI_K_AGENT, NULL,
                 "the agent a new session binds to, unless PIGEON_AGENT names one (default: a generated name)"},
        {"rewake", 258, NULL, CLI_K_NONE, NULL,
            "Claude Code's idle wake (pigeon install claude --rewake): after the turn, wait for mail (reach.rewakeWaitS), print it on stderr and exit 2, which starts a new turn"},
        {"version", 257, NULL, CLI_K_NONE, NULL,
            "print the version and exit 0"}},
    .operand = CLI_K_HOST,
    .host_events = 1,
};
