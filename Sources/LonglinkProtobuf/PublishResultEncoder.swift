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
    static func write(
        requestID: UInt32,
        position: StreamPosition,
        timestampMillis: UInt64,
        deduplicated: Bool,
        to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        let positionSize = (position.epoch == 0 ? 0 : 1 + size(UInt64(position.epoch)))
            + (position.offset == 0 ? 0 : 1 + size(position.offset))
        let acceptedSize = 2 + positionSize + (timestampMillis == 0 ? 0 : 1 + size(timestampMillis)) + (deduplicated ? 2 : 0)
        let resultSize = (requestID == 0 ? 0 : 1 + size(UInt64(requestID))) + 1 + size(UInt64(acceptedSize)) + acceptedSize
        let bodySize = 1 + size(UInt64(resultSize)) + resultSize
        var cursor = out
        put(UInt64(bodySize), &cursor)
        put(5 << 3 | 2, &cursor)
        put(UInt64(resultSize), &cursor)
        if requestID != 0 {
            put(1 << 3 | 0, &cursor)
            put(UInt64(requestID), &cursor)
        }
        put(2 << 3 | 2, &cursor)
        put(UInt64(acceptedSize), &cursor)
        put(1 << 3 | 2, &cursor)
        put(UInt64(positionSize), &cursor)
        if position.epoch != 0 {
            put(1 << 3 | 0, &cursor)
            put(UInt64(position.epoch), &cursor)
        }
        if position.offset != 0 {
            put(2 << 3 | 0, &cursor)
            put(position.offset, &cursor)
        }
        if timestampMillis != 0 {
            put(2 << 3 | 0, &cursor)
            put(timestampMillis, &cursor)
        }
        if deduplicated {
            put(3 << 3 | 0, &cursor)
            put(1, &cursor)
        }
        return cursor - out
    }

    /// Bytes of `value` as a varint.
    @inline(__always)
    private static func size(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }

    @inline(__always)
    private static func put(_ value: UInt64, _ cursor: inout UnsafeMutablePointer<UInt8>) {
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
