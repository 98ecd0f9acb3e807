/// Rebuilds one direction of a TCP connection from its captured segments, in any order.
///
/// Segments are collected as they come and assembled at the end: each sequence number is placed relative to
/// the SYN (or, for a capture that starts mid-connection, to the lowest sequence number seen), with 32-bit
/// wrap-around handled; segments are laid out in stream order (a retransmission's bytes that are already there
/// are dropped, out-of-order segments fall into place), and a hole nobody filled becomes a gap.
public struct TCPStreamAssembler: Sendable {
    /// A contiguous run of stream bytes.
    public struct Piece: Hashable, Sendable {
        /// Stream offset of the first byte (0 = the byte after the SYN).
        public var offset: Int
        /// The bytes.
        public var bytes: [UInt8]
        /// For each byte range ending at `end` (exclusive, relative to `offset`), the capture time by which every
        /// byte of the piece up to it had arrived.
        public var arrivals: [(end: Int, timeMicros: UInt64)]

        /// When every byte before `end` (relative to `offset`) had been captured.
        public func arrivalTime(through end: Int) -> UInt64 {
            for arrival in arrivals where arrival.end >= end { return arrival.timeMicros }
            return arrivals.last?.timeMicros ?? 0
        }

        public static func == (lhs: Piece, rhs: Piece) -> Bool { lhs.offset == rhs.offset && lhs.bytes == rhs.bytes }
        public func hash(into hasher: inout Hasher) { hasher.combine(offset) }
    }

    /// The assembled stream.
    public struct Result: Sendable {
        /// Contiguous pieces in stream order; more than one when bytes are missing between them.
        public var pieces: [Piece]
        /// Bytes that arrived more than once (retransmissions) and were dropped.
        public var duplicateBytes: Int
        /// Segments captured after a segment with a higher sequence number (reordered or retransmitted).
        public var outOfOrderSegments: Int
        /// All bytes of the stream that were captured.
        public var totalBytes: Int { pieces.reduce(0) { $0 + $1.bytes.count } }
    }

    private var segments: [(sequence: UInt32, payload: [UInt8], time: UInt64)] = []
    private var synSequence: UInt32?

    /// Creates an empty stream.
    public init() {}

    /// Whether any payload was seen.
    public var hasPayload: Bool { !segments.isEmpty }

    /// Adds a segment of this direction.
    public mutating func add(_ segment: TCPSegment) {
        if segment.isSYN, synSequence == nil { synSequence = segment.sequence }
        guard !segment.payload.isEmpty else { return }
        let sequence = segment.isSYN ? segment.sequence &+ 1 : segment.sequence
        segments.append((sequence, segment.payload, segment.timeMicros))
    }

    /// Lays the segments out in stream order.
    public func assemble() -> Result {
        guard let first = segments.first else { return Result(pieces: [], duplicateBytes: 0, outOfOrderSegments: 0) }
        let reference = synSequence.map { $0 &+ 1 } ?? first.sequence
        // Offsets relative to the reference, unwrapped: a segment at most 2 GiB before or after it.
        var placed = segments.enumerated().map { index, segment in
            (offset: Int(Int32(bitPattern: segment.sequence &- reference)), index: index, segment: segment)
        }
        var outOfOrder = 0
        var highest = Int.min
        for item in placed {
            if item.offset < highest { outOfOrder += 1 }
            highest = max(highest, item.offset)
        }
        placed.sort { $0.offset != $1.offset ? $0.offset < $1.offset : $0.index < $1.index }
        // Stream offset 0 is the byte after the SYN, or the lowest sequence seen when the SYN was not captured.
        let base = synSequence == nil ? placed[0].offset : 0
        var pieces: [Piece] = []
        var current: Piece?
        var cursor: Int?  // stream offset of the next byte the current piece needs
        var duplicates = 0
        var latest: UInt64 = 0
        for item in placed {
            let payload = item.segment.payload
            let start = item.offset - base
            let end = start + payload.count
            if end <= 0 { continue }  // before the SYN: not part of this stream
            if let expected = cursor, end <= expected {
                duplicates += payload.count
                continue
            }
            if cursor == nil || start > cursor! {
                if let piece = current { pieces.append(piece) }
                current = Piece(offset: max(start, 0), bytes: [], arrivals: [])
                cursor = max(start, 0)
            }
            let skip = cursor! - start
            if start >= 0 { duplicates += skip }
            latest = max(latest, item.segment.time)
            current!.bytes += payload[skip...]
            current!.arrivals.append((current!.bytes.count, latest))
            cursor = end
        }
        if let piece = current { pieces.append(piece) }
        return Result(pieces: pieces, duplicateBytes: duplicates, outOfOrderSegments: outOfOrder)
    }
}
