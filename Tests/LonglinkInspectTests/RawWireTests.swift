import LonglinkTestSupport
import Foundation
import LonglinkInspect
import Testing

/// The schema-less decoder against protoc's own `--decode_raw`, and the schema walk against `--decode`.
@Suite("Raw wire decoding", .ownThreads)
struct RawWireTests {
    static let goldens = [
        "client_ack", "client_publish", "client_subscribe", "server_disconnect", "server_publish_result_refused",
        "server_push_custom_states", "server_push_first_record", "server_push_typical", "server_subscribed",
    ]

    @Test("renders every golden frame exactly as protoc --decode_raw does", arguments: goldens)
    func matchesProtocDecodeRaw(name: String) throws {
        let body = try Fixtures.bytes(name + ".bin")
        let (status, expected, errors) = try runProgram("/usr/bin/protoc-c", ["--decode_raw"], input: body)
        #expect(status == 0, "protoc-c --decode_raw failed: \(errors)")
        #expect(RawWire.text(try RawWire.parse(body)) == expected)
    }

    @Test("renders ASCII golden frames with field names exactly as protoc --decode does", arguments: goldens.filter {
        $0 != "server_push_custom_states" && $0 != "server_publish_result_refused"  // non-ASCII text: we keep UTF-8
    })
    func matchesProtocDecode(name: String) throws {
        let body = try Fixtures.bytes(name + ".bin")
        let message = name.hasPrefix("server") ? "ServerFrame" : "ClientFrame"
        let (status, expected, errors) = try runProgram(
            "/usr/bin/protoc-c",
            ["--proto_path=\(packageRoot)/proto", "--decode=longlink.v1.\(message)", "longlink/v1/frames.proto"],
            input: body)
        #expect(status == 0, "protoc-c --decode failed: \(errors)")
        #expect(FrameSchema.v1.text(try RawWire.parse(body), message: message) == expected)
        #expect(FrameSchema.v1.unknownFields(in: try RawWire.parse(body), message: message).isEmpty)
    }

    @Test("shows groups, fixed values and empty strings like protoc")
    func scalarsAndGroups() throws {
        let bytes: [UInt8] = [0x0B, 0x08, 0x01, 0x0C, 0x12, 0x00, 0x1D, 1, 2, 3, 4, 0x21, 1, 2, 3, 4, 5, 6, 7, 8]
        let (status, expected, _) = try runProgram("/usr/bin/protoc-c", ["--decode_raw"], input: bytes)
        #expect(status == 0)
        #expect(RawWire.text(try RawWire.parse(bytes)) == expected)
        #expect(RawWire.compact(try RawWire.parse(bytes)) == "1:{1:1} 2:\"\" 3:0x04030201 4:0x0807060504030201")
    }

    @Test("says where and why bytes are not a message")
    func errors() {
        let cases: [([UInt8], String)] = [
            ([0x08], "byte 1: varint of field 1 cut off at the end of the bytes"),
            ([0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01], "byte 1: varint of field 1: varint longer than 10 bytes or above 2^64"),
            ([0x00, 0x01], "byte 0: field number 0"),
            ([0x0F], "byte 0: invalid wire type 7 (field 1)"),
            ([0x12, 0x05, 0x61], "byte 1: field 2 announces 5 bytes, only 1 remain"),
            ([0x1D, 0x01, 0x02], "byte 1: fixed32 field 3 needs 4 bytes, only 2 remain"),
            ([0x0B, 0x08, 0x01], "byte 3: group 1 is not closed"),
            ([0x08, 0x01, 0x0C], "byte 2: end-group tag of field 1 outside its group"),
        ]
        for (bytes, message) in cases {
            #expect(throws: RawWireError.self) { try RawWire.parse(bytes) }
            #expect((try? RawWire.parse(bytes)) == nil)
            let prefix = RawWire.parsePrefix(bytes)
            #expect(prefix.error?.description == message, "\(bytes)")
        }
        #expect(RawWire.parsePrefix([0x08, 0x01, 0x0F]).fields == [RawField(number: 1, value: .varint(1))])
    }
}
