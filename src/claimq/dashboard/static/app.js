// claimq dashboard. Every value from the server reaches the page through textContent (el()),
// never as HTML.
"use strict";

const state = { me: null, filter: null, next: null, bulk: null, job: null, last: null, view: "all",
                charts: null, source: null, workflow: null, wfTimer: null, wfNext: null };

function $(id) { return document.getElementById(id); }

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function toast(text) {
  $("toast").textContent = text;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { $("toast").textContent = ""; }, 4000);
}

async function api(path, body) {
  const options = { credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["content-type"] = "application/json";
    if (state.me) options.headers["x-claimq-csrf"] = state.me.csrf;
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) {
    const error = new Error(data.error || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

function confirmAction(text) {
  return new Promise((resolve) => {
    const dialog = $("confirm");
    $("confirm-text").textContent = text;
    dialog.onclose = () => resolve(dialog.returnValue === "ok");
    dialog.returnValue = "";
    dialog.showModal();
  });
}

// What the page draws from a GET: only the answer to the newest request for the same place
// (`target`: the jobs table, the inspector, ...) is drawn. A search, a page or a refresh asked
// for while an older one is still on its way supersedes it, whichever answer arrives first:
// drawing both showed a job twice, or a superseded filter's jobs under the new one. The target
// is aria-busy while any of its requests is on its way. True when `draw` ran.
async function load(target, path, draw) {
  const ticket = (load.tickets[target] || 0) + 1;
  load.tickets[target] = ticket;
  load.pending[target] = (load.pending[target] || 0) + 1;
  $(target).setAttribute("aria-busy", "true");
  try {
    let data;
    try {
      data = await api(path);
    } catch (error) {
      if (ticket === load.tickets[target]) toast(error.message);
      return false;
    }
    if (ticket !== load.tickets[target]) return false;
    draw(data);
    return true;
  } finally {
    load.pending[target] -= 1;
    if (!load.pending[target]) $(target).setAttribute("aria-busy", "false");
  }
}
load.tickets = {};
load.pending = {};

async function act(text, path, body, after) {
  if (!(await confirmAction(text))) return null;
  try {
    const result = await api(path, body);
    if (after) after(result);
    return result;
  } catch (error) {
    toast("Refused: " + error.message);
    return null;
  }
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  if (seconds < 3600) return (seconds / 60).toFixed(1) + " min";
  return (seconds / 3600).toFixed(1) + " h";
}

// Every time on the page is UTC and says so, as the CLI's: "2026-05-01 14:03:07 UTC".
function when(text) {
  if (!text) return "–";
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return String(text);
  return date.toISOString().slice(0, 19).replace("T", " ") + " UTC";
}

function clock(date) {
  return date.toISOString().slice(11, 19);
}

// -- sign-in --------------------------------------------------------------------------------

async function start() {
  try {
    state.me = await api("api/me");
  } catch (error) {
    if (error.status === 401) { showLogin(); return; }
    throw error;
  }
  $("login").hidden = true;
  $("main").hidden = false;
  $("tabs").hidden = false;
  $("logout").hidden = state.me.name === "anonymous";
  $("who").textContent = state.me.name + " (" + state.me.role + ")";
  document.body.classList.toggle("admin", state.me.role === "admin");
  $("tabs").querySelector("[data-tab=workflows]").hidden = !state.me.workflows;
  setupCharts();
  listen();
  followHistory();
  fillBulkActions();
  showView("all");
  route();
}

function showLogin() {
  $("login").hidden = false;
  $("main").hidden = true;
  $("tabs").hidden = true;
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await api("api/login", { token: $("token").value });
    $("token").value = "";
    $("login-error").textContent = "";
    start();
  } catch (error) {
    $("login-error").textContent = error.message;
  }
});

$("logout").addEventListener("click", async () => {
  await api("api/logout", {});
  if (state.source) state.source.close();
  location.reload();
});

function showTab(name) {
  for (const other of document.querySelectorAll("#tabs button")) {
    other.classList.toggle("active", other.dataset.tab === name);
    $("tab-" + other.dataset.tab).hidden = other.dataset.tab !== name;
  }
  if (name !== "workflows") stopWorkflowRefresh();
  if (name === "audit") loadAudit();
  if (name === "schedules") loadSchedules();
  if (name === "workers") followWorkers(); else stopWorkers();
  if (name === "flow") followFlow(); else stopFlow();
  if (name === "latency") followLatency(); else stopLatency();
  if (name === "retention") loadRetention();
  if (name === "jobs" && !state.filter) search();
}

for (const button of document.querySelectorAll("#tabs button")) {
  button.addEventListener("click", () => {
    if (button.dataset.tab === "workflows") {
      if (location.hash === "#workflows") route(); else location.hash = "workflows";
    } else {
      if (location.hash.startsWith("#workflows")) clearHash();
      showTab(button.dataset.tab);
    }
  });
}

// -- live overview --------------------------------------------------------------------------

function listen() {
  const source = new EventSource("api/events");
  state.source = source;
  source.onmessage = (event) => {
    $("live").textContent = "live";
    update(JSON.parse(event.data));
  };
  source.addEventListener("trouble", (event) => {
    $("live").textContent = "database trouble: " + JSON.parse(event.data);
  });
  source.onerror = () => { $("live").textContent = "reconnecting…"; };
}

function update(snapshot) {
  renderStates(snapshot.states || {});
  renderQueues(snapshot.queues);
  renderWorkers("workers", snapshot.workers, false);
  renderBreakers("breakers", snapshot.breakers || []);
  plot(snapshot);
}

function renderQueues(queues) {
  const body = $("queues").tBodies[0];
  body.replaceChildren();
  for (const q of queues) {
    const row = el("tr", null, { "data-queue": q.name });
    row.append(el("td", q.name, { class: "name" }));
    row.append(el("td", q.state, { class: "state state-" + q.state }));
    row.append(el("td", q.depth, { class: "num depth" }));
    row.append(el("td", q.pending, { class: "num" }));
    row.append(el("td", q.scheduled, { class: "num" }));
    row.append(el("td", q.running, { class: "num running" }));
    row.append(el("td", q.max_workers === null ? "none" : q.max_workers, { class: "num limit" }));
    row.append(el("td", age(q.oldest_due_age), { class: "num" }));
    row.append(el("td", q.past_lease, { class: "num" }));
    row.append(el("td", q.dead, { class: "num dead" }));
    const actions = el("td", null, { class: "admin-only" });
    actions.append(queueButton(q, q.paused ? "resume" : "pause"));
    actions.append(queueButton(q, q.active ? "deactivate" : "activate"));
    const limit = el("button", "Limit…", { type: "button", class: "limit-button",
      title: "Limit: at most this many of the queue's jobs run at once, across all workers." });
    limit.addEventListener("click", () => setLimit(q));
    actions.append(limit);
    row.append(actions);
    body.append(row);
  }
}

const QUEUE_HELP = {
  pause: "Pause: workers stop claiming this queue's jobs for now (running jobs finish, new jobs " +
    "still queue up). Resume undoes it.",
  resume: "Resume: workers claim this queue's jobs again (it must also be active).",
  deactivate: "Deactivate: mark the queue out of service; no worker claims from it until it is " +
    "activated, whether paused or not. A separate switch from Pause.",
  activate: "Activate: mark the queue in service again (it must also not be paused).",
};

function queueButton(q, action) {
  const button = el("button", action[0].toUpperCase() + action.slice(1),
                    { type: "button", class: "queue-" + action, title: QUEUE_HELP[action] });
  button.addEventListener("click", () =>
    act(action + " queue " + q.name + "?", "api/queues/" + encodeURIComponent(q.name),
        { action }, () => toast("Queue " + q.name + ": " + action)));
  return button;
}

// "Limit…" opens an in-page form, not the browser's prompt box: a number, or empty for none.
function setLimit(q) {
  const dialog = $("limit-dialog");
  $("limit-queue").textContent = q.name;
  $("limit-value").value = q.max_workers === null ? "" : String(q.max_workers);
  $("limit-error").textContent = "";
  dialog.dataset.queue = q.name;
  dialog.returnValue = "";
  dialog.showModal();
  $("limit-value").focus();
}

$("limit-cancel").addEventListener("click", () => $("limit-dialog").close("cancel"));
$("limit-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const dialog = $("limit-dialog");
  const name = dialog.dataset.queue;
  const text = $("limit-value").value.trim();
  const value = text === "" ? null : Number(text);
  if (value !== null && !(Number.isInteger(value) && value >= 1)) {
    $("limit-error").textContent = "A whole number of at least 1, or empty for no limit.";
    return;
  }
  try {
    await api("api/queues/" + encodeURIComponent(name), { action: "max_workers", max_workers: value });
  } catch (error) {
    $("limit-error").textContent = "Refused: " + error.message;
    return;
  }
  dialog.close("ok");
  toast("Queue " + name + ": limit " + (value === null ? "none" : value));
});

