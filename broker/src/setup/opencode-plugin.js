// Written by pigeon install opencode; pigeon uninstall opencode removes it.
// Pigeon's bridge into opencode (Pigeon's docs/hook-protocol.md, "opencode"):
// opencode has no command hooks, so this plugin runs pigeon-hook with a
// JSON payload on stdin at session start, on each message, before and
// after each tool and when the session goes idle, and puts what it
// prints in front of the model. Every call has its own timeout (opencode
// gives plugin hooks none) and nothing here throws but a denial (a
// throwing hook fails the prompt, or before a tool the tool call): a
// failing, slow or missing pigeon-hook only means no mail, and no lease
// enforced.
const HOOK = @PIGEON_HOOK@;
const MADE = @PIGEON_MADE@;
const TIMEOUT_MS = @PIGEON_TIMEOUT_MS@;
const MAX_OUTPUT = 1048576;
const MAX_WHY = 200; // characters of a wake_error (the hook keeps 200 bytes)

import { spawn } from "node:child_process";

// The hooks still running: opencode exiting takes them with it.
const live = new Set();
const killGroup = (pid) => {
  try {
    process.kill(-pid, "SIGKILL");
  } catch (e) {
    // gone already
  }
};
try {
  process.on("exit", () => live.forEach(killGroup));
} catch (e) {
  // no exit event here: the timeout still ends every hook
}

// Run `pigeon-hook opencode EVENT` with 'payload' on stdin; resolve to
// the JSON object it printed, or null (nothing, not JSON, an error, the
// timeout). Never rejects.
function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let child = null;
    let timer = null;
    const finish = (value) => {
      if (done) return;
      done = true;
      if (timer !== null) clearTimeout(timer);
      resolve(value);
    };
    const reap = () => {
      if (child !== null) live.delete(child.pid);
    };
    try {
      child = spawn(HOOK, ["opencode", event], {
        stdio: ["pipe", "pipe", "ignore"],
        detached: true,
      });
    } catch (e) {
      finish(null);
      return;
    }
    if (typeof child.pid === "number") live.add(child.pid);
    timer = setTimeout(() => {
      // The whole group: a hook's children must not outlive it.
      if (typeof child.pid === "number") killGroup(child.pid);
      reap();
      finish(null);
    }, TIMEOUT_MS);
    child.on("error", () => {
      reap();
      finish(null);
    });
    child.stdin.on("error", () => {});
    child.stdout.on("error", () => finish(null));
    child.stdout.on("data", (chunk) => {
      if (out.length + chunk.length > MAX_OUTPUT) {
        finish(null);
        return;
      }
      out += chunk;
    });
    child.on("close", () => {
      reap();
      try {
        const text = out.trim();
        const value = text === "" ? null : JSON.parse(text);
        finish(value !== null && typeof value === "object" ? value : null);
      } catch (e) {
        finish(null);
      }
    });
    try {
      child.stdin.end(JSON.stringify(payload));
    } catch (e) {
      finish(null);
    }
  });
}

// The text the hook printed for the model, or "".
function text(value, key) {
  return value !== null && typeof value[key] === "string" ? value[key] : "";
}

// Why a prompt did not start, in one line: the SDK resolves an HTTP
// error as { error } (opencode 1.18.33, measured: a session gone is a
// 404 NotFoundError, "Session not found: ID"; a malformed id a 500
// UnknownError) and rejects on a request that fails or a client that
// throws.
function why(e) {
  let s = "";
  try {
    s = (e && e.data && e.data.message) || (e && e.message) ||
      (e && e.name) || String(e);
  } catch (x) {
    s = "";
  }
  s = String(s).replace(/\s+/g, " ").trim();
  return (s === "" ? "unknown error" : s).slice(0, MAX_WHY);
}

