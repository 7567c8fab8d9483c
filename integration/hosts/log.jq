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
# schema-shaped JSON (Gemini's model router, Codex's thread title) and
# not a token count.
def model_request:
	.method == "POST" and (.body | type) == "object" and
	(.path | test("count_tokens|:countTokens") | not) and
	(.body.generationConfig.responseJsonSchema == null) and
	(.body.text.format.type != "json_schema") and
	((.body | items) | length > 0);

# Where the hook's text landed, per host, for the first new item that
# holds $s: Claude a system message, the text after the last "EVENT hook
# additional context: " before $s (Claude joins its system texts into
# one), Codex a developer message, Gemini a "<hook_context>…" part.
def landing($s):
	[turn[] | select(count($s) > 0)] | first //
	{} | if .role == "system" then
		"claude:" + ([.. | strings | select(indices($s) | length > 0) |
		    .[0:indices($s)[0]] |
		    [match("([A-Za-z]+) hook additional context: "; "g") |
		    .captures[0].string] | last] | first // "?")
	elif .role == "developer" then "codex"
	elif .parts then
		if [.parts[].text // "" | select(indices($s) | length > 0) |
		    startswith("<hook_context>")] | all then "gemini" else "?" end
	else "?:" + (.role // "none") end;