const HISTORY = 120;

function setupCharts() {
  if (state.charts || typeof Chart === "undefined") return;
  const options = { animation: false, responsive: true, maintainAspectRatio: false,
                    scales: { y: { beginAtZero: true } }, plugins: { legend: { position: "bottom" } } };
  state.charts = {
    throughput: new Chart($("chart-throughput"), { type: "line", options,
      data: { labels: [], datasets: [
        { label: "succeeded/s", data: [], borderColor: "#1b7f3b", pointRadius: 0 },
        { label: "dead/s", data: [], borderColor: "#b00020", pointRadius: 0 }] } }),
    depth: new Chart($("chart-depth"), { type: "line", options,
      data: { labels: [], datasets: [] } }),
  };
}

const COLORS = ["#2f6fdb", "#a86400", "#7a3fb0", "#1b7f3b", "#b00020", "#0f8a8a"];

function plot(snapshot) {
  const charts = state.charts;
  if (!charts) return;
  const now = new Date(snapshot.now);
  const label = clock(now);
  const totals = { archived: 0, dead: 0 };
  for (const q of snapshot.queues) { totals.archived += q.archived; totals.dead += q.dead; }
  const last = state.last;
  state.last = { at: now, ...totals };
  if (last) {
    const dt = Math.max((now - last.at) / 1000, 0.001);
    push(charts.throughput, label, [Math.max(totals.archived - last.archived, 0) / dt,
                                    Math.max(totals.dead - last.dead, 0) / dt]);
  }
  const depth = charts.depth;
  for (const q of snapshot.queues) {
    if (!depth.data.datasets.some((d) => d.label === q.name)) {
      const color = COLORS[depth.data.datasets.length % COLORS.length];
      depth.data.datasets.push({ label: q.name, borderColor: color, pointRadius: 0,
                                 data: depth.data.labels.map(() => null) });
    }
  }
  const byName = Object.fromEntries(snapshot.queues.map((q) => [q.name, q.depth]));
  push(depth, label, depth.data.datasets.map((d) => byName[d.label] ?? null));
}

function push(chart, label, values) {
  chart.data.labels.push(label);
  values.forEach((v, i) => chart.data.datasets[i].data.push(v));
  if (chart.data.labels.length > HISTORY) {
    chart.data.labels.shift();
    for (const d of chart.data.datasets) d.data.shift();
  }
  chart.update("none");
}

// -- job browser: by state, each a list with its own columns; "all" is the plain browser ------

// The table a state's jobs are in; the live states filter the live table by `state`.
const VIEW_TABLE = { running: "live", due: "live", limited: "live", scheduled: "live",
                     retrying: "live", held: "live", dead: "dead", succeeded: "archive" };

// Why a limited job waits (the server's `limit_reason`), in words.
const LIMIT_REASONS = { inactive: "queue inactive", paused: "queue paused",
                        throttled: "queue throttled", max_workers: "queue at its worker limit",
                        concurrency: "concurrency key at its limit",
                        rate_key: "rate key throttled" };
function limitReason(job) {
  return cell(job.limit_reason ? LIMIT_REASONS[job.limit_reason] || job.limit_reason
                               : "no longer held", "limit-reason");
}

function cell(text, cls) { return el("td", text, cls ? { class: cls } : {}); }
function attempt(job) { return cell(job.attempts + "/" + job.max_attempts, "num"); }
function lastError(job) { return cell(job.last_error || ""); }
function ran(job) {
  if (!job.started_at || !job.finished_at) return cell("–", "num");
  return cell(age(Math.max((new Date(job.finished_at) - new Date(job.started_at)) / 1000, 0)), "num");
}
// `elapsed` (the server's): since a running job started, since a pending job's run_at
// (negative: still ahead); `sign` -1 shows how long until then.
function since(sign) {
  return (j) => cell(j.elapsed === null ? "–" : age(Math.max(sign * j.elapsed, 0)), "num elapsed");
}
function progress(job) {
  const td = el("td", null, { class: "progress" });
  const p = job.progress;
  if (!p) { td.textContent = "–"; return td; }
  td.append(el("progress", null, { max: "1", value: String(p.fraction) }),
            el("span", Math.round(p.fraction * 100) + "%" + (p.note ? " " + p.note : "")));
  return td;
}

