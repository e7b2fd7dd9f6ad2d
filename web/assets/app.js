// Berth dashboard: polls the control API and renders the mounted projects.
"use strict";

function cell(text, code) {
  const td = document.createElement("td");
  if (code) {
    const c = document.createElement("code");
    c.textContent = text;
    td.appendChild(c);
  } else {
    td.textContent = text;
  }
  return td;
}

async function refresh() {
  const err = document.getElementById("error");
  try {
    const [h, p] = await Promise.all([fetch("/health"), fetch("/projects")]);
    if (!h.ok || !p.ok) throw new Error("broker answered " + h.status + "/" + p.status);
    const health = await h.json();
    const list = (await p.json()).projects || [];
    document.getElementById("health").textContent =
      "broker pid " + health.pid + " · v" + health.version + " · up " + Math.round(health.uptime_seconds) + "s · " + health.projects + " project(s)";
    const body = document.querySelector("#projects tbody");
    body.replaceChildren();
    for (const pr of list) {
      const tr = document.createElement("tr");
      tr.dataset.id = pr.id;
      const name = cell(pr.name);
      if (pr.pinned) {
        const b = document.createElement("span");
        b.className = "pinned";
        b.textContent = "attached";
        name.appendChild(b);
      }
      tr.append(name, cell(pr.url, true), cell(String(pr.sessions)), cell(String(pr.holders)),
        cell(new Date(pr.started_at).toLocaleString()), cell(pr.root, true));
      body.appendChild(tr);
    }
    document.getElementById("empty").hidden = list.length > 0;
    err.hidden = true;
  } catch (e) {
    err.textContent = "Cannot reach the broker: " + e.message;
    err.hidden = false;
  }
}

refresh();
setInterval(refresh, 2000);
