// kubesched's UI: pages drawn from /ui/api/*, kept live by /ui/api/stream (server-sent events).
// Plain browser JavaScript, no build step and no library.
"use strict";

const page = document.getElementById("page");
const pendingOut = document.getElementById("pending");
const liveMark = document.getElementById("live");

// -- drawing ---------------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// `el`'s children replaced by `children` (nested lists flattened, null, undefined and false left out).
function put(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

function podLink(key, text, chip) {
  const at = replay.on && replay.t !== null ? `?t=${replay.t.toFixed(6)}` : "";
  return h("a", { class: chip ? `chip ${chip}` : null, href: `#/pod/${key}${at}`,
    "data-pod": key, title: chip ? `${key}: ${chip}` : key }, text || key);
}

function cpu(milli) { return milli % 1000 === 0 ? `${milli / 1000}` : `${milli}m`; }
function bytes(n) {
  const units = [["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];
  for (const [unit, size] of units) if (n >= size && n % size === 0) return `${n / size}${unit}`;
  for (const [unit, size] of units) if (n >= size) return `${(n / size).toFixed(1)}${unit}`;
  return `${n}`;
}

function gauge(label, used, total, show) {
  const share = total > 0 ? Math.min(1, used / total) : 0;
  return h("div", { class: "gauge" },
    h("span", {}, label),
    h("div", { class: "bar", role: "meter", "aria-label": `${label} requested`, "aria-valuemin": 0,
      "aria-valuemax": total, "aria-valuenow": used },
      h("span", { class: share >= 1 ? "full" : null, style: `width:${(share * 100).toFixed(1)}%` })),
    h("output", {}, `${show(used)} / ${show(total)}`));
}

function showPending(pending) {
  if (!pending) return;
  pendingOut.textContent =
    `active ${pending.active} · backoff ${pending.backoff} · unschedulable ${pending.unschedulable} · gated ${pending.gated}`;
}

// A recorded run (kubesched ui TRACE) is replayed: every document is asked for at the moment the
// time slider stands at (`?at=`), and nothing is live.
const replay = { on: false, start: 0, end: 0, marks: [], t: null };

function moment() { return replay.t === null ? replay.end : replay.start + replay.t; }

// Each page shown is a navigation; what a page asked for that arrives after another page was opened
// is dropped (Stale), so a late answer never draws over the page now shown.
let navigation = 0;
class Stale extends Error {}

async function getJSON(path) {
  const asked = navigation;
  if (replay.on) path += `${path.includes("?") ? "&" : "?"}at=${moment()}`;
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = (response.headers.get("Content-Type") || "").includes("json") ? await response.json() : null;
  if (asked !== navigation) throw new Stale();
  if (!response.ok) {
    throw Object.assign(new Error((body && body.message) || `${response.status}`), { status: response.status });
  }
  return body;
}

// -- actions (cluster up --ui-actions) -------------------------------------------------------------

const actions = { on: false };

async function act(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.message || `${response.status}`);
  return answer;
}

// What the last action came to, kept while the page redraws (until another page is opened).
const said = { message: "", failed: false };

function say(message, failed) {
  Object.assign(said, { message, failed });
  const out = document.getElementById("said");
  if (out) { out.textContent = message; out.className = failed ? "error" : ""; }
}

function saidLine() {
  return h("p", { id: "said", role: "status", class: said.failed ? "error" : null }, said.message);
}

function doing(work, done) {
  work.then((answer) => say(done(answer), false)).catch((error) => say(error.message, true));
}

function toolbar() {
  if (!actions.on) return null;
  const form = h("form", { class: "filters", "aria-label": "create a pod", onsubmit: (event) => {
    event.preventDefault();
    const data = Object.fromEntries([...new FormData(form)].filter(([, v]) => v));
    doing(act("POST", "/ui/api/pods", data), (pod) => `created ${pod.key}`);
  } },
  h("label", {}, "pod name", h("input", { name: "name", required: true, "aria-label": "pod name" })),
  h("label", {}, "namespace", h("input", { name: "namespace", placeholder: "default", "aria-label": "namespace" })),
  h("label", {}, "cpu", h("input", { name: "cpu", placeholder: "100m", size: 6, "aria-label": "cpu request" })),
  h("label", {}, "memory", h("input", { name: "memory", placeholder: "64Mi", size: 6, "aria-label": "memory request" })),
  h("button", { type: "submit", id: "create-pod" }, "Create pod"),
  h("button", { type: "button", id: "add-node", onclick: () =>
    doing(act("POST", "/ui/api/nodes", { count: 1 }), (a) => `added ${a.added.join(", ")}`) }, "Add a node"));
  return [form, saidLine()];
}

// -- the live stream -------------------------------------------------------------------------------

const live = { source: null, version: 0, listeners: new Set() };

function follow(version) {
  if (replay.on) return;
  if (live.source && live.version === version) return;
  if (live.source) live.source.close();
  live.version = version;
  liveMark.dataset.version = String(version);
  const source = new EventSource(`/ui/api/stream?since=${version}`);
  source.addEventListener("open", () => liveMark.classList.add("on"));
  source.addEventListener("error", () => liveMark.classList.remove("on"));
  source.addEventListener("changes", (event) => {
    const changes = JSON.parse(event.data);
    live.version = changes.version;
    liveMark.dataset.version = String(live.version);
    for (const listener of live.listeners) listener(changes);
  });
  source.addEventListener("reset", () => { for (const listener of live.listeners) listener(null); });
  live.source = source;
}

function listen(listener) {
  live.listeners.clear();
  live.listeners.add(listener);
}

// -- the cluster page ------------------------------------------------------------------------------

const cluster = {
  pods: new Map(), nodes: new Map(), byNode: new Map(), cards: new Map(), query: new URLSearchParams(),
};

function podName(key) { return key.slice(key.indexOf("/") + 1); }

// A node's card is drawn when it comes near the viewport (and redrawn when it changes while drawn):
// thousands of nodes cost a placeholder each until scrolled to.
const nearby = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) {
      nearby.unobserve(entry.target);
      fillCard(entry.target);
    }
  }
}, { rootMargin: "800px" });

