public import LonglinkCore
public import LonglinkLoop

/// `Transport` for the client side of a WebSocket (the load generator's `bench --transport ws`): a decorator over
/// an outgoing plain or TLS transport. `handshake()` finishes the inner connect (and TLS), sends the upgrade
/// request with a random key and the `longlink.v1.protobuf` sub-protocol, and checks the `101` and its accept hash.
/// Then `write` sends what the connection queued as one masked binary message per call (client frames must be
/// masked, so nothing can be shared), and `read` strips the server's frame headers in place, answers pings and
/// reads a close frame as the end of the stream.
public final class WebSocketClientTransport: Transport {
    private enum State: UInt8 { case innerHandshake, writingRequest, readingResponse, open, peerClosed, closed }

    private let inner: any Transport
    private let host: String
    private let path: String
    private var state: State = .innerHandshake
    /// Whole frames (and the request) on their way to the inner transport, in order.
    private var wire = OutboundQueue()
    /// The response head read so far, then the frame bytes that arrived behind it.
    private var response = ByteBuffer()
    private var early: [UInt8] = []
    private var key = ""
    private var decoder = WebSocketFrameDecoder(serverFrames: true)
    private var random: MaskGenerator
    private var drained = false
    /// The largest message `write` makes; a longer queue goes out in several messages.
    private static let maxMessage = 64 * 1024

    /// Wraps `inner` (connecting) for an upgrade to `path` on `host` (the `Host` header, `host:port`).
    public init(inner: any Transport, host: String, path: String) {
        self.inner = inner
        self.host = host
        self.path = path
        var system = SystemRandomNumberGenerator()
        random = MaskGenerator(seed: system.next())
    }

    public var fd: CInt { inner.fd }
    /// The TLS underneath (`wss`): whether it resumed a session.
    public var tlsSessionResumed: Bool? { inner.tlsSessionResumed }
    public var lastReadDrained: Bool { drained }

    public var interest: SelectorEvent {
        switch state {
        case .innerHandshake: return inner.interest
        case .writingRequest: return inner.interest.union(.write)
        case .readingResponse: return inner.interest.union(.read)
        case .open, .peerClosed: return wire.isEmpty && early.isEmpty ? inner.interest : inner.interest.union(.write)
        case .closed: return []
        }
    }

