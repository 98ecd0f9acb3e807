public import LonglinkCore
import LonglinkJSON
import LonglinkProtobuf

/// How big the hot frame is on the wire compared with the same content as JSON.
///
/// Both sizes are frame bodies without the length prefix. The JSON is what a JSON protocol would naturally
/// send for the same `ServerFrame`: `{"push":{…}}` with natural field names, states as their names, the
/// route as a string, the position as an object, the location as decimal degrees, and absent or false
/// fields left out (`LonglinkJSON`, compact output, slashes not escaped). For the typical push
/// that is 64 bytes of protobuf against 272 bytes of JSON (23.5 %):
///
///     {"push":{"route":"order://taxi/8812","fromState":"driver_assigned","toState":"driver_arriving",
///     "fields":{"driverId":"driver-4711","etaSeconds":240,"location":{"latitude":31.230416,
///     "longitude":121.473701}},"timestampMillis":1732900000000,"position":{"epoch":1,"offset":3}}}
public enum PushSizeComparison {
    /// A typical push: taxi order 8812 goes from `driver_assigned` to `driver_arriving`, with the driver's
    /// id, an ETA, the driver's location, the store timestamp and the record's position.
    public static func typicalPush() -> ServerFrame {
        let record = OrderChangeRecord(
            orderID: OrderID("8812")!,
            line: .taxi,
            fromState: "driver_assigned",
            toState: "driver_arriving",
            fields: OrderFields(
                driverID: "driver-4711",
                etaSeconds: 240,
                location: GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701)
            ),
            position: StreamPosition(epoch: 1, offset: 3),
            timestampMillis: 1_732_900_000_000
        )
        return .push(Push(route: record.route, record: record))
    }

    /// The body sizes of `typicalPush()` as protobuf (`ProtobufFrameCodec`) and as JSON.
    public static func measure() -> (protobufBytes: Int, jsonBytes: Int) {
        guard case .push(let push) = typicalPush() else { preconditionFailure("typicalPush is a push") }
        return (protobufBodySize(of: .push(push)), jsonBodySize(of: push))
    }

    /// The protobuf body size of `frame`, without its length prefix.
    static func protobufBodySize(of frame: ServerFrame) -> Int {
        var buffer = ByteBuffer(capacity: 256)
        do {
            try ProtobufFrameCodec().encode(frame, into: &buffer)
            return try FrameReader(maxFrameSize: Int(UInt32.max)).nextFrame(in: &buffer) { $0.count } ?? 0
        } catch {
            preconditionFailure("the typical push encodes: \(error)")
        }
    }

    /// The JSON body size of `push`.
    static func jsonBodySize(of push: Push) -> Int { jsonBody(of: push).utf8.count }

    /// The JSON body of `push`: members in the order of the protobuf fields, absent or false ones left out.
    static func jsonBody(of push: Push) -> String {
        let record = push.record
        let fields = record.fields
        var members: [(String, JSONValue)] = [("route", .string(push.route.text))]
        if let from = record.fromState { members.append(("fromState", .string(from.name))) }
        members.append(("toState", .string(record.toState.name)))
        if fields != .none {
            var set: [(String, JSONValue)] = []
            if let driver = fields.driverID { set.append(("driverId", .string(driver))) }
            if let eta = fields.etaSeconds { set.append(("etaSeconds", .int(Int64(eta)))) }
            if let location = fields.location {
                set.append((
                    "location",
                    .object([
                        ("latitude", .double(Double(location.latitudeE6) / 1e6)),
                        ("longitude", .double(Double(location.longitudeE6) / 1e6)),
                    ])
                ))
            }
            if let reason = fields.cancellationReason { set.append(("cancellationReason", .string(reason))) }
            if !fields.payload.isEmpty { set.append(("payload", .string(base64(fields.payload)))) }
            members.append(("fields", .object(set)))
        }
        members.append(("timestampMillis", .uint(record.timestampMillis)))
        members.append(("position", .object([("epoch", .int(Int64(record.position.epoch))), ("offset", .uint(record.position.offset))])))
        if push.skippedBefore { members.append(("skippedBefore", .bool(true))) }
        return JSONValue.object([("push", .object(members))]).serialized(htmlSafe: false)
    }

    /// Standard base64 with padding (RFC 4648 section 4), as JSON protocols carry bytes.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                out.append(position <= count ? alphabet[Int((group >> UInt32(18 - 6 * position)) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