function nodeCard(node) {
  const card = h("section", { class: node.cordoned ? "node cordoned" : "node", "aria-label": `node ${node.name}`,
    "data-node": node.name });
  nearby.observe(card);
  return card;
}

function fillCard(card) {
  const node = cluster.nodes.get(card.dataset.node);
  if (!node) return;
  const pods = node.pods.map((key) => cluster.pods.get(key)).filter(Boolean);
  const taints = node.taints.map((t) => `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`).join(", ");
  card.className = node.cordoned ? "node cordoned" : "node";
  card.dataset.drawn = "1";
  const cordon = actions.on ? h("button", { type: "button", class: "cordon", onclick: () => {
    const verb = node.cordoned ? "uncordon" : "cordon";
    doing(act("POST", `/ui/api/nodes/${node.name}/${verb}`), () => `${verb}ed ${node.name}`);
  } }, node.cordoned ? "Uncordon" : "Cordon") : null;
  put(card,
    h("h3", {}, node.name, node.cordoned ? h("span", { class: "badge" }, "cordoned") : null, cordon),
    taints ? h("div", { class: "taints" }, `taints: ${taints}`) : null,
    gauge("cpu", node.requested.cpu, node.allocatable.cpu, cpu),
    gauge("memory", node.requested.memory, node.allocatable.memory, bytes),
    gauge("pods", node.pods.length, node.allocatable.pods, String),
    h("div", { class: "pods" }, pods.map((p) => podLink(p.key, podName(p.key), p.chip))),
    h("details", {}, h("summary", {}, "labels"),
      h("div", { class: "labels" }, Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join(", "))));
}

function unscheduledList(pods) {
  if (!pods.length) return h("p", { class: "empty" }, "none");
  return h("div", { class: "pods" }, pods.map((p) =>
    podLink(p.key, p.key, p.chip)));
}

function drawCluster(document_) {
  cluster.pods = new Map([...document_.pods, ...document_.unscheduled].map((p) => [p.key, p]));
  cluster.nodes = new Map(document_.nodes.map((n) => [n.name, n]));
  cluster.byNode = new Map(document_.nodes.map((n) => [n.name, new Set(n.pods)]));
  cluster.cards = new Map();
  const grid = h("div", { class: "nodes" });
  for (const node of document_.nodes) {
    const card = nodeCard(node);
    cluster.cards.set(node.name, card);
    grid.append(card);
  }
  const unscheduled = document_.unscheduled;
  put(page,
    h("h1", {}, `Cluster: ${document_.nodes.length} nodes, ${cluster.pods.size} pods`),
    filters(),
    h("div", { class: "toolbar" }, toolbar()),
    h("h2", { id: "unscheduled" }, `Unscheduled (${unscheduled.length})`),
    h("div", { id: "unscheduled-pods" }, unscheduledList(unscheduled)),
    h("h2", {}, "Nodes"),
    grid);
  showPending(document_.pending);
  if (replay.on) page.dataset.t = (moment() - replay.start).toFixed(3);  // the moment drawn
}

