/// Client-to-server frames (RFC 6455 §5), decoded in place and incrementally (sans-IO): the caller hands the
/// bytes it just read; the payload of binary messages is unmasked and moved to the front of those same bytes,
/// and control frames come out as values. Frame and message boundaries may fall anywhere between calls.
///
/// Longlink reads the payload of binary messages as one byte stream of its varint-length-prefixed frames, so a
/// fragmented message is simply its fragments' payloads in order. The rules enforced (each failure is a
/// `WebSocketProtocolError` with the close code to answer with):
///
/// - every client frame is masked; reserved bits are zero (no extension is negotiated); the opcode is known
///   (1002);
/// - control frames (close, ping, pong) are final and carry at most 125 bytes, and may arrive between the
///   fragments of a message; a continuation needs an open message, and a new message cannot start inside one
///   (1002);
/// - a text message is refused (1003): the wire format is binary;
/// - a message (all its fragments) is at most `maxMessageSize` bytes (1009);
/// - a close frame's payload is empty or a valid code with a UTF-8 reason (1002, 1007).
///
/// After a close frame nothing more is decoded.
public struct WebSocketFrameDecoder: Sendable {
    /// A control frame received.
    public enum Control: Sendable, Hashable {
        /// Answer with a pong carrying the same payload.
        case ping([UInt8])
        /// An answer to our ping (or unsolicited); ignored.
        case pong([UInt8])
        /// The peer closes: its code (nil when the frame had none) and reason.
        case close(WebSocketCloseCode?, String)
    }

    /// Header bytes of a frame that straddles two reads, or the payload of the control frame being received
    /// (never both: a header is complete before its payload starts); empty, holding no storage, otherwise.
    /// The decoder is per connection, so it is kept small (24 bytes).
    private var partial: [UInt8] = []
    /// Payload bytes of the current frame not received yet.
    private var remaining: UInt32 = 0
    /// Bytes received so far of the current message (all its fragments).
    private var messageSize: UInt32 = 0
    /// The current frame's masking key (its first byte in the low bits), and where in it the next payload byte is.
    private var mask: UInt32 = 0
    private var maskIndex: UInt8 = 0
    /// The current frame's opcode, while its payload is being received.
    private var opcode: UInt8 = 0
    private var flags: Flags

