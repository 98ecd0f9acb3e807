public import LonglinkCore

/// Something wrong with a stream of frames, at a byte offset.
public struct StreamIssue: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Hashable, Sendable {
        /// The length prefix is not a usable frame length (bad varint, zero, above the limit).
        case badPrefix = "bad_prefix"
        /// A length prefix announced a body that is not a protobuf message at all (garbage in the stream).
        case notAFrame = "not_a_frame"
        /// The input ends inside a frame.
        case truncated
        /// Decoding found a plausible frame boundary again after a bad prefix.
        case resynchronised
        /// Decoding gave up on the rest of the input.
        case stopped
        /// Bytes are missing from the stream (not captured).
        case gap
    }

    /// Offset in the input the issue is about.
    public var byteOffset: Int
    /// What happened.
    public var kind: Kind
    /// A sentence for people.
    public var message: String

    /// Creates an issue.
    public init(byteOffset: Int, kind: Kind, message: String) {
        self.byteOffset = byteOffset
        self.kind = kind
        self.message = message
    }

    public var description: String { "byte \(byteOffset): \(message)" }
}

/// One step of decoding a stream: a frame, or an issue.
public enum StreamEvent: Hashable, Sendable {
    /// A frame (decoded, or malformed with its raw fields).
    case frame(DecodedFrame)
    /// A problem with the framing.
    case issue(StreamIssue)
}

/// Splits a byte stream into length-prefixed frames (with `FrameReader`, as the gateway does) and decodes each.
///
/// Rules when the bytes are bad:
/// - a body the codec refuses is reported as a malformed frame and decoding goes on with the next frame, since
///   the length prefix was sound;
/// - a bad length prefix (not a varint, zero, above `maxFrameSize`) loses the framing: with `resynchronise`,
///   decoding scans forward for the first offset where a plausible frame starts (a valid prefix, a body whose
///   first field is a frame kind and that the codec decodes, followed by the end of input or another valid
///   prefix), reports how many bytes it skipped and goes on; without it, or when no such offset exists,
///   decoding stops with a message;
/// - a prefix whose body is not a protobuf message at all is garbage, not a frame: reported, and decoding
///   resynchronises inside it when a plausible frame starts there;
/// - input that ends inside a frame is reported as truncated; decoding resynchronises after it when a
///   plausible frame follows (garbage that looked like a long prefix), else stops.
/// It never traps on any input.
public struct FrameStreamDecoder: Sendable {
    /// Decodes each body.
    public var bodyDecoder: FrameBodyDecoder
    /// Frame size limit for prefixes.
    public var reader: FrameReader
    /// Whether to look for the next frame after a bad prefix (true) or stop (false).
    public var resynchronise: Bool

    /// Creates a decoder.
    public init(
        direction: DirectionChoice = .auto,
        maxFrameSize: Int = FrameReader.defaultMaxFrameSize,
        resynchronise: Bool = true
    ) {
        self.bodyDecoder = FrameBodyDecoder(direction: direction)
        self.reader = FrameReader(maxFrameSize: maxFrameSize)
        self.resynchronise = resynchronise
    }

    /// Decodes all of `bytes`. Offsets in the events are `baseOffset` plus the index in `bytes`. When the bytes
    /// do not start at a frame boundary (`synchronised` false: after a gap in a capture), decoding starts at the
    /// first plausible frame.
    public func decode(_ bytes: [UInt8], baseOffset: Int = 0, synchronised: Bool = true) -> [StreamEvent] {
        guard !synchronised else { return decodeFromBoundary(bytes, baseOffset: baseOffset) }
        guard let start = nextBoundary(in: bytes, after: -1) else {
            return [.issue(StreamIssue(
                byteOffset: baseOffset, kind: .stopped,
                message: "stopped: no frame boundary found in the \(bytes.count) bytes after the gap"))]
        }
        var events: [StreamEvent] = []
        if start > 0 {
            events.append(.issue(StreamIssue(
                byteOffset: baseOffset + start, kind: .resynchronised,
                message: "resynchronised: skipped \(start) bytes from byte \(baseOffset) after the gap")))
        }
        return events + decodeFromBoundary(Array(bytes[start...]), baseOffset: baseOffset + start)
    }