function filters(again = showCluster) {
  const input = (name, label, hint) => h("label", {}, label,
    h("input", { name, value: cluster.query.get(name) || "", placeholder: hint, "aria-label": label }));
  const form = h("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    const data = new FormData(form);
    cluster.query = new URLSearchParams([...data].filter(([, v]) => v));
    again();
  } },
  input("namespace", "namespace", "any"), input("label", "label selector", "app=web"),
  input("scheduler", "scheduler name", "any"), h("button", { type: "submit" }, "Filter"),
  h("span", { id: "filter-error", class: "error", role: "alert" }));
  return form;
}

function admits(pod) {
  const q = cluster.query;
  if (q.get("namespace") && !pod.key.startsWith(`${q.get("namespace")}/`)) return false;
  if (q.get("scheduler") && pod.scheduler !== q.get("scheduler")) return false;
  return !q.get("label");  // a label selector is the server's to apply: refetched on changes
}

function place(key, from, to) {
  if (from === to) return;
  if (from && cluster.byNode.has(from)) cluster.byNode.get(from).delete(key);
  if (to) {
    if (!cluster.byNode.has(to)) cluster.byNode.set(to, new Set());
    cluster.byNode.get(to).add(key);
  }
}

function applyClusterChanges(changes) {
  if (changes === null || (cluster.query.get("label") && changes.pods.length)) return showCluster();
  const touched = new Set();
  let waitingChanged = false;
  for (const pod of changes.pods) {
    const before = cluster.pods.get(pod.key);
    if (!admits(pod)) {
      if (before) {
        cluster.pods.delete(pod.key);
        place(pod.key, before.node, null);
        if (before.node) touched.add(before.node); else waitingChanged = true;
      }
      continue;
    }
    cluster.pods.set(pod.key, pod);
    place(pod.key, before && before.node, pod.node);
    if (!before || before.node !== pod.node || before.chip !== pod.chip) {  // what a card shows changed
      for (const node of [before && before.node, pod.node]) if (node) touched.add(node);
      if (!pod.node || (before && !before.node)) waitingChanged = true;
    }
  }
  for (const key of changes.removedPods) {
    const before = cluster.pods.get(key);
    if (!before) continue;
    cluster.pods.delete(key);
    place(key, before.node, null);
    if (before.node) touched.add(before.node); else waitingChanged = true;
  }
  for (const node of changes.nodes) {
    cluster.nodes.set(node.name, node);
    touched.add(node.name);
  }
  for (const name of changes.removedNodes) {
    cluster.nodes.delete(name);
    const card = cluster.cards.get(name);
    if (card) card.remove();
    cluster.cards.delete(name);
  }
  const grid = page.querySelector(".nodes");
  for (const name of touched) {
    const node = cluster.nodes.get(name);
    if (!node || !grid) continue;
    node.pods = [...(cluster.byNode.get(name) || [])].sort();
    const card = cluster.cards.get(name);
    if (!card) {
      const made = nodeCard(node);
      grid.append(made);
      cluster.cards.set(name, made);
    } else if (card.dataset.drawn) {
      fillCard(card);
    }
  }
  if (waitingChanged) {
    const unscheduled = [...cluster.pods.values()].filter((p) => !p.node).sort((a, b) => a.key.localeCompare(b.key));
    const list = document.getElementById("unscheduled-pods");
    if (list) put(list, unscheduledList(unscheduled));
    const title = document.getElementById("unscheduled");
    if (title) title.textContent = `Unscheduled (${unscheduled.length})`;
  }
  const heading = page.querySelector("h1");
  if (heading) heading.textContent = `Cluster: ${cluster.nodes.size} nodes, ${cluster.pods.size} pods`;
  if (changes.queue) getJSON("/ui/api/queue").then((q) => showPending(q.pending)).catch(() => {});
}

async function showCluster() {
  try {
    const document_ = await getJSON(`/ui/api/cluster?${cluster.query}`);
    drawCluster(document_);
    listen(applyClusterChanges);
    follow(document_.version);
  } catch (error) {
    if (error instanceof Stale) return;
    const alert = document.getElementById("filter-error");
    if (alert) alert.textContent = error.message;
    else put(page, h("p", { class: "error", role: "alert" }, error.message));
  }
}

// -- the pods page: every pod in a table, as kubectl and Headlamp list them ------------------------

const PODS_SHOWN = 1000;  // rows drawn at once: a filter narrows a larger list