// [header, cell] after Id, Queue, Task.
const COLUMNS = {
  all: [["State", (j) => cell(j.reason || j.status, "status")],
        ["Priority", (j) => cell(j.priority, "num")], ["Attempts", attempt],
        ["Tags", (j) => cell(j.tags.join(", "))], ["Created", (j) => cell(when(j.created_at))],
        ["Last error", lastError]],
  running: [["Worker", (j) => cell(j.worker_id || "–")],
            ["Started", (j) => cell(when(j.started_at))],
            ["Elapsed", since(1)],
            ["Attempt", attempt], ["Progress", progress]],
  due: [["Run at", (j) => cell(when(j.run_at))],
        ["Waiting", since(1)],
        ["Attempt", attempt], ["Priority", (j) => cell(j.priority, "num")]],
  limited: [["Waits for", limitReason],
            ["Key", (j) => cell(j.limit_key === null || j.limit_key === undefined ? "–" : j.limit_key, "limit-key")],
            ["Due for", since(1)],
            ["Attempt", attempt], ["Priority", (j) => cell(j.priority, "num")]],
  scheduled: [["Run at", (j) => cell(when(j.run_at))],
              ["In", since(-1)],
              ["Priority", (j) => cell(j.priority, "num")],
              ["Created", (j) => cell(when(j.created_at))]],
  retrying: [["Next attempt at", (j) => cell(when(j.run_at))],
             ["In", since(-1)],
             ["Attempt", attempt], ["Last error", lastError]],
  held: [["Workflow", (j) => cell(j.workflow_id === null ? "–" : j.workflow_id, "num")],
         ["Created", (j) => cell(when(j.created_at))], ["Priority", (j) => cell(j.priority, "num")]],
  dead: [["Reason", (j) => cell(j.reason || j.status, "status")], ["Attempt", attempt],
         ["Finished", (j) => cell(when(j.finished_at))], ["Last error", lastError]],
  succeeded: [["Attempt", attempt], ["Finished", (j) => cell(when(j.finished_at))],
              ["Ran", ran]],
};

function renderStates(counts) {
  for (const button of document.querySelectorAll("#states button[data-view]")) {
    const count = button.querySelector(".count");
    if (count) count.textContent = counts[button.dataset.view] ?? "";
  }
}

function showView(view) {
  state.view = view;
  for (const button of document.querySelectorAll("#states button[data-view]")) {
    const active = button.dataset.view === view;
    button.classList.toggle("active", active);
    if (active) button.setAttribute("aria-current", "true"); else button.removeAttribute("aria-current");
  }
  const head = el("tr");
  for (const name of ["Id", "Queue", "Task"]) head.append(el("th", name));
  for (const [name] of COLUMNS[view]) head.append(el("th", name));
  $("jobs").tHead.replaceChildren(head);
  $("jobs").dataset.view = view;
}

for (const button of document.querySelectorAll("#states button[data-view]")) {
  button.addEventListener("click", () => {
    const view = button.dataset.view;
    if (view !== "all") $("f-table").value = VIEW_TABLE[view];
    showView(view);
    fillBulkActions();
    search();
  });
}

function currentFilter() {
  const filter = {};
  for (const key of ["queue", "task", "status", "tag", "text"]) {
    const value = $("f-" + key).value.trim();
    if (value) filter[key] = value;
  }
  if (VIEW_TABLE[state.view] === "live") filter.state = state.view;
  return { table: $("f-table").value, filter };
}

function fillBulkActions() {
  const select = $("bulk-action");
  select.replaceChildren();
  for (const action of state.me.bulk_actions[$("f-table").value] || []) {
    select.append(el("option", action, { value: action }));
  }
  resetBulk();
}

function resetBulk() {
  state.bulk = null;
  $("bulk-count").textContent = "";
  $("bulk-apply").hidden = true;
}

$("f-table").addEventListener("change", () => { showView("all"); fillBulkActions(); search(); });
$("filters").addEventListener("submit", (event) => { event.preventDefault(); search(); });
$("next-page").addEventListener("click", () => loadJobs(state.next));

function search() {
  state.filter = currentFilter();
  state.filter.view = state.view;
  resetBulk();
  $("jobs").tBodies[0].replaceChildren();
  state.next = null;
  $("next-page").hidden = true;
  loadJobs(null);
}

// The first page (no `before`) replaces the rows, a next page adds to them.
function loadJobs(before) {
  const params = new URLSearchParams({ table: state.filter.table, ...state.filter.filter });
  if (before) params.set("before", before);
  const view = state.filter.view;
  return load("jobs", "api/jobs?" + params, (page) => drawJobs(page, before, view));
}

function drawJobs(page, before, view) {
  const body = $("jobs").tBodies[0];
  if (!before) body.replaceChildren();
  for (const job of page.jobs) {
    const row = el("tr", null, { class: "clickable", "data-job": job.id });
    row.append(el("td", job.id, { class: "num" }), el("td", job.queue), el("td", job.task));
    for (const [, draw] of COLUMNS[view]) row.append(draw(job));
    row.addEventListener("click", () => inspect(job.id));
    body.append(row);
  }
  state.next = page.next;
  $("next-page").hidden = page.next === null;
}

$("bulk-preview").addEventListener("click", async () => {
  const { table, filter } = currentFilter();
  const action = $("bulk-action").value;
  try {
    const preview = await api("api/bulk/preview", { table, action, filter });
    state.bulk = { table, action, filter, ...preview };
    $("bulk-count").textContent = preview.count + (preview.more ? "+ (the first " + preview.count + ")" : "") +
      " jobs match: " + action + " them?";
    $("bulk-apply").hidden = preview.count === 0;
  } catch (error) {
    toast(error.message);
  }
});

$("bulk-apply").addEventListener("click", async () => {
  const bulk = state.bulk;
  if (!bulk) return;
  const result = await act(bulk.action + " exactly these " + bulk.count + " " + bulk.table + " jobs?",
    "api/bulk/apply", { table: bulk.table, action: bulk.action, filter: bulk.filter,
                        ids: bulk.ids, snapshot: bulk.snapshot });
  if (result) {
    $("bulk-result").textContent = bulk.action + ": " + result.affected + " of " +
      result.requested + " changed";
    resetBulk();
  }
});

// -- inspector ------------------------------------------------------------------------------

// True when the job was drawn (not when another job's inspection superseded it).
function inspect(id) {
  return load("inspector", "api/jobs/" + id, drawInspector);
}

