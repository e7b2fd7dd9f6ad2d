// Berth dashboard. The broker pushes its whole state as Server-Sent Events
// ("snapshot" on /events); this file only renders it. The requests it
// makes itself are a search and the end of an MCP session the user asks for.
"use strict";

const $ = (id) => document.getElementById(id);

// Access. The broker admits the user's own browser by its account. Where it
// cannot tell accounts apart (macOS), the page is opened with the one-time
// link `berth dashboard` prints (#login=<code>): the page redeems the code
// for a key, keeps it in this origin's storage and sends it with every
// request. Every request also carries the Berth-Client header, which a page
// of another origin cannot send, so the broker knows it is this page.
const KEY = "berth-dashboard-key";

function call(path, init = {}) {
  const headers = Object.assign({ "Berth-Client": "dashboard" }, init.headers);
  const key = localStorage.getItem(KEY);
  if (key) headers.Authorization = "Bearer " + key;
  return fetch(path, Object.assign({}, init, { headers, cache: "no-store" }));
}

async function login() {
  const m = /^#login=([0-9a-f]+)$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, "", location.pathname); // the code leaves the address bar
  const r = await call("/dashboard/login", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: m[1] }),
  });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || "login failed: " + r.status);
  localStorage.setItem(KEY, body.key);
}

// refused shows why the broker turned the page away, instead of any data
// (the first reason given: a failed login says more than what follows).
function refused(message) {
  localStorage.removeItem(KEY);
  if ($("access").hidden) $("access-text").textContent = message;
  $("access").hidden = false;
  $("empty").hidden = true;
  setLive("off", "no access");
}

// h builds an element: h("td", {class: "x"}, "text", child, ...).
// printable shows s as it is: a control character (CR, ESC), a
// bidirectional override or another invisible format character is written
// as a \u escape, so that a value (a hosted server's argument, a log
// line) cannot hide or reorder what is shown.
function printable(s) {
  return String(s ?? "").replace(/[\p{Cc}\p{Cf}]/gu, (c) => "\\u" + c.codePointAt(0).toString(16).padStart(4, "0"));
}

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") el.setAttribute("style", v);
    else if (k.startsWith("data-")) el.setAttribute(k, v);
    else el[k] = v;
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

function duration(seconds) {
  seconds = Math.max(0, Math.floor(seconds));
  const d = Math.floor(seconds / 86400), hr = Math.floor(seconds / 3600) % 24;
  const m = Math.floor(seconds / 60) % 60, s = seconds % 60;
  if (d) return d + "d " + hr + "h";
  if (hr) return hr + "h " + m + "m";
  if (m) return m + "m " + s + "s";
  return s + "s";
}

function ago(iso) {
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  return s < 5 ? "just now" : duration(s) + " ago";
}

function bytes(n) {
  if (!n) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return n.toFixed(n < 10 && i ? 1 : 0) + " " + units[i];
}

function ms(v) {
  if (v < 1) return v.toFixed(2) + " ms";
  if (v < 1000) return v.toFixed(v < 10 ? 1 : 0) + " ms";
  return (v / 1000).toFixed(2) + " s";
}

function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour12: false });
}

function renderHealth(hl) {
  $("version").textContent = "v" + hl.version;
  const stat = (label, value) => h("div", null, h("dt", null, label), h("dd", null, value));
  $("health").replaceChildren(
    stat("Uptime", duration(hl.uptime_seconds)),
    stat("PID", hl.pid),
    stat("Memory (RSS)", bytes(hl.rss_bytes)),
    stat("Projects", hl.projects),
  );
}

// The broker's MCP transports, in order, from each snapshot.
let TRANSPORTS = [];
const SHORT = { websocket: "ws" };

