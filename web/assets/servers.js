// Berth dashboard: the MCP servers the broker hosts for a project (one row
// each: state, pid, tools, restarts, memory, calls, and why one does not
// run with the command that fixes it). Uses h, bytes and plural from app.js.
"use strict";

const SERVER_BADGE = {
  running: "ok", starting: "busy", restarting: "busy", stopped: "neutral",
  failed: "err", "needs approval": "busy", invalid: "err", disabled: "neutral",
};

function serversSection(list) {
  if (!list || !list.length) return null;
  const rows = list.map((s) => h("tr", { "data-server": s.name },
    h("td", { class: "tool", title: s.command }, s.name,
      s.last_error ? h("span", { class: "errmsg", title: s.last_error }, s.last_error) : null,
      s.fix ? h("span", { class: "fix" }, "run ", h("code", null, s.fix)) : null),
    h("td", null, h("span", { class: "badge " + (SERVER_BADGE[s.state] || "neutral") }, s.state)),
    h("td", { class: "num" }, s.pid ? "pid " + s.pid : "–"),
    h("td", { class: "num" }, plural(s.tools, "tool")),
    h("td", { class: "num", title: "calls · errors" }, s.calls + " · " + s.errors),
    h("td", { class: "num", title: "restarts" }, plural(s.restarts, "restart")),
    h("td", { class: "num" }, bytes(s.rss_bytes))));
  return [h("h4", null, "Hosted servers"), h("table", { class: "calls servers" }, h("tbody", null, rows))];
}