function drawInspector(job) {
  const previous = state.job && !$("inspector").hidden ? state.job.id : null;
  state.job = job;
  showInspector(true);
  $("insp-title").textContent = "Job " + job.id + " · " + job.task + " · " + (job.reason || job.status);
  const fields = $("insp-fields");
  fields.replaceChildren();
  const show = ["queue", "status", "reason", "priority", "attempts", "max_attempts", "tags",
                "idempotency_key", "worker_id", "created_at", "run_at", "started_at",
                "heartbeat_at", "lease_until", "finished_at", "updated_at", "timeout",
                "cancel_requested"];
  for (const key of show) {
    let value = job[key];
    if (value === null || value === undefined || (Array.isArray(value) && !value.length)) continue;
    if (key.endsWith("_at") || key === "lease_until") value = when(value);
    if (Array.isArray(value)) value = value.join(", ");
    fields.append(el("dt", key), el("dd", value, { "data-field": key }));
  }
  if (job.workflow_id !== null && job.workflow_id !== undefined && state.me.workflows) {
    const link = el("a", "workflow " + job.workflow_id,
                    { href: "#workflows/" + job.workflow_id, id: "insp-workflow" });
    const cell = el("dd", null, { "data-field": "workflow" });
    cell.append(link);
    fields.append(el("dt", "workflow"), cell);
  }
  for (const [key, value] of Object.entries(job.timings)) {
    if (value !== null) fields.append(el("dt", key), el("dd", age(Math.max(value, 0)), { "data-field": key }));
  }
  $("insp-payload").textContent = JSON.stringify(job.payload, null, 2);
  $("insp-result").textContent = job.result === null ? "–" : JSON.stringify(job.result, null, 2);
  const errors = $("insp-errors");
  errors.replaceChildren();
  for (const e of job.errors) {
    const item = el("li");
    item.append(el("strong", (e.error || "") + ": " + (e.message || "")));
    item.append(el("span", " attempt " + (e.attempt ?? "?") + (e.at ? " at " + when(e.at) : "") +
                   (e.worker ? " on " + e.worker : ""), { class: "muted" }));
    if (e.traceback) item.append(el("pre", e.traceback));
    errors.append(item);
  }
  $("act-priority").value = job.priority;
  $("act-payload").value = JSON.stringify(job.payload, null, 2);
  const dead = job.status === "dead";
  const live = ["held", "pending", "fetched", "processing"].includes(job.status);
  $("resurrect-box").hidden = !dead;
  $("act-cancel").hidden = !live;
  $("act-run-now").hidden = job.status !== "pending";
  $("act-set-priority").hidden = job.status !== "pending";
  $("act-priority").parentElement.hidden = job.status !== "pending";
  if (!job.errors.length) errors.append(el("li", "none", { class: "muted" }));
  if (previous !== job.id) {  // another job: its top, without the last job's message
    clearTimeout(inspectorMessage.timer);
    $("insp-message").textContent = "";
    $("inspector").scrollTop = 0;
  }
}

// The header's height, for the inspector to open below it (style.css).
new ResizeObserver(() => {
  document.documentElement.style.setProperty(
    "--header", document.querySelector("header").offsetHeight + "px");
}).observe(document.querySelector("header"));

// The inspector is a panel on the right; the jobs tab makes room for it (style.css).
function showInspector(shown) {
  $("inspector").hidden = !shown;
  $("main").classList.toggle("inspecting", shown);
}

$("insp-close").addEventListener("click", () => showInspector(false));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !$("inspector").hidden && !$("confirm").open &&
      !$("limit-dialog").open) showInspector(false);
});

// The outcome of an action on the inspected job: shown after the inspector reloaded the job
// (reloading clears an older message), until the next action or for 8 s.
function inspectorMessage(text) {
  $("insp-message").textContent = text;
  clearTimeout(inspectorMessage.timer);
  inspectorMessage.timer = setTimeout(() => { $("insp-message").textContent = ""; }, 8000);
}

function jobAction(action, body, text) {
  const job = state.job;
  return act(text, "api/jobs/" + job.id + "/" + action, body, async (result) => {
    if (await inspect(job.id)) inspectorMessage(action + ": " + result.outcome);
  });
}

$("act-cancel").addEventListener("click", () => jobAction("cancel", {}, "Cancel job " + state.job.id + "?"));
$("act-run-now").addEventListener("click", () => jobAction("run_now", {}, "Run job " + state.job.id + " now?"));
$("act-set-priority").addEventListener("click", () => {
  const priority = Number($("act-priority").value);
  jobAction("priority", { priority }, "Set the priority of job " + state.job.id + " to " + priority + "?");
});
$("act-resurrect").addEventListener("click", () => {
  let payload;
  try {
    payload = JSON.parse($("act-payload").value);
  } catch (error) {
    toast("The payload is not JSON: " + error.message);
    return;
  }
  jobAction("resurrect", { payload }, "Resurrect job " + state.job.id + " with this payload?");
});

// -- workflows ------------------------------------------------------------------------------
// #workflows lists them, #workflows/ID is one workflow's page: its jobs and their graph.

const SVG = "http://www.w3.org/2000/svg";
const NODE = { w: 170, h: 42, dx: 230, dy: 62, pad: 16 };

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function countsText(counts) {
  const order = ["held", "pending", "fetched", "processing", "succeeded", "dead"];
  return Object.keys(counts).sort((a, b) => order.indexOf(a) - order.indexOf(b))
    .map((k) => k + " " + counts[k]).join(", ");
}

function route() {
  if (!state.me || !state.me.workflows) return;
  const match = /^#workflows(?:\/(\d+))?$/.exec(location.hash);
  if (!match) return;
  showTab("workflows");
  if (match[1]) {
    openWorkflow(Number(match[1]));
  } else {
    stopWorkflowRefresh();
    state.workflow = null;
    $("wf-detail").hidden = true;
    $("wf-list").hidden = false;
    $("workflows").tBodies[0].replaceChildren();
    $("wf-next-page").hidden = true;
    loadWorkflows(null);
  }
}

window.addEventListener("hashchange", route);
$("wf-next-page").addEventListener("click", () => loadWorkflows(state.wfNext));

function loadWorkflows(before) {
  const params = new URLSearchParams();
  if (before) params.set("before", before);
  return load("workflows", "api/workflows?" + params, (page) => drawWorkflows(page, before));
}

