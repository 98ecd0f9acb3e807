import LonglinkJSON
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("round-trips nested values, escapes and unicode")
    func roundTrip() throws {
        let value = JSONValue.object([
            ("a", .array([.int(1), .double(2.5), .null, .bool(true)])),
            ("s", .string("quote \" back \\ newline \n tab \t é 🚕 <script>")),
            ("n", .int(-42)),
        ])
        let text = value.serialized
        #expect(!text.contains("<script>"))
        #expect(try JSONValue.parse(text) == value)
        #expect(try JSONValue.parse("\"\\ud83d\\ude95\"") == .string("🚕"))
        #expect(try JSONValue.parse(" { \"k\" : [ 1e3 , -0.5 ] } ")["k"] == .array([.double(1000), .double(-0.5)]))
    }

    @Test("refuses malformed text", arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "\"\\x\"", "tru", "1 2", "\"\u{01}\"", "[" + String(repeating: "[", count: 40) + String(repeating: "]", count: 41)])
    func malformed(text: String) {
        #expect(throws: JSONError.self) { try JSONValue.parse(text) }
    }

    @Test("unsigned numbers beyond Int64 serialize as digits and compare with equal numbers")
    func unsigned() throws {
        #expect(JSONValue.uint(UInt64.max).serialized == "18446744073709551615")
        #expect(JSONValue.uint(7) == .int(7))
        #expect(JSONValue.uint(7).intValue == 7)
        #expect(JSONValue.uint(UInt64.max).intValue == nil)
        #expect(JSONValue.int(-1) != .uint(UInt64.max))
        #expect(try JSONValue.parse("[18446744073709551615]").arrayValue?.first?.doubleValue == Double(UInt64.max))
    }

    @Test("quoting escapes HTML-significant characters by default, and only control characters for log lines")
    func quoting() throws {
        let text = "a<b>&c\u{2028}\"\n\u{01}\u{7F}"
        #expect(JSONValue.quoted(text) == "\"a\\u003cb\\u003e\\u0026c\\u2028\\\"\\n\\u0001\\u007f\"")
        #expect(JSONValue.quoted(text, htmlSafe: false) == "\"a<b>&c\u{2028}\\\"\\n\\u0001\\u007f\"")
        for htmlSafe in [true, false] {
            #expect(try JSONValue.parse(JSONValue.quoted(text, htmlSafe: htmlSafe)) == .string(text))
        }
    }
}

@Suite("JSON values for other parsers")
struct JSONValueOutputTests {
    @Test("serialized(htmlSafe: false) leaves <, >, & and slashes as they are, at every depth; the default escapes them")
    func plainOutput() {
        let value = JSONValue.object([("a<b", .array([.string("x&y"), .object([("r", .string("order://taxi/*"))])]))])
        #expect(value.serialized(htmlSafe: false) == #"{"a<b":["x&y",{"r":"order://taxi/*"}]}"#)
        #expect(value.serialized == #"{"a\u003cb":["x\u0026y",{"r":"order://taxi/*"}]}"#)
    }
}
