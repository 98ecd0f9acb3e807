import LonglinkCore

/// The opaque payload every benchmark change carries: the send time and a per-route sequence number, padded to
/// the requested size. The record's own `timestampMillis` is too coarse for sub-millisecond percentiles, so the
/// publisher writes `MonotonicClock` nanoseconds (CLOCK_MONOTONIC: one clock, since publisher and subscribers
/// run on one machine) into the first 8 bytes, little-endian, and the sequence into the next 8.
public enum BenchPayload {
    /// The smallest payload: timestamp and sequence.
    public static let minimumSize = 16
    /// The byte the payload is padded with.
    static let padding: UInt8 = 0x2E

    /// A payload of `size` bytes (at least `minimumSize`) stamped with `timestamp` and `sequence`.
    public static func make(size: Int, timestamp: UInt64, sequence: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: padding, count: Swift.max(size, minimumSize))
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: timestamp.littleEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
        }
        return bytes
    }

    /// The timestamp and sequence of a payload, nil when it is shorter than `minimumSize`.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> (timestamp: UInt64, sequence: UInt64)? {
        guard bytes.count >= minimumSize else { return nil }
        return (
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        )
    }

    /// `read` for an array.
    public static func read(_ bytes: [UInt8]) -> (timestamp: UInt64, sequence: UInt64)? {
        bytes.withUnsafeBytes { read($0) }
    }

    /// Now, in the clock payloads carry.
    public static func now() -> UInt64 { MonotonicClock.nanoseconds() }
}
