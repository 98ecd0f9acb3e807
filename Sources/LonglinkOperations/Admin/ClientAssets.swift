// Generated from clients/js/longlink.js and clients/js/example.html; do not edit here. ClientAssetsTests fails
// when they differ; `LONGLINK_WRITE_CLIENT_ASSETS=1 swift test --filter ClientAssetsTests` rewrites this file.

/// The JavaScript client and its example page as the operations listener serves them (`/longlink.js`,
/// `/example`): copies of `clients/js/`, so pages load them from the admin page's origin.
enum ClientAssets {
    /// `clients/js/longlink.js`.
    static let script: [UInt8] = Array(scriptText.utf8)
    /// `clients/js/example.html`.
    static let example: [UInt8] = Array(exampleText.utf8)

    static let scriptText = ####"""
// Longlink's JavaScript client: one ES module, no dependencies, no build step. Load it in a page with
// `<script type="module">import { LonglinkClient } from "./longlink.js"</script>`, or in Node (its unit tests).
//
// It speaks the gateway's WebSocket transport: the sub-protocol `longlink.v1.protobuf`, binary messages whose
// payloads are the varint-length-prefixed protobuf frames of proto/longlink/v1/frames.proto (the server sends one
// frame per message; this client accepts several, and sends one per message).
//
// The model is the Swift library's (LonglinkClient): connect with a token provider, subscribe to routes and
// observe them with callbacks or an async iterator; the current snapshot comes first, then every change once and
// in order. The client reconnects by itself with exponential backoff and full jitter, resumes from the last
// positions, drops duplicates by (route, offset), and delivers a `resync` snapshot when the server could not
// recover the history (`recovered = false`). A hidden page reconnects and probes less eagerly, like the Swift
// library's background state.

export const SUBPROTOCOL = "longlink.v1.protobuf";
export const PROTOCOL_VERSION = 1;
export const CLIENT_VERSION = "0.1.0";

// ---------------------------------------------------------------------------------------------------------
// Schema: proto/longlink/v1/frames.proto as data. Each field is [number, type, "oneof" | "repeated"?]; a type
// is a scalar (uint32, uint64, sint32, bool, string, bytes), an enum or a message. `test/schema.test.mjs`
// parses the .proto and fails when this table drifts from it.
// ---------------------------------------------------------------------------------------------------------

export const SCHEMA = {
  enums: {
    State: {
      STATE_UNSPECIFIED: 0, STATE_CREATED: 1, STATE_DISPATCHING: 2, STATE_MATCHING: 3, STATE_RESERVED: 4,
      STATE_DRIVER_ASSIGNED: 5, STATE_DRIVER_ARRIVING: 6, STATE_DRIVER_ARRIVED: 7, STATE_IN_TRIP: 8,
      STATE_COMPLETED: 9, STATE_PAID: 10, STATE_CANCELLED: 11, STATE_NO_DRIVER_TIMEOUT: 12, STATE_POOL_MATCHED: 13,
    },
    ErrorCode: {
      ERROR_CODE_UNSPECIFIED: 0, ERROR_CODE_INTERNAL: 100, ERROR_CODE_UNAVAILABLE: 101, ERROR_CODE_TIMEOUT: 102,
      ERROR_CODE_BAD_REQUEST: 400, ERROR_CODE_UNAUTHORIZED: 401, ERROR_CODE_TOKEN_EXPIRED: 402,
      ERROR_CODE_PERMISSION_DENIED: 403, ERROR_CODE_UNKNOWN_ORDER: 404, ERROR_CODE_UNKNOWN_LINE: 405,
      ERROR_CODE_UNKNOWN_ROUTE_KIND: 406, ERROR_CODE_MALFORMED_ROUTE: 407, ERROR_CODE_UNKNOWN_STATE: 408, ERROR_CODE_ILLEGAL_TRANSITION: 409,
      ERROR_CODE_ALREADY_SUBSCRIBED: 410, ERROR_CODE_NOT_SUBSCRIBED: 411, ERROR_CODE_TOO_MANY_SUBSCRIPTIONS: 412,
      ERROR_CODE_STALE_CHANGE: 413, ERROR_CODE_IDEMPOTENCY_CONFLICT: 414, ERROR_CODE_INVALID_FIELD: 422, ERROR_CODE_RATE_LIMITED: 429,
    },
    DisconnectCode: {
      DISCONNECT_CODE_UNSPECIFIED: 0, DISCONNECT_CODE_SHUTDOWN: 3000, DISCONNECT_CODE_HEARTBEAT_TIMEOUT: 3001,
      DISCONNECT_CODE_SLOW: 3002, DISCONNECT_CODE_HANDSHAKE_TIMEOUT: 3003, DISCONNECT_CODE_TOO_MANY_CONNECTIONS: 3004,
      DISCONNECT_CODE_CONNECTION_RATE_LIMITED: 3005, DISCONNECT_CODE_TOKEN_EXPIRED: 3006,
      DISCONNECT_CODE_ADMIN_RECONNECT: 3007, DISCONNECT_CODE_SERVER_ERROR: 3008, DISCONNECT_CODE_INVALID_TOKEN: 3500,
      DISCONNECT_CODE_PROTOCOL_VIOLATION: 3501, DISCONNECT_CODE_FRAME_TOO_LARGE: 3502, DISCONNECT_CODE_FORBIDDEN: 3503,
      DISCONNECT_CODE_ADMIN_BAN: 3504, DISCONNECT_CODE_UNSUPPORTED_PROTOCOL: 3505,
    },
  },
  messages: {
    ClientFrame: {
      ack: [12, "Ack", "oneof"], publish: [13, "Publish", "oneof"], ping: [14, "Ping", "oneof"],
      pong: [15, "Pong", "oneof"], subscribe: [16, "Subscribe", "oneof"], unsubscribe: [17, "Unsubscribe", "oneof"],
      connect: [18, "Connect", "oneof"], refresh: [19, "Refresh", "oneof"], presence: [20, "PresenceRequest", "oneof"],
      heartbeat: [23, "HeartbeatRequest", "oneof"],
    },
    ServerFrame: {
      push: [1, "Push", "oneof"], ping: [2, "Ping", "oneof"], pong: [3, "Pong", "oneof"],
      delivery_receipt: [4, "DeliveryReceipt", "oneof"], publish_result: [5, "PublishResult", "oneof"],
      subscribed: [6, "Subscribed", "oneof"], unsubscribed: [7, "Unsubscribed", "oneof"], error: [8, "Error", "oneof"],
      token_expiring: [9, "TokenExpiring", "oneof"], connected: [10, "Connected", "oneof"],
      disconnect: [11, "Disconnect", "oneof"], presence_reply: [21, "PresenceReply", "oneof"],
      presence_event: [22, "PresenceEvent", "oneof"],
    },
    Position: { epoch: [1, "uint32"], offset: [2, "uint64"] },
    OrderFields: {
      driver_id: [1, "string", "oneof"], eta_seconds: [2, "uint32", "oneof"], latitude_e6: [3, "sint32", "oneof"],
      longitude_e6: [4, "sint32", "oneof"], cancellation_reason: [5, "string", "oneof"], payload: [6, "bytes"],
      toggle_bool: [7, "bool", "oneof"], toggle_rollout_percent: [8, "uint32", "oneof"], toggle_string: [9, "string", "oneof"],
    },
    Record: {
      offset: [2, "uint64"], epoch: [3, "uint32"], timestamp_ms: [4, "uint64"], to_state: [5, "State", "oneof"],
      to_state_name: [6, "string", "oneof"], from_state: [7, "State", "oneof"], from_state_name: [8, "string", "oneof"],
      fields: [9, "OrderFields"],
    },
    Snapshot: {
      state_code: [1, "State", "oneof"], state_name: [2, "string", "oneof"], fields: [3, "OrderFields"],
      position: [4, "Position"], created_at_ms: [5, "uint64"], updated_at_ms: [6, "uint64"],
    },
    Connect: {
      protocol_version: [1, "uint32"], token: [2, "string"], client_name: [3, "string"], client_version: [4, "string"],
      ping_interval_ms: [5, "uint32"],
    },
    Subscribe: { request_id: [1, "uint32"], route: [2, "string"], since: [3, "Position"], presence_events: [4, "bool"] },
    Unsubscribe: { request_id: [1, "uint32"], route: [2, "string"] },
    Publish: {
      request_id: [1, "uint32"], order_id: [2, "string"], line: [3, "string"], target_state: [4, "State", "oneof"],
      target_state_name: [5, "string", "oneof"], fields: [6, "OrderFields"], idempotency_key: [7, "string"],
      wants_receipts: [8, "bool"],
    },
    Ack: { route: [1, "string"], offset: [2, "uint64"] },
    Ping: {},
    Pong: {},
    Refresh: { token: [1, "string"] },
    Connected: {
      protocol_version: [1, "uint32"], client_id: [2, "string"], node_id: [3, "string"], ping_interval_ms: [4, "uint32"],
      pong_timeout_ms: [5, "uint32"], max_frame_size: [6, "uint32"], max_subscriptions: [7, "uint32"],
      token_expires_at_ms: [8, "uint64"], min_ping_interval_ms: [9, "uint32"], max_ping_interval_ms: [10, "uint32"],
    },
    Subscribed: {
      request_id: [1, "uint32"], route: [2, "string"], snapshot: [3, "Snapshot"], position: [4, "Position"],
      recovered: [5, "bool"], missed: [6, "Record", "repeated"],
    },
    Unsubscribed: { request_id: [1, "uint32"], route: [2, "string"] },
    PublishResult: { request_id: [1, "uint32"], accepted: [2, "Accepted", "oneof"], refused: [3, "Error", "oneof"] },
    Accepted: { position: [1, "Position"], timestamp_ms: [2, "uint64"], deduplicated: [3, "bool"] },
    Push: {
      route: [1, "string"], offset: [2, "uint64"], epoch: [3, "uint32"], timestamp_ms: [4, "uint64"],
      to_state: [5, "State", "oneof"], to_state_name: [6, "string", "oneof"], from_state: [7, "State", "oneof"],
      from_state_name: [8, "string", "oneof"], fields: [9, "OrderFields"], skipped_before: [10, "bool"],
    },
    Error: { request_id: [1, "uint32"], code: [2, "uint32"], message: [3, "string"], retryable: [4, "bool"] },
    Disconnect: { code: [1, "uint32"], reason: [2, "string"], reconnect_after_ms: [3, "uint32"] },
    DeliveryReceipt: { route: [1, "string"], position: [2, "Position"], subscriber_id: [3, "string"], acked_count: [4, "uint32"] },
    TokenExpiring: { expires_at_ms: [1, "uint64"] },
    PresenceRequest: { request_id: [1, "uint32"], route: [2, "string"] },
    HeartbeatRequest: { request_id: [1, "uint32"], ping_interval_ms: [2, "uint32"] },
    PresenceMember: {
      user_id: [1, "string"], client_name: [2, "string"], connection_id: [3, "string"], since_ms: [4, "uint64"],
      node_id: [5, "string"],
    },
    PresenceReply: {
      request_id: [1, "uint32"], route: [2, "string"], count: [3, "uint32"], users: [4, "uint32"],
      counts_only: [5, "bool"], members: [6, "PresenceMember", "repeated"],
    },
    PresenceEvent: { route: [1, "string"], joined: [2, "bool"], member: [3, "PresenceMember"] },
  },
};

/** Well-known state numbers by name (`created` → 1) and back. */
export const STATE_NUMBERS = Object.fromEntries(
  Object.entries(SCHEMA.enums.State).filter(([, n]) => n > 0).map(([name, n]) => [name.slice(6).toLowerCase(), n]),
);
export const STATE_NAMES = Object.fromEntries(Object.entries(STATE_NUMBERS).map(([name, n]) => [n, name]));

/** Disconnect codes by short name (`slow` → 3002). 3000–3499 reconnect; 3500–3999 do not. */
export const DisconnectCode = Object.fromEntries(
  Object.entries(SCHEMA.enums.DisconnectCode).filter(([, n]) => n > 0).map(([name, n]) => [camel(name.slice(16)), n]),
);
/** Error codes by short name (`permissionDenied` → 403). */
export const ErrorCode = Object.fromEntries(
  Object.entries(SCHEMA.enums.ErrorCode).filter(([, n]) => n > 0).map(([name, n]) => [camel(name.slice(11)), n]),
);

function camel(upper) {
  return upper.toLowerCase().replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

// ---------------------------------------------------------------------------------------------------------
// Codec
// ---------------------------------------------------------------------------------------------------------

const SCALARS = new Set(["uint32", "uint64", "sint32", "bool", "string", "bytes"]);
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true });
const byNumber = new Map();

