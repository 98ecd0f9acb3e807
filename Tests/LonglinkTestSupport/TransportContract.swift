import Glibc
import LonglinkCore
public import LonglinkLoop
public import Testing

/// How the transport contract gets transports of one kind (tcp, tls, ws, wss): a factory for the accepted side and
/// one for the connecting side, and optionally a client the server must refuse in the handshake.
public struct TransportContractFactory: Sendable, CustomTestStringConvertible {
    /// A name for test output.
    public var name: String
    /// Makes the server side.
    public var server: any TransportFactory
    /// Makes the client side.
    public var client: any TransportFactory
    /// A client whose handshake with `server` must fail (TLS: it does not trust the server's CA; WebSocket: it asks
    /// for another path); nil when the kind has no such thing (plain TCP).
    public var refusedClient: (any TransportFactory)?
    /// Whether the stream's own protocol ends with a closing message, so that a bare TCP half-close (FIN) from the
    /// peer is a truncation and must fail the read with a `protocolFailure` instead of reading as the end (TLS
    /// without `close_notify`).
    public var halfCloseIsTruncation: Bool

    public init(
        name: String,
        server: any TransportFactory,
        client: any TransportFactory,
        refusedClient: (any TransportFactory)? = nil,
        halfCloseIsTruncation: Bool = false
    ) {
        self.name = name
        self.server = server
        self.client = client
        self.refusedClient = refusedClient
        self.halfCloseIsTruncation = halfCloseIsTruncation
    }

    public var testDescription: String { name }

    /// Connects a client to a server of this kind.
    public func pair(sendBuffer: Int? = nil, receiveBuffer: Int? = nil) throws -> TransportPair {
        try TransportPair(server: server, client: client, sendBuffer: sendBuffer, receiveBuffer: receiveBuffer)
    }
}

/// One check of `TransportContract`, runnable as a parameterized test argument.
public struct TransportContractCheck: Sendable, CustomTestStringConvertible {
    /// What the check verifies, as a sentence.
    public var name: String
    /// Runs the check against transports from the factory.
    public var run: @Sendable (TransportContractFactory) throws -> Void

    public init(_ name: String, run: @escaping @Sendable (TransportContractFactory) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var testDescription: String { name }
}

/// The behaviour every `Transport` must show, on real loopback sockets (`TransportPair`), run by each
/// implementation's tests:
///
/// ```swift
/// @Test("keeps the Transport contract", arguments: TransportContract.checks)
/// func contract(_ check: TransportContractCheck) throws { try check.run(.plain) }
/// ```
///
/// The server side queues frames as the gateway does (wrapped by the transport's `messageFramer`, if any); the
/// client side queues raw bytes. Each side must read back exactly the byte stream the other queued.
public enum TransportContract {
    /// Every check.
    public static let checks: [TransportContractCheck] = [
        TransportContractCheck("the handshake completes on both sides and a frame crosses each way", run: handshakeAndFrames),
        TransportContractCheck("a 256 KiB frame crosses each way intact through partial writes and reads under 4 KiB socket buffers", run: largeFrames),
        TransportContractCheck("frames written in 1-7 byte pieces, and hundreds queued at once, arrive as one stream in order", run: splitFrames),
        TransportContractCheck("after the peer closes, what it sent arrives and then the end of the stream", run: peerCloses),
        TransportContractCheck("after the peer's half-close the stream ends for reading and still carries data the other way", run: halfClose),
        TransportContractCheck("a peer that resets the connection makes writing fail with an io TransportError", run: peerResets),
        TransportContractCheck("a closed transport refuses handshake, read and write with TransportError closed", run: usedAfterClose),
        TransportContractCheck("connecting to a port nobody listens on fails in the handshake with io ECONNREFUSED", run: connectRefused),
        TransportContractCheck("a client the server must refuse fails its handshake with a protocolFailure", run: refusedHandshake),
    ]

    /// Whether `received` is `expected`, without printing a megabyte on failure: the comment says where they differ.
    @discardableResult
    public static func same(_ received: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard received != expected else { return true }
        let shorter = min(received.count, expected.count)
        let firstDifference = (0..<shorter).first { received[$0] != expected[$0] } ?? shorter
        Issue.record(
            "received \(received.count) bytes, expected \(expected.count); they first differ at byte \(firstDifference)",
            sourceLocation: sourceLocation
        )
        return false
    }