function drawWorkflows(page, before) {
  const body = $("workflows").tBodies[0];
  if (!before) body.replaceChildren();
  for (const w of page.workflows) {
    const row = el("tr", null, { class: "clickable", "data-workflow": w.id });
    row.append(el("td", w.id, { class: "num" }), el("td", w.name), el("td", w.key || ""),
               el("td", w.state, { class: "state state-" + w.state }),
               el("td", countsText(w.counts), { class: "counts" }), el("td", when(w.created_at)));
    row.addEventListener("click", () => { location.hash = "workflows/" + w.id; });
    body.append(row);
  }
  $("workflows-none").hidden = body.rows.length > 0;
  state.wfNext = page.next;
  $("wf-next-page").hidden = page.next === null;
}

function stopWorkflowRefresh() {
  clearInterval(state.wfTimer);
  state.wfTimer = null;
}

async function openWorkflow(id) {
  stopWorkflowRefresh();
  $("wf-list").hidden = true;
  $("wf-detail").hidden = false;
  $("wf-message").textContent = "";
  if (!state.workflow || state.workflow.workflow.id !== id) {
    $("wf-title").textContent = "Workflow " + id;
    $("wf-graph").replaceChildren();
    $("wf-jobs").tBodies[0].replaceChildren();
    $("wf-fields").replaceChildren();
  }
  if (await loadWorkflow(id)) {
    // The page follows the workflow: every 2 s while it runs, every 10 s once it ended (an
    // operator may retry it elsewhere).
    let ticks = 0;
    state.wfTimer = setInterval(() => {
      const w = state.workflow && state.workflow.workflow;
      const ended = w && (w.state === "succeeded" || w.state === "failed");
      ticks += 1;
      if (!$("wf-detail").hidden && (!ended || ticks % 5 === 0)) loadWorkflow(id);
    }, 2000);
  }
}

async function loadWorkflow(id) {
  let data;
  try {
    data = await api("api/workflows/" + id);
  } catch (error) {
    stopWorkflowRefresh();
    $("wf-title").textContent = "Workflow " + id;
    $("wf-message").textContent = error.message;
    return false;
  }
  if (location.hash !== "#workflows/" + id) return false;  // the operator moved on
  state.workflow = data;
  renderWorkflow(data);
  return true;
}

function renderWorkflow(data) {
  const w = data.workflow;
  $("wf-title").textContent = "Workflow " + w.id + " · " + w.name + " · ";
  $("wf-title").append(el("span", w.state, { class: "state state-" + w.state, id: "wf-state" }));
  const fields = $("wf-fields");
  fields.replaceChildren();
  const rows = [["key", w.key], ["jobs", countsText(w.counts)], ["on failure", w.on_failure],
                ["created", when(w.created_at)], ["finished", w.finished_at && when(w.finished_at)]];
  for (const [key, value] of rows) {
    if (value) fields.append(el("dt", key), el("dd", value, { "data-field": key }));
  }
  $("wf-cancel").disabled = w.state === "succeeded" || w.state === "failed";
  $("wf-retry").disabled = !w.counts.dead;
  const body = $("wf-jobs").tBodies[0];
  body.replaceChildren();
  for (const job of data.jobs) {
    const row = el("tr", null, { class: "clickable", "data-job": job.id });
    row.append(el("td", job.id, { class: "num" }), el("td", job.task), el("td", job.queue),
               el("td", job.reason ? job.status + " (" + job.reason + ")" : job.status,
                  { class: "status" }),
               el("td", job.attempts + "/" + job.max_attempts, { class: "num" }),
               el("td", job.waits_for.join(", "), { class: "waits" }),
               el("td", when(job.finished_at)));
    row.addEventListener("click", () => showJob(job.id));
    body.append(row);
  }
  const more = data.jobs_total - data.jobs.length;
  $("wf-truncated").hidden = more <= 0;
  $("wf-truncated").textContent = more > 0 ? "The first " + data.jobs.length + " jobs of " +
    data.jobs_total + " (by id); `claimq workflows show " + w.id + " --json` lists them all." : "";
  $("wf-graph-note").hidden = data.graph;
  $("wf-graph-note").textContent = data.graph ? "" : "The graph is drawn for workflows of up to " +
    data.graph_limit + " jobs; this one has " + data.jobs_total + ".";
  $("wf-graph").replaceChildren();
  if (data.graph) $("wf-graph").append(drawGraph(data));
}

// Layers left to right (the server placed each job: layer and row), an arrow from each job
// to each job that waits for it: dashed until that edge is resolved.
function drawGraph(data) {
  const at = {};
  let layers = 0;
  let rows = 0;
  for (const job of data.jobs) {
    at[job.id] = { x: NODE.pad + job.layer * NODE.dx, y: NODE.pad + job.row * NODE.dy };
    layers = Math.max(layers, job.layer + 1);
    rows = Math.max(rows, job.row + 1);
  }
  const width = NODE.pad * 2 + (layers - 1) * NODE.dx + NODE.w;
  const height = NODE.pad * 2 + (rows - 1) * NODE.dy + NODE.h;
  const root = svg("svg", { width, height, viewBox: "0 0 " + width + " " + height,
                            role: "img", "aria-label": "the workflow's jobs and dependencies" });
  const defs = svg("defs");
  const marker = svg("marker", { id: "wf-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                 markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z" }));
  defs.append(marker);
  root.append(defs);
  for (const e of data.edges) {
    const a = at[e.parent];
    const b = at[e.child];
    if (!a || !b) continue;
    const x1 = a.x + NODE.w;
    const y1 = a.y + NODE.h / 2;
    const x2 = b.x;
    const y2 = b.y + NODE.h / 2;
    const mid = (x1 + x2) / 2;
    const path = svg("path", {
      d: "M" + x1 + "," + y1 + " C" + mid + "," + y1 + " " + mid + "," + y2 + " " + x2 + "," + y2,
      class: "edge policy-" + e.on_failure + (e.resolved ? " resolved" : " unresolved"),
      "marker-end": "url(#wf-arrow)", "data-parent": e.parent, "data-child": e.child });
    path.append(svg("title", {}, e.parent + " → " + e.child + " (on failure: " + e.on_failure +
                    (e.resolved ? ", resolved)" : ")")));
    root.append(path);
  }
  for (const job of data.jobs) {
    const p = at[job.id];
    const node = svg("g", { class: "node status-" + job.status, "data-job": job.id,
                            "data-status": job.status, transform: "translate(" + p.x + "," + p.y + ")" });
    node.append(svg("rect", { width: NODE.w, height: NODE.h, rx: 4 }));
    const task = job.task.length > 22 ? job.task.slice(0, 21) + "…" : job.task;
    node.append(svg("text", { x: 8, y: 17 }, "#" + job.id + " " + task));
    node.append(svg("text", { x: 8, y: 33, class: "sub" }, job.reason || job.status));
    node.append(svg("title", {}, "job " + job.id + " · " + job.task + " · " +
                    (job.reason || job.status) + (job.waits_for.length ?
                      " · waits for " + job.waits_for.join(", ") : "")));
    node.addEventListener("click", () => showJob(job.id));
    root.append(node);
  }
  return root;
}

