import LonglinkCore

/// The answer to an accepted publish written straight as wire bytes: exactly what protobuf-c packs for
/// `ServerFrame.publish_result = 5 { request_id = 1, accepted = 2 { position = 1 { epoch = 1, offset = 2 },
/// timestamp_ms = 2, deduplicated = 3 } }` (proto3: a zero scalar is left out, the position and the accepted message
/// are always there), after the varint length prefix, without building the C structs or asking for the size.
/// `FastEncoderConformanceTests` compares the two byte for byte.
enum PublishResultEncoder {
    /// The largest frame: prefix, frame key and length, request id, accepted key and length, position key and
    /// length, epoch, offset, timestamp, deduplicated.
    static let maxFrameSize = 1 + 2 + 6 + 2 + 2 + 6 + 11 + 11 + 2

    /// The framed bytes of an accepted result.
    static func frame(requestID: UInt32, position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool) -> [UInt8] {
        FrameBytes.array(capacity: maxFrameSize) { out, initialized in
            initialized = write(
                requestID: requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated,
                to: out.baseAddress!
            )
        }
    }

    /// Writes the framed bytes at `out` (room for `maxFrameSize` bytes) and returns their count.
    ///
    /// The body is at most 42 bytes, so the prefix and every nested length take one byte each: they are stored
    /// as bytes, and only the four numbers go through the varint loop.
    static func write(
        requestID: UInt32,
        position: StreamPosition,
        timestampMillis: UInt64,
        deduplicated: Bool,
        to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        let epoch = UInt64(position.epoch)
        let offset = position.offset
        let request = UInt64(requestID)
        let positionSize = (epoch == 0 ? 0 : 1 + size(epoch)) + (offset == 0 ? 0 : 1 + size(offset))
        let acceptedSize = 2 + positionSize + (timestampMillis == 0 ? 0 : 1 + size(timestampMillis)) + (deduplicated ? 2 : 0)
        let resultSize = (request == 0 ? 0 : 1 + size(request)) + 2 + acceptedSize
        out[0] = UInt8(truncatingIfNeeded: 2 + resultSize)  // the body: key, length, result
        out[1] = 5 << 3 | 2  // ServerFrame.publish_result
        out[2] = UInt8(truncatingIfNeeded: resultSize)
        var cursor = out + 3
        if request != 0 {
            field(1 << 3 | 0, request, &cursor)
        }
        cursor[0] = 2 << 3 | 2  // PublishResult.accepted
        cursor[1] = UInt8(truncatingIfNeeded: acceptedSize)
        cursor[2] = 1 << 3 | 2  // Accepted.position
        cursor[3] = UInt8(truncatingIfNeeded: positionSize)
        cursor += 4
        if epoch != 0 {
            field(1 << 3 | 0, epoch, &cursor)
        }
        if offset != 0 {
            field(2 << 3 | 0, offset, &cursor)
        }
        if timestampMillis != 0 {
            field(2 << 3 | 0, timestampMillis, &cursor)
        }
        if deduplicated {
            cursor[0] = 3 << 3 | 0
            cursor[1] = 1
            cursor += 2
        }
        return cursor - out
    }

    /// Bytes of `value` as a varint.
    @inline(__always)
    private static func size(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }

    /// A varint field: `key`, then `value`.
    @inline(__always)
    private static func field(_ key: UInt8, _ value: UInt64, _ cursor: inout UnsafeMutablePointer<UInt8>) {
        cursor.pointee = key
        cursor += 1
        var rest = value
        while rest >= 0x80 {
            cursor.pointee = UInt8(truncatingIfNeeded: rest) | 0x80
            cursor += 1
            rest >>= 7
        }
        cursor.pointee = UInt8(truncatingIfNeeded: rest)
        cursor += 1
    }
}
