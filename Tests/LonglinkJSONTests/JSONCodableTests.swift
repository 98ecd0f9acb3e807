import LonglinkJSON
import Testing

@Suite("Codable through JSON values")
struct JSONCodableTests {
    struct Sample: Codable, Equatable {
        enum Kind: String, Codable { case plain, fancy }
        var b: [Int] = []
        var a: [String: Int] = [:]
        var c = 2.0
        var d = 0.1
        var e: Float = 0.1
        var f = "x/y<&"
        var g: Int? = nil
        var h = [[1, 2], [3]]
        var i = 1e-7
        var j = 1e20
        var k: UInt64 = .max
    }

    @Test("pretty, key-sorted output is laid out byte for byte as Foundation's JSONEncoder writes it")
    func foundationLayout() throws {
        // JSONEncoder with [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] printed exactly this for Sample().
        let expected = """
            {
              "a" : {

              },
              "b" : [

              ],
              "c" : 2,
              "d" : 0.1,
              "e" : 0.1,
              "f" : "x/y<&",
              "h" : [
                [
                  1,
                  2
                ],
                [
                  3
                ]
              ],
              "i" : 1e-07,
              "j" : 1e+20,
              "k" : 18446744073709551615
            }
            """
        #expect(try JSONValue.encode(Sample()).prettyText(sortedKeys: true) == expected)
    }

    @Test("decodes what it encodes, optionals and enums included")
    func roundTrip() throws {
        struct Wrapper: Codable, Equatable {
            var samples: [Sample]
            var kind: Sample.Kind
            var note: String?
            var flags: [Bool?]
        }
        let value = Wrapper(
            samples: [Sample(), Sample(b: [-1], a: ["z": 1, "y": 2], g: 7, k: 3)],
            kind: .fancy,
            note: nil,
            flags: [true, nil, false]
        )
        let tree = try JSONValue.encode(value)
        #expect(tree["note"] == nil)
        #expect(try JSONValue.decode(Wrapper.self, from: tree) == value)
        let text = tree.prettyText(sortedKeys: true)
        #expect(try JSONValue.decode(Wrapper.self, from: Array(text.utf8)) == value)
        #expect(try JSONValue.decode(Wrapper.self, from: Array(tree.serialized.utf8)) == value)
    }

    struct Point: Decodable, Equatable {
        var x: Int
        var y: UInt8?
    }

    @Test("numbers convert when they fit exactly; absent optionals are nil")
    func numbers() throws {
        #expect(try JSONValue.decode(Point.self, from: Array(#"{"x":5.0}"#.utf8)) == Point(x: 5, y: nil))
        #expect(try JSONValue.decode(Point.self, from: Array(#"{"x":-3,"y":255}"#.utf8)) == Point(x: -3, y: 255))
        #expect(try JSONValue.decode(Point.self, from: Array(#"{"x":1,"y":null}"#.utf8)) == Point(x: 1, y: nil))
        for text in [#"{"x":5.5}"#, #"{"x":1,"y":256}"#, #"{"x":1,"y":-1}"#] {
            #expect(throws: DecodingError.self, "\(text)") { try JSONValue.decode(Point.self, from: Array(text.utf8)) }
        }
        #expect(try JSONValue.decode(UInt64.self, from: Array("18446744073709551615".utf8)) == .max)
        #expect(try JSONValue.parse("18446744073709551615") == .uint(.max))
    }

    @Test("a value of the wrong shape fails with the path to it; malformed text fails as JSON")
    func errors() throws {
        struct Outer: Decodable { var points: [Point] }
        do {
            _ = try JSONValue.decode(Outer.self, from: Array(#"{"points":[{"x":1},{"x":"two"}]}"#.utf8))
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["points", "1", "x"])
            #expect(context.debugDescription == "expected a number, found a string")
        }
        do {
            _ = try JSONValue.decode(Outer.self, from: Array(#"{"points":[{"y":1}]}"#.utf8))
            Issue.record("expected a missing key")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "x")
            #expect(context.codingPath.count == 2)
        }
        #expect(throws: JSONError.self) { try JSONValue.decode(Outer.self, from: Array("{points:[]}".utf8)) }
    }

    @Test("a number JSON cannot carry is refused when encoding")
    func infinity() {
        #expect(throws: EncodingError.self) { try JSONValue.encode([Double.infinity]) }
    }
}