function fieldsByNumber(type) {
  let table = byNumber.get(type);
  if (!table) {
    table = new Map(Object.entries(SCHEMA.messages[type]).map(([name, [number, fieldType, label]]) => [number, { name, type: fieldType, label }]));
    byNumber.set(type, table);
  }
  return table;
}

/** A frame or message could not be encoded or decoded. */
export class FrameError extends Error {}

class Writer {
  constructor() { this.bytes = []; }
  varint(value) {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.bytes.push(Number(v));
  }
  raw(bytes) { for (const b of bytes) this.bytes.push(b); }
  finish() { return Uint8Array.from(this.bytes); }
}

function isDefault(type, value) {
  switch (type) {
    case "string": return value === "";
    case "bytes": return value.length === 0;
    case "bool": return value === false;
    case "uint32": case "uint64": case "sint32": return value === 0 || value === 0n;
    default: return SCHEMA.enums[type] ? value === 0 : false;
  }
}

/** The protobuf encoding of `value` (a plain object with the proto's field names) as message `type`. Fields
 * go out in number order; proto3 defaults are left out except for oneof members (which carry presence). */
export function encodeMessage(type, value) {
  const schema = SCHEMA.messages[type];
  if (!schema) throw new FrameError(`unknown message ${type}`);
  const writer = new Writer();
  const fields = Object.entries(schema).sort((a, b) => a[1][0] - b[1][0]);
  for (const [name, [number, fieldType, label]] of fields) {
    const fieldValue = value[name];
    if (fieldValue === undefined || fieldValue === null) continue;
    const values = label === "repeated" ? fieldValue : [fieldValue];
    for (const item of values) {
      if (label !== "oneof" && label !== "repeated" && SCALARS.has(fieldType) && isDefault(fieldType, item)) continue;
      if (label !== "oneof" && SCHEMA.enums[fieldType] && item === 0) continue;
      writeField(writer, number, fieldType, item);
    }
  }
  return writer.finish();
}

