// The JavaScript codec against golden frames: protoc's (Tests/LonglinkProtobufTests/Fixtures, which the Swift
// codec also matches byte for byte) and the Swift codec's own (test/golden, checked by JavaScriptClientTests).
// Each server frame must decode to exactly the object below and encode back to the same bytes; each client
// frame must encode to exactly the bytes and decode back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { decodeMessage, decodeServerFrame, encodeClientFrame, encodeMessage, FrameReader } from "../longlink.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const protocFixtures = here + "../../../Tests/LonglinkProtobufTests/Fixtures/";
const swiftFixtures = here + "golden/";
const route = "order://taxi/8812";
const typicalFields = { driver_id: "driver-4711", eta_seconds: 240, latitude_e6: 31230416, longitude_e6: 121473701 };

const server = {
  [protocFixtures + "server_push_typical"]: { push: { route, offset: 3, epoch: 1, timestamp_ms: 1732900000000, to_state: 6, from_state: 5, fields: typicalFields } },
  [protocFixtures + "server_push_first_record"]: { push: { route, offset: 1, epoch: 7, timestamp_ms: 1732900000001, to_state: 1 } },
  [protocFixtures + "server_push_custom_states"]: {
    push: {
      route: "order://carpool/cp-77.a_B", offset: 18446744073709551615n, epoch: 4294967295, timestamp_ms: 1732900000615,
      to_state_name: "waiting_for_co_riders", from_state_name: "carpool_forming",
      fields: {
        driver_id: "driver-4711", eta_seconds: 0, latitude_e6: -33868820, longitude_e6: -151209296,
        cancellation_reason: "rider changed plans ✈", payload: new Uint8Array([0, 1, 2, 255]),
      },
      skipped_before: true,
    },
  },
  [protocFixtures + "server_subscribed"]: {
    subscribed: {
      request_id: 9, route,
      snapshot: {
        state_code: 8, fields: { driver_id: "d-1", latitude_e6: 90000000, longitude_e6: 180000000 },
        position: { epoch: 3, offset: 9 }, created_at_ms: 1700000000000, updated_at_ms: 1700000500000,
      },
      position: { epoch: 3, offset: 11 },
      recovered: true,
      missed: [
        { offset: 10, epoch: 3, timestamp_ms: 1732900000010, to_state: 9, from_state: 8 },
        { offset: 11, epoch: 3, timestamp_ms: 1732900000011, to_state_name: "rated_by_rider", from_state: 9, fields: { eta_seconds: 5 } },
      ],
    },
  },
  [protocFixtures + "server_publish_result_refused"]: {
    publish_result: { request_id: 78, refused: { request_id: 78, code: 409, message: "created → paid is not allowed" } },
  },
  [protocFixtures + "server_disconnect"]: { disconnect: { code: 3002, reason: "outbound queue full", reconnect_after_ms: 1500 } },
  [swiftFixtures + "server_connected"]: {
    connected: {
      protocol_version: 1, client_id: "c64", node_id: "node-1", ping_interval_ms: 25000, pong_timeout_ms: 10000,
      max_frame_size: 65536, max_subscriptions: 128, token_expires_at_ms: 1732903600000,
    },
  },
  [swiftFixtures + "server_ping"]: { ping: {} },
  [swiftFixtures + "server_pong"]: { pong: {} },
  [swiftFixtures + "server_token_expiring"]: { token_expiring: { expires_at_ms: 1732903600000 } },
  [swiftFixtures + "server_error"]: { error: { request_id: 3, code: 403, message: "token does not allow order://taxi/9" } },
  [swiftFixtures + "server_unsubscribed"]: { unsubscribed: { request_id: 4, route } },
  [swiftFixtures + "server_subscribed_fresh"]: { subscribed: { request_id: 1, route, position: { epoch: 1 } } },
  [swiftFixtures + "server_delivery_receipt"]: {
    delivery_receipt: { route, position: { epoch: 1, offset: 4 }, subscriber_id: "c128", acked_count: 2 },
  },
  [swiftFixtures + "server_publish_result_accepted"]: {
    publish_result: { request_id: 5, accepted: { position: { epoch: 1, offset: 4 }, timestamp_ms: 1732900000004, deduplicated: true } },
  },
};