function clearHash() {
  history.replaceState(null, "", location.pathname + location.search);
}

function showJob(id) {
  clearHash();
  showTab("jobs");
  inspect(id);
}

function workflowAction(action, text) {
  const w = state.workflow && state.workflow.workflow;
  if (!w) return;
  act(text, "api/workflows/" + w.id + "/" + action, {}, (result) => {
    $("wf-message").textContent = action + ": " + result.outcome;
    loadWorkflow(w.id);
  });
}

$("wf-cancel").addEventListener("click", () => workflowAction("cancel",
  "Cancel every unfinished job of workflow " + state.workflow.workflow.id + "?"));
$("wf-retry").addEventListener("click", () => workflowAction("retry",
  "Rerun the failed steps of workflow " + state.workflow.workflow.id + "?"));

// -- schedules ------------------------------------------------------------------------------

// A duration in the largest unit that keeps it readable: "90 s", "5 min", "2 h", "1.5 d".
function span(seconds) {
  const units = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
  for (const [size, unit] of units) {
    if (seconds >= size && (seconds % size === 0 || size === 1 || seconds >= size * 10)) {
      const value = seconds / size;
      return (Number.isInteger(value) ? value : value.toFixed(1)) + " " + unit;
    }
  }
  return seconds + " s";
}

function jobLink(id) {
  const link = el("a", "job " + id, { href: "#", "data-job": id, class: "job-link" });
  link.addEventListener("click", (event) => { event.preventDefault(); showJob(id); });
  return link;
}

function loadSchedules() {
  return load("schedules", "api/schedules", drawSchedules);
}

function drawSchedules(data) {
  const body = $("schedules").tBodies[0];
  body.replaceChildren();
  for (const s of data.schedules) {
    const row = el("tr", null, { "data-schedule": s.name });
    const timing = s.cron !== null ? "cron " + s.cron + (s.tz !== "UTC" ? " (" + s.tz + ")" : "")
      : "every " + span(s.every);
    const state = s.paused ? "paused" : "active";
    const last = el("td", null, { class: "last-job" });
    if (s.last_job_id === null) last.textContent = "–"; else last.append(jobLink(s.last_job_id));
    row.append(el("td", s.name, { class: "name" }), el("td", s.task, { class: "task" }),
               el("td", s.queue), el("td", timing, { class: "when" }),
               el("td", state, { class: "state state-" + state }),
               el("td", s.paused ? "– (paused)" : when(s.next_run_at), { class: "next" }),
               el("td", when(s.last_run_at), { class: "last-run" }), last);
    const actions = el("td", null, { class: "admin-only" });
    actions.append(scheduleButton(s, s.paused ? "resume" : "pause"),
                   scheduleButton(s, "run_now"));
    row.append(actions);
    body.append(row);
  }
  $("schedules-none").hidden = data.schedules.length > 0;
}

const SCHEDULE_VERBS = { pause: "Pause", resume: "Resume", run_now: "Run now" };

function scheduleButton(s, action) {
  const button = el("button", SCHEDULE_VERBS[action],
                    { type: "button", class: "schedule-" + action.replace("_", "-") });
  button.addEventListener("click", () => {
    const text = action === "run_now" ? "Enqueue schedule " + s.name + "'s job (" + s.task +
      ") now?" : SCHEDULE_VERBS[action] + " schedule " + s.name + "?";
    act(text, "api/schedules/" + encodeURIComponent(s.name) + "/" + action, {}, async (result) => {
      await loadSchedules();
      const message = $("sched-message");
      message.replaceChildren("Schedule " + s.name + ": " + result.outcome);
      if (result.job) message.append(" (", jobLink(result.job), ")");
    });
  });
  return button;
}

// -- workers --------------------------------------------------------------------------------
// The overview's table and the Workers tab share the columns; the tab adds each worker's
// current jobs (ids linking to the inspector) and follows them every 2 s while it is shown.

const WORKER_COLUMNS = [
  ["Worker", (w) => cell(w.id, "worker-id")],
  ["State", (w) => el("td", w.state, { class: "state state-" + w.state })],
  ["Host", (w) => cell(w.host)], ["PID", (w) => cell(w.pid, "num")],
  ["Queues", (w) => cell(w.queues === null ? "all" : w.queues.join(", "), "queues")],
  ["Up for", (w) => cell(w.up_for === null ? "–" : age(w.up_for), "num up-for")],
  ["Last seen", (w) => cell(age(w.silent_for) + " ago", "num last-seen")],
  // a gone worker's last count is stale: its jobs come back when their leases end
  ["In flight", (w) => cell(w.state === "alive" ? w.in_flight : "–", "num in-flight")],
  ["Concurrency", (w) => cell(w.concurrency, "num")],
  ["Version", (w) => cell(w.version)],
];

function renderWorkers(id, rows, withJobs) {
  $(id + "-none").hidden = rows.length > 0;
  $(id).hidden = rows.length === 0;
  const head = el("tr");
  for (const [name] of WORKER_COLUMNS) head.append(el("th", name));
  if (withJobs) head.append(el("th", "Current jobs"));
  $(id).tHead.replaceChildren(head);
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const w of rows) {
    const row = el("tr", null, { "data-worker": w.id });
    for (const [, draw] of WORKER_COLUMNS) row.append(draw(w));
    if (withJobs) row.append(currentJobs(w.jobs));
    body.append(row);
  }
}

function currentJobs(jobs) {
  const td = el("td", null, { class: "jobs" });
  if (!jobs.length) { td.textContent = "–"; return td; }
  const list = el("ul", null, { class: "plain" });
  for (const job of jobs) {
    const item = el("li", null, { "data-job": job.id });
    item.append(jobLink(job.id), " " + job.task + " · ",
                el("span", job.elapsed === null ? "–" : age(Math.max(job.elapsed, 0)),
                   { class: "elapsed" }));
    list.append(item);
  }
  td.append(list);
  return td;
}