function writeField(writer, number, type, value) {
  switch (type) {
    case "uint32": case "uint64":
      writer.varint(number << 3);
      writer.varint(value);
      return;
    case "sint32": {
      writer.varint(number << 3);
      const n = value | 0;
      writer.varint(((n << 1) ^ (n >> 31)) >>> 0);
      return;
    }
    case "bool":
      writer.varint(number << 3);
      writer.varint(value ? 1 : 0);
      return;
    case "string": case "bytes": {
      const bytes = type === "string" ? utf8Encoder.encode(value) : value;
      writer.varint((number << 3) | 2);
      writer.varint(bytes.length);
      writer.raw(bytes);
      return;
    }
    default:
      if (SCHEMA.enums[type]) {
        writer.varint(number << 3);
        writer.varint(value);
        return;
      }
      const body = encodeMessage(type, value);
      writer.varint((number << 3) | 2);
      writer.varint(body.length);
      writer.raw(body);
  }
}

class Reader {
  constructor(bytes) { this.bytes = bytes; this.at = 0; }
  get done() { return this.at >= this.bytes.length; }
  varint() {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.bytes.length) throw new FrameError("truncated varint");
      const byte = this.bytes[this.at++];
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    throw new FrameError("varint over 10 bytes");
  }
  take(length) {
    if (length > this.bytes.length - this.at) throw new FrameError("truncated field");
    const slice = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return slice;
  }
}

/** A uint64 as a Number when it is exact, else as a BigInt (only above 2^53, which no real store reaches). */
function unsigned(big) {
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** Decodes `bytes` as message `type` into a plain object; unknown fields are skipped. */
export function decodeMessage(type, bytes) {
  const table = fieldsByNumber(type);
  const reader = new Reader(bytes);
  const out = {};
  while (!reader.done) {
    const key = reader.varint();
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    const field = table.get(number);
    let raw;
    switch (wire) {
      case 0: raw = reader.varint(); break;
      case 1: raw = reader.take(8); break;
      case 2: raw = reader.take(Number(reader.varint())); break;
      case 5: raw = reader.take(4); break;
      default: throw new FrameError(`wire type ${wire} in ${type}`);
    }
    if (!field) continue;
    const value = readValue(field.type, wire, raw, type, field.name);
    if (field.label === "repeated") (out[field.name] ??= []).push(value);
    else out[field.name] = value;
  }
  return out;
}

function readValue(type, wire, raw, message, name) {
  const expectVarint = type !== "string" && type !== "bytes" && (SCALARS.has(type) || SCHEMA.enums[type]);
  if (expectVarint ? wire !== 0 : wire !== 2) throw new FrameError(`wrong wire type for ${message}.${name}`);
  switch (type) {
    case "uint32": return Number(BigInt.asUintN(32, raw));
    case "uint64": return unsigned(raw);
    case "sint32": {
      const n = Number(BigInt.asUintN(32, raw));
      return (n >>> 1) ^ -(n & 1);
    }
    case "bool": return raw !== 0n;
    case "string":
      try { return utf8Decoder.decode(raw); } catch { throw new FrameError(`${message}.${name} is not UTF-8`); }
    case "bytes": return raw.slice();
    default:
      if (SCHEMA.enums[type]) return Number(BigInt.asUintN(32, raw));
      return decodeMessage(type, raw);
  }
}

function varintBytes(value) {
  const writer = new Writer();
  writer.varint(value);
  return writer.finish();
}

/** One client frame, length prefix included: `frame` has exactly one member, e.g. `{ ping: {} }`. */
export function encodeClientFrame(frame) {
  const body = encodeMessage("ClientFrame", frame);
  const prefix = varintBytes(body.length);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix);
  out.set(body, prefix.length);
  return out;
}

