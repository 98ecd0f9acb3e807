// LonglinkClient's behaviour against a fake WebSocket and fake timers: the same model as the Swift library's
// ClientSession/ClientDriver (snapshot first, each change once in order, backoff with full jitter, resume, dedupe,
// resync, disconnect codes, token refresh, a hidden page's slower timings, publishes with idempotency keys).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  LonglinkClient, ReconnectPolicy, SUBPROTOCOL, decodeMessage, encodeMessage, FrameReader,
} from "../longlink.js";

/** Timers that only move when the test says so. */
class Clock {
  constructor() { this.time = 1_000_000; this.timers = new Map(); this.nextId = 1; }
  now = () => this.time;
  setTimeout = (f, ms) => { const id = this.nextId++; this.timers.set(id, { at: this.time + ms, f }); return id; };
  clearTimeout = (id) => { this.timers.delete(id); };
  /** Moves time forward by `ms`, running due timers in order. */
  advance(ms) {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = Math.max(this.time, due[1].at);
      due[1].f();
    }
    this.time = end;
  }
}

/** Lets the client's async steps (the token provider) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A test double for the browser's WebSocket that records what the client sends. */
function fakeWebSockets() {
  const sockets = [];
  class FakeWebSocket {
    constructor(url, protocols) {
      this.url = url;
      this.protocols = protocols;
      this.readyState = 0;
      this.sent = [];
      this.closed = false;
      sockets.push(this);
    }
    send(bytes) { this.sent.push(bytes); }
    close() { this.closed = true; this.readyState = 3; }
    /** The server accepted the upgrade. */
    async open() { this.readyState = 1; this.onopen?.(); await settle(); }
    /** The server sends these frames in one binary message. */
    deliver(...frames) {
      const parts = frames.map((frame) => {
        const body = encodeMessage("ServerFrame", frame);
        const prefix = body.length < 128 ? [body.length] : [(body.length & 0x7f) | 0x80, body.length >> 7];
        return [...prefix, ...body];
      });
      this.onmessage?.({ data: Uint8Array.from(parts.flat()).buffer });
    }
    /** The connection ends (a network failure, or the server's close frame with `code`). */
    drop(code = 1006, reason = "") { this.readyState = 3; this.onclose?.({ code, reason }); }
    /** Every client frame sent so far, decoded. */
    frames() {
      const reader = new FrameReader();
      return this.sent.flatMap((bytes) => reader.push(bytes)).map((body) => decodeMessage("ClientFrame", body));
    }
    kinds() { return this.frames().map((frame) => Object.keys(frame)[0]); }
    last(kind) { return this.frames().filter((frame) => frame[kind]).map((frame) => frame[kind]).pop(); }
  }
  return { sockets, FakeWebSocket };
}

const route = "order://taxi/8812";
const connected = { connected: { protocol_version: 1, client_id: "c1", node_id: "n", ping_interval_ms: 25_000, pong_timeout_ms: 10_000 } };

function push(offset, state, extra = {}) {
  return { push: { route, offset, epoch: 1, timestamp_ms: 1_700_000_000_000 + offset, to_state_name: state, ...extra } };
}

function setup(options = {}) {
  const clock = new Clock();
  const { sockets, FakeWebSocket } = fakeWebSockets();
  const client = new LonglinkClient({
    url: "ws://gateway/longlink",
    token: options.token ?? "t0",
    WebSocket: FakeWebSocket,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
    now: clock.now,
    random: options.random ?? (() => 0.5),
    document: options.document ?? null,
    ...options.client,
  });
  const states = [];
  client.on("state", (state) => states.push(state));
  return { clock, sockets, client, states };
}

/** Opens socket `index` and answers `connect`. */
async function connect(sockets, index = sockets.length - 1) {
  const socket = sockets[index];
  await socket.open();
  socket.deliver(connected);
  return socket;
}

test("connects with the provider's token, offers the sub-protocol, subscribes once connected", async () => {
  let calls = 0;
  const { sockets, client, states } = setup({ token: async () => `token-${++calls}` });
  client.subscribe(route, () => {});
  assert.equal(sockets.length, 1);
  assert.deepEqual(sockets[0].protocols, [SUBPROTOCOL]);
  await sockets[0].open();
  assert.deepEqual(sockets[0].last("connect"), { protocol_version: 1, token: "token-1", client_name: "longlink-js", client_version: "0.1.0" });
  assert.deepEqual(sockets[0].kinds(), ["connect"], "nothing before connected");
  sockets[0].deliver(connected);
  assert.deepEqual(sockets[0].last("subscribe"), { request_id: 1, route });
  assert.deepEqual(states.map((s) => s.name), ["connecting", "connected"], "it starts connecting at once");
  assert.equal(states.at(-1).connected.client_id, "c1");
  client.close();
});