const client = {
  [protocFixtures + "client_ack"]: { ack: { route, offset: 3 } },
  [protocFixtures + "client_subscribe"]: { subscribe: { request_id: 1, route, since: { epoch: 7, offset: 41 } } },
  [protocFixtures + "client_publish"]: {
    publish: {
      request_id: 5, order_id: "8812", line: "taxi", target_state: 6, fields: typicalFields,
      idempotency_key: "pub-1:8812:3", wants_receipts: true,
    },
  },
  [swiftFixtures + "client_connect"]: { connect: { protocol_version: 1, token: "eyJ.x.y", client_name: "longlink-js", client_version: "0.1.0" } },
  [swiftFixtures + "client_refresh"]: { refresh: { token: "eyJ.new" } },
  [swiftFixtures + "client_unsubscribe"]: { unsubscribe: { request_id: 2, route } },
  [swiftFixtures + "client_ping"]: { ping: {} },
  [swiftFixtures + "client_pong"]: { pong: {} },
  [swiftFixtures + "client_subscribe_fresh"]: { subscribe: { request_id: 3, route } },
  [swiftFixtures + "client_publish_named_state"]: {
    publish: { request_id: 6, order_id: "cp-1", line: "carpool", target_state_name: "waiting_for_co_riders", idempotency_key: "k-1" },
  },
};

const bytes = (path) => new Uint8Array(readFileSync(path + ".bin"));
const name = (path) => path.split("/").pop();

for (const [path, frame] of Object.entries(server)) {
  test(`server frame ${name(path)} decodes to its object and encodes back to its bytes`, () => {
    const body = bytes(path);
    const [kind] = Object.keys(frame);
    assert.deepEqual(decodeServerFrame(body), { kind, value: frame[kind] });
    assert.deepEqual(encodeMessage("ServerFrame", frame), body);
  });
}

for (const [path, frame] of Object.entries(client)) {
  test(`client frame ${name(path)} encodes to its bytes and decodes back`, () => {
    const body = bytes(path);
    const encoded = encodeClientFrame(frame);
    assert.equal(encoded[0], body.length, "a one-byte length prefix");
    assert.deepEqual(encoded.subarray(1), body);
    assert.deepEqual(decodeMessage("ClientFrame", body), frame);
  });
}

test("the frame reader cuts frames at any boundary and refuses oversized or empty ones", () => {
  const stream = [];
  for (const path of Object.keys(server)) {
    const body = bytes(path);
    stream.push(body.length < 128 ? [body.length] : [(body.length & 0x7f) | 0x80, body.length >> 7], ...body);
  }
  const all = Uint8Array.from(stream.flat());
  for (const split of [1, 2, 3, 7, 50, all.length - 1]) {
    const reader = new FrameReader();
    const frames = [...reader.push(all.subarray(0, split)), ...reader.push(all.subarray(split))];
    assert.equal(frames.length, Object.keys(server).length, `split at ${split}`);
    assert.deepEqual(frames.map((f) => decodeServerFrame(f).kind), Object.values(server).map((f) => Object.keys(f)[0]));
  }
  assert.throws(() => new FrameReader(10).push(Uint8Array.from([11, ...new Array(11).fill(0)])), /over the limit/);
  assert.throws(() => new FrameReader().push(Uint8Array.from([0])), /empty frame/);
});

test("a frame of the wrong direction, an unknown kind or broken bytes is refused", () => {
  assert.throws(() => decodeServerFrame(bytes(protocFixtures + "client_ack")), /no known frame kind/);
  assert.throws(() => decodeServerFrame(Uint8Array.from([0x0a, 0x05, 0x0a])), /truncated/);
  assert.throws(() => decodeServerFrame(Uint8Array.from([0x0a, 0x02, 0x0a, 0x01])), /truncated/);
  assert.throws(() => decodeServerFrame(Uint8Array.from([0x0a, 0x03, 0x0a, 0x01, 0xff])), /UTF-8/);
});