    private func decodeFromBoundary(_ bytes: [UInt8], baseOffset: Int) -> [StreamEvent] {
        var events: [StreamEvent] = []
        var buffer = ByteBuffer(bytes: bytes)
        while buffer.readableBytes > 0 {
            // Offsets from the unread byte count: ByteBuffer resets its indices once everything is read.
            let start = bytes.count - buffer.readableBytes
            let body: [UInt8]?
            do throws(FrameError) {
                body = try reader.nextFrame(in: &buffer) { Array($0) }
            } catch {
                events.append(.issue(badPrefix(error, at: baseOffset + start)))
                guard resynchronise else {
                    events.append(.issue(StreamIssue(
                        byteOffset: baseOffset + start, kind: .stopped,
                        message: "stopped at the first framing error (resynchronisation is off)")))
                    return events
                }
                guard let next = nextBoundary(in: bytes, after: start) else {
                    events.append(.issue(StreamIssue(
                        byteOffset: baseOffset + start, kind: .stopped,
                        message: "stopped: no frame boundary found in the remaining \(bytes.count - start) bytes")))
                    return events
                }
                events.append(resynchronised(at: next, from: start, baseOffset: baseOffset))
                buffer.moveReaderIndex(forwardBy: next - start)
                continue
            }
            guard let body else {
                events.append(.issue(truncation(bytes, at: start, baseOffset: baseOffset)))
                // Garbage can look like the prefix of a frame longer than the rest of the input.
                guard resynchronise, let next = nextBoundary(in: bytes, after: start) else { return events }
                events.append(resynchronised(at: next, from: start, baseOffset: baseOffset))
                buffer = ByteBuffer(bytes: bytes[next...])
                continue
            }
            let end = bytes.count - buffer.readableBytes
            // A body that is not even a protobuf message means the prefix was not one either: look for a frame
            // starting inside it. (A message the codec refuses keeps the framing: reported as malformed.)
            if resynchronise, case .failure(let error) = Result(catching: { () throws(RawWireError) in try RawWire.parse(body) }),
                let next = nextBoundary(in: bytes, after: start), next < end
            {
                events.append(.issue(StreamIssue(
                    byteOffset: baseOffset + start, kind: .notAFrame,
                    message: "not a frame: the \(body.count)-byte body is not a protobuf message (body \(error))")))
                events.append(resynchronised(at: next, from: start, baseOffset: baseOffset))
                buffer = ByteBuffer(bytes: bytes[next...])
                continue
            }
            let prefixLength = end - start - body.count
            events.append(.frame(bodyDecoder.decode(body: body, byteOffset: baseOffset + start, prefixLength: prefixLength)))
        }
        return events
    }

    private func resynchronised(at next: Int, from start: Int, baseOffset: Int) -> StreamEvent {
        .issue(StreamIssue(
            byteOffset: baseOffset + next, kind: .resynchronised,
            message: "resynchronised: skipped \(next - start) bytes from byte \(baseOffset + start)"))
    }

    private func badPrefix(_ error: FrameError, at offset: Int) -> StreamIssue {
        let message: String
        switch error {
        case .varintOverflow: message = "bad length prefix: varint longer than 10 bytes or above 2^64"
        case .empty: message = "empty frame: length prefix is 0"
        case .oversized(let length, let limit):
            message = "oversized frame: length prefix announces \(length) bytes, above the limit of \(limit)"
        default: message = "bad length prefix: \(FrameBodyDecoder.describe(error))"
        }
        return StreamIssue(byteOffset: offset, kind: .badPrefix, message: message)
    }

    private func truncation(_ bytes: [UInt8], at start: Int, baseOffset: Int) -> StreamIssue {
        var index = start
        guard case .success(let length)? = RawWire.varint(bytes, at: &index, end: bytes.count) else {
            return StreamIssue(
                byteOffset: baseOffset + start, kind: .truncated,
                message: "truncated length prefix: the input ends inside the varint")
        }
        return StreamIssue(
            byteOffset: baseOffset + start, kind: .truncated,
            message: "truncated frame: length prefix announces \(length) bytes, only \(bytes.count - index) remain")
    }

    /// The first offset after `start` where a plausible frame begins, or nil.
    func nextBoundary(in bytes: [UInt8], after start: Int) -> Int? {
        var candidate = start + 1
        while candidate < bytes.count {
            if let end = plausibleFrame(in: bytes, at: candidate) {
                if end == bytes.count || validPrefix(in: bytes, at: end) { return candidate }
            }
            candidate += 1
        }
        return nil
    }

    /// The end offset of a plausible frame starting at `offset`, or nil.
    private func plausibleFrame(in bytes: [UInt8], at offset: Int) -> Int? {
        var index = offset
        guard case .success(let length)? = RawWire.varint(bytes, at: &index, end: bytes.count),
            length > 0, length <= UInt64(reader.maxFrameSize), length <= UInt64(bytes.count - index)
        else { return nil }
        let end = index + Int(length)
        guard let fields = try? RawWire.parse(Array(bytes[index..<end])), let first = fields.first,
            first.value.wireType == 2
        else { return nil }
        let kinds: ClosedRange<Int>
        switch bodyDecoder.direction {
        case .server: kinds = 1...11
        case .client: kinds = 12...19
        case .auto: kinds = 1...19
        }
        guard kinds.contains(first.number) else { return nil }
        // Nested messages often look like frames too (a push's fields start with field 1): only a body the
        // codec accepts counts.
        let frame = bodyDecoder.decode(body: Array(bytes[index..<end]), byteOffset: offset, prefixLength: index - offset)
        return frame.isMalformed ? nil : end
    }

    private func validPrefix(in bytes: [UInt8], at offset: Int) -> Bool {
        var index = offset
        switch RawWire.varint(bytes, at: &index, end: bytes.count) {
        case .success(let length)?: return length > 0 && length <= UInt64(reader.maxFrameSize)
        case nil: return true  // the input ends inside the next prefix: nothing contradicts the boundary
        case .failure?: return false
        }
    }
}