function plural(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

function sessionChips(p) {
  const by = p.sessions_by_transport || {};
  return h("div", { class: "chips" }, TRANSPORTS.map((t) =>
    h("span", { class: "chip" + (by[t] ? "" : " zero"), title: t + " sessions" }, (SHORT[t] || t) + " ", h("b", null, by[t] || 0))));
}

function indexCell(ix) {
  if (!ix) return h("span", { class: "badge neutral" }, "off");
  const busy = ix.state !== "ready";
  const cls = ix.state === "ready" ? "ok" : ix.state === "closed" ? "err" : "busy";
  const parts = [h("span", { class: "badge " + cls }, ix.state), " "];
  const counting = busy && ix.progress && ix.progress.total > 0;
  if (counting) {
    // The counts below are those of the last finished index: while the
    // first one builds there are none yet, so the progress speaks alone.
    const pct = Math.round(100 * ix.progress.done / ix.progress.total);
    parts.push(h("span", { class: "muted" }, ix.progress.done + " / " + ix.progress.total + " files read"));
    parts.push(h("div", { class: "bar", title: pct + "%" }, h("span", { style: "width:" + pct + "%" })));
    if (ix.files) parts.push(h("span", { class: "muted small" }, "serving " + plural(ix.files, "file") + " · " + plural(ix.chunks, "section") + " meanwhile"));
  } else if (busy && !ix.files) {
    parts.push(h("span", { class: "muted" }, ix.state === "loading" ? "reading the stored index…" : "counting files…"));
  } else {
    parts.push(h("span", { class: "muted" }, plural(ix.files, "file") + " · " + plural(ix.chunks, "section")));
  }
  if (ix.last_error) parts.push(h("div", { class: "small", style: "color:var(--err)" }, ix.last_error));
  const warnings = ix.warnings || [];
  warnings.slice(0, 3).forEach((w) => parts.push(h("div", { class: "small warning", title: w }, "⚠ " + w)));
  if (warnings.length > 3) parts.push(h("div", { class: "small muted" }, "and " + (warnings.length - 3) + " more"));
  return parts;
}

// configWarnings are the settings of the project's config that Berth ignored.
function configWarnings(d) {
  const list = d.config_warnings || [];
  if (!list.length) return null;
  return h("div", { class: "wide" }, h("dt", null, "Config"),
    h("dd", null, list.map((w) => h("div", { class: "small warning", title: w }, "⚠ " + w))));
}

// renderProblems lists what the broker itself cannot do now (write its
// log) and what it repaired as it started.
function renderProblems(hl) {
  const list = (hl.log_error ? [hl.log_error] : []).concat(hl.warnings || []);
  $("problems").hidden = !list.length;
  $("problems-list").replaceChildren(...list.map((p) => h("li", null, h("div", { class: "small errmsg" }, p))));
}

// renderRefused lists the projects the broker would not mount, and why.
function renderRefused(list) {
  $("refused").hidden = !list.length;
  $("refused-list").replaceChildren(...list.map((r) => h("li", { "data-root": r.root },
    h("code", null, r.root),
    h("span", { class: "badge err" }, r.code),
    h("span", { class: "muted small" }, " " + ago(r.time) + (r.count > 1 ? " · " + plural(r.count, "attempt") : "")),
    h("div", { class: "small errmsg" }, r.error))));
}

function workflowCell(d) {
  const list = d.workflow_sessions;
  if (!list) return h("span", { class: "badge neutral" }, "off");
  if (!list.count) return h("span", { class: "muted" }, "no sessions");
  const active = list.sessions.filter((s) => s.status === "active").length;
  return [
    h("span", null, plural(list.count, "session") + (active ? " · " + active + " active" : "")),
    h("ul", { class: "wf" }, list.sessions.slice(0, 3).map((s) => h("li", null,
      h("span", { class: "badge " + (s.status === "active" ? "busy" : "ok") }, s.status),
      h("code", null, s.workflow_type), h("span", { class: "muted small" }, "phase " + s.current_phase + "/" + s.total_phases)))),
  ];
}

function callsTable(calls) {
  if (!calls || !calls.length) return h("p", { class: "none" }, "No tool calls yet.");
  const cols = h("colgroup", null, ["tool", "result", "took", "via", "when"].map((c) => h("col", { class: "c-" + c })));
  return h("table", { class: "calls" }, cols, h("tbody", null, calls.slice(0, 8).map((c) => h("tr", null,
    h("td", { class: "tool" }, c.tool, c.ok ? null : h("span", { class: "errmsg", title: printable(c.error) }, printable(c.error))),
    h("td", null, h("span", { class: "badge " + (c.ok ? "ok" : "err") }, c.ok ? "ok" : "error")),
    h("td", { class: "num" }, ms(c.duration_ms)),
    h("td", { class: "num" }, c.transport),
    h("td", { class: "when" }, ago(c.time)),
  ))));
}

// clientsTable lists a project's MCP sessions; "end" asks the broker to
// close one (DELETE /projects/{id}/sessions/{sid}), as `berth clients
// --close` does; the next snapshot shows it gone.
function clientsTable(p) {
  const list = p.clients || [];
  if (!list.length) return h("p", { class: "none" }, "No MCP sessions.");
  const end = async (btn, s) => {
    btn.disabled = true;
    try {
      const r = await call("/projects/" + encodeURIComponent(p.id) + "/sessions/" + encodeURIComponent(s.id), { method: "DELETE" });
      if (!r.ok) throw new Error((await r.json()).error || "broker answered " + r.status);
    } catch (e) {
      btn.disabled = false;
      btn.title = "Could not end it: " + e.message;
    }
  };
  return h("table", { class: "clients" }, h("tbody", null, list.map((s) => {
    const btn = h("button", { class: "end", type: "button", title: "end this session (its next request gets 404)" }, "end");
    btn.addEventListener("click", () => end(btn, s));
    return h("tr", { "data-session": s.id },
      h("td", { class: "tool" }, (s.client || "?") + (s.client_version ? " " + s.client_version : ""),
        h("span", { class: "muted small", title: s.id }, " " + s.id.slice(0, 8))),
      h("td", null, s.transport),
      h("td", null, h("span", { class: "badge " + (s.state === "live" ? "ok" : "neutral"),
        title: s.state === "live" ? "a request in flight or a stream open" : "idle: evicted first when the project is full" },
        s.state === "live" ? "live" : "idle " + duration(s.idle_seconds))),
      h("td", { class: "when" }, "up " + duration((Date.now() - new Date(s.started_at).getTime()) / 1000)),
      h("td", null, btn));
  })));
}

function projectCard(p) {
  const d = p.detail || {};
  return h("article", { class: "card project", "data-id": p.id },
    h("div", { class: "project-head" },
      h("h3", null, p.name),
      p.kind === "folder"
        ? h("span", { class: "badge neutral", title: "a folder in no project: the user's hosted servers, no standards, no workflows, no state file" }, "folder (no .praxis-os)")
        : null,
      p.pinned ? h("span", { class: "badge pinned", title: "kept mounted by berth attach" }, "pinned") : null,
      repositoryBadge(p.repository),
      h("span", { class: "id" }, p.id),
      h("span", { class: "uptime muted small" }, plural(p.holders, "holder") + " · up " + duration((Date.now() - new Date(p.started_at).getTime()) / 1000))),
    h("div", { class: "endpoint" },
      p.port
        ? [h("span", { class: "port", title: "port" }, ":" + p.port), h("code", null, p.url)]
        : h("span", { class: "badge err", title: "the IDE's tools work; sub-agents cannot reach the project until a port is free" }, "no port"),
      p.transport
        ? h("span", { class: "badge neutral", title: "the transport the project's state file offers sub-agents" }, "transport " + p.transport)
        : p.kind === "folder"
        ? h("span", { class: "muted small", title: "nothing is written into a folder in no project: sub-agents find its url here and in berth projects" }, "no state file (a folder)")
        : h("span", { class: "muted small", title: "the broker could not write .mcp_server_state.json (see its log)" }, "no state file")),
    (p.missing || []).concat(d.config_error ? [d.config_error] : []).map((w) => h("div", { class: "small warning", title: w }, "⚠ " + w)),
    h("dl", { class: "facts" },
      h("div", { class: "wide" }, h("dt", null, "Root"), h("dd", { class: "root" }, h("code", null, p.root))),
      h("div", null, h("dt", null, "Sessions · " + p.sessions + " (" + (p.sessions_live || 0) + " live, " + (p.sessions_idle || 0) + " idle)"), h("dd", null, sessionChips(p))),
      h("div", null, h("dt", null, "Index"), h("dd", null, indexCell(d.index))),
      h("div", null, h("dt", null, "Workflow sessions"), h("dd", null, workflowCell(d))),
      configWarnings(d),
    ),
    serversSection(p.servers),
    h("h4", null, "MCP sessions"),
    clientsTable(p),
    h("h4", null, "Recent tool calls"),
    callsTable(p.calls));
}

// repositoryBadge names a worktree's repository and what it has checked
// out: "repo · main", "repo/wt-a · topic", "repo/wt-b · detached 1a2b3c4".
function repositoryBadge(r) {
  if (!r) return null;
  const where = r.worktree ? r.name + "/" + r.worktree : r.name;
  const what = r.branch || (r.commit ? "detached " + r.commit.slice(0, 7) : "no commit");
  return h("span", { class: "badge neutral repository", "data-repository": r.id, title: "git repository " + r.common_dir },
    where + " · " + what);
}

// byRepository puts the worktrees of one repository after each other, at
// the place of the repository's first project.
function byRepository(list) {
  const groups = new Map();
  const out = [];
  for (const p of list) {
    if (!p.repository) { out.push([p]); continue; }
    let g = groups.get(p.repository.id);
    if (!g) { g = []; groups.set(p.repository.id, g); out.push(g); }
    g.push(p);
  }
  return out.flat();
}

function renderProjects(list) {
  list = byRepository(list);
  $("project-count").textContent = list.length;
  $("projects").replaceChildren(...list.map(projectCard));
  $("empty").hidden = list.length > 0;
  // Keep the search box's choice while the list changes.
  const sel = $("search-project");
  const keep = sel.value;
  sel.replaceChildren(...list.map((p) => h("option", { value: p.id }, p.name + "  (:" + p.port + ")")));
  if (list.some((p) => p.id === keep)) sel.value = keep;
  sel.disabled = list.length === 0;
}

function renderLogs(lines) {
  $("logs").replaceChildren(...lines.slice().reverse().map((l) => {
    const attrs = Object.entries(l.attrs || {}).filter(([, v]) => v !== "").map(([k, v]) => k + "=" + printable(v)).join(" ");
    return h("li", null,
      h("time", { dateTime: l.time }, clock(l.time)),
      h("span", { class: "lv " + l.level }, l.level),
      h("span", { class: "msg" }, l.project ? h("span", { class: "proj" }, "[" + l.project + "] ") : null, printable(l.message)),
      attrs ? h("span", { class: "attrs" }, attrs) : null);
  }));
}

function setLive(state, text) {
  $("live").className = "live " + state;
  $("live-text").textContent = text;
}

function render(s) {
  TRANSPORTS = s.transports || [];
  renderHealth(s.health);
  renderProblems(s.health);
  renderRefused(s.health.refused || []);
  renderProjects(s.projects || []);
  renderLogs(s.logs || []);
  $("access").hidden = true;
  setLive("on", "live");
}

// dispatch handles one Server-Sent Event (the lines before a blank line).
function dispatch(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (event === "snapshot" && data.length) render(JSON.parse(data.join("\n")));
}

// connect reads /events with fetch (an EventSource cannot send the key),
// and reconnects after a pause when the stream ends.
async function connect() {
  for (;;) {
    try {
      const r = await call("/events", { headers: { Accept: "text/event-stream" } });
      if (r.status === 403) {
        refused((await r.json()).error);
        return;
      }
      if (!r.ok || !r.body) throw new Error("broker answered " + r.status);
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        for (let i; (i = buf.indexOf("\n\n")) >= 0; buf = buf.slice(i + 2)) dispatch(buf.slice(0, i));
      }
    } catch (e) {
      // the broker stopped or restarted: try again below
    }
    setLive("off", "reconnecting…");
    await new Promise((done) => setTimeout(done, 2000));
  }
}

async function runSearch(ev) {
  ev.preventDefault();
  const id = $("search-project").value, q = $("search-q").value.trim();
  const status = $("search-status"), out = $("search-results");
  if (!id || !q) return;
  status.hidden = false;
  status.textContent = "Searching…";
  try {
    const r = await call("/projects/" + encodeURIComponent(id) + "/search?n=5&q=" + encodeURIComponent(q));
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || "broker answered " + r.status);
    status.textContent = plural(body.total, "matching section") + " · " + body.query_time_ms.toFixed(2) + " ms";
    out.replaceChildren(...body.results.map((hit) => h("li", null,
      h("div", { class: "sec" }, hit.section),
      h("div", { class: "loc" }, h("code", null, hit.file + ":" + hit.lines[0] + "–" + hit.lines[1]),
        h("span", null, "score " + hit.relevance_score.toFixed(2))),
      h("p", null, hit.content))));
  } catch (e) {
    status.textContent = "Search failed: " + e.message;
    out.replaceChildren();
  }
}

$("search").addEventListener("submit", runSearch);
// A failed login is shown, and the page still tries: where the broker
// knows the user's account it needs no key.
login().catch((e) => refused(e.message)).then(connect);