/** Decodes one server frame body (no length prefix) to `{ kind, value }`, e.g. `{ kind: "push", value: {...} }`. */
export function decodeServerFrame(body) {
  const frame = decodeMessage("ServerFrame", body);
  const kinds = Object.keys(frame);
  if (kinds.length !== 1) throw new FrameError(kinds.length ? "several frame kinds in one frame" : "no known frame kind");
  return { kind: kinds[0], value: frame[kinds[0]] };
}

/** Cuts length-prefixed frame bodies out of a byte stream that arrives in pieces (WebSocket messages). */
export class FrameReader {
  constructor(maxFrameSize = 1 << 20) {
    this.maxFrameSize = maxFrameSize;
    this.buffer = new Uint8Array(0);
  }

  /** Appends received bytes and returns every complete frame body they finish, in order. */
  push(bytes) {
    if (this.buffer.length === 0) this.buffer = bytes;
    else {
      const joined = new Uint8Array(this.buffer.length + bytes.length);
      joined.set(this.buffer);
      joined.set(bytes, this.buffer.length);
      this.buffer = joined;
    }
    const bodies = [];
    let at = 0;
    for (;;) {
      let length = 0;
      let shift = 0;
      let i = at;
      let complete = false;
      while (i < this.buffer.length && i - at < 10) {
        const byte = this.buffer[i++];
        length += (byte & 0x7f) * 2 ** shift;
        shift += 7;
        if (byte < 0x80) { complete = true; break; }
      }
      if (!complete) {
        if (i - at >= 10) throw new FrameError("frame length over 10 bytes");
        break;
      }
      if (length === 0) throw new FrameError("empty frame");
      if (length > this.maxFrameSize) throw new FrameError(`frame of ${length} bytes over the limit of ${this.maxFrameSize}`);
      if (this.buffer.length - i < length) break;
      bodies.push(this.buffer.subarray(i, i + length));
      at = i + length;
    }
    this.buffer = at === this.buffer.length ? new Uint8Array(0) : this.buffer.slice(at);
    return bodies;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Domain values as the client hands them out
// ---------------------------------------------------------------------------------------------------------

/** The state name of a record or push (`to_state` number or `to_state_name`). */
export function stateName(number, name) {
  if (name !== undefined) return name;
  if (number !== undefined) return STATE_NAMES[number] ?? `state_${number}`;
  return undefined;
}

function position(value) {
  return { epoch: value?.epoch ?? 0, offset: value?.offset ?? 0 };
}

/** `fields` of a change merged onto `base` (absent fields mean unchanged; an empty payload leaves it). */
function mergeFields(base, change) {
  const merged = { ...base };
  for (const [name, value] of Object.entries(change ?? {})) {
    if (name === "payload" && value.length === 0) continue;
    merged[name] = value;
  }
  return merged;
}

function recordFrom(wire) {
  return {
    position: { epoch: wire.epoch ?? 0, offset: wire.offset ?? 0 },
    timestampMs: wire.timestamp_ms ?? 0,
    state: stateName(wire.to_state, wire.to_state_name),
    fromState: stateName(wire.from_state, wire.from_state_name),
    fields: wire.fields ?? {},
  };
}

function snapshotFrom(route, wire) {
  return {
    route,
    state: stateName(wire.state_code, wire.state_name),
    fields: wire.fields ?? {},
    position: position(wire.position),
    createdAtMs: wire.created_at_ms ?? 0,
    updatedAtMs: wire.updated_at_ms ?? 0,
  };
}

function advance(snapshot, route, record) {
  if (!snapshot) {
    return { route, state: record.state, fields: record.fields, position: record.position, createdAtMs: record.timestampMs, updatedAtMs: record.timestampMs };
  }
  return { ...snapshot, state: record.state, fields: mergeFields(snapshot.fields, record.fields), position: record.position, updatedAtMs: record.timestampMs };
}

function isNewer(next, last) {
  if (!last) return true;
  return next.epoch !== last.epoch || next.offset > last.offset;
}

function samePosition(a, b) {
  return !!a && !!b && a.epoch === b.epoch && a.offset === b.offset;
}

// ---------------------------------------------------------------------------------------------------------
// Reconnect policy
// ---------------------------------------------------------------------------------------------------------

/** Exponential backoff with full jitter: attempt N waits a uniformly random time in [0, min(cap, base × 2^N)]. */
export class ReconnectPolicy {
  constructor(baseMs, capMs) {
    this.baseMs = baseMs;
    this.capMs = capMs;
  }

  /** The bound of attempt `attempt` (0-based) before jitter. */
  bound(attempt) {
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(attempt, 30));
  }

  /** The jittered delay for `attempt`; `random` returns [0, 1). */
  delay(attempt, random = Math.random) {
    return Math.floor(random() * (this.bound(attempt) + 1));
  }
}

/** On screen: come back fast (0–250 ms first, at most 8 s), probe a silent connection after 10 s. */
export const FOREGROUND = { reconnect: new ReconnectPolicy(250, 8_000), probeAfterMs: 10_000 };
/** A hidden page: slow reconnects (0–2 s first, at most 2 min), no client probes (the server pings). */
export const BACKGROUND = { reconnect: new ReconnectPolicy(2_000, 120_000), probeAfterMs: null };

// ---------------------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------------------

/** A change delivered to observers: `{ kind: "snapshot" | "change" | "resync", route, record, snapshot }`. For a
 * snapshot or a resync the record is made from the snapshot (no `fromState`). */
function change(kind, route, record, snapshot) {
  record ??= { position: snapshot.position, timestampMs: snapshot.updatedAtMs, state: snapshot.state, fromState: undefined, fields: snapshot.fields };
  return { kind, route, record, snapshot };
}

/** The server refused a request, the client closed, or a publish timed out. */
export class LonglinkError extends Error {
  constructor(message, { code, reason } = {}) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

/**
 * One persistent connection to a gateway's WebSocket endpoint.
 *
 *     const client = new LonglinkClient({ url: "ws://127.0.0.1:7071/longlink", token: () => fetchToken() });
 *     client.on("state", (state) => show(state.name));
 *     const stop = client.subscribe("order://taxi/8812", (change) => render(change.snapshot));
 *     for await (const change of client.changes("order://taxi/8812")) { ... }
 *
 * Options: `url`; `token` (a string, or a function returning one or a promise of one, called before every
 * connection attempt and on `token_expiring`); `clientName`, `clientVersion`; `connectTimeoutMs` (10 s);
 * `publishTimeoutMs` (10 s); `foreground` / `background` policies; `sendsAcks` (true); `maxFrameSize` (1 MiB);
 * and for tests `WebSocket`, `document`, `random`, `setTimeout`, `clearTimeout`, `now`.
 *
 * State events (`client.on("state", f)`): `{ name: "idle" | "connecting" | "connected" | "waiting" | "closed",
 * attempt, delayMs, connected, disconnect }`.
 */
export class LonglinkClient {
  constructor(options) {
    if (!options?.url) throw new LonglinkError("a url is required (ws://host:port/longlink)");
    this.options = options;
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    if (!this.WebSocket) throw new LonglinkError("no WebSocket implementation (pass options.WebSocket)");
    this.setTimer = options.setTimeout ?? ((f, ms) => globalThis.setTimeout(f, ms));
    this.clearTimer = options.clearTimeout ?? ((id) => globalThis.clearTimeout(id));
    this.now = options.now ?? (() => Date.now());
    this.random = options.random ?? Math.random;
    this.foreground = options.foreground ?? FOREGROUND;
    this.background = options.background ?? BACKGROUND;
    this.sendsAcks = options.sendsAcks ?? true;
    this.routes = new Map();       // route → { position, snapshot, active, requestId, unackedOffset }
    this.observers = new Map();    // route → Set of callbacks
    this.listeners = new Map();    // event name → Set of callbacks
    this.pending = new Map();      // request id → pending publish
    this.nextRequestId = 1;
    this.attempt = 0;
    this.connectionNumber = 0;
    this.socket = null;
    this.connected = false;
    this.closed = false;
    this.reconnectTimer = null;
    this.tickTimer = null;
    this.lastInboundMs = 0;
    this.lastProbeMs = 0;
    this.silenceLimitMs = 60_000;
    this.attemptStartedMs = 0;
    this.state = { name: "idle", attempt: 0 };
    this.document = options.document ?? globalThis.document;
    this.visible = this.document ? this.document.visibilityState !== "hidden" : true;
    if (this.document?.addEventListener) {
      this.onVisibility = () => this.setVisible(this.document.visibilityState !== "hidden");
      this.document.addEventListener("visibilitychange", this.onVisibility);
    }
    this.iterators = new Set();
    this.scheduleTick();
    this.connect();
  }

