// The codec's schema table against proto/longlink/v1/frames.proto: every message, field (number, type, oneof or
// repeated) and enum value must be the same, so a change to the .proto fails here until longlink.js follows it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SCHEMA } from "../longlink.js";

const proto = readFileSync(fileURLToPath(new URL("../../../proto/longlink/v1/frames.proto", import.meta.url)), "utf8");

/** { messages: { Name: { field: [number, type, label?] } }, enums: { Name: { VALUE: number } } } from .proto text. */
function parse(text) {
  const source = text.replace(/\/\/.*$/gm, "");
  const messages = {};
  const enums = {};
  const tokens = source.match(/[A-Za-z_][A-Za-z0-9_.]*|\d+|[{};=]/g);
  let at = 0;
  const next = () => tokens[at++];
  const expect = (token) => assert.equal(next(), token, `proto parse: expected ${token} near token ${at}`);
  while (at < tokens.length) {
    const word = next();
    if (word === "syntax") { while (next() !== ";"); continue; }
    if (word === "package") { while (next() !== ";"); continue; }
    if (word === "enum") {
      const name = next();
      expect("{");
      const values = {};
      for (let token = next(); token !== "}"; token = next()) {
        expect("=");
        values[token] = Number(next());
        expect(";");
      }
      enums[name] = values;
      continue;
    }
    if (word === "message") {
      const name = next();
      expect("{");
      const fields = {};
      let oneofDepth = false;
      for (let token = next(); ; token = next()) {
        if (token === "}") {
          if (oneofDepth) { oneofDepth = false; continue; }
          break;
        }
        if (token === "reserved") { while (next() !== ";"); continue; }
        if (token === "oneof") { next(); expect("{"); oneofDepth = true; continue; }
        let label;
        let type = token;
        if (token === "repeated") { label = "repeated"; type = next(); }
        if (oneofDepth) label = "oneof";
        const field = next();
        expect("=");
        const number = Number(next());
        expect(";");
        fields[field] = label ? [number, type, label] : [number, type];
      }
      messages[name] = fields;
      continue;
    }
    assert.fail(`proto parse: unexpected ${word}`);
  }
  return { messages, enums };
}

const parsed = parse(proto);

test("every message of frames.proto is in the codec's schema with the same fields, numbers, types and labels", () => {
  assert.deepEqual(Object.keys(SCHEMA.messages).sort(), Object.keys(parsed.messages).sort());
  for (const [name, fields] of Object.entries(parsed.messages)) {
    assert.deepEqual(SCHEMA.messages[name], fields, `message ${name}`);
  }
});

test("every enum of frames.proto is in the codec's schema with the same values", () => {
  assert.deepEqual(SCHEMA.enums, parsed.enums);
});

test("the drift check itself notices a changed field number", () => {
  const changed = parse(proto.replace("uint64 timestamp_ms = 4;\n  oneof to", "uint64 timestamp_ms = 14;\n  oneof to"));
  assert.notDeepEqual(SCHEMA.messages.Record, changed.messages.Record);
});
