import LonglinkWebSocket

/// Fuzz target: what a browser's side of a connection can send before and after the upgrade. The first input
/// byte picks the part: odd, the upgrade request head (parsed, then judged by the default policy); even, client
/// frames, decoded twice — all at once and in chunks whose sizes come from the second byte — which must agree
/// exactly: the same binary payload and control frames, or the same error. Frame and message boundaries may fall
/// anywhere between reads, so any difference is a decoder bug.
enum WebSocketFuzz {
    static let maxMessageSize = 4_096
    static let policy = WebSocketUpgradePolicy()

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let selector = input.first else { return }
        let body = UnsafeRawBufferPointer(rebasing: input.dropFirst())
        if selector & 1 == 1 {
            upgrade(body)
        } else {
            frames(body, chunkSeed: body.first ?? 0)
        }
    }

    static func upgrade(_ head: UnsafeRawBufferPointer) {
        switch WebSocketHandshakeParser.parse(head, maxHeadSize: 1_024) {
        case .incomplete:
            precondition(head.count <= 1_024, "an incomplete head over the limit must be refused")
        case .complete(let request, let headLength):
            precondition(headLength <= head.count && headLength <= 1_024, "head length \(headLength) of \(head.count)")
            if case .success(let acceptance) = policy.evaluate(request) {
                precondition(!acceptance.accept.isEmpty, "an accepted upgrade has an accept hash")
            }
        case .refused(let refusal):
            precondition((400..<500).contains(refusal.status), "a refusal is a 4xx: \(refusal.status)")
        }
    }

    /// What a decoder made of a byte stream.
    struct Outcome: Equatable {
        var payload: [UInt8] = []
        var controls: [WebSocketFrameDecoder.Control] = []
        var error: WebSocketProtocolError?
    }

    static func frames(_ stream: UnsafeRawBufferPointer, chunkSeed: UInt8) {
        let whole = decode(stream, chunk: stream.count)
        let chunked = decode(stream, chunk: Int(chunkSeed % 17) + 1)
        if whole.error == nil && chunked.error == nil {
            precondition(whole == chunked, "chunking changed the decoding: \(whole) vs \(chunked)")
        } else {
            precondition(whole.error == chunked.error, "chunking changed the error: \(String(describing: whole.error)) vs \(String(describing: chunked.error))")
        }
        precondition(whole.payload.count <= stream.count, "more payload than input")
    }

    static func decode(_ stream: UnsafeRawBufferPointer, chunk: Int) -> Outcome {
        var decoder = WebSocketFrameDecoder()
        var outcome = Outcome()
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + max(1, chunk))
            var bytes = Array(stream[offset..<end])
            offset = end
            do {
                let written = try bytes.withUnsafeMutableBytes { raw throws(WebSocketProtocolError) in
                    try decoder.decode(raw, maxMessageSize: maxMessageSize, controls: &outcome.controls)
                }
                outcome.payload += bytes[0..<written]
            } catch let error as WebSocketProtocolError {
                outcome.error = error
                return outcome
            } catch {
                preconditionFailure("the decoder throws only WebSocketProtocolError: \(error)")
            }
            if decoder.closeReceived { break }
        }
        return outcome
    }

    /// Seeds: a good upgrade; masked binary frames, a fragmented message with a ping between its parts, a close;
    /// a text frame, an unmasked frame.
    static func seeds() -> [[UInt8]] {
        let upgrade = Array(
            ("GET /longlink HTTP/1.1\r\nHost: 127.0.0.1:7071\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: longlink.v1.protobuf\r\n\r\n").utf8
        )
        let key: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        func masked(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
            var frame: [UInt8] = [first]
            if payload.count < 126 {
                frame.append(0x80 | UInt8(payload.count))
            } else {
                frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            frame += key
            for (index, byte) in payload.enumerated() { frame.append(byte ^ key[index & 3]) }
            return frame
        }
        let binary = masked(0x82, [0x05, 0x0A, 0x03, 0x61, 0x62, 0x63])
        let fragmented = masked(0x02, [1, 2, 3]) + masked(0x89, [9]) + masked(0x80, [4, 5])
        let long = masked(0x82, [UInt8](repeating: 0x42, count: 300))
        let close = masked(0x88, [0x03, 0xE8] + Array("bye".utf8))
        let text = masked(0x81, Array("hi".utf8))
        let unmasked: [UInt8] = [0x82, 0x02, 0x01, 0x02]
        return [
            [1] + upgrade,
            [0, 3] + binary + binary,
            [0, 1] + fragmented + close + binary,
            [0, 7] + long,
            [0, 2] + text,
            [0, 0] + unmasked,
        ]
    }
}