  /** Housekeeping every 250 ms: publish deadlines, the connect timeout, server silence, probes. */
  scheduleTick() {
    this.tickTimer = this.setTimer(() => {
      this.tickTimer = null;
      this.tick();
      if (!this.closed) this.scheduleTick();
    }, 250);
  }

  // MARK: Events

  /** Calls `listener` for events `name` ("state", "error", "tokenExpiring", "receipt"); returns an unsubscribe. */
  on(name, listener) {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
    if (name === "state") listener(this.state);
    return () => set.delete(listener);
  }

  emit(name, value) {
    for (const listener of [...(this.listeners.get(name) ?? [])]) {
      try { listener(value); } catch (error) { queueMicrotask(() => { throw error; }); }
    }
  }

  setState(state) {
    this.state = state;
    this.emit("state", state);
  }

  // MARK: Subscribing

  /** Subscribes to `route` and calls `observer(change)` for its snapshot and every change, in order, once each.
   * Returns a function that stops observing (and unsubscribes when it was the last observer). */
  subscribe(route, observer) {
    let set = this.observers.get(route);
    if (!set) this.observers.set(route, (set = new Set()));
    set.add(observer);
    const state = this.routes.get(route);
    if (state?.snapshot) observer(change("snapshot", route, null, state.snapshot));
    this.want(route);
    return () => {
      set.delete(observer);
      if (set.size === 0) {
        this.observers.delete(route);
        this.unwant(route);
      }
    };
  }

  /** The changes of `route` as an async iterator: `for await (const change of client.changes(route))`. Leaving
   * the loop unsubscribes. */
  changes(route) {
    const queue = [];
    let wake = null;
    let stop = null;
    let ended = false;
    const iterator = {
      next: () => {
        if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => { wake = resolve; });
      },
      return: () => {
        if (!ended) {
          ended = true;
          this.iterators.delete(iterator);
          stop?.();
          wake?.({ value: undefined, done: true });
          wake = null;
        }
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() { return iterator; },
    };
    stop = this.subscribe(route, (item) => {
      if (ended) return;
      if (wake) { const resolve = wake; wake = null; resolve({ value: item, done: false }); } else queue.push(item);
    });
    this.iterators.add(iterator);
    return iterator;
  }

