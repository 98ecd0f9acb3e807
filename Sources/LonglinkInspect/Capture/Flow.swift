/// The segments of one TCP connection while a capture is read: one stream assembler per sending endpoint.
struct Flow: Sendable {
    /// The sender of the first segment seen.
    let first: TCPEndpoint
    /// Its peer.
    let second: TCPEndpoint
    /// Time of the first segment.
    let firstSeenMicros: UInt64
    /// Payload per sending endpoint.
    var streams: [TCPEndpoint: TCPStreamAssembler] = [:]
    /// The endpoint that sent a SYN without ACK (the connecting side), when captured.
    var synSender: TCPEndpoint?
    /// `FIN` or `RST` once seen.
    var ending: String?

    init(first segment: TCPSegment) {
        first = segment.source
        second = segment.destination
        firstSeenMicros = segment.timeMicros
        add(segment)
    }

    /// Whether the connection was closed (a new SYN on the same addresses is a new connection).
    var ended: Bool { ending != nil }

    mutating func add(_ segment: TCPSegment) {
        if segment.isSYN && !segment.isACK { synSender = segment.source }
        if segment.isRST { ending = "RST" } else if segment.isFIN, ending == nil { ending = "FIN" }
        streams[segment.source, default: TCPStreamAssembler()].add(segment)
    }

    /// (client, server): the side on `serverPort` is the server; with port 0 (or both sides on it) the SYN's
    /// sender is the client, else the lower port is the server. Nil when neither side uses `serverPort`.
    func sides(serverPort: UInt16) -> (TCPEndpoint, TCPEndpoint)? {
        let firstIsServer = first.port == serverPort
        let secondIsServer = second.port == serverPort
        if serverPort != 0 && firstIsServer != secondIsServer {
            return firstIsServer ? (second, first) : (first, second)
        }
        guard serverPort == 0 || firstIsServer else { return nil }
        if let synSender { return synSender == first ? (first, second) : (second, first) }
        return first.port < second.port ? (second, first) : (first, second)
    }

    /// The connection summary before decoding (TLS detection, byte counts, reassembly figures).
    func connection(number: Int, client: TCPEndpoint, server: TCPEndpoint) -> CaptureConnection {
        let clientResult = streams[client]?.assemble()
        let serverResult = streams[server]?.assemble()
        let isTLS = [clientResult, serverResult].contains { result in
            guard let bytes = result?.pieces.first?.bytes, result?.pieces.first?.offset == 0 else { return false }
            return Self.startsWithTLSRecord(bytes)
        }
        let isWebSocket = !isTLS && clientResult.map { WebSocketUnwrap.isUpgrade($0.pieces.first?.bytes ?? []) } == true
        return CaptureConnection(
            number: number,
            client: client,
            server: server,
            firstSeenMicros: firstSeenMicros,
            isTLS: isTLS,
            isWebSocket: isWebSocket,
            clientBytes: clientResult?.totalBytes ?? 0,
            serverBytes: serverResult?.totalBytes ?? 0,
            clientTally: FrameTally(),
            serverTally: FrameTally(),
            ending: ending,
            duplicateBytes: (clientResult?.duplicateBytes ?? 0) + (serverResult?.duplicateBytes ?? 0),
            outOfOrderSegments: (clientResult?.outOfOrderSegments ?? 0) + (serverResult?.outOfOrderSegments ?? 0),
            gaps: 0
        )
    }

    /// A TLS handshake record header: content type 22, version 3.x (SSL 3.0 … TLS 1.3 all use 0x03 0x00…0x04).
    /// A Longlink frame cannot start like this: 0x16 is a length prefix of 22 and 0x03 is no valid first tag.
    static func startsWithTLSRecord(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 3 && bytes[0] == 0x16 && bytes[1] == 0x03 && bytes[2] <= 0x04
    }
}