function loadWorkers() {
  return load("worker-list", "api/workers", (data) => {
    renderWorkers("worker-list", data.workers, true);
    const note = $("worker-unlisted");
    note.replaceChildren();
    note.hidden = !data.unlisted.length && !data.truncated;
    if (data.unlisted.length) {
      note.append("Running on workers no longer listed: ");
      data.unlisted.forEach((job, i) => note.append(i ? ", " : "", jobLink(job.id)));
      note.append(". ");
    }
    if (data.truncated) note.append("Only the newest " + data.running_limit + " running jobs are shown.");
  });
}

function followWorkers() {
  stopWorkers();
  loadWorkers();
  followWorkers.timer = setInterval(loadWorkers, 2000);
}

function stopWorkers() {
  clearInterval(followWorkers.timer);
}

// -- flow control ---------------------------------------------------------------------------
// Per queue: its limit, rate limits, priority aging, concurrency keys and throttle; the rate
// keys a Throttled paused; the circuit breakers. Followed every 2 s while the tab is shown.

function rateText(rate) {
  if (!rate) return "none";
  const per = rate.period === 1 ? "s" : span(rate.period);
  return rate.count + " per " + per + (rate.burst === null ? "" : " (burst " + rate.burst + ")");
}

// "in 4.5 min" until a database time, from the page's `now` (the server's).
function until(text, now) {
  if (!text) return "–";
  return when(text) + " (in " + age(Math.max((new Date(text) - now) / 1000, 0)) + ")";
}

const BREAKER_COLUMNS = [
  ["Queue", (b) => cell(b.queue)], ["Task", (b) => cell(b.task, "task")],
  ["State", (b) => el("td", b.state.replace("_", " "), { class: "state breaker-" + b.state })],
  ["Failures", (b) => cell(b.failures + " of " + b.failure_limit, "num failures")],
  ["Opens after", (b) => cell(b.failure_limit + (b.failure_limit === 1 ? " failure" : " failures") +
                             " in " + span(b.window), "opens")],
  ["Open for", (b) => cell(span(b.cooldown), "cooldown")],
  ["Open until", (b) => cell(b.state === "open" ? when(b.open_until) : "–", "open-until")],
  ["Probe", (b) => {
    const td = el("td", null, { class: "probe" });
    if (b.state === "half_open" && b.probe_id !== null) td.append(jobLink(b.probe_id));
    else td.textContent = "–";
    return td;
  }],
];

function renderBreakers(id, rows) {
  $(id + "-none").hidden = rows.length > 0;
  $(id).hidden = rows.length === 0;
  const head = el("tr");
  for (const [name] of BREAKER_COLUMNS) head.append(el("th", name));
  $(id).tHead.replaceChildren(head);
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const b of rows) {
    const row = el("tr", null, { "data-queue": b.queue, "data-task": b.task });
    for (const [, draw] of BREAKER_COLUMNS) row.append(draw(b));
    body.append(row);
  }
}

function loadFlow() {
  return load("flow", "api/flow", (data) => {
    const now = new Date(data.now);  // the database's time, as the times it gave
    $("flow-off").hidden = data.flow_control;
    const body = $("flow").tBodies[0];
    body.replaceChildren();
    for (const q of data.queues) {
      const row = el("tr", null, { "data-queue": q.name });
      const throttled = q.throttled_until !== null;
      row.append(cell(q.name, "name"),
                 el("td", throttled && q.state === "active" ? "throttled" : q.state,
                    { class: "state state-" + q.state }),
                 cell(q.running, "num running"),
                 cell(q.max_workers === null ? "none" : q.max_workers, "num limit"),
                 cell(rateText(q.rate_limit), "rate"), cell(rateText(q.key_rate_limit), "key-rate"),
                 cell(q.keyed ? "yes" : "no", "keyed"),
                 cell(q.aging ? "+1 every " + span(q.aging.step) + ", at most +" + q.aging.cap
                      : "none", "aging"),
                 cell(until(q.throttled_until, now), "throttled-until"));
      body.append(row);
    }
    const keys = $("throttled").tBodies[0];
    keys.replaceChildren();
    for (const k of data.throttled_keys) {
      const row = el("tr", null, { "data-queue": k.queue, "data-key": k.key });
      row.append(cell(k.queue), cell(k.key, "key"), cell(when(k.until), "until"),
                 cell(age(Math.max((new Date(k.until) - now) / 1000, 0)), "num in"));
      keys.append(row);
    }
    $("throttled").hidden = !data.throttled_keys.length;
    $("throttled-none").hidden = data.throttled_keys.length > 0;
    const held = $("limited").tBodies[0];
    held.replaceChildren();
    for (const g of data.limited) {
      const row = el("tr", null, { "data-queue": g.queue, "data-reason": g.reason });
      if (g.key !== null) row.dataset.key = g.key;
      row.append(cell(g.queue), cell(LIMIT_REASONS[g.reason] || g.reason, "reason"),
                 cell(g.key === null ? "–" : g.key, "key"), cell(g.waiting, "num waiting"),
                 cell(g.running, "num running"), cell(g.limit === null ? "–" : g.limit, "num limit"),
                 cell(until(g.until, now), "until"));
      held.append(row);
    }
    $("limited").hidden = !data.limited.length;
    $("limited-none").hidden = data.limited.length > 0;
    renderBreakers("flow-breakers", data.breakers);
  });
}

function followFlow() {
  stopFlow();
  loadFlow();
  followFlow.timer = setInterval(loadFlow, 2000);
}

function stopFlow() {
  clearInterval(followFlow.timer);
}

// -- latency --------------------------------------------------------------------------------
// Per queue and per task, over the window chosen: wait and run p50/p95/p99, attempts per job,
// done and failed per minute (as `claimq stats`). Followed every 5 s while the tab is shown.

// Seconds, compact as the CLI's: "12 ms", "3.4 s", "2.5 min".
function short(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 1) return (seconds * 1000).toFixed(0) + " ms";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  return age(seconds);
}

function rate(value) { return value.toFixed(value >= 10 ? 0 : 1); }

const LATENCY_COLUMNS = [
  ["Done/min", (r) => cell(rate(r.completed_per_minute), "num done")],
  ["Failed/min", (r) => cell(rate(r.failed_per_minute),
                             "num failed" + (r.failed_per_minute ? " error" : ""))],
  ["Attempts/job", (r) => cell(r.attempts_per_job === null ? "–" : r.attempts_per_job.toFixed(2),
                               "num attempts")],
  ["Jobs", (r) => cell(r.run.count, "num jobs")],
  ["Wait p50", (r) => cell(short(r.wait.p50), "num wait-p50")],
  ["Wait p95", (r) => cell(short(r.wait.p95), "num wait-p95")],
  ["Wait p99", (r) => cell(short(r.wait.p99), "num wait-p99")],
  ["Run p50", (r) => cell(short(r.run.p50), "num run-p50")],
  ["Run p95", (r) => cell(short(r.run.p95), "num run-p95")],
  ["Run p99", (r) => cell(short(r.run.p99), "num run-p99")],
];