  want(route) {
    if (this.routes.has(route)) return;
    this.routes.set(route, { position: null, snapshot: null, active: false, requestId: 0, unackedOffset: null });
    if (this.connected) this.sendSubscribe(route);
  }

  unwant(route) {
    if (!this.routes.delete(route)) return;
    if (this.connected) this.send({ unsubscribe: { request_id: this.makeRequestId(), route } });
  }

  sendSubscribe(route) {
    const state = this.routes.get(route);
    state.requestId = this.makeRequestId();
    const subscribe = { request_id: state.requestId, route };
    if (state.position) subscribe.since = state.position;
    this.send({ subscribe });
  }

  makeRequestId() {
    const id = this.nextRequestId;
    this.nextRequestId = id >= 0xffffffff ? 1 : id + 1;
    return id;
  }

  /** The last position seen on `route` (null before its first subscribe answer). */
  position(route) { return this.routes.get(route)?.position ?? null; }

  // MARK: Publishing

  /** Publishes a change (`{ orderId, line, state, fields?, idempotencyKey?, wantsReceipts? }`) and resolves once the
   * Store made it durable: `{ position, timestampMs, deduplicated, idempotencyKey }`. The idempotency key is made
   * when absent and reused by the retries after a lost connection, so the change is applied at most once. */
  publish({ orderId, line, state, fields, idempotencyKey, wantsReceipts = false }) {
    if (this.closed) return Promise.reject(new LonglinkError("client closed"));
    const key = idempotencyKey || randomKey(this.random);
    const request = { request_id: this.makeRequestId(), order_id: orderId, line, fields, idempotency_key: key, wants_receipts: wantsReceipts };
    if (STATE_NUMBERS[state] !== undefined) request.target_state = STATE_NUMBERS[state];
    else request.target_state_name = state;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.publishTimeoutMs ?? 10_000;
      this.pending.set(request.request_id, { request, resolve, reject, deadline: this.now() + timeoutMs, sentOn: null });
      this.resendPending();
    });
  }

  resendPending() {
    if (!this.connected) return;
    for (const publish of this.pending.values()) {
      if (publish.sentOn === this.connectionNumber) continue;
      publish.sentOn = this.connectionNumber;
      this.send({ publish: publish.request });
    }
  }

  // MARK: Page life

  /** The page became visible or hidden (called by itself on `visibilitychange`): a hidden page reconnects
   * with the background policy and sends no probes; a waiting reconnect is planned again. */
  setVisible(visible) {
    if (visible === this.visible) return;
    this.visible = visible;
    if (this.reconnectTimer !== null && !this.closed) {
      this.clearTimer(this.reconnectTimer);
      const delayMs = this.policy.reconnect.delay(Math.max(0, this.attempt - 1), this.random);
      this.setState({ name: "waiting", attempt: this.attempt, delayMs });
      this.reconnectTimer = this.setTimer(() => { this.reconnectTimer = null; this.connect(); }, delayMs);
    }
  }

  get policy() { return this.visible ? this.foreground : this.background; }

  /** Replaces the token: sent as `refresh` when connected, used by later connections. */
  updateToken(token) {
    this.options.token = token;
    if (this.connected && typeof token === "string") this.send({ refresh: { token } });
  }

  /** Cuts the connection as a network failure would, then reconnects and resumes (tests, drills). */
  simulateNetworkLoss() { this.connectionLost(null); }

  /** Closes for good: pending publishes fail, iterators end, the state becomes closed. */
  close() {
    if (this.closed) return;
    this.shutdown(null);
  }

  // MARK: Connecting

  async token() {
    const token = this.options.token;
    return typeof token === "function" ? (await token()) ?? "" : token ?? "";
  }

  connect() {
    if (this.closed || this.socket) return;
    const attempt = this.attempt;
    this.setState({ name: "connecting", attempt });
    this.attemptStartedMs = this.now();
    this.connectionNumber += 1;
    const number = this.connectionNumber;
    let socket;
    try {
      socket = new this.WebSocket(this.options.url, [SUBPROTOCOL]);
    } catch (error) {
      this.emit("error", { message: String(error) });
      this.socket = null;
      this.connectionLost(null);
      return;
    }
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.reader = new FrameReader(this.options.maxFrameSize ?? 1 << 20);
    const current = () => this.socket === socket && this.connectionNumber === number;
    socket.onopen = async () => {
      if (!current()) return;
      let token;
      try {
        token = await this.token();
      } catch (error) {
        this.emit("error", { message: `token provider failed: ${error}` });
        if (current()) this.connectionLost(null);
        return;
      }
      if (!current()) return;
      this.lastInboundMs = this.now();
      for (const state of this.routes.values()) state.active = false;
      this.send({ connect: { protocol_version: PROTOCOL_VERSION, token, client_name: this.options.clientName ?? "longlink-js", client_version: this.options.clientVersion ?? CLIENT_VERSION } });
    };
    socket.onmessage = (event) => {
      if (!current()) return;
      if (typeof event.data === "string") {
        this.connectionLost(null);
        return;
      }
      this.lastInboundMs = this.now();
      let bodies;
      try {
        bodies = this.reader.push(new Uint8Array(event.data));
      } catch (error) {
        this.emit("error", { message: `undecodable data from the server: ${error.message}` });
        this.connectionLost(null);
        return;
      }
      for (const body of bodies) {
        if (!current()) return;
        let frame;
        try {
          frame = decodeServerFrame(body);
        } catch (error) {
          this.emit("error", { message: `undecodable frame from the server: ${error.message}` });
          this.connectionLost(null);
          return;
        }
        this.receive(frame);
      }
      if (current()) this.sendAcks();
    };
    socket.onclose = (event) => {
      if (!current()) return;
      this.connectionLost(closeDisconnect(event));
    };
    socket.onerror = () => {};
  }

