/// A Longlink session over WebSocket in a capture (`serve --ws-listen`): the client's stream starts with an HTTP
/// upgrade request, the server's with `101 Switching Protocols`, and after the heads each direction is a series of
/// WebSocket frames whose binary payloads, in order, are the usual Longlink frame stream. `unwrap` turns one
/// reassembled direction into that stream (client payloads unmasked), keeping each byte's capture time, so the
/// frame decoder and the timeline work as for plain TCP. Stream offsets in the output are Longlink-stream offsets.
enum WebSocketUnwrap {
    /// What one direction held besides the Longlink bytes.
    struct Unwrapped {
        /// The Longlink stream, as contiguous pieces (a capture gap ends the unwrapping: frame boundaries are lost).
        var pieces: [TCPStreamAssembler.Piece]
        /// Close frames seen: (code, reason), with their capture time.
        var closes: [(code: UInt16?, reason: String, timeMicros: UInt64)]
        /// Why unwrapping stopped early, if it did.
        var problem: String?
    }

    /// Whether a client stream begins with a WebSocket upgrade request.
    static func isUpgrade(_ bytes: [UInt8]) -> Bool {
        guard bytes.starts(with: Array("GET ".utf8)), let end = headEnd(bytes) else { return false }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        return head.contains("\r\nupgrade: websocket") || head.contains("\r\nupgrade:websocket")
    }

    /// The Longlink bytes one direction carried: its HTTP head skipped, frame headers removed, payloads unmasked.
    static func unwrap(_ result: TCPStreamAssembler.Result) -> Unwrapped {
        var unwrapped = Unwrapped(pieces: [], closes: [], problem: nil)
        guard let first = result.pieces.first, first.offset == 0 else {
            unwrapped.problem = "the capture misses the start of the WebSocket stream"
            return unwrapped
        }
        if result.pieces.count > 1 { unwrapped.problem = "a gap in the capture: WebSocket frames after it are not decoded" }
        let bytes = first.bytes
        guard let head = headEnd(bytes) else {
            unwrapped.problem = "the HTTP upgrade head is incomplete"
            return unwrapped
        }
        var output: [UInt8] = []
        var arrivals: [(end: Int, timeMicros: UInt64)] = []
        var at = head
        while at + 2 <= bytes.count {
            let opcode = bytes[at] & 0x0F
            let masked = bytes[at + 1] & 0x80 != 0
            var length = Int(bytes[at + 1] & 0x7F)
            var cursor = at + 2
            if length >= 126 {
                let size = length == 126 ? 2 : 8
                guard cursor + size <= bytes.count else { break }
                length = 0
                for index in 0..<size { length = length << 8 | Int(bytes[cursor + index]) }
                cursor += size
            }
            var key: [UInt8] = [0, 0, 0, 0]
            if masked {
                guard cursor + 4 <= bytes.count else { break }
                key = Array(bytes[cursor..<(cursor + 4)])
                cursor += 4
            }
            guard length >= 0, cursor + length <= bytes.count else { break }
            let payload = (0..<length).map { bytes[cursor + $0] ^ key[$0 & 3] }
            let time = first.arrivalTime(through: cursor + length)
            switch opcode {
            case 0x0, 0x2:
                output += payload
                arrivals.append((end: output.count, timeMicros: time))
            case 0x8:
                let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
                let reason = payload.count > 2 ? String(decoding: payload[2...], as: UTF8.self) : ""
                unwrapped.closes.append((code, reason, time))
            default:
                break  // text frames (refused by the gateway), pings, pongs
            }
            at = cursor + length
        }
        if !output.isEmpty { unwrapped.pieces = [TCPStreamAssembler.Piece(offset: 0, bytes: output, arrivals: arrivals)] }
        return unwrapped
    }

    /// The offset just past `\r\n\r\n`.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }
}