// `fn` run at most once every `ms` (the last call in a burst is not lost: it runs at the end of it).
function throttled(fn, ms) {
  let last = 0;
  let timer = null;
  return () => {
    const wait = last + ms - Date.now();
    if (wait <= 0) { last = Date.now(); fn(); return; }
    if (timer === null) timer = setTimeout(() => { timer = null; last = Date.now(); fn(); }, wait);
  };
}

async function showPods() {
  const document_ = await getJSON(`/ui/api/cluster?${cluster.query}`);
  showPending(document_.pending);
  const pods = [...document_.unscheduled, ...document_.pods].sort((a, b) => a.key.localeCompare(b.key));
  const rows = pods.slice(0, PODS_SHOWN);
  put(page,
    h("h1", {}, `Pods (${pods.length})`),
    filters(showPods),
    pods.length > rows.length ? h("p", { class: "empty" }, `the first ${rows.length}: filter to narrow the list`) : null,
    h("table", { "aria-label": "Pods" },
      h("thead", {}, h("tr", {}, ["pod", "status", "node", "nominated node", "queue", "scheduler"]
        .map((t) => h("th", {}, t)))),
      h("tbody", {}, rows.map((p) => h("tr", { "data-pod": p.key },
        h("td", {}, podLink(p.key)), h("td", {}, h("span", { class: `chip ${p.chip}` }, p.chip)),
        h("td", {}, p.node || ""), h("td", {}, p.nominatedNode || ""), h("td", {}, p.queue || ""),
        h("td", {}, p.scheduler))))));
  listen(throttled(() => showPods().catch(() => {}), 1000));
  follow(document_.version);
}

// -- the pod page ----------------------------------------------------------------------------------

function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function filterTable(groups) {
  if (!groups.length) return h("p", { class: "empty" }, "every node evaluated passed Filter");
  return h("table", { "aria-label": "Filter verdicts" },
    h("thead", {}, h("tr", {}, h("th", {}, "plugin"), h("th", {}, "reasons"), h("th", {}, "nodes"))),
    h("tbody", {}, groups.map((g) => h("tr", {},
      h("td", {}, g.plugin || ""), h("td", {}, g.reasons.join("; ")),
      h("td", {}, g.nodes ? `${g.nodes.length}: ${g.nodes.join(", ")}` : `${g.count} (not evaluated)`)))));
}

function scoreTable(attempt) {
  const scores = [...attempt.scores].sort((a, b) => b.total - a.total || a.node.localeCompare(b.node));
  const plugins = scores.length ? Object.keys(scores[0].plugins) : [];
  const runnerUp = attempt.decision ? attempt.decision.runnerUp : null;
  return h("table", { "aria-label": "Scores" },
    h("thead", {}, h("tr", {}, h("th", {}, "node"),
      plugins.map((p) => h("th", { title: "raw → normalized × weight = weighted" }, p)), h("th", {}, "total"))),
    h("tbody", {}, scores.map((s) => h("tr", {
      class: s.node === attempt.selectedNode ? "chosen" : s.node === runnerUp ? "runner-up" : null,
      "data-node": s.node },
    h("td", {}, s.node),
    plugins.map((p) => {
      const part = s.plugins[p];
      return h("td", { class: "num" }, `${part.raw} → ${part.normalized} × ${part.weight} = ${part.weighted}`);
    }),
    h("td", { class: "num total" }, String(s.total))))));
}

function preemption(p) {
  return h("div", {},
    h("h4", {}, `Preemption: nominated ${p.nominatedNode || "none"}`),
    h("p", {}, p.reason),
    h("table", { "aria-label": "Preemption candidates" },
      h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "victims"), h("th", {}, "PDB violations"))),
      h("tbody", {}, p.candidates.map((c) => h("tr", { class: c.node === p.nominatedNode ? "chosen" : null },
        h("td", {}, c.node), h("td", {}, c.victims.join(", ")), h("td", { class: "num" }, String(c.pdbViolations)))))));
}

function attemptView(attempt) {
  return h("article", { class: "attempt", "aria-label": `attempt ${attempt.attempt}`, "data-attempt": attempt.attempt },
    h("h3", {}, `Attempt ${attempt.attempt}: ${attempt.result}`),
    facts([["profile", attempt.profile], ["nodes", attempt.numAllNodes],
      ["to find", attempt.numFeasibleNodesToFind], ["evaluated", attempt.evaluatedNodes],
      ["feasible", attempt.feasibleNodes], ["selected", attempt.selectedNode],
      ["runner-up", attempt.decision && attempt.decision.runnerUp],
      ["decided by", attempt.decision && attempt.decision.decidedBy.join(", ")],
      ["message", attempt.message]]),
    h("h4", {}, "Filter"), filterTable(attempt.filter),
    attempt.scores ? [h("h4", {}, "Score"), scoreTable(attempt)] : null,
    attempt.preemption ? preemption(attempt.preemption) : null);
}

