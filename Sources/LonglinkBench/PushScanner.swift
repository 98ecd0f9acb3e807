/// The parts of a pushed record a benchmark subscriber needs, read in place from a `ServerFrame` body.
///
/// The load generator's subscribers receive hundreds of thousands of pushes per second on one thread. Turning each
/// into Swift values (`ServerFrame.push` with its route, states and strings) would make the client, not the
/// gateway, the bottleneck, where the Redis side of the comparison reads messages with hiredis's reader and no
/// Swift values either. So pushes are walked in place with a few varint reads, without allocating; every other
/// frame goes through `ProtobufFrameCodec`. The field numbers are those of `proto/longlink/v1/frames.proto`
/// (`ServerFrame.push = 1`; `Push.route = 1, offset = 2, epoch = 3, fields = 9`; `OrderFields.payload = 6`).
struct PushView {
    /// The route's bytes (UTF-8 URL).
    var route: UnsafeRawBufferPointer
    /// The record's offset.
    var offset: UInt64
    /// The record's epoch.
    var epoch: UInt32
    /// The payload bytes (empty when unset).
    var payload: UnsafeRawBufferPointer

    /// Reads a push from a frame body; nil when the body is not a well-formed push (the caller decodes it fully).
    static func scan(_ body: UnsafeRawBufferPointer) -> PushView? {
        var index = 0
        guard let tag = varint(body, &index), tag == (1 << 3 | 2), let length = varint(body, &index),
            length <= UInt64(body.count - index)
        else { return nil }
        let push = UnsafeRawBufferPointer(rebasing: body[index..<(index + Int(length))])
        var view = PushView(route: UnsafeRawBufferPointer(start: nil, count: 0), offset: 0, epoch: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        var cursor = 0
        while cursor < push.count {
            guard let key = varint(push, &cursor) else { return nil }
            switch (key >> 3, key & 7) {
            case (1, 2):
                guard let bytes = lengthDelimited(push, &cursor) else { return nil }
                view.route = bytes
            case (2, 0):
                guard let value = varint(push, &cursor) else { return nil }
                view.offset = value
            case (3, 0):
                guard let value = varint(push, &cursor) else { return nil }
                view.epoch = UInt32(truncatingIfNeeded: value)
            case (9, 2):
                guard let fields = lengthDelimited(push, &cursor) else { return nil }
                var inner = 0
                while inner < fields.count {
                    guard let fieldKey = varint(fields, &inner) else { return nil }
                    if fieldKey == (6 << 3 | 2) {
                        guard let bytes = lengthDelimited(fields, &inner) else { return nil }
                        view.payload = bytes
                    } else if !skip(fields, &inner, wireType: fieldKey & 7) {
                        return nil
                    }
                }
            default:
                guard skip(push, &cursor, wireType: key & 7) else { return nil }
            }
        }
        return view
    }

    private static func varint(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count && shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    private static func lengthDelimited(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) -> UnsafeRawBufferPointer? {
        guard let length = varint(bytes, &index), length <= UInt64(bytes.count - index) else { return nil }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + Int(length))])
        index += Int(length)
        return slice
    }

    private static func skip(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint(bytes, &index) != nil
        case 1: index += 8
        case 2: return lengthDelimited(bytes, &index) != nil
        case 5: index += 4
        default: return false
        }
        return index <= bytes.count
    }
}