    public func handshake() throws(TransportError) -> IOResult<Void> {
        switch state {
        case .open, .peerClosed: return .processed(())
        case .closed: throw .closed
        case .innerHandshake:
            guard case .processed = try inner.handshake() else { return .wouldBlock }
            var nonce: [UInt8] = []
            for _ in 0..<2 { withUnsafeBytes(of: random.next()) { nonce += $0 } }
            key = Base64.encode(nonce)
            wire.append(Array(
                ("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(WebSocketUpgradePolicy.subprotocol)\r\n\r\n").utf8
            ))
            state = .writingRequest
            return try handshake()
        case .writingRequest:
            _ = try inner.write(&wire)
            guard wire.isEmpty else { return .wouldBlock }
            state = .readingResponse
            return try handshake()
        case .readingResponse:
            while true {
                switch try inner.read(into: &response) {
                case .wouldBlock: return .wouldBlock
                case .processed(0): throw TransportError(kind: .closed, reason: "the server closed during the WebSocket upgrade")
                case .processed:
                    guard let end = response.withReadableBytes({ WebSocketHandshakeParser.headEnd($0) }) else {
                        guard response.readableBytes <= 16 * 1024 else {
                            throw TransportError(kind: .protocolFailure, reason: "WebSocket upgrade: response head over 16 KiB")
                        }
                        continue
                    }
                    let fields = response.withReadableBytes { Self.responseFields(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
                    try check(fields)
                    response.moveReaderIndex(forwardBy: end)
                    early = response.readableArray
                    response = ByteBuffer()
                    state = .open
                    return .processed(())
                }
            }
        }
    }

    /// The status line (under `""`) and the header fields of a response head, names lower-cased.
    static func responseFields(_ head: UnsafeRawBufferPointer) -> [String: String] {
        var fields: [String: String] = [:]
        var start = 0
        var first = true
        while start < head.count {
            var end = start
            while end + 1 < head.count && !(head[end] == 13 && head[end + 1] == 10) { end += 1 }
            if end + 1 >= head.count { end = head.count }
            let line = UnsafeRawBufferPointer(rebasing: head[start..<end])
            if first {
                fields[""] = WebSocketHandshakeParser.asciiString(line, lowercased: false)
                first = false
            } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                var valueStart = colon + 1
                while valueStart < line.count && line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
                var valueEnd = line.count
                while valueEnd > valueStart && (line[valueEnd - 1] == UInt8(ascii: " ") || line[valueEnd - 1] == UInt8(ascii: "\r")) { valueEnd -= 1 }
                let name = WebSocketHandshakeParser.asciiString(UnsafeRawBufferPointer(rebasing: line[0..<colon]), lowercased: true)
                fields[name] = WebSocketHandshakeParser.asciiString(UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd]), lowercased: false)
            }
            start = end + 2
        }
        return fields
    }

    /// Checks the upgrade answer: `101`, the accept hash of our key, our sub-protocol.
    private func check(_ fields: [String: String]) throws(TransportError) {
        let status = fields[""] ?? ""
        guard status.hasPrefix("HTTP/1.1 101") else {
            throw TransportError(kind: .protocolFailure, reason: "WebSocket upgrade refused: \(status)")
        }
        guard fields["sec-websocket-accept"] == WebSocketAcceptance.accept(forKey: key) else {
            throw TransportError(kind: .protocolFailure, reason: "WebSocket upgrade: wrong Sec-WebSocket-Accept")
        }
        guard fields["sec-websocket-protocol"] == WebSocketUpgradePolicy.subprotocol else {
            throw TransportError(kind: .protocolFailure, reason: "WebSocket upgrade: the server chose no longlink sub-protocol")
        }
    }

    public func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int> {
        switch state {
        case .open: break
        case .peerClosed: return .processed(0)
        default: throw .closed
        }
        _ = try inner.write(&wire)
        let count: Int
        if !early.isEmpty {
            count = early.count
            early.withUnsafeBytes { buffer.writeBytes($0) }
            early = []
            drained = false
        } else {
            switch try inner.read(into: &buffer) {
            case .wouldBlock:
                drained = true
                return .wouldBlock
            case .processed(0):
                return .processed(0)
            case .processed(let read):
                count = read
                drained = inner.lastReadDrained
            }
        }
        var controls: [WebSocketFrameDecoder.Control] = []
        var failure: WebSocketProtocolError?
        var kept = 0
        buffer.rewriteReadableTail(count) { raw in
            do throws(WebSocketProtocolError) {
                kept = try decoder.decode(raw, maxMessageSize: Int.max, controls: &controls)
            } catch {
                failure = error
            }
            return kept
        }
        if let failure { throw TransportError(kind: .protocolFailure, reason: "WebSocket: \(failure)") }
        for control in controls {
            switch control {
            case .ping(let payload): wire.append(maskedFrame(.pong, payload))
            case .pong: break
            case .close(let code, _):
                wire.append(maskedFrame(.close, code.map { [UInt8($0.rawValue >> 8), UInt8(truncatingIfNeeded: $0.rawValue)] } ?? []))
                state = .peerClosed
            }
        }
        if !wire.isEmpty { _ = try inner.write(&wire) }
        if state == .peerClosed {
            drained = false
            return .processed(kept)
        }
        return kept > 0 ? .processed(kept) : .wouldBlock
    }

    public func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int> {
        switch state {
        case .open, .peerClosed: break
        default: throw .closed
        }
        // Finish the frames already on their way first: they are masked and whole, so they go out unchanged.
        if !wire.isEmpty {
            _ = try inner.write(&wire)
            guard wire.isEmpty else { return .wouldBlock }
        }
        let count = min(queue.queuedBytes, Self.maxMessage)
        guard count > 0 else { return .processed(0) }
        let header = WebSocketFrameEncoder.headerLength(count) + 4
        let mask = random.nextMask()
        let frame = [UInt8](unsafeUninitializedCapacity: header + count) { out, initialized in
            WebSocketFrameEncoder.writeHeader(.binary, length: count, into: out)
            out[1] |= 0x80
            let keyAt = header - 4
            for index in 0..<4 { out[keyAt + index] = UInt8(truncatingIfNeeded: mask >> (8 * UInt32(index))) }
            _ = queue.copyFront(into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(out)[header..<(header + count)]))
            for index in 0..<count { out[header + index] ^= UInt8(truncatingIfNeeded: mask >> (8 * UInt32(index & 3))) }
            initialized = header + count
        }
        queue.consume(count)
        wire.append(frame)
        _ = try inner.write(&wire)
        return .processed(count)
    }

    public func close() {
        guard state != .closed else { return }
        state = .closed
        wire.removeAll()
        inner.close()
    }

    /// A final masked control or data frame.
    private func maskedFrame(_ opcode: WebSocketFrameEncoder.Opcode, _ payload: [UInt8]) -> [UInt8] {
        var frame = WebSocketFrameEncoder.frame(opcode, payload)
        let header = frame.count - payload.count
        let mask = random.nextMask()
        frame[1] |= 0x80
        let key = (0..<4).map { UInt8(truncatingIfNeeded: mask >> (8 * UInt32($0))) }
        frame.insert(contentsOf: key, at: header)
        for index in 0..<payload.count { frame[header + 4 + index] ^= key[index & 3] }
        return frame
    }
}

/// Masking keys from xorshift64*, seeded per connection from the system's random source (RFC 6455 §10.3 wants
/// keys a page's script cannot predict; one `getrandom` per connection instead of one per frame).
struct MaskGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func nextMask() -> UInt32 { UInt32(truncatingIfNeeded: next() >> 16) }
}

/// Makes `WebSocketClientTransport`s over another factory's outgoing transports (plain TCP or TLS).
public struct WebSocketClientTransportFactory: TransportFactory {
    /// The byte stream underneath.
    public let inner: any TransportFactory
    /// The `Host` header (`host:port`).
    public let host: String
    /// The endpoint's path.
    public let path: String

    public init(inner: any TransportFactory, host: String, path: String = "/longlink") {
        self.inner = inner
        self.host = host
        self.path = path
    }

    public var isEncrypted: Bool { inner.isEncrypted }
    public var name: String { inner.isEncrypted ? "wss" : "ws" }

    public func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport {
        guard case .connecting = role else {
            throw TransportError(kind: .protocolFailure, reason: "the WebSocket client transport is for outgoing connections")
        }
        return WebSocketClientTransport(inner: try inner.makeTransport(fd: fd, role: role), host: host, path: path)
    }
}

@available(*, unavailable)
extension WebSocketClientTransport: Sendable {}