test("the snapshot comes first, then each change once and in order (duplicates by route and offset dropped)", async () => {
  const { sockets, client } = setup();
  const seen = [];
  client.subscribe(route, (change) => seen.push([change.kind, change.record.position.offset, change.snapshot.state]));
  const socket = await connect(sockets);
  const request = socket.last("subscribe").request_id;
  socket.deliver({ subscribed: { request_id: request, route, snapshot: { state_name: "dispatching", position: { epoch: 1, offset: 2 }, fields: { eta_seconds: 60 } }, position: { epoch: 1, offset: 2 } } });
  socket.deliver(push(2, "dispatching"), push(3, "driver_assigned", { fields: { driver_id: "d1" } }));
  socket.deliver(push(3, "driver_assigned"));
  socket.deliver(push(4, "driver_arriving", { fields: { eta_seconds: 30 } }));
  assert.deepEqual(seen, [["snapshot", 2, "dispatching"], ["change", 3, "driver_assigned"], ["change", 4, "driver_arriving"]]);
  assert.deepEqual(client.routes.get(route).snapshot.fields, { eta_seconds: 30, driver_id: "d1" }, "fields merge over the snapshot");
  assert.deepEqual(socket.last("ack"), { route, offset: 4 }, "the newest offset is acked once per message");
  client.close();
});

test("reconnects with exponential backoff and full jitter, resumes from the last position, drops what it saw", async () => {
  const draws = [0.999, 0.999, 0.0, 0.5];
  const { sockets, client, clock, states } = setup({ random: () => draws.shift() ?? 0.5 });
  const seen = [];
  client.subscribe(route, (change) => seen.push(change.record.position.offset));
  let socket = await connect(sockets);
  socket.deliver({ subscribed: { request_id: socket.last("subscribe").request_id, route, position: { epoch: 1, offset: 0 } } });
  socket.deliver(push(1, "created"), push(2, "dispatching"));
  socket.drop();
  assert.deepEqual(states.at(-1), { name: "waiting", attempt: 1, delayMs: 250, disconnect: undefined }, "attempt 0: within 0–250 ms");
  clock.advance(250);
  assert.equal(sockets.length, 2);
  sockets[1].drop();
  assert.equal(states.at(-1).delayMs, 500, "attempt 1: within 0–500 ms");
  clock.advance(500);
  assert.equal(sockets.length, 3);
  socket = await connect(sockets);
  const resume = socket.last("subscribe");
  assert.deepEqual(resume.since, { epoch: 1, offset: 2 });
  socket.deliver({ subscribed: { request_id: resume.request_id, route, position: { epoch: 1, offset: 4 }, recovered: true,
    missed: [{ offset: 2, epoch: 1, to_state_name: "dispatching" }, { offset: 3, epoch: 1, to_state_name: "driver_assigned" }, { offset: 4, epoch: 1, to_state_name: "driver_arriving" }] } });
  socket.deliver(push(4, "driver_arriving"), push(5, "driver_arrived"));
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  assert.equal(client.attempt, 0, "a successful connection resets the backoff");
  client.close();
});

test("recovered = false replaces what the app knew with a resync snapshot", async () => {
  const { sockets, client, clock } = setup();
  const seen = [];
  client.subscribe(route, (change) => seen.push(change.kind + ":" + change.snapshot.position.offset));
  let socket = await connect(sockets);
  socket.deliver({ subscribed: { request_id: socket.last("subscribe").request_id, route, snapshot: { state_name: "created", position: { epoch: 1, offset: 1 } }, position: { epoch: 1, offset: 1 } } });
  socket.drop();
  clock.advance(1_000);
  socket = await connect(sockets);
  socket.deliver({ subscribed: { request_id: socket.last("subscribe").request_id, route, snapshot: { state_name: "in_trip", position: { epoch: 2, offset: 9 } }, position: { epoch: 2, offset: 9 }, recovered: false } });
  socket.deliver(push(9, "in_trip", { epoch: 2 }), push(10, "completed", { epoch: 2 }));
  assert.deepEqual(seen, ["snapshot:1", "resync:9", "change:10"]);
  client.close();
});

test("disconnect codes: reconnect_after_ms is honoured; 3500–3999 (and close codes 3500+) stop the client", async () => {
  const { sockets, client, clock, states } = setup();
  let socket = await connect(sockets);
  socket.deliver({ disconnect: { code: 3007, reason: "admin", reconnect_after_ms: 1234 } });
  assert.equal(socket.closed, true);
  assert.equal(states.at(-1).delayMs, 1234);
  assert.deepEqual(states.at(-1).disconnect, { code: 3007, reason: "admin", reconnectAfterMs: 1234 });
  clock.advance(1234);
  socket = await connect(sockets);
  socket.deliver({ disconnect: { code: 3500, reason: "invalid token" } });
  assert.equal(states.at(-1).name, "closed");
  clock.advance(600_000);
  assert.equal(sockets.length, 2, "no reconnect after a do-not-reconnect code");

  const second = setup();
  await connect(second.sockets);
  second.sockets[0].drop(3504, "banned");
  assert.equal(second.states.at(-1).name, "closed", "a close frame's Longlink code counts like the disconnect frame");
  client.close();
});

