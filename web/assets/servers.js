// Berth dashboard: the MCP servers the broker hosts for a project (one row
// each under a header: state, pid, tools, calls and errors, restarts,
// memory, the file that declares it, and why one does not run with the
// command that fixes it) and, under each server a project
// declares, every value its approval covers (command, the program it runs,
// args, env, working directory, roots, the project's files it runs) with
// what changes what runs. Values are shown through printable(): control
// and bidirectional characters appear escaped, never acted on.
// Uses h, printable, bytes and plural from app.js.
"use strict";

const SERVER_BADGE = {
  running: "ok", starting: "busy", restarting: "busy", stopped: "neutral",
  failed: "err", "needs approval": "busy", invalid: "err", disabled: "neutral", shadowed: "err",
};

function definitionRows(s) {
  const d = s.definition;
  if (!d || s.origin !== "project") return null;
  const rows = [];
  const field = (name, ...values) => values.forEach((v, i) =>
    rows.push(h("div", { class: "def" }, h("span", { class: "k" }, i ? "" : name), h("code", null, v))));
  if (d.url) field("url", printable(d.url));
  else {
    field("command", printable(d.command) + "  (" + (d.program ? "runs " + printable(d.program) : "not found") + ")");
    field("args", ...((d.args || []).length ? d.args.map(printable) : ["none"]));
    const env = Object.keys(d.env || {}).sort();
    field("env", ...(env.length ? env.map((k) => printable(k) + "=" + printable(d.env[k])) : ["none"]));
    field("cwd", printable(d.dir));
  }
  field("roots", ...((d.roots || []).length ? d.roots.map(printable) : ["none"]));
  (d.files || []).forEach((f, i) => field(i ? "" : "files", printable(f.path) + (f.target ? " → " + printable(f.target) : "") + "  sha256:" + f.sha256.slice(0, 16)));
  if (d.tools && (d.tools.allow || d.tools.deny)) field("tools", "allow [" + printable((d.tools.allow || []).join(", ")) + "]  deny [" + printable((d.tools.deny || []).join(", ")) + "]");
  const notes = [...(d.warnings || []).map((w) => "! " + w), ...(d.problems || []).map((p) => "cannot run: " + p)];
  if (s.withheld_tools) notes.push("! " + plural(s.withheld_tools, "tool") + " withheld: its tools filter was widened since the approval");
  if ((s.changed || []).length) notes.push("changed since the approval: " + s.changed.join(", "));
  notes.forEach((n) => rows.push(h("div", { class: "warn" }, printable(n))));
  return h("tr", { class: "definition", "data-definition": s.name },
    h("td", { colSpan: 7 }, h("details", { open: s.state !== "running" },
      h("summary", null, "what " + printable(s.name) + " runs (declared by the project)"), rows)));
}

function serversSection(list) {
  if (!list || !list.length) return null;
  const rows = list.flatMap((s) => [h("tr", { "data-server": s.name, "data-origin": s.origin },
    h("td", { class: "tool", title: printable(s.command) }, printable(s.name),
      s.declared_in ? h("span", { class: "declared" }, (s.origin === "user" ? "user server, in " : "in ") + printable(s.declared_in)) : null,
      s.last_error ? h("span", { class: "errmsg", title: printable(s.last_error) }, printable(s.last_error)) : null,
      s.fix ? h("span", { class: "fix" }, "run ", h("code", null, printable(s.fix))) : null),
    h("td", null, h("span", { class: "badge " + (SERVER_BADGE[s.state] || "neutral") }, s.state)),
    h("td", { class: "num" }, s.pid ? "pid " + s.pid : "–"),
    h("td", { class: "num" }, plural(s.tools, "tool")),
    h("td", { class: "num", title: "calls · errors" }, s.calls + " · " + s.errors),
    h("td", { class: "num", title: "restarts" }, plural(s.restarts, "restart")),
    h("td", { class: "num" }, bytes(s.rss_bytes))), definitionRows(s)]);
  const head = h("thead", null, h("tr", null, ...["Server", "State", "Process", "Tools", "Calls · errors", "Restarts", "Memory"].map((c) => h("th", null, c))));
  return [h("h4", null, "Hosted servers"), h("table", { class: "calls servers" }, head, h("tbody", null, rows))];
}
