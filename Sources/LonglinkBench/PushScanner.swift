/// The parts of a pushed record a benchmark subscriber needs, read in place from a `ServerFrame` body.
///
/// The load generator's subscribers receive hundreds of thousands of pushes per second on one thread. Turning each
/// into Swift values (`ServerFrame.push` with its route, states and strings) would make the client, not the
/// gateway, the bottleneck, where the Redis side of the comparison reads messages in place too (`RedisReplyScanner`).
/// So pushes are walked in place with a raw pointer, without allocating; every other frame goes through
/// `ProtobufFrameCodec`. The field numbers are those of `proto/longlink/v1/frames.proto`
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

    /// The first byte of every push frame's body: field 1 (`push`), length-delimited.
    static let frameKey: UInt8 = 1 << 3 | 2

    /// Reads a push from a frame body; nil when the body is not a well-formed push (the caller decodes it fully).
    ///
    /// This is the load generator's innermost loop on broadcast (hundreds of thousands of pushes per second): one
    /// pass over the bytes with a raw pointer, one-byte keys and varints decoded inline.
    static func scan(_ body: UnsafeRawBufferPointer) -> PushView? {
        guard let base = body.baseAddress, body.count > 2, body[0] == frameKey else { return nil }
        var cursor = base.assumingMemoryBound(to: UInt8.self) + 1
        let bodyEnd = cursor + (body.count - 1)
        guard let push = WireBytes.lengthDelimited(&cursor, bodyEnd) else { return nil }
        cursor = push.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let end = cursor + push.count
        var view = PushView(route: UnsafeRawBufferPointer(start: nil, count: 0), offset: 0, epoch: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        while cursor < end {
            let key = cursor.pointee
            cursor += 1
            guard key < 0x80 else { return nil }  // every field of Push has a one-byte key
            switch key {
            case 1 << 3 | 2:
                guard let bytes = WireBytes.lengthDelimited(&cursor, end) else { return nil }
                view.route = bytes
            case 2 << 3 | 0:
                guard let value = WireBytes.varint(&cursor, end) else { return nil }
                view.offset = value
            case 3 << 3 | 0:
                guard let value = WireBytes.varint(&cursor, end) else { return nil }
                view.epoch = UInt32(truncatingIfNeeded: value)
            case 9 << 3 | 2:
                guard let fields = WireBytes.lengthDelimited(&cursor, end) else { return nil }
                var inner = fields.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let fieldsEnd = inner + fields.count
                while inner < fieldsEnd {
                    let fieldKey = inner.pointee
                    inner += 1
                    guard fieldKey < 0x80 else { return nil }
                    if fieldKey == 6 << 3 | 2 {
                        guard let bytes = WireBytes.lengthDelimited(&inner, fieldsEnd) else { return nil }
                        view.payload = bytes
                    } else if !WireBytes.skip(&inner, fieldsEnd, wireType: fieldKey & 7) {
                        return nil
                    }
                }
            default:
                guard WireBytes.skip(&cursor, end, wireType: key & 7) else { return nil }
            }
        }
        return cursor == end ? view : nil
    }
}

/// An accepted publish's answer, read in place from a `ServerFrame` body (`ServerFrame.publish_result = 5`;
/// `PublishResult.request_id = 1, accepted = 2`; `Accepted.deduplicated = 3`). A refusal is left to the full
/// decoder (rare, and its error code is reported by name).
struct PublishResultView {
    /// The publish's request id.
    var requestID: UInt32
    /// Whether the store had applied the same idempotency key before.
    var deduplicated: Bool

    /// The first byte of every publish-result frame's body: field 5, length-delimited.
    static let frameKey: UInt8 = 5 << 3 | 2

    /// Reads an accepted publish result; nil for a refusal or anything malformed (the caller decodes it fully).
    static func scan(_ body: UnsafeRawBufferPointer) -> PublishResultView? {
        guard let base = body.baseAddress, body.count > 2, body[0] == frameKey else { return nil }
        var cursor = base.assumingMemoryBound(to: UInt8.self) + 1
        let bodyEnd = cursor + (body.count - 1)
        guard let result = WireBytes.lengthDelimited(&cursor, bodyEnd) else { return nil }
        cursor = result.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let end = cursor + result.count
        var view = PublishResultView(requestID: 0, deduplicated: false)
        var accepted = false
        while cursor < end {
            let key = cursor.pointee
            cursor += 1
            switch key {
            case 1 << 3 | 0:
                guard let value = WireBytes.varint(&cursor, end) else { return nil }
                view.requestID = UInt32(truncatingIfNeeded: value)
            case 2 << 3 | 2:
                guard let fields = WireBytes.lengthDelimited(&cursor, end) else { return nil }
                accepted = true
                var inner = fields.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let fieldsEnd = inner + fields.count
                while inner < fieldsEnd {
                    let fieldKey = inner.pointee
                    inner += 1
                    if fieldKey == 3 << 3 | 0 {
                        guard let value = WireBytes.varint(&inner, fieldsEnd) else { return nil }
                        view.deduplicated = value != 0
                    } else if fieldKey >= 0x80 || !WireBytes.skip(&inner, fieldsEnd, wireType: fieldKey & 7) {
                        return nil
                    }
                }
            case 3 << 3 | 2:
                return nil  // refused: decoded fully
            default:
                guard key < 0x80, WireBytes.skip(&cursor, end, wireType: key & 7) else { return nil }
            }
        }
        return accepted ? view : nil
    }
}
