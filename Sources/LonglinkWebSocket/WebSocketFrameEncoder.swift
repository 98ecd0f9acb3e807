public import LonglinkLoop

/// Server-to-client frames (RFC 6455 §5.2): never masked, so the header of a message depends only on its opcode
/// and length, and a push framed once can be queued for every subscriber.
public enum WebSocketFrameEncoder {
    /// Frame opcodes.
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    }

    /// Header bytes for a final frame of `length` payload bytes (2, 4 or 10 bytes).
    public static func headerLength(_ length: Int) -> Int {
        length <= 125 ? 2 : length <= 0xFFFF ? 4 : 10
    }

    /// One final, unmasked frame of `opcode` carrying `payload`.
    public static func frame(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8] {
        let header = headerLength(payload.count)
        return [UInt8](unsafeUninitializedCapacity: header + payload.count) { out, initialized in
            writeHeader(opcode, length: payload.count, into: out)
            payload.withUnsafeBufferPointer { source in
                if let base = source.baseAddress, !source.isEmpty { (out.baseAddress! + header).initialize(from: base, count: source.count) }
            }
            initialized = header + payload.count
        }
    }

    /// Writes the header of a final frame into the front of `out` (which has room for it).
    static func writeHeader(_ opcode: Opcode, length: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        out[0] = 0x80 | opcode.rawValue
        if length <= 125 {
            out[1] = UInt8(length)
        } else if length <= 0xFFFF {
            out[1] = 126
            out[2] = UInt8(length >> 8)
            out[3] = UInt8(truncatingIfNeeded: length)
        } else {
            out[1] = 127
            let value = UInt64(length)
            for index in 0..<8 { out[2 + index] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(index))) }
        }
    }

    /// A close frame with `code` and `reason` (cut to the 123 bytes a control frame leaves, on a character
    /// boundary).
    public static func close(_ code: UInt16, reason: String) -> [UInt8] {
        var payload = [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]
        var used = 0
        for character in reason {
            let bytes = character.utf8.count
            if used + bytes > 123 { break }
            payload.append(contentsOf: character.utf8)
            used += bytes
        }
        return frame(.close, payload)
    }
}

/// Wraps each frame in one binary message: what a WebSocket connection's outbound queue holds.
public enum WebSocketMessageFramer: MessageFramer {
    public static func message(carrying frame: [UInt8]) -> [UInt8] {
        WebSocketFrameEncoder.frame(.binary, frame)
    }

    /// A close frame whose code is the disconnect's number (3000–3999; anything else becomes 1011).
    public static func closeMessage(code: UInt32, reason: String) -> [UInt8] {
        let closeCode = (3000...4999).contains(code) ? UInt16(code) : WebSocketCloseCode.internalError.rawValue
        return WebSocketFrameEncoder.close(closeCode, reason: reason)
    }
}
