import FoundationEssentials
public import LonglinkCore
import LonglinkProtobuf

/// How big the hot frame is on the wire compared with the same content as JSON.
///
/// Both sizes are frame bodies without the length prefix. The JSON is what a JSON protocol would naturally
/// send for the same `ServerFrame`: `{"push":{…}}` with natural field names, states as their names, the
/// route as a string, the position as an object, the location as decimal degrees, and absent or false
/// fields left out (Foundation's `JSONEncoder`, compact output, slashes not escaped). For the typical push
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
    static func jsonBodySize(of push: Push) -> Int {
        let record = push.record
        let fields = record.fields
        let location = fields.location.map {
            JSONLocation(latitude: Double($0.latitudeE6) / 1e6, longitude: Double($0.longitudeE6) / 1e6)
        }
        let json = JSONPushFrame(
            push: JSONPush(
                route: push.route.text,
                fromState: record.fromState?.name,
                toState: record.toState.name,
                fields: fields == .none
                    ? nil
                    : JSONFields(
                        driverId: fields.driverID,
                        etaSeconds: fields.etaSeconds,
                        location: location,
                        cancellationReason: fields.cancellationReason,
                        payload: fields.payload.isEmpty ? nil : Data(fields.payload).base64EncodedString()
                    ),
                timestampMillis: record.timestampMillis,
                position: JSONPosition(epoch: record.position.epoch, offset: record.position.offset),
                skippedBefore: push.skippedBefore ? true : nil
            ))
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            return try encoder.encode(json).count
        } catch {
            preconditionFailure("the typical push encodes as JSON: \(error)")
        }
    }
}

private struct JSONPushFrame: Encodable {
    var push: JSONPush
}

private struct JSONPush: Encodable {
    var route: String
    var fromState: String?
    var toState: String
    var fields: JSONFields?
    var timestampMillis: UInt64
    var position: JSONPosition
    var skippedBefore: Bool?
}

private struct JSONFields: Encodable {
    var driverId: String?
    var etaSeconds: UInt32?
    var location: JSONLocation?
    var cancellationReason: String?
    var payload: String?
}

private struct JSONLocation: Encodable {
    var latitude: Double
    var longitude: Double
}

private struct JSONPosition: Encodable {
    var epoch: UInt32
    var offset: UInt64
}