  send(frame) {
    const socket = this.socket;
    if (!socket || socket.readyState !== 1) return;
    socket.send(encodeClientFrame(frame));
  }

  sendAcks() {
    if (!this.connected || !this.sendsAcks) return;
    for (const [route, state] of this.routes) {
      if (state.unackedOffset === null) continue;
      this.send({ ack: { route, offset: state.unackedOffset } });
      state.unackedOffset = null;
    }
  }

  // MARK: Frames

  receive({ kind, value }) {
    switch (kind) {
      case "connected":
        this.connected = true;
        this.attempt = 0;
        this.silenceLimitMs = (value.ping_interval_ms ?? 25_000) + (value.pong_timeout_ms ?? 10_000) + 5_000;
        this.setState({ name: "connected", attempt: 0, connected: value });
        for (const route of [...this.routes.keys()].sort()) this.sendSubscribe(route);
        this.resendPending();
        return;
      case "subscribed": return this.didSubscribe(value);
      case "push": return this.didPush(value);
      case "publish_result": return this.didPublish(value);
      case "ping": return this.send({ pong: {} });
      case "pong": case "unsubscribed": return;
      case "error": {
        const publish = this.pending.get(value.request_id);
        if (value.request_id && publish) {
          this.pending.delete(value.request_id);
          publish.reject(new LonglinkError(value.message ?? "refused", { code: value.code }));
          return;
        }
        for (const [route, state] of this.routes) {
          if (value.request_id && state.requestId === value.request_id && !state.active) this.routes.delete(route);
        }
        this.emit("error", { code: value.code, message: value.message ?? "", requestId: value.request_id ?? 0 });
        return;
      }
      case "disconnect":
        this.connectionLost({ code: value.code ?? 0, reason: value.reason ?? "", reconnectAfterMs: value.reconnect_after_ms ?? 0 });
        return;
      case "delivery_receipt": return this.emit("receipt", value);
      case "token_expiring": return this.refreshToken(value);
    }
  }

  async refreshToken(warning) {
    this.emit("tokenExpiring", { expiresAtMs: warning.expires_at_ms ?? 0 });
    if (typeof this.options.token !== "function") return;
    try {
      const token = await this.options.token();
      if (token && this.connected) this.send({ refresh: { token } });
    } catch (error) {
      this.emit("error", { message: `token provider failed: ${error}` });
    }
  }

  didSubscribe(subscribed) {
    const route = subscribed.route;
    const state = this.routes.get(route);
    if (!state || state.requestId !== subscribed.request_id) return;
    const resumed = state.position !== null;
    const notes = [];
    if (resumed && subscribed.recovered) {
      for (const wire of subscribed.missed ?? []) {
        const record = recordFrom(wire);
        if (!isNewer(record.position, state.position)) continue;
        state.snapshot = advance(state.snapshot, route, record);
        state.position = record.position;
        notes.push(change("change", route, record, state.snapshot));
      }
    } else if (subscribed.snapshot) {
      const snapshot = snapshotFrom(route, subscribed.snapshot);
      if (!samePosition(snapshot.position, state.position)) {
        state.snapshot = snapshot;
        notes.push(change(resumed ? "resync" : "snapshot", route, null, snapshot));
      }
    }
    state.position = position(subscribed.position);
    state.active = true;
    for (const note of notes) this.notify(route, note);
  }

  didPush(push) {
    const route = push.route;
    const state = this.routes.get(route);
    if (!state || !state.active) return;
    const record = recordFrom(push);
    record.skippedBefore = push.skipped_before ?? false;
    if (!isNewer(record.position, state.position)) return;
    state.snapshot = advance(state.snapshot, route, record);
    state.position = record.position;
    if (this.sendsAcks) state.unackedOffset = record.position.offset;
    this.notify(route, change("change", route, record, state.snapshot));
  }

  didPublish(result) {
    const publish = this.pending.get(result.request_id);
    if (!publish) return;
    this.pending.delete(result.request_id);
    if (result.accepted) {
      publish.resolve({
        position: position(result.accepted.position),
        timestampMs: result.accepted.timestamp_ms ?? 0,
        deduplicated: result.accepted.deduplicated ?? false,
        idempotencyKey: publish.request.idempotency_key,
      });
      return;
    }
    const refused = result.refused ?? {};
    if (refused.retryable && this.now() < publish.deadline) {
      publish.request = { ...publish.request, request_id: this.makeRequestId() };
      publish.sentOn = null;
      this.pending.set(publish.request.request_id, publish);
      this.setTimer(() => this.resendPending(), 200);
      return;
    }
    publish.reject(new LonglinkError(refused.message ?? "refused", { code: refused.code }));
  }

  notify(route, note) {
    for (const observer of [...(this.observers.get(route) ?? [])]) {
      try { observer(note); } catch (error) { queueMicrotask(() => { throw error; }); }
    }
  }

  // MARK: Losing the connection