    private struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        /// The current frame is its message's last.
        static let finalFrame = Flags(rawValue: 1)
        /// The current frame's header is done; its payload is being received.
        static let inPayload = Flags(rawValue: 2)
        /// A fragmented data message is open (its first frame was not final).
        static let inMessage = Flags(rawValue: 4)
        /// A close frame was received: nothing more is decoded.
        static let closeReceived = Flags(rawValue: 8)
        /// Decoding a server's frames (a client's side): they must not be masked.
        static let serverFrames = Flags(rawValue: 16)
    }

    /// A close frame was received: nothing more is decoded.
    public var closeReceived: Bool { flags.contains(.closeReceived) }
    private var inPayload: Bool {
        get { flags.contains(.inPayload) }
        set { if newValue { flags.insert(.inPayload) } else { flags.remove(.inPayload) } }
    }
    private var inMessage: Bool {
        get { flags.contains(.inMessage) }
        set { if newValue { flags.insert(.inMessage) } else { flags.remove(.inMessage) } }
    }
    private var finalFrame: Bool {
        get { flags.contains(.finalFrame) }
        set { if newValue { flags.insert(.finalFrame) } else { flags.remove(.finalFrame) } }
    }
    private var serverFrames: Bool { flags.contains(.serverFrames) }

    /// A decoder at the start of a stream of client frames (masked), or of server frames (`serverFrames`, unmasked:
    /// the client side of a connection).
    public init(serverFrames: Bool = false) {
        flags = serverFrames ? [.serverFrames] : []
    }

    /// Decodes `bytes` in place. The payload of binary messages ends up in `bytes[0..<n]` (unmasked, in order)
    /// and `n` is returned; control frames are appended to `controls` in order.
    public mutating func decode(
        _ bytes: UnsafeMutableRawBufferPointer,
        maxMessageSize: Int,
        controls: inout [Control]
    ) throws(WebSocketProtocolError) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        let count = bytes.count
        var read = 0
        var written = 0
        while read < count && !closeReceived {
            if inPayload {
                let take = min(Int(remaining), count - read)
                let key = mask
                let index = maskIndex
                if opcode < 0x8 {
                    Self.unmask(from: base + read, to: base + written, count: take, key: key, index: index)
                    written += take
                } else {
                    let start = partial.count
                    partial.append(contentsOf: UnsafeRawBufferPointer(start: base + read, count: take))
                    partial.withUnsafeMutableBytes { raw in
                        Self.unmask(from: raw.baseAddress! + start, to: raw.baseAddress! + start, count: take, key: key, index: index)
                    }
                }
                maskIndex = UInt8((Int(maskIndex) + take) & 3)
                read += take
                remaining -= UInt32(take)
                if remaining == 0 { try finishFrame(&controls) }
                continue
            }
            // A header: parse it straight from the input when it is all there, else through the partial.
            if partial.isEmpty {
                let available = UnsafeRawBufferPointer(start: base + read, count: count - read)
                if let length = try header(available, maxMessageSize: maxMessageSize) {
                    read += length
                } else {
                    partial.append(contentsOf: available)
                    read = count
                    continue
                }
            } else {
                let previous = partial.count
                let take = min(14 - previous, count - read)
                partial.append(contentsOf: UnsafeRawBufferPointer(start: base + read, count: take))
                let header = partial
                let parsed = try header.withUnsafeBytes { raw in Result { () throws(WebSocketProtocolError) in
                    try self.header(raw, maxMessageSize: maxMessageSize)
                } }.get()
                guard let length = parsed else {
                    read += take
                    continue
                }
                read += length - previous
                partial = []
            }
            if remaining == 0 { try finishFrame(&controls) }
        }
        return written
    }

    /// Parses and checks one frame header at the front of `bytes`; returns its length, or nil when incomplete.
    private mutating func header(_ bytes: UnsafeRawBufferPointer, maxMessageSize: Int) throws(WebSocketProtocolError) -> Int? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[0]
        let second = bytes[1]
        let lengthCode = second & 0x7F
        let lengthBytes = lengthCode == 127 ? 8 : lengthCode == 126 ? 2 : 0
        let masked = second & 0x80 != 0
        let headerLength = 2 + lengthBytes + (masked ? 4 : 0)
        // Check what the first two bytes tell before waiting for the rest.
        guard first & 0x70 == 0 else { throw WebSocketProtocolError(.protocolError, "reserved bits set without an extension") }
        let frameOpcode = first & 0x0F
        let final = first & 0x80 != 0
        switch frameOpcode {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
        default: throw WebSocketProtocolError(.protocolError, "unknown opcode \(frameOpcode)")
        }
        if serverFrames {
            guard !masked else { throw WebSocketProtocolError(.protocolError, "server frames must not be masked") }
        } else {
            guard masked else { throw WebSocketProtocolError(.protocolError, "client frames must be masked") }
        }
        if frameOpcode >= 0x8 {
            guard final else { throw WebSocketProtocolError(.protocolError, "a control frame cannot be fragmented") }
            guard lengthCode <= 125 else { throw WebSocketProtocolError(.protocolError, "a control frame carries at most 125 bytes") }
        } else {
            if frameOpcode == 0x0 {
                guard inMessage else { throw WebSocketProtocolError(.protocolError, "a continuation frame without a message to continue") }
            } else if inMessage {
                throw WebSocketProtocolError(.protocolError, "a new message began inside a fragmented message")
            } else if frameOpcode == 0x1 {
                throw WebSocketProtocolError(.unsupportedData, "text messages are not accepted; send binary messages")
            }
        }
        guard bytes.count >= headerLength else { return nil }
        var length = UInt64(lengthCode)
        if lengthBytes > 0 {
            length = 0
            for index in 0..<lengthBytes { length = length << 8 | UInt64(bytes[2 + index]) }
            guard length >> 63 == 0 else { throw WebSocketProtocolError(.protocolError, "the most significant bit of a 64-bit length is set") }
        }
        if frameOpcode < 0x8 {
            let limit = UInt64(min(maxMessageSize, Int(UInt32.max)))
            guard UInt64(messageSize) + length <= limit else {
                throw WebSocketProtocolError(.messageTooBig, "a message over \(limit) bytes")
            }
            messageSize += UInt32(length)
            inMessage = !final
        }
        let key = 2 + lengthBytes
        mask = masked ? UInt32(bytes[key]) | UInt32(bytes[key + 1]) << 8 | UInt32(bytes[key + 2]) << 16 | UInt32(bytes[key + 3]) << 24 : 0
        maskIndex = 0
        opcode = frameOpcode
        finalFrame = final
        // A data frame fits the message limit (checked above); a control frame carries at most 125 bytes.
        remaining = UInt32(length)
        inPayload = length > 0
        return headerLength
    }

    /// The current frame's payload is complete.
    private mutating func finishFrame(_ controls: inout [Control]) throws(WebSocketProtocolError) {
        inPayload = false
        if opcode < 0x8 {
            if finalFrame { messageSize = 0 }
            return
        }
        let payload = partial
        partial = []
        switch opcode {
        case 0x9: controls.append(.ping(payload))
        case 0xA: controls.append(.pong(payload))
        default:
            flags.insert(.closeReceived)
            controls.append(try Self.close(payload))
        }
    }

    /// Checks a close frame's payload: empty, or a code a peer may send followed by a UTF-8 reason.
    static func close(_ payload: [UInt8]) throws(WebSocketProtocolError) -> Control {
        if payload.isEmpty { return .close(nil, "") }
        guard payload.count >= 2 else { throw WebSocketProtocolError(.protocolError, "a close frame with a one-byte payload") }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.mayBeSent else { throw WebSocketProtocolError(.protocolError, "close code \(code) may not be sent") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketProtocolError(.invalidPayload, "a close reason that is not UTF-8")
        }
        return .close(code, reason)
    }

    /// XORs `count` bytes with the mask, from `source` to `target` (`target` ≤ `source`: the copy runs forward,
    /// so unmasking in place and compacting towards the front are both safe).
    private static func unmask(
        from source: UnsafeMutableRawPointer,
        to target: UnsafeMutableRawPointer,
        count: Int,
        key mask: UInt32,
        index: UInt8
    ) {
        guard count > 0 else { return }
        if mask == 0 {
            // An unmasked (server) frame: only the move towards the front.
            if source != target { target.copyMemory(from: source, byteCount: count) }
            return
        }
        let shift = UInt32(index) * 8
        // The key rotated so that its low byte applies to the first byte here.
        let rotated = shift == 0 ? mask : mask >> shift | mask << (32 - shift)
        var offset = 0
        if count >= 16 {
            let word = UInt64(rotated) | UInt64(rotated) << 32
            while offset + 8 <= count {
                let value = UInt64(littleEndian: (source + offset).loadUnaligned(as: UInt64.self))
                (target + offset).storeBytes(of: (value ^ word).littleEndian, as: UInt64.self)
                offset += 8
            }
        }
        while offset < count {
            let key = UInt8(truncatingIfNeeded: rotated >> (UInt32(offset & 3) * 8))
            (target + offset).storeBytes(of: (source + offset).load(as: UInt8.self) ^ key, as: UInt8.self)
            offset += 1
        }
    }
}
