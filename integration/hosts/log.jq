# log.jq: definitions over one line of the mock's request log
# ({"seq","method","path","body"}), prepended to the filters in
# integration/hosts/lib.sh. One API per host: Anthropic Messages
# (.messages), OpenAI Responses (.input), Gemini (.contents).

# How many times the text $s occurs in the strings of the input.
def count($s): [.. | strings | indices($s) | length] | add // 0;

# The conversation items of a request body.
def items:
	if (.messages | type) == "array" then .messages
	elif (.input | type) == "array" then .input
	elif (.input | type) == "string" then [.input]
	elif (.contents | type) == "array" then .contents
	else [] end;

# Items that come from the model: what everything after them is new.
def from_model:
	.role == "assistant" or .role == "model" or
	((.type // "") | test("function_call$|^reasoning$|_call$"));

# The items new in this request: those after the model's last item.
# Earlier turns stay in the history of later requests; only these are
# what this turn added (the prompt and what the hooks injected for it).
def turn:
	items as $m |
	([$m | to_entries[] | select(.value | from_model) | .key] | max // -1)
	as $i | $m[($i + 1):];

# A request that asks the model for a turn: not a side request for
# schema-shaped JSON (Gemini's model router, Codex's thread title), nor
# opencode's title generator (its own system prompt, no tools), and not
# a token count.
def model_request:
	.method == "POST" and (.body | type) == "object" and
	(.path | test("count_tokens|:countTokens") | not) and
	(.body.generationConfig.responseJsonSchema == null) and
	(.body.text.format.type != "json_schema") and
	((.body.system // "" | tostring) |
	    test("You are a title generator") | not) and
	((.body | items) | length > 0);

# Where the hook's text landed, per host, for the first new item that
# holds $s: Claude a system message, the text after the last "EVENT hook
# additional context: " (or "EVENT:TOOL hook …") before $s (Claude
# joins its system texts into one), Codex a developer message, Gemini a
# "<hook_context>…" part (also inside a tool's functionResponse). What
# a stop hook made the host continue with: Claude a user message of
# "Stop hook feedback" ("claude:stop"), or a <task-notification> from an
# asyncRewake hook ("claude:rewake"); Codex a user message
# <hook_prompt …> ("codex:stop"); Gemini plain user text ("gemini:stop").
# Copilot CLI (Anthropic Messages): a session start's text is a user
# text part of its own ("copilot:start"), a prompt's follows
# <system_reminder> in the prompt ("copilot:prompt"), a tool's follows
# "Additional guidance from postToolUse hooks:" in the tool result
# ("copilot:tool"), and a stop's reason is the next prompt itself
# ("copilot:stop").
def landing($s):
	[turn[] | select(count($s) > 0)] | first //
	{} | [.. | strings | select(indices($s) | length > 0)] as $t |
	if .role == "system" then
		"claude:" + ($t | map(.[0:indices($s)[0]] |
		    [match("([A-Za-z]+)(?::[A-Za-z_]+)? hook additional context: ";
		    "g") | .captures[0].string] | last) | first // "?")
	elif .role == "developer" then "codex"
	elif .parts then
		if ($t | length > 0) and ($t | map(.[0:indices($s)[0]] |
		    test("<hook_context>")) | all) then "gemini"
		elif ($t | map(test("<hook_context>")) | any) then "?"
		else "gemini:stop" end
	elif .role == "user" then
		if ($t | map(test("<task-notification>")) | any) then
			"claude:rewake"
		elif ($t | map(test("Stop hook (feedback|blocking error)")) | any)
		then "claude:stop"
		elif ($t | map(test("<hook_prompt")) | any) then "codex:stop"
		elif ($t | map(.[0:indices($s)[0]] |
		    test("Additional guidance from postToolUse hooks")) | any)
		then "copilot:tool"
		elif ($t | map(.[0:indices($s)[0]] | test("<system_reminder>")) |
		    any) then "copilot:prompt"
		elif ($t | map(test("<current_datetime>")) | any) then
			"copilot:stop"
		elif .content | type == "array" then "copilot:start"
		else "?:user" end
	else "?:" + (.role // "none") end;