  /** Tears the connection down and plans the next attempt (or stops, for a do-not-reconnect code). */
  connectionLost(disconnect) {
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      try { socket.close(); } catch { /* already closing */ }
    }
    this.connected = false;
    for (const state of this.routes.values()) { state.active = false; state.unackedOffset = null; }
    if (this.closed) return;
    if (disconnect && disconnect.code >= 3500 && disconnect.code < 4000) {
      this.shutdown(disconnect);
      return;
    }
    let delayMs = this.policy.reconnect.delay(this.attempt, this.random);
    if (disconnect?.reconnectAfterMs > 0) delayMs = disconnect.reconnectAfterMs;
    this.attempt += 1;
    this.setState({ name: "waiting", attempt: this.attempt, delayMs, disconnect: disconnect ?? undefined });
    this.reconnectTimer = this.setTimer(() => { this.reconnectTimer = null; this.connect(); }, delayMs);
  }

  shutdown(disconnect) {
    this.closed = true;
    if (this.reconnectTimer !== null) this.clearTimer(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.tickTimer !== null) this.clearTimer(this.tickTimer);
    this.tickTimer = null;
    if (this.socket) this.connectionLost(null);
    for (const publish of this.pending.values()) publish.reject(new LonglinkError("client closed"));
    this.pending.clear();
    if (this.onVisibility) this.document.removeEventListener?.("visibilitychange", this.onVisibility);
    for (const iterator of [...this.iterators]) iterator.return();
    this.setState({ name: "closed", attempt: this.attempt, disconnect: disconnect ?? undefined });
  }

  // MARK: Time

  tick() {
    const now = this.now();
    for (const [id, publish] of this.pending) {
      if (now < publish.deadline) continue;
      this.pending.delete(id);
      publish.reject(new LonglinkError("timed out waiting for the gateway"));
    }
    if (!this.socket) return;
    if (!this.connected) {
      if (now - this.attemptStartedMs >= (this.options.connectTimeoutMs ?? 10_000)) this.connectionLost(null);
      return;
    }
    const silence = now - this.lastInboundMs;
    if (silence >= this.silenceLimitMs) {
      this.connectionLost(null);
      return;
    }
    const probe = this.policy.probeAfterMs;
    if (probe !== null && silence >= probe && now - this.lastProbeMs >= probe) {
      this.lastProbeMs = now;
      this.send({ ping: {} });
    }
  }
}

/** A Longlink disconnect read from a WebSocket close event (codes 3000–3999 keep their numbers). */
function closeDisconnect(event) {
  if (event && event.code >= 3000 && event.code < 4000) return { code: event.code, reason: event.reason ?? "", reconnectAfterMs: 0 };
  return null;
}

function randomKey(random) {
  const crypto = globalThis.crypto;
  const bytes = new Uint8Array(16);
  if (crypto?.getRandomValues) crypto.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

"""####

    static let exampleText = ####"""
<!doctype html>
<!--
  Longlink example: follow one order's state and driver over the gateway's WebSocket endpoint.

  Served by the gateway's operations listener at /example (with the client at /longlink.js), e.g. after `make run`:
    http://127.0.0.1:9170/example#token=TOKEN&order=taxi/8812
  Address parameters (after #): token (a JWT allowed to subscribe to the order; empty for --insecure-dev),
  order (line/id, default taxi/8812), server (default ws://<this host>:7071/longlink, wss:// on an https page).
-->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Longlink: follow an order</title>
<style>
  body { font: 16px/1.45 system-ui, sans-serif; max-width: 40em; margin: 2em auto; padding: 0 1em; color: #1d2733; }
  .connection { display: inline-block; padding: 1px 8px; border-radius: 9px; background: #e6e9ee; font-size: 13px; }
  .connection[data-state="connected"] { background: #d7f2df; color: #17633a; }
  .connection[data-state="waiting"], .connection[data-state="closed"] { background: #f8dddd; color: #8a1f1f; }
  .order { font-size: 28px; margin: .6em 0 .2em; }
  .muted { color: #6b7785; }
  ol { padding-left: 1.4em; }
  li { margin: .15em 0; }
  code { background: #f2f4f7; padding: 0 4px; border-radius: 3px; }
</style>
</head>
<body>
<h1>Order <code id="route">…</code></h1>
<p>Connection: <span id="connection" class="connection">starting</span></p>
<p class="order">State: <strong id="state">unknown</strong></p>
<p>Driver: <span id="driver" class="muted">none yet</span> · ETA: <span id="eta" class="muted">–</span></p>
<h2>Changes</h2>
<ol id="changes"></ol>
<script type="module">
import { LonglinkClient } from "./longlink.js";

const params = new URLSearchParams(location.hash.slice(1));
const order = params.get("order") || "taxi/8812";
const route = "order://" + order;
const scheme = location.protocol === "https:" ? "wss" : "ws";
const server = params.get("server") || `${scheme}://${location.hostname}:7071/longlink`;
const token = params.get("token") || "";
const $ = (id) => document.getElementById(id);
/** One console line per event, so a test (or you, in the console) can follow along. */
const report = (event) => console.log("longlink " + JSON.stringify(event));

$("route").textContent = route;
const client = new LonglinkClient({ url: server, token: () => token, clientName: "longlink-example" });

client.on("state", (state) => {
  const connection = $("connection");
  connection.dataset.state = state.name;
  connection.textContent = state.name === "waiting" ? `reconnecting in ${state.delayMs} ms` : state.name;
  report({ type: "state", name: state.name, attempt: state.attempt, code: state.disconnect?.code ?? null });
});
client.on("error", (error) => report({ type: "error", code: error.code ?? null, message: error.message }));

client.subscribe(route, (change) => {
  const { snapshot, record } = change;
  $("state").textContent = snapshot.state;
  $("driver").textContent = snapshot.fields.driver_id ?? "none yet";
  $("eta").textContent = snapshot.fields.eta_seconds !== undefined ? `${snapshot.fields.eta_seconds} s` : "–";
  const item = document.createElement("li");
  item.dataset.kind = change.kind;
  item.dataset.offset = String(record.position.offset);
  item.textContent = `${change.kind === "change" ? "" : change.kind + ": "}${record.fromState ? record.fromState + " → " : ""}${record.state}`
    + ` (offset ${record.position.offset})`;
  $("changes").append(item);
  report({ type: "change", kind: change.kind, epoch: record.position.epoch, offset: record.position.offset, state: record.state,
           driver: snapshot.fields.driver_id ?? null });
});

window.longlink = client;
</script>
</body>
</html>

"""####
}