function timelineTable(rows, tracing) {
  if (!rows.length) {
    return h("p", { class: "empty" },
      tracing ? "nothing recorded yet" : "the timeline is kept from the first time the UI is opened");
  }
  return h("table", { "aria-label": "Timeline" },
    h("thead", {}, h("tr", {}, ["time", "what", "node", "details", "kubesched", "kube-scheduler v1.36.2"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((r) => h("tr", {},
      h("td", {}, r.time), h("td", {}, r.kind), h("td", {}, r.node || ""),
      h("td", {}, Object.entries(r.details).filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")),
      h("td", { class: "site" }, r.site), h("td", { class: "site" }, r.upstream.join(" "))))));
}

function eventsTable(document_) {
  if (document_.events === undefined) return h("p", { class: "empty" }, "a recording keeps no Events");
  if (document_.events === null) return h("p", { class: "empty" }, `Events unavailable: ${document_.eventsUnavailable}`);
  if (!document_.events.length) return h("p", { class: "empty" }, "none");
  return h("table", { "aria-label": "Events" },
    h("thead", {}, h("tr", {}, ["type", "reason", "message", "count", "last", "from"].map((t) => h("th", {}, t)))),
    h("tbody", {}, document_.events.map((e) => h("tr", {}, h("td", {}, e.type), h("td", {}, e.reason),
      h("td", {}, e.message), h("td", { class: "num" }, String(e.count)), h("td", {}, e.last || ""),
      h("td", {}, e.from)))));
}

async function showPod(key) {
  const mine = (changes) =>
    changes === null || changes.pods.some((p) => p.key === key) || changes.removedPods.includes(key);
  let document_;
  try {
    document_ = await getJSON(`/ui/api/pods/${key}`);
  } catch (error) {
    if (error instanceof Stale) return;
    // the last action's outcome stays in view: deleting the pod ends here once it is gone
    put(page, h("h1", {}, key), saidLine(), h("p", { class: "error", role: "alert" }, error.message));
    listen((changes) => { if (mine(changes)) showPod(key); });  // it may be about to appear
    follow(live.version);
    return;
  }
  const pod = document_.pod;
  const attempts = [...document_.explain.attempts].reverse();
  const remove = actions.on ? h("button", { type: "button", id: "delete-pod", onclick: () =>
    doing(act("DELETE", `/ui/api/pods/${key}`), () => `deleted ${key}`) }, "Delete") : null;
  put(page,
    h("h1", {}, pod.key, " ", h("span", { class: `chip ${pod.chip}` }, pod.chip), " ", remove),
    saidLine(),
    facts([["node", pod.node], ["nominated node", pod.nominatedNode], ["scheduler", pod.scheduler],
      ["priority", pod.priority], ["queue", document_.queue && document_.queue.queue],
      ["wakes on", document_.queue && document_.queue.wake_on.join(", ")]]),
    h("h2", {}, "Conditions"),
    document_.conditions.length ? h("table", { "aria-label": "Conditions" },
      h("thead", {}, h("tr", {}, ["type", "status", "reason", "message", "since"].map((t) => h("th", {}, t)))),
      h("tbody", {}, document_.conditions.map((c) => h("tr", {}, h("td", {}, c.type), h("td", {}, c.status),
        h("td", {}, c.reason), h("td", {}, c.message), h("td", {}, c.lastTransitionTime || "")))))
      : h("p", { class: "empty" }, "none"),
    h("h2", {}, "Events"),
    eventsTable(document_),
    h("h2", {}, `Scheduling attempts (${attempts.length} kept)`),
    h("div", {}, attempts.length ? attempts.map(attemptView) : h("p", { class: "empty" }, "no attempt recorded")),
    h("h2", {}, "Timeline"),
    timelineTable(document_.timeline, document_.tracing));
  listen((changes) => { if (mine(changes)) showPod(key); });
  follow(live.version);
}

// -- the queue and scheduler pages -----------------------------------------------------------------

async function showQueue() {
  const document_ = await getJSON("/ui/api/queue");
  showPending(document_.pending);
  put(page,
    h("h1", {}, "Queue"),
    h("table", { "aria-label": "Pending pods" },
      h("thead", {}, h("tr", {}, ["pod", "queue", "attempts", "rejected by", "backoff left", "wakes on", "since"]
        .map((t) => h("th", {}, t)))),
      h("tbody", {}, document_.pods.map((p) => h("tr", { "data-pod": p.key },
        h("td", {}, podLink(p.key)), h("td", {}, p.queue), h("td", { class: "num" }, String(p.attempts)),
        h("td", {}, p.rejected_by.join(", ")),
        h("td", { class: "num countdown", "data-until": p.backoffSeconds === undefined ? null
          : String(performance.now() / 1000 + p.backoffSeconds) },
        p.backoffSeconds === undefined ? "" : `${p.backoffSeconds.toFixed(1)} s`),
        h("td", {}, p.wake_on.join(", ")), h("td", {}, p.since || ""))))),
    document_.pods.length ? null : h("p", { class: "empty" }, "no pod is waiting"));
  listen((changes) => { if (changes === null || changes.queue) showQueue(); });
  follow(live.version);
}

// Backoff countdowns run down between the queue's changes (live only: a replay stands still).
setInterval(() => {
  if (replay.on) return;
  for (const cell of document.querySelectorAll("td.countdown[data-until]")) {
    const left = Math.max(0, Number(cell.dataset.until) - performance.now() / 1000);
    cell.textContent = `${left.toFixed(1)} s`;
  }
}, 250);

async function showScheduler() {
  const document_ = await getJSON("/ui/api/scheduler");
  showPending(document_.pending);
  if (document_.recorded) {
    put(page, h("h1", {}, "Scheduler"),
      h("p", { class: "empty" }, "A recorded run keeps no profiles: the cluster, queue and pod pages replay it."));
    listen(() => {});
    return;
  }
  const metricName = (m) => m.name + (Object.keys(m.labels).length
    ? `{${Object.entries(m.labels).map(([k, v]) => `${k}="${v}"`).join(",")}}` : "");
  put(page, h("h1", {}, "Scheduler"),
    facts(Object.entries(document_.cache).map(([k, v]) => [`cache ${k}`, v])),
    h("div", {}, document_.profiles.map((profile) => [
      h("h2", {}, `Profile ${profile.name}`),
      h("table", { "aria-label": `profile ${profile.name}` },
        h("thead", {}, h("tr", {}, h("th", {}, "extension point"), h("th", {}, "plugins, in the order they run"))),
        h("tbody", {}, Object.entries(profile.points).map(([point, plugins]) => h("tr", {},
          h("td", {}, point),
          h("td", {}, plugins.map((p) => point === "score" ? `${p} (${profile.weights[p]})` : p).join(", ")))))),
      h("details", {}, h("summary", {}, "arguments"),
        h("table", { "aria-label": `arguments of ${profile.name}` },
          h("tbody", {}, Object.entries(profile.args).map(([plugin, args]) => h("tr", {},
            h("td", {}, plugin), h("td", { class: "site" }, JSON.stringify(args)))))))])),
    h("h2", {}, "Metrics at a glance"),
    h("table", { "aria-label": "metrics" },
      h("tbody", {}, document_.metrics.map((m) => h("tr", {},
        h("td", { class: "site" }, metricName(m)), h("td", { class: "num" }, String(m.value)))))));
  listen((changes) => {
    if (changes === null || changes.queue) getJSON("/ui/api/queue").then((q) => showPending(q.pending)).catch(() => {});
  });
  follow(live.version);
}

// -- replaying a recorded run ----------------------------------------------------------------------

function setMoment(t, { push } = {}) {
  replay.t = Math.min(Math.max(0, t), replay.end - replay.start);
  const [path] = location.hash.split("?");
  const hash = `${path || "#/"}?t=${replay.t.toFixed(6)}`;
  if (push) location.hash = hash; else history.replaceState(null, "", hash);
  drawReplayBar();
  route();
}

function drawReplayBar() {
  let bar = document.getElementById("replay");
  const span = replay.end - replay.start;
  const t = replay.t === null ? span : replay.t;
  if (!bar) {
    bar = h("div", { id: "replay", role: "group", "aria-label": "replay" },
      h("button", { type: "button", id: "previous", title: "the previous moment worth stopping at",
        onclick: () => {
          const now = replay.t === null ? span : replay.t;
          setMoment(Math.max(0, ...replay.marks.map((m) => m - replay.start).filter((m) => m < now - 1e-6)));
        } },
      "◀"),
      h("input", { type: "range", id: "at", min: 0, max: span.toFixed(3), step: "0.001", "aria-label": "moment",
        oninput: (event) => setMoment(Number(event.target.value)) }),
      h("button", { type: "button", id: "next", title: "the next moment worth stopping at",
        onclick: () => {
          const now = replay.t === null ? span : replay.t;
          const later = replay.marks.map((m) => m - replay.start).filter((m) => m > now + 1e-6);
          setMoment(later.length ? Math.min(...later) : span);
        } },
      "▶"),
      h("output", { id: "moment" }),
      h("span", { id: "replaying", class: "site", title: replay.name || null }, replay.name || ""));
    document.querySelector("header").append(bar);
  }
  const slider = document.getElementById("at");
  if (Number(slider.value) !== t) slider.value = t;
  document.getElementById("moment").textContent = `t+${t.toFixed(3)} s of ${span.toFixed(3)} s`;
  liveMark.textContent = "replay";
}

// -- the compare page ------------------------------------------------------------------------------

async function showCompare() {
  const report = await getJSON("/ui/api/compare").catch((error) => {
    if (error instanceof Stale) throw error;
    return null;
  });
  if (report === null) {
    put(page, h("h1", {}, "Compare"), h("p", { class: "empty" },
      "No comparison is loaded here: run kubesched compare WORKLOAD --config A --config B --ui, ",
      "or kubesched ui --compare REPORT with a report of kubesched compare --output json."));
    listen(() => {});
    return;
  }
  const pendingOf = (c) => Object.values(c.pending || {}).reduce((a, b) => a + b, 0);
  put(page,
    h("h1", {}, `Compare: ${report.workload || "a workload"} (seed ${report.seed ?? 0})`),
    h("table", { "aria-label": "Summary" },
      h("thead", {}, h("tr", {}, ["configuration", "schedulerName", "nodes used", "cpu utilisation σ", "pending",
        "attempts"].map((t) => h("th", {}, t)))),
      h("tbody", {}, report.configs.map((c) => h("tr", { "data-config": c.config },
        h("td", {}, c.config), h("td", {}, c.schedulerName || ""),
        h("td", { class: "num" }, String(c.spread ? c.spread.nodesUsed : "")),
        h("td", { class: "num" }, c.spread ? c.spread.cpuUtilisationStdDev.toFixed(4) : ""),
        h("td", { class: "num" }, String(pendingOf(c))), h("td", { class: "num" }, String(c.attempts ?? "")))))),
    h("div", { class: "compare", style: `grid-template-columns: repeat(${report.configs.length}, 1fr)` },
      report.configs.map((c) => h("section", { "aria-label": `configuration ${c.config}`, "data-config": c.config },
        h("h2", {}, c.config),
        c.nodes.map((n) => h("div", { class: "node-use", "data-node": n.name },
          gauge(n.name, n.cpu.requested, n.cpu.allocatable, cpu),
          h("span", { class: "pods-count" }, `${n.pods.length} pods`)))))));
  listen(() => {});
}

// -- the sweep page --------------------------------------------------------------------------------

// A sweep's results (kubesched ui --sweep DIR): every point in a table; a point opened is run again,
// traced, and the cluster, pod and queue pages replay that run.
const SWEEP_METRICS = ["placed", "unplaced", "waitP99", "nodesUsed", "cpuUtilisation", "zoneSkew"];
const sweepView = { column: "index", descending: false };

function cell(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(4)));
  return typeof value === "string" ? value : JSON.stringify(value);
}

// `a` before `b` (negative), after (positive): numbers by value, the rest as text, nothing last.
function ordered(a, b, descending) {
  const missing = (v) => v === null || v === undefined || v === "";
  if (missing(a) || missing(b)) return missing(a) - missing(b);
  const c = typeof a === "number" && typeof b === "number" ? a - b
    : cell(a).localeCompare(cell(b), undefined, { numeric: true });
  return descending ? -c : c;
}

function sweepColumns(sweep) {
  const metrics = sweep.metrics.filter((m) => SWEEP_METRICS.includes(m.name));
  return [
    { name: "index", value: (r) => r.index, num: true },
    ...sweep.axes.map((a) => ({ name: a.name, title: a.path, value: (r) => r.point[a.name] })),
    { name: "status", value: (r) => r.status },
    ...metrics.map((m) => ({ name: m.name, title: `${m.description} (better: ${m.better})`,
      value: (r) => r.metrics[m.name], num: true })),
    { name: "error", value: (r) => r.error },
  ];
}

function openButton(row) {
  if (row.status !== "ok") return null;
  return h("button", { type: "button", class: "open", "aria-label": `open point ${row.index}`, onclick: (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    say(`running point ${row.index} again…`, false);
    act("POST", `/ui/api/sweep/points/${row.index}/open`).then(replayOpened).catch((error) => {
      button.disabled = false;
      say(error.message, true);
    });
  } }, "Open");
}

// The point just opened replayed from its start: a fresh time slider, then its cluster page.
async function replayOpened() {
  const response = await fetch("/ui/api/replay", { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`the point's run is not replayed (${response.status})`);
  Object.assign(replay, await response.json(), { on: true, t: null });
  const bar = document.getElementById("replay");
  if (bar) bar.remove();
  drawReplayBar();
  location.hash = "#/";
}

function drawSweep(sweep) {
  const columns = sweepColumns(sweep);
  const by = columns.find((c) => c.name === sweepView.column) || columns[0];
  const rows = [...sweep.rows].sort((x, y) =>
    ordered(by.value(x), by.value(y), sweepView.descending) || x.index - y.index);
  const header = (c) => h("th", { title: c.title,
    "aria-sort": c === by ? (sweepView.descending ? "descending" : "ascending") : null },
  h("button", { type: "button", class: "sort", onclick: () => {
    sweepView.descending = c === by ? !sweepView.descending : false;
    sweepView.column = c.name;
    drawSweep(sweep);
  } }, c.name));
  put(page,
    h("h1", {}, `Sweep: ${sweep.name} (${sweep.rows.length} of ${sweep.points} points finished)`),
    sweep.description ? h("p", {}, sweep.description) : null,
    facts([["file", sweep.file], ["results", sweep.directory],
      ["opened", sweep.opened === null ? "none: open a point to replay its run" : `point ${sweep.opened}`]]),
    saidLine(),
    h("table", { "aria-label": "Points" },
      h("thead", {}, h("tr", {}, columns.map(header), h("th", {}, "replay"))),
      h("tbody", {}, rows.map((r) => h("tr", { "data-index": r.index,
        class: r.index === sweep.opened ? "chosen" : r.status !== "ok" ? "failed" : null },
      columns.map((c) => c.name === "status"
        ? h("td", {}, h("span", { class: `chip ${r.status === "ok" ? "Succeeded" : "Failed"}` }, r.status))
        : h("td", { class: c.num ? "num" : null }, cell(c.value(r)))),
      h("td", {}, openButton(r)))))),
    sweep.rows.length ? null : h("p", { class: "empty" }, "no point has finished yet"));
}

async function showSweep() {
  let sweep;
  try {
    sweep = await getJSON("/ui/api/sweep");
  } catch (error) {
    if (error instanceof Stale) throw error;
    put(page, h("h1", {}, "Sweep"), error.status === 404
      ? h("p", { class: "empty" }, "No sweep is loaded here: run kubesched ui --sweep DIR with a results ",
        "directory of kubesched sweep.")
      : h("p", { class: "error", role: "alert" }, error.message));
    listen(() => {});
    return;
  }
  drawSweep(sweep);
  listen(() => {});
}

// -- routing ---------------------------------------------------------------------------------------

function route() {
  navigation += 1;
  live.listeners.clear();  // the page shown before hears no more changes
  const [where, query] = location.hash.split("?");
  const t = new URLSearchParams(query || "").get("t");
  if (replay.on && t !== null && Math.abs(Number(t) - replay.t) > 1e-6) {
    replay.t = Number(t);
    drawReplayBar();
  }
  const path = where.replace(/^#\/?/, "");
  const [name, ...rest] = path.split("/");
  for (const link of document.querySelectorAll("header nav a")) {
    const current = link.dataset.page === (name || "cluster") || (name === "pod" && link.dataset.page === "cluster");
    if (current) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  const shown = name === "pod" ? showPod(rest.join("/"))
    : name === "compare" ? showCompare()
    : name === "sweep" ? showSweep()
    : name === "pods" ? showPods()
    : name === "queue" ? showQueue()
      : name === "scheduler" ? showScheduler()
        : showCluster();
  Promise.resolve(shown).catch((error) => {
    if (!(error instanceof Stale)) put(page, h("p", { class: "error", role: "alert" }, error.message));
  });
}

window.addEventListener("hashchange", () => { Object.assign(said, { message: "", failed: false }); route(); });
fetch("/ui/api/replay").then(async (response) => {
  if (response.ok) {
    Object.assign(replay, await response.json(), { on: true });
    drawReplayBar();
  } else {
    const scheduler = await getJSON("/ui/api/scheduler").catch(() => ({}));
    actions.on = Boolean(scheduler.actions);
    // the replay's pages with nothing replayed yet are a sweep's: its page first
    if (scheduler.recorded && !location.hash.replace(/^#\/?/, "")) history.replaceState(null, "", "#/sweep");
  }
  route();
}, route);