    /// `count` bytes of a pattern that shows misplaced or repeated pieces (a byte counter mixed with `seed`).
    public static func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8) &+ Int(seed)) }
    }

    public static func handshakeAndFrames(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake(), "server: \(String(describing: pair.server.error)), client: \(String(describing: pair.client.error))")
        let (down, up) = (pattern(300, seed: 1), pattern(200, seed: 2))
        pair.server.send(down)
        pair.client.outbound.append(up)
        pair.pump {
            (pair.client.received.readableBytes >= down.count && pair.server.received.readableBytes >= up.count)
                || pair.server.ended || pair.client.ended || pair.server.error != nil || pair.client.error != nil
        }
        same(pair.client.bytes, down)
        same(pair.server.bytes, up)
        #expect(pair.server.error == nil && pair.client.error == nil, "\(String(describing: pair.server.error ?? pair.client.error))")
        #expect(!pair.server.ended && !pair.client.ended)
    }

    /// The large frame's size: 64 times the 4 KiB socket buffers, so it crosses in many partial writes and reads
    /// (1 MiB took a minute per transport under those buffers and showed nothing more).
    public static let largeFrameSize = 256 * 1024

    public static func largeFrames(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair(sendBuffer: 4096, receiveBuffer: 4096)
        defer { pair.close() }
        try #require(pair.handshake())
        let (down, up) = (pattern(largeFrameSize, seed: 3), pattern(largeFrameSize, seed: 4))
        cross(down, in: pair, from: pair.server, to: pair.client) { pair.server.send(down) }
        cross(up, in: pair, from: pair.client, to: pair.server) { pair.client.outbound.append(up) }
        #expect(pair.server.error == nil && pair.client.error == nil, "\(String(describing: pair.server.error ?? pair.client.error))")
    }

    /// Queues `bytes` on `sender` (by `queue`) while `receiver` does not read, so that the sender's socket fills and
    /// a write takes only part of them; then lets `receiver` read and checks that exactly `bytes` arrive. The wait
    /// ends early once the sender has flushed everything and nothing more has arrived for a second (bytes lost).
    static func cross(
        _ bytes: [UInt8],
        in pair: TransportPair,
        from sender: TransportPair.End,
        to receiver: TransportPair.End,
        sourceLocation: SourceLocation = #_sourceLocation,
        queue: () -> Void
    ) {
        receiver.readsPaused = true
        queue()
        #expect(pair.pump(timeout: .seconds(5)) { sender.writesLeavingBytes > 0 }, "a write left bytes queued", sourceLocation: sourceLocation)
        receiver.readsPaused = false
        var arrived = receiver.received.readableBytes
        var lastArrival = ContinuousClock.now
        pair.pump(timeout: .seconds(30)) {
            if receiver.received.readableBytes != arrived {
                arrived = receiver.received.readableBytes
                lastArrival = .now
            }
            let stalled = sender.flushed && ContinuousClock.now - lastArrival > .seconds(1)
            return arrived >= bytes.count || receiver.error != nil || sender.error != nil || stalled
        }
        #expect(receiver.received.readableBytes == bytes.count, sourceLocation: sourceLocation)
        same(receiver.bytes, bytes, sourceLocation: sourceLocation)
    }

    public static func splitFrames(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake())
        let up = pattern(2_000, seed: 5)
        var offset = 0
        var piece = 1
        while offset < up.count {
            let end = min(up.count, offset + piece)
            pair.client.outbound.append(Array(up[offset..<end]))
            pair.pump(timeout: .seconds(5)) { pair.client.flushed || pair.client.error != nil }
            offset = end
            piece = piece % 7 + 1
        }
        // Hundreds of small frames queued at once: more chunks than one gathered write takes.
        let frames = (0..<300).map { pattern($0 % 7 + 1, seed: UInt8(truncatingIfNeeded: $0)) }
        for frame in frames { pair.server.send(frame) }
        let down = frames.flatMap { $0 }
        pair.pump { (pair.server.received.readableBytes >= up.count && pair.client.received.readableBytes >= down.count) || pair.server.error != nil || pair.client.error != nil }
        same(pair.server.bytes, up)
        same(pair.client.bytes, down)
        #expect(pair.server.error == nil && pair.client.error == nil, "\(String(describing: pair.server.error ?? pair.client.error))")
    }

    public static func peerCloses(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake())
        let up = pattern(64 * 1024, seed: 6)
        pair.client.outbound.append(up)
        try #require(pair.pump { pair.client.flushed || pair.client.error != nil } && pair.client.error == nil)
        pair.client.close()
        #expect(pair.pump { pair.server.ended || pair.server.error != nil }, "the server saw the end of the stream")
        #expect(pair.server.ended, "\(String(describing: pair.server.error))")
        same(pair.server.bytes, up)
    }

    public static func halfClose(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake())
        let up = pattern(16 * 1024, seed: 7)
        pair.client.outbound.append(up)
        try #require(pair.pump { pair.client.flushed || pair.client.error != nil } && pair.client.error == nil)
        try Socket.shutdownWrite(pair.client.transport.fd)
        #expect(pair.pump { pair.server.ended || pair.server.error != nil }, "the server saw the end of the stream")
        if factory.halfCloseIsTruncation {
            #expect(pair.server.error?.kind == .protocolFailure, "a FIN without the closing message is a truncation: \(String(describing: pair.server.error))")
            #expect(!pair.server.ended)
            same(pair.server.bytes, up)
            return
        }
        #expect(pair.server.ended, "\(String(describing: pair.server.error))")
        same(pair.server.bytes, up)
        let down = pattern(32 * 1024, seed: 8)
        pair.server.send(down)
        pair.pump { pair.client.received.readableBytes >= down.count || pair.client.error != nil || pair.server.error != nil }
        same(pair.client.bytes, down)
        #expect(pair.server.error == nil && pair.client.error == nil, "\(String(describing: pair.server.error ?? pair.client.error))")
    }

    public static func peerResets(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake())
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        try #require(setsockopt(pair.client.transport.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        pair.client.close()  // with SO_LINGER 0: an RST instead of a FIN
        let chunk = pattern(64 * 1024, seed: 9)
        var sent = 0
        pair.pump {
            if pair.server.outbound.isEmpty && sent < 64 {
                pair.server.send(chunk)
                sent += 1
            }
            return pair.server.error != nil
        }
        let error = try #require(pair.server.error, "writing to a reset peer failed")
        #expect(error.kind == .io, "\(error)")
        #expect(error.underlying.map { [EPIPE, ECONNRESET].contains($0.errno) } == true, "\(error)")
    }

    public static func usedAfterClose(_ factory: TransportContractFactory) throws {
        let pair = try factory.pair()
        defer { pair.close() }
        try #require(pair.handshake())
        for end in [pair.server, pair.client] {
            end.close()
            var buffer = ByteBuffer()
            var queue = OutboundQueue()
            queue.append([1, 2, 3])
            let handshake = kind { () throws(TransportError) in _ = try end.transport.handshake() }
            let read = kind { () throws(TransportError) in _ = try end.transport.read(into: &buffer) }
            let write = kind { () throws(TransportError) in _ = try end.transport.write(&queue) }
            #expect(handshake == .closed && read == .closed && write == .closed, "\(String(describing: [handshake, read, write]))")
            #expect(queue.queuedBytes == 3, "nothing consumed")
            end.transport.close()  // idempotent
        }
    }

    public static func connectRefused(_ factory: TransportContractFactory) throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        let port = try Socket.localPort(listener)
        Socket.close(listener)
        let fd: CInt
        do {
            fd = try Socket.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: port)).fd
        } catch {
            // Refused at once, before any transport exists: the socket layer said so (nothing of the transport's).
            #expect(error.errno == ECONNREFUSED, "\(error)")
            return
        }
        let transport = try factory.client.makeTransport(fd: fd, role: .connecting(serverName: "localhost"))
        defer { transport.close() }
        var failure: TransportError?
        let deadline = ContinuousClock.now + .seconds(5)
        while failure == nil && ContinuousClock.now < deadline {
            do {
                if case .processed = try transport.handshake() { break }
            } catch {
                failure = error
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT | POLLIN), revents: 0)
            _ = poll(&pfd, 1, 10)
        }
        let error = try #require(failure, "the handshake failed")
        #expect(error.kind == .io, "\(error)")
        #expect(error.underlying?.errno == ECONNREFUSED, "\(error)")
    }

    public static func refusedHandshake(_ factory: TransportContractFactory) throws {
        guard let refused = factory.refusedClient else { return }  // plain TCP refuses nobody
        let pair = try TransportPair(server: factory.server, client: refused)
        defer { pair.close() }
        pair.pump { pair.client.error != nil && (pair.server.error != nil || pair.server.ended) }
        let error = try #require(pair.client.error, "the client's handshake failed")
        #expect(error.kind == .protocolFailure, "\(error)")
        #expect(!pair.client.ready)
        #expect(pair.server.error != nil || pair.server.ended, "the server did not open the stream")
        #expect(pair.server.bytes.isEmpty)
    }

    /// The kind of `TransportError` `body` threw, nil when it threw none.
    static func kind(_ body: () throws(TransportError) -> Void) -> TransportError.Kind? {
        do {
            try body()
            return nil
        } catch {
            return error.kind
        }
    }
}