test("token_expiring asks the provider again and sends refresh", async () => {
  let calls = 0;
  const { sockets, client } = setup({ token: async () => `token-${++calls}` });
  const warnings = [];
  client.on("tokenExpiring", (warning) => warnings.push(warning.expiresAtMs));
  const socket = await connect(sockets);
  socket.deliver({ token_expiring: { expires_at_ms: 42 } });
  await settle();
  assert.deepEqual(socket.last("refresh"), { token: "token-2" });
  assert.deepEqual(warnings, [42]);
  client.close();
});

test("a hidden page reconnects with the background policy and sends no probes; visible again re-plans", async () => {
  const listeners = {};
  const document = { visibilityState: "visible", addEventListener: (name, f) => { listeners[name] = f; }, removeEventListener() {} };
  const { sockets, client, clock, states } = setup({ document, random: () => 0.9999999 });
  let socket = await connect(sockets);
  clock.advance(10_250);
  assert.ok(socket.kinds().includes("ping"), "a visible page probes a silent connection after 10 s");
  document.visibilityState = "hidden";
  listeners.visibilitychange();
  socket.drop();
  assert.equal(states.at(-1).delayMs, 2_000, "background: 0–2 s for the first attempt");
  document.visibilityState = "visible";
  listeners.visibilitychange();
  assert.equal(states.at(-1).delayMs, 250, "back on screen: the waiting reconnect is planned again with the foreground policy");
  clock.advance(250);
  document.visibilityState = "hidden";
  listeners.visibilitychange();
  socket = await connect(sockets);
  clock.advance(30_000);
  assert.ok(!socket.kinds().includes("ping"), "no probes while hidden");
  client.close();
});

test("a silent server is given up on after its ping interval and pong timeout; a slow connect is retried", async () => {
  const { sockets, client, clock } = setup({ client: { connectTimeoutMs: 3_000 } });
  clock.advance(3_250);
  assert.equal(sockets[0].closed, true, "the attempt timed out");
  clock.advance(1_000);
  const socket = await connect(sockets, 1);
  clock.advance(40_250);
  assert.equal(socket.closed, true, "25 s + 10 s + 5 s of silence");
  client.close();
});

test("server pings are answered; publish resolves once durable and is resent with the same key after a reconnect", async () => {
  const { sockets, client, clock } = setup();
  let socket = await connect(sockets);
  socket.deliver({ ping: {} });
  assert.ok(socket.kinds().includes("pong"));
  const receipt = client.publish({ orderId: "8812", line: "taxi", state: "created" });
  const first = socket.last("publish");
  assert.equal(first.target_state, 1, "a well-known state travels as its number");
  assert.match(first.idempotency_key, /^[0-9a-f]{32}$/);
  socket.drop();
  clock.advance(1_000);
  socket = await connect(sockets);
  const again = socket.last("publish");
  assert.equal(again.idempotency_key, first.idempotency_key);
  socket.deliver({ publish_result: { request_id: again.request_id, accepted: { position: { epoch: 1, offset: 1 }, timestamp_ms: 5, deduplicated: true } } });
  assert.deepEqual(await receipt, { position: { epoch: 1, offset: 1 }, timestampMs: 5, deduplicated: true, idempotencyKey: first.idempotency_key });
  const refused = client.publish({ orderId: "8812", line: "taxi", state: "waiting_for_co_riders" });
  const named = socket.last("publish");
  assert.equal(named.target_state_name, "waiting_for_co_riders");
  socket.deliver({ publish_result: { request_id: named.request_id, refused: { code: 409, message: "illegal" } } });
  await assert.rejects(refused, (error) => error.code === 409);
  client.close();
});

test("the async iterator yields the snapshot and the changes; leaving the loop unsubscribes", async () => {
  const { sockets, client } = setup();
  const socket = await connect(sockets);
  const changes = client.changes(route);
  const request = socket.last("subscribe").request_id;
  socket.deliver({ subscribed: { request_id: request, route, snapshot: { state_code: 1, position: { epoch: 1, offset: 1 } }, position: { epoch: 1, offset: 1 } } });
  socket.deliver(push(2, "dispatching"));
  const seen = [];
  for await (const change of changes) {
    seen.push(change.kind + ":" + change.snapshot.state);
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen, ["snapshot:created", "change:dispatching"]);
  assert.deepEqual(socket.last("unsubscribe"), { request_id: socket.last("unsubscribe").request_id, route });
  const pending = client.changes("order://taxi/1").next();
  client.close();
  assert.deepEqual(await pending, { value: undefined, done: true }, "closing the client ends every iterator");
});

test("ReconnectPolicy: the bound doubles from the base up to the cap; the delay is uniform within it", () => {
  const policy = new ReconnectPolicy(250, 8_000);
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 40].map((n) => policy.bound(n)), [250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
  assert.equal(policy.delay(3, () => 0), 0);
  assert.equal(policy.delay(3, () => 0.999999), 2000);
  for (let i = 0; i < 1000; i++) {
    const delay = policy.delay(2);
    assert.ok(delay >= 0 && delay <= 1000);
  }
});