function drawLatency(id, key, rows) {
  const head = el("tr");
  head.append(el("th", key === "queue" ? "Queue" : "Task"));
  for (const [name] of LATENCY_COLUMNS) head.append(el("th", name));
  $(id).tHead.replaceChildren(head);
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const r of rows) {
    const row = el("tr", null, { ["data-" + key]: r.name });
    row.append(cell(r.name, "name"));
    for (const [, draw] of LATENCY_COLUMNS) row.append(draw(r));
    body.append(row);
  }
  $(id).hidden = !rows.length;
  $(id + "-none").hidden = rows.length > 0;
}

function loadLatency() {
  const chosen = $("latency-window").value;
  return load("latency", "api/latency?window=" + encodeURIComponent(chosen), (data) => {
    drawLatency("latency-queues", "queue", data.queues);
    drawLatency("latency-tasks", "task", data.tasks);
    $("latency").dataset.window = String(data.window);
    $("latency-measured").textContent = "Over the " + span(data.window) + " to " + when(data.at) +
      (data.measured < data.window ? "; rates over the " + age(data.measured) +
       " since the first of these jobs was created" : "") + ".";
  });
}

function followLatency() {
  stopLatency();
  loadLatency();
  followLatency.timer = setInterval(loadLatency, 5000);
}

function stopLatency() {
  clearInterval(followLatency.timer);
}

$("latency-window").addEventListener("change", loadLatency);

// -- history --------------------------------------------------------------------------------
// Jobs finished per bar (succeeded over dead) over the last hours, per queue and per task,
// read from the database at page load and every minute after: inline SVG, built node by node
// (names are text, never markup).

// svg(): the workflow graph's helper.

function hhmm(date) { return date.toISOString().slice(11, 16); }

function sum(values) { return values.reduce((a, b) => a + b, 0); }

function historyChart(series, data, key) {
  const W = 360, H = 90, TOP = 4, AXIS = 14;
  const start = new Date(data.start).getTime();
  const n = data.buckets, width = W / n;
  const totals = series.succeeded.map((s, i) => s + series.dead[i]);
  const scale = (H - TOP) / Math.max(1, ...totals);
  const succeeded = sum(series.succeeded), dead = sum(series.dead);
  const name = series.name === null ? series.others + " others" : series.name;
  const figure = el("figure", null, { "data-succeeded": succeeded, "data-dead": dead });
  if (series.name !== null) figure.setAttribute("data-" + key, series.name);
  else figure.setAttribute("data-others", series.others);
  figure.append(el("figcaption", name + ": " + succeeded + " succeeded, " + dead + " dead"));
  const chart = svg("svg", { viewBox: "0 0 " + W + " " + (H + AXIS), role: "img",
                             "aria-label": name + ": finished jobs per bar" });
  chart.append(svg("line", { x1: 0, x2: W, y1: H, y2: H }));
  for (let i = 0; i < n; i++) {
    if (!totals[i]) continue;
    const from = new Date(start + i * data.bucket * 1000);
    const to = new Date(start + (i + 1) * data.bucket * 1000);
    const bar = svg("g", { "data-bucket": i, "data-succeeded": series.succeeded[i],
                           "data-dead": series.dead[i] });
    bar.append(svg("title", {}, hhmm(from) + "–" + hhmm(to) + " UTC: " + series.succeeded[i] +
                   " succeeded, " + series.dead[i] + " dead"));
    const x = i * width, w = Math.max(width - 1, 1);
    const hs = series.succeeded[i] * scale, hd = series.dead[i] * scale;
    bar.append(svg("rect", { class: "succeeded", x: x, width: w, y: H - hs, height: hs }));
    bar.append(svg("rect", { class: "dead", x: x, width: w, y: H - hs - hd, height: hd }));
    chart.append(bar);
  }
  chart.append(svg("text", { x: 0, y: H + AXIS - 2 }, hhmm(new Date(start))));
  chart.append(svg("text", { x: W, y: H + AXIS - 2, "text-anchor": "end" },
                   hhmm(new Date(data.now)) + " UTC"));
  figure.append(chart);
  return figure;
}

function drawHistory(id, key, list, data) {
  $(id).replaceChildren(...list.map((series) => historyChart(series, data, key)));
  $(id + "-none").hidden = list.length > 0;
}

function loadHistory() {
  const option = $("history-hours").selectedOptions[0];
  const params = new URLSearchParams({ hours: option.value, bucket: option.dataset.bucket });
  return load("history", "api/history?" + params, (data) => {
    drawHistory("history-queues", "queue", data.queues, data);
    drawHistory("history-tasks", "task", data.tasks, data);
    $("history").dataset.hours = String(data.hours);
  });
}

function followHistory() {
  clearInterval(followHistory.timer);
  loadHistory();
  followHistory.timer = setInterval(loadHistory, 60000);
}

$("history-hours").addEventListener("change", loadHistory);

// -- retention ------------------------------------------------------------------------------
// The policies in force (as `claimq retention list`): the default ('*') first, then per queue.

function limit(value, format) { return value === null ? "no limit" : format(value); }

function loadRetention() {
  return load("retention", "api/retention", (data) => {
    const body = $("retention").tBodies[0];
    body.replaceChildren();
    for (const p of data.policies) {
      const row = el("tr", null, { "data-queue": p.queue });
      row.append(cell(p.queue === "*" ? "All queues (default)" : p.queue, "name"),
                 cell(limit(p.archive_age, span), "archive-age"),
                 cell(limit(p.archive_rows, (n) => n.toLocaleString("en")), "archive-rows"),
                 cell(limit(p.dead_age, span), "dead-age"),
                 cell(limit(p.dead_rows, (n) => n.toLocaleString("en")), "dead-rows"));
      body.append(row);
    }
  });
}

// -- audit ----------------------------------------------------------------------------------

function loadAudit() {
  return load("audit", "api/audit", drawAudit);
}

function drawAudit(data) {
  const body = $("audit").tBodies[0];
  body.replaceChildren();
  for (const e of data.entries) {
    const row = el("tr");
    row.append(el("td", e.id, { class: "num" }), el("td", when(e.at)), el("td", e.actor),
               el("td", e.action), el("td", e.target), el("td", e.affected, { class: "num" }),
               el("td", JSON.stringify(e.detail)));
    body.append(row);
  }
}

start();
