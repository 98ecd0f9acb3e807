/// The admin page: one HTML document (inline CSS and JavaScript, plus the JavaScript client from this origin's
/// `/longlink.js`; no external resources, works offline) served at `/` and `/admin`. It calls the admin API with
/// the token from `#token=...` in its address (or typed in), polls `/admin/stats`, `/admin/routes` and
/// `/admin/connections`, and looks up orders. It is itself a browser client: with the token (admins may subscribe
/// to any route) it connects to the gateway's WebSocket listener (found in `/admin/stats`) and follows the order
/// it shows, and the live tap follows exact routes over that connection; a route pattern (`order://taxi/*`) is
/// tapped server-side (`/admin/tap`, read with a streaming `fetch`, because `EventSource` cannot send an
/// Authorization header), as is everything when no WebSocket listener runs. `#order=taxi/8812` opens that order
/// at load, `#tap=ROUTES` starts the tap on them.
enum AdminPage {
    /// Only this document's own inline code and same-origin requests.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; img-src data:; base-uri 'none'; form-action 'none'"

    /// The example page (`/example`): its inline module, the client from this origin, WebSocket connections.
    static let examplePolicy =
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'"

    /// The page's bytes, built once.
    static let bytes: [UInt8] = Array(html.utf8)

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>longlink admin</title>
<style>
  :root { --bg:#0f1419; --panel:#171d24; --line:#263040; --text:#d8dee9; --dim:#8b98a9; --accent:#4fb3ff; --ok:#5fd38d; --bad:#ff6b6b; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui, sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; gap:16px; align-items:center; padding:10px 18px; background:var(--panel); border-bottom:1px solid var(--line); }
  header h1 { font-size:16px; margin:0; letter-spacing:.5px; }
  header .state { padding:2px 8px; border-radius:10px; background:var(--line); }
  header .state.ready { background:#1d4d33; color:var(--ok); }
  header .state.draining, header .state.starting { background:#4d1d1d; color:var(--bad); }
  header input { background:var(--bg); color:var(--text); border:1px solid var(--line); padding:4px 6px; border-radius:4px; }
  main { display:grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap:14px; padding:14px 18px; }
  section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:10px 12px; min-width:0; }
  section h2 { font-size:13px; text-transform:uppercase; color:var(--dim); margin:0 0 8px; letter-spacing:.8px; }
  .wide { grid-column: 1 / -1; }
  .cards { display:grid; grid-template-columns: repeat(auto-fit, minmax(120px, 1fr)); gap:10px; }
  .card { background:var(--bg); border:1px solid var(--line); border-radius:6px; padding:8px 10px; }
  .card .value { font-size:22px; font-variant-numeric: tabular-nums; color:var(--accent); }
  .card .label { color:var(--dim); font-size:12px; }
  table { width:100%; border-collapse:collapse; font-variant-numeric: tabular-nums; }
  th, td { text-align:left; padding:4px 6px; border-bottom:1px solid var(--line); vertical-align:top; overflow-wrap:anywhere; }
  th { color:var(--dim); font-weight:500; font-size:12px; }
  form, .controls { display:flex; gap:8px; margin-bottom:8px; flex-wrap:wrap; }
  input, select, button { font:inherit; background:var(--bg); color:var(--text); border:1px solid var(--line); border-radius:4px; padding:4px 8px; }
  button { cursor:pointer; } button:hover { border-color:var(--accent); }
  .muted { color:var(--dim); } .error { color:var(--bad); }
  .scroll { max-height:340px; overflow:auto; }
  code { color:var(--accent); }
</style>
</head>
<body>
<header>
  <h1>longlink</h1>
  <span id="state" class="state">…</span>
  <span id="version" class="muted"></span>
  <span id="live" class="muted" title="this page's own WebSocket connection to the gateway">live: off</span>
  <span style="flex:1"></span>
  <label class="muted">token <input id="token" type="password" size="18" autocomplete="off"></label>
  <span id="message" class="error"></span>
</header>
<main>
  <section class="wide">
    <h2>Node</h2>
    <div class="cards">
      <div class="card"><div class="value" id="stat-connections">–</div><div class="label">connections</div></div>
      <div class="card"><div class="value" id="stat-subscriptions">–</div><div class="label">subscriptions</div></div>
      <div class="card"><div class="value" id="stat-publishes">–</div><div class="label">publishes applied</div></div>
      <div class="card"><div class="value" id="stat-pushes">–</div><div class="label">pushes</div></div>
      <div class="card"><div class="value" id="rate-publishes">–</div><div class="label">publishes / s</div></div>
      <div class="card"><div class="value" id="rate-pushes">–</div><div class="label">pushes / s</div></div>
      <div class="card"><div class="value" id="rate-bytes">–</div><div class="label">push bytes / s</div></div>
      <div class="card"><div class="value" id="rate-accepted">–</div><div class="label">new connections / s</div></div>
    </div>
  </section>
  <section>
    <h2>Top routes</h2>
    <table id="routes"><thead><tr><th>route</th><th>subscribers</th></tr></thead><tbody></tbody></table>
  </section>
  <section>
    <h2>Order lookup</h2>
    <form id="lookup">
      <input id="lookup-line" value="taxi" size="8" aria-label="business line">
      <input id="lookup-order" placeholder="order id" size="14" aria-label="order id">
      <button>show</button>
    </form>
    <div id="snapshot" class="muted">Enter a business line and an order id.</div>
    <div id="presence" class="muted"></div>
    <div class="scroll"><table id="history"><thead><tr><th>offset</th><th>from → to</th><th>time</th><th>fields</th></tr></thead><tbody></tbody></table></div>
  </section>
  <section class="wide">
    <h2>Connections <span id="connections-total" class="muted"></span></h2>
    <div class="controls">
      <input id="conn-filter" placeholder="filter: user, address, route…" size="28">
      <select id="conn-sort">
        <option value="id">by id</option><option value="outbound_bytes">by outbound bytes</option>
        <option value="last_activity">by last activity</option><option value="user">by user</option>
        <option value="subscriptions">by subscriptions</option>
      </select>
    </div>
    <div class="scroll"><table id="connections"><thead><tr><th>id</th><th>user</th><th>address</th><th>client</th><th>subscriptions</th><th>queued</th><th>idle ms</th><th>loop</th><th></th></tr></thead><tbody></tbody></table></div>
  </section>
  <section class="wide">
    <h2>Live tap</h2>
    <div class="controls">
      <input id="tap-route" placeholder="route pattern, e.g. order://taxi/*" size="30">
      <input id="tap-state" placeholder="target state" size="14">
      <button id="tap-toggle">start</button>
      <span id="tap-status" class="muted">stopped</span>
    </div>
    <div class="scroll"><table id="tap"><thead><tr><th>time</th><th>route</th><th>offset</th><th>from → to</th><th>fields</th></tr></thead><tbody></tbody></table></div>
  </section>
</main>
<script type="module">
import { LonglinkClient } from "/longlink.js";
const $ = (selector) => document.querySelector(selector);
const hash = new URLSearchParams(location.hash.slice(1));
let token = hash.get("token") || sessionStorage.getItem("longlink-token") || "";
$("#token").value = token;
$("#token").addEventListener("change", async (e) => {
  token = e.target.value;
  sessionStorage.setItem("longlink-token", token);
  stopLive();
  await refresh();
  restartTap();
  if (shownOrder) followOrder(shownOrder.route, shownOrder.position);
});

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
function say(text) { $("#message").textContent = text || ""; }
async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: { "Authorization": "Bearer " + token, ...(options.headers || {}) } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
  return body;
}
const number = (value) => Number(value).toLocaleString("en-US", { maximumFractionDigits: 1 });
const time = (ms) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
function fields(record) {
  const parts = [];
  for (const key of ["driver_id", "eta_seconds", "cancellation_reason", "payload_bytes"]) if (record[key] !== undefined) parts.push(key + "=" + record[key]);
  if (record.lat_e6 !== undefined) parts.push("at " + (record.lat_e6 / 1e6).toFixed(5) + "," + (record.lon_e6 / 1e6).toFixed(5));
  return parts.join(" ");
}
function transition(record) { return (record.from ? record.from + " → " : "") + record.to; }

/** One console line per live event (tests follow the page this way). */
const report = (event) => console.log("longlink-admin " + JSON.stringify(event));
/** Client fields (proto names) the way the admin API names them, for `fields()`. */
function adminFields(f) {
  const out = { driver_id: f.driver_id, eta_seconds: f.eta_seconds, cancellation_reason: f.cancellation_reason };
  if (f.latitude_e6 !== undefined) { out.lat_e6 = f.latitude_e6; out.lon_e6 = f.longitude_e6; }
  if (f.payload && f.payload.length) out.payload_bytes = f.payload.length;
  return out;
}

// The page's own connection to the gateway's WebSocket listener, with the admin token.
let live = null;
let liveURL = null;
function liveAddress(listeners) {
  const wanted = location.protocol === "https:" ? ["wss"] : ["ws", "wss"];
  const listener = wanted.map((name) => (listeners || []).find((l) => l.transport === name)).find(Boolean);
  if (!listener) return null;
  const host = location.hostname.includes(":") ? "[" + location.hostname + "]" : location.hostname;
  return listener.transport + "://" + host + ":" + listener.port + (listener.path || "/longlink");
}
function ensureLive(listeners) {
  const url = liveAddress(listeners);
  if (!url || !token || (live && liveURL === url)) return;
  stopLive();
  liveURL = url;
  live = new LonglinkClient({ url, token: () => token, clientName: "longlink-admin" });
  live.on("state", (state) => {
    $("#live").textContent = "live: " + (state.name === "waiting" ? "reconnecting" : state.name);
    report({ type: "state", name: state.name });
  });
  live.on("error", (error) => say(error.message));
  if (shownOrder && !orderFollow) followOrder(shownOrder.route, shownOrder.position);
}
function stopLive() {
  if (orderFollow) { orderFollow(); orderFollow = null; }
  if (tap && tap.live) stopTap();
  live?.close();
  live = null;
  liveURL = null;
  $("#live").textContent = "live: off";
}

let previous = null;
async function pollStats() {
  const stats = await api("/admin/stats");
  const state = $("#state");
  state.textContent = stats.state; state.className = "state " + stats.state;
  $("#version").textContent = "v" + stats.version;
  $("#stat-connections").textContent = number(stats.connections);
  $("#stat-subscriptions").textContent = number(stats.subscriptions);
  $("#stat-publishes").textContent = number(stats.publishes_applied);
  $("#stat-pushes").textContent = number(stats.pushes);
  if (previous && stats.time_ms > previous.time_ms) {
    const seconds = (stats.time_ms - previous.time_ms) / 1000;
    $("#rate-publishes").textContent = number((stats.publishes_applied - previous.publishes_applied) / seconds);
    $("#rate-pushes").textContent = number((stats.pushes - previous.pushes) / seconds);
    $("#rate-bytes").textContent = number((stats.pushed_bytes - previous.pushed_bytes) / seconds);
    $("#rate-accepted").textContent = number((stats.accepted - previous.accepted) / seconds);
  }
  previous = stats;
  ensureLive(stats.listeners);
}
async function pollRoutes() {
  const body = await api("/admin/routes?limit=10");
  $("#routes tbody").replaceChildren(...body.routes.map((r) => el("tr", { "class": "route-row" }, el("td", {}, el("code", {}, r.route)), el("td", {}, r.subscribers))));
}
async function pollConnections() {
  const query = new URLSearchParams({ sort: $("#conn-sort").value, filter: $("#conn-filter").value, limit: "200" });
  const body = await api("/admin/connections?" + query);
  $("#connections-total").textContent = "(" + body.total + ")";
  $("#connections tbody").replaceChildren(...body.connections.map((c) => {
    const button = el("button", { title: "disconnect with 3007 admin_reconnect" }, "disconnect");
    button.addEventListener("click", async () => {
      try { await api("/admin/connections/" + encodeURIComponent(c.id) + "/disconnect", { method: "POST", body: "{}" }); say(""); }
      catch (error) { say(error.message); }
      pollConnections().catch((error) => say(error.message));
    });
    return el("tr", { "class": "connection-row" }, el("td", {}, c.id), el("td", {}, c.user ?? "–"), el("td", {}, c.address), el("td", {}, c.client),
      el("td", {}, c.subscriptions.join(" ")), el("td", {}, number(c.outbound_bytes)), el("td", {}, number(c.last_activity_ms_ago)), el("td", {}, c.loop), el("td", {}, button));
  }));
}
async function refresh() {
  if (!token) { say("enter an admin token"); return; }
  try { await Promise.all([pollStats(), pollRoutes(), pollConnections()]); say(""); }
  catch (error) { say(error.message); }
}

async function lookup(line, order) {
  try {
    const body = await api("/admin/orders/" + encodeURIComponent(line) + "/" + encodeURIComponent(order));
    const s = body.snapshot;
    $("#snapshot").replaceChildren(el("span", { id: "snapshot-state" }, s.route + " is " + s.state), el("span", { "class": "muted" }, " · offset " + s.offset + " · updated " + time(s.updated_ms) + " " + fields(s)));
    $("#history tbody").replaceChildren(...body.history.map((r) => el("tr", { "class": "history-row" }, el("td", {}, r.offset), el("td", {}, transition(r)), el("td", {}, time(r.time_ms)), el("td", {}, fields(r)))));
    followOrder(s.route, { epoch: s.epoch, offset: s.offset });
  } catch (error) {
    $("#snapshot").replaceChildren(el("span", { "class": "error" }, error.message));
    $("#history tbody").replaceChildren();
  }
  try {
    const p = await api("/admin/presence?route=" + encodeURIComponent("order://" + line + "/" + order));
    const who = p.counts_only ? "(counts only)" : p.members.map((m) => m.user + " via " + (m.client || "?") + " (" + m.connection + " on " + m.node + ", since " + time(m.since_ms) + ")").join(", ");
    $("#presence").textContent = "subscribed now: " + p.count + " connection(s), " + p.users + " user(s) " + who;
  } catch (error) {
    $("#presence").replaceChildren(el("span", { "class": "error" }, error.message));
  }
}
// The order shown follows its changes over the page's WebSocket connection: the snapshot line updates and each
// new record becomes a history row (records the lookup already listed are not repeated).
let shownOrder = null;
let orderFollow = null;
function showSnapshot(s) {
  $("#snapshot").replaceChildren(el("span", { id: "snapshot-state" }, s.route + " is " + s.state), el("span", { "class": "muted" }, " · offset " + s.position.offset + " · updated " + time(s.updatedAtMs) + " " + fields(adminFields(s.fields))));
}
function followOrder(route, position) {
  if (orderFollow) { orderFollow(); orderFollow = null; }
  shownOrder = { route, position };
  if (!live) return;
  orderFollow = live.subscribe(route, (change) => {
    if (!shownOrder || shownOrder.route !== route) return;
    showSnapshot(change.snapshot);
    const r = change.record;
    const last = shownOrder.position;
    if (change.kind === "change" && (r.position.epoch !== last.epoch || r.position.offset > last.offset)) {
      $("#history tbody").prepend(el("tr", { "class": "history-row live" }, el("td", {}, r.position.offset), el("td", {}, (r.fromState ? r.fromState + " → " : "") + r.state), el("td", {}, time(r.timestampMs)), el("td", {}, fields(adminFields(r.fields)))));
      shownOrder.position = r.position;
    }
    report({ type: "order", kind: change.kind, offset: r.position.offset, state: r.state });
  });
}
$("#lookup").addEventListener("submit", (e) => { e.preventDefault(); lookup($("#lookup-line").value, $("#lookup-order").value); });

let tap = null;
function addTapRow(record) {
  const body = $("#tap tbody");
  body.prepend(el("tr", { "class": "tap-row" }, el("td", {}, time(record.time_ms)), el("td", {}, el("code", {}, record.route)), el("td", {}, record.epoch + ":" + record.offset), el("td", {}, transition(record)), el("td", {}, fields(record))));
  while (body.children.length > 100) body.lastChild.remove();
}
function startTap() {
  const routes = $("#tap-route").value.trim().split(/[\s,]+/).filter(Boolean);
  if (live && routes.length && routes.every((route) => !route.includes("*"))) startLiveTap(routes);
  else startServerTap();
}
/** Exact routes: subscribed over the page's WebSocket connection; each new record becomes a row. */
function startLiveTap(routes) {
  const state = $("#tap-state").value;
  const stops = routes.map((route) => live.subscribe(route, (change) => {
    if (change.kind !== "change" || (state && change.record.state !== state)) return;
    const r = change.record;
    addTapRow({ time_ms: r.timestampMs, route, epoch: r.position.epoch, offset: r.position.offset, from: r.fromState, to: r.state, ...adminFields(r.fields) });
    report({ type: "tap", route, offset: r.position.offset, state: r.state });
  }));
  tap = { live: true, abort: () => stops.forEach((stop) => stop()) };
  $("#tap-toggle").textContent = "stop";
  $("#tap-status").textContent = "live over WebSocket (" + routes.join(", ") + ")";
}
/** Patterns (or no WebSocket listener): the server's tap, a streaming fetch of `/admin/tap`. */
async function startServerTap() {
  const controller = new AbortController();
  tap = controller;
  $("#tap-toggle").textContent = "stop";
  const query = new URLSearchParams({ recent: "50" });
  if ($("#tap-route").value) query.set("route", $("#tap-route").value);
  if ($("#tap-state").value) query.set("state", $("#tap-state").value);
  try {
    const response = await fetch("/admin/tap?" + query, { headers: { "Authorization": "Bearer " + token }, signal: controller.signal });
    if (!response.ok) throw new Error("tap: HTTP " + response.status);
    $("#tap-status").textContent = "live";
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        for (const line of event.split("\n")) if (line.startsWith("data: ")) addTapRow(JSON.parse(line.slice(6)));
      }
    }
    $("#tap-status").textContent = "ended";
  } catch (error) {
    $("#tap-status").textContent = controller.signal.aborted ? "stopped" : error.message;
  }
  if (tap === controller) { tap = null; $("#tap-toggle").textContent = "start"; }
}
function stopTap() { if (tap) { tap.abort(); tap = null; } $("#tap-toggle").textContent = "start"; $("#tap-status").textContent = "stopped"; }
function restartTap() { stopTap(); if (token) startTap(); }
$("#tap-toggle").addEventListener("click", () => { if (tap) stopTap(); else startTap(); });
$("#conn-filter").addEventListener("input", () => pollConnections().catch((error) => say(error.message)));
$("#conn-sort").addEventListener("change", () => pollConnections().catch((error) => say(error.message)));

if (hash.get("tap")) $("#tap-route").value = hash.get("tap");
setInterval(refresh, 2000);
refresh().then(() => { if (token) startTap(); });
const wanted = (hash.get("order") || "").split("/");
if (wanted.length === 2 && token) { $("#lookup-line").value = wanted[0]; $("#lookup-order").value = wanted[1]; lookup(wanted[0], wanted[1]); }
</script>
</body>
</html>
"""#
}