export const PigeonPlugin = async (input) => {
  const client = input && input.client;
  const directory = (input && input.directory) || process.cwd();
  // Per session: the session start's run (once per session and process).
  // A subagent's session (one with a parent) is not the agent's: no hook
  // runs for it.
  const starts = new Map();
  const children = new Set();
  const ours = (id) => typeof id === "string" && id !== "" && !children.has(id);

  const start = (id, source) => {
    if (!starts.has(id))
      starts.set(id, hook("session.created", {
        hook_event_name: "session.created",
        session_id: id,
        cwd: directory,
        source: source,
      }));
    return starts.get(id);
  };

  return {
    event: async (arg) => {
      try {
        const event = arg && arg.event;
        if (!event || !event.properties) return;
        if (event.type === "session.created" && event.properties.info) {
          const info = event.properties.info;
          if (info.parentID) children.add(info.id);
          else start(info.id, "startup");
          return;
        }
        if (event.type !== "session.idle") return;
        const id = event.properties.sessionID;
        if (!ours(id)) return;
        const idle = {
          hook_event_name: "session.idle",
          session_id: id,
          cwd: directory,
        };
        // The hook claims nothing here: with mail waiting (and the
        // governor willing) it answers the line a new turn starts with,
        // and that turn's chat.message claims the mail into its message.
        const line = text(await hook("session.idle", idle), "continue");
        if (line === "") return;
        // Called as a method: the SDK's methods need their `this`.
        // opencode 1.18.33 accepts the prompt of a busy session too (it
        // runs its chat.message at once and the turn after the running
        // one, measured); it answers once that chat.message has run.
        const session = client && client.session;
        const ask = {
          path: { id },
          body: { parts: [{ type: "text", text: line }] },
        };
        let failed = null;
        try {
          if (!session) {
            failed = "no opencode client to prompt the session";
          } else {
            const r = await (session.promptAsync ?
              session.promptAsync(ask) : session.prompt(ask));
            if (r && r.error) failed = why(r.error);
          }
        } catch (e) {
          failed = why(e);
        }
        // Nothing was claimed: the mail waits for the next event; the
        // hook logs why the turn did not start.
        if (failed !== null)
          await hook("session.idle", { ...idle, wake_error: failed });
      } catch (e) {
        // never throw into opencode
      }
    },

    "chat.message": async (hin, output) => {
      try {
        const id = hin && hin.sessionID;
        if (!ours(id) || !output || !Array.isArray(output.parts)) return;
        const begin = await start(id, "resume");
        // A turn the idle wake started runs it too: its prompt is the
        // wake line, which the hook knows is no person's.
        const prompt = output.parts
          .filter((p) => p && p.type === "text" && !p.synthetic &&
            typeof p.text === "string")
          .map((p) => p.text)
          .join("\n");
        const own = text(await hook("chat.message", {
          hook_event_name: "chat.message",
          session_id: id,
          message_id: (output.message && output.message.id) ||
            hin.messageID || undefined,
          cwd: directory,
          prompt: prompt,
        }), "context");
        const first = text(begin, "context");
        if (first !== "") starts.set(id, Promise.resolve(null));
        // opencode saves every part under an id and orders them by it:
        // the last part's id and a suffix sorts right after it.
        const last = output.parts[output.parts.length - 1];
        let n = 0;
        for (const t of [first, own]) {
          if (t === "" || !last || typeof last.id !== "string") continue;
          output.parts.push({
            id: last.id + "pigeon" + n++,
            sessionID: last.sessionID,
            messageID: last.messageID,
            type: "text",
            text: t,
            synthetic: true,
          });
        }
      } catch (e) {
        // never throw into opencode
      }
    },

    // Before a tool: the hook answers {"deny": TEXT} when the call would
    // write a path another agent leases; opencode fails the tool call
    // with the error thrown here and shows its message to the model.
    "tool.execute.before": async (hin, output) => {
      let deny = "";
      try {
        const id = hin && hin.sessionID;
        if (!ours(id) || !output) return;
        deny = text(await hook("tool.execute.before", {
          hook_event_name: "tool.execute.before",
          session_id: id,
          tool_name: hin.tool,
          tool_input: output.args,
          cwd: directory,
        }), "deny");
      } catch (e) {
        deny = "";
      }
      if (deny !== "") throw new Error(deny);
    },

    "tool.execute.after": async (hin, output) => {
      try {
        const id = hin && hin.sessionID;
        if (!ours(id) || !output) return;
        const t = text(await hook("tool.execute.after", {
          hook_event_name: "tool.execute.after",
          session_id: id,
          tool_name: hin.tool,
          cwd: directory,
        }), "context");
        if (t !== "" && typeof output.output === "string")
          output.output += "\n\n" + t;
      } catch (e) {
        // never throw into opencode
      }
    },
  };
};
