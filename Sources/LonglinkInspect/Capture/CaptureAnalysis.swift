import LonglinkJSON
/// Everything `inspect pcap` finds in a capture: the TCP connections to the gateway port, each direction
/// reassembled and decoded, a timeline of frames, and counts.
public struct CaptureAnalysis: Sendable {
    /// One entry of the timeline.
    public struct Entry: Sendable {
        /// When (the capture time of the packet that completed the frame).
        public var timeMicros: UInt64
        /// The connection (index into `connections`).
        public var connection: Int
        /// A frame or an issue.
        public var event: StreamEvent
    }

    /// The file format read.
    public var format: CaptureFile.Format
    /// Connections to the gateway port, in order of first packet.
    public var connections: [CaptureConnection]
    /// Frames and issues of every connection, in capture-time order.
    public var timeline: [Entry]
    /// Frames of every connection together.
    public var tally: FrameTally
    /// Packets that carried no TCP segment, by reason.
    public var skippedPackets: [PacketSkip: Int]
    /// TCP connections on other ports, not decoded.
    public var otherConnections: Int
    /// Whether the file ended inside a packet record.
    public var truncatedTail: Bool

    /// Reads and decodes a capture. `serverPort` 0 takes every TCP connection, the SYN's sender as the client.
    public init(capture bytes: [UInt8], serverPort: UInt16, decoder: FrameStreamDecoder) throws(CaptureError) {
        let file = try CaptureFile(bytes: bytes)
        format = file.format
        truncatedTail = file.truncatedTail
        var skipped: [PacketSkip: Int] = [:]
        var flows: [Flow] = []
        var current: [[TCPEndpoint]: Int] = [:]
        for packet in file.packets {
            let segment: TCPSegment
            switch PacketParser.segment(packet) {
            case .success(let s): segment = s
            case .failure(let reason):
                skipped[reason.skip, default: 0] += 1
                continue
            }
            let key = [segment.source, segment.destination].sorted()
            if let index = current[key], !(segment.isSYN && !segment.isACK && flows[index].ended) {
                flows[index].add(segment)
            } else {
                current[key] = flows.count
                flows.append(Flow(first: segment))
            }
        }
        skippedPackets = skipped
        var connections: [CaptureConnection] = []
        var timeline: [Entry] = []
        var tally = FrameTally()
        var others = 0
        for flow in flows {
            guard let (client, server) = flow.sides(serverPort: serverPort) else {
                others += 1
                continue
            }
            var connection = flow.connection(number: connections.count + 1, client: client, server: server)
            if !connection.isTLS {
                for (direction, endpoint) in [(FrameDirection.client, client), (.server, server)] {
                    var streamDecoder = decoder
                    streamDecoder.bodyDecoder.direction = direction == .client ? .client : .server
                    var assembled = (flow.streams[endpoint] ?? TCPStreamAssembler()).assemble()
                    if connection.isWebSocket {
                        let unwrapped = WebSocketUnwrap.unwrap(assembled)
                        assembled.pieces = unwrapped.pieces
                        let side = direction == .client ? "client" : "server"
                        connection.webSocketCloses += unwrapped.closes.map { close in
                            "\(close.code.map(String.init) ?? "without a code")\(close.reason.isEmpty ? "" : " \"\(close.reason)\"") from the \(side)"
                        }
                        if let problem = unwrapped.problem {
                            timeline.append(Entry(timeMicros: flow.firstSeenMicros, connection: connections.count, event: .issue(
                                StreamIssue(byteOffset: 0, kind: .gap, message: "WebSocket (\(side)): \(problem)"))))
                        }
                    }
                    let decoded = Self.decode(assembled, with: streamDecoder)
                    var directionTally = FrameTally()
                    for (time, event) in decoded.events {
                        directionTally.count(event)
                        timeline.append(Entry(timeMicros: time, connection: connections.count, event: event))
                    }
                    connection.gaps += decoded.gaps
                    if direction == .client { connection.clientTally = directionTally } else { connection.serverTally = directionTally }
                    tally.add(directionTally)
                }
            }
            connections.append(connection)
        }
        // Stable: events of one direction keep their stream order (their times never decrease).
        self.timeline = timeline.enumerated()
            .sorted { $0.element.timeMicros != $1.element.timeMicros ? $0.element.timeMicros < $1.element.timeMicros : $0.offset < $1.offset }
            .map(\.element)
        self.connections = connections
        self.tally = tally
        otherConnections = others
    }

    /// Decodes one reassembled direction; every event with the time its bytes were complete.
    static func decode(_ result: TCPStreamAssembler.Result, with decoder: FrameStreamDecoder) -> (events: [(UInt64, StreamEvent)], gaps: Int) {
        var events: [(UInt64, StreamEvent)] = []
        var expected = 0
        var gaps = 0
        for piece in result.pieces {
            let synchronised = piece.offset == expected
            if !synchronised {
                gaps += 1
                events.append((piece.arrivalTime(through: 1), .issue(StreamIssue(
                    byteOffset: expected, kind: .gap,
                    message: "gap: \(piece.offset - expected) bytes missing from the capture at stream byte \(expected)"))))
            }
            for event in decoder.decode(piece.bytes, baseOffset: piece.offset, synchronised: synchronised) {
                let end: Int
                switch event {
                case .frame(let frame): end = frame.byteOffset + frame.wireSize - piece.offset
                case .issue(let issue): end = issue.byteOffset - piece.offset + 1
                }
                events.append((piece.arrivalTime(through: end), event))
            }
            expected = piece.offset + piece.bytes.count
        }
        return (events, gaps)
    }

    /// The timeline rendered, TLS connections noted where they start, then the summary.
    public func lines(_ renderer: FrameRenderer) -> [String] {
        var lines: [String] = []
        var pendingTLS = connections.filter(\.isTLS).sorted { $0.firstSeenMicros < $1.firstSeenMicros }
        func flushTLS(before time: UInt64?) {
            while let first = pendingTLS.first, time.map({ first.firstSeenMicros <= $0 }) ?? true {
                pendingTLS.removeFirst()
                lines.append(tlsLine(first, renderer: renderer))
            }
        }
        for entry in timeline {
            flushTLS(before: entry.timeMicros)
            let client = connections[entry.connection].client.description
            lines.append(renderer.render(entry.event, capture: CaptureContext(timeMicros: entry.timeMicros, client: client)))
        }
        flushTLS(before: nil)
        return lines + summary(renderer.style)
    }

    private func tlsLine(_ connection: CaptureConnection, renderer: FrameRenderer) -> String {
        if renderer.style == .json {
            return JSONText.object([
                ("captured_at", .string(JSONText.isoTime(micros: connection.firstSeenMicros))),
                ("client", .string(connection.client.description)), ("server", .string(connection.server.description)),
                ("tls", .bool(true)), ("message", .string("encrypted, skipped")),
            ])
        }
        return "\(JSONText.isoTime(micros: connection.firstSeenMicros)) \(connection.client) · "
            + "TLS connection to \(connection.server): encrypted, skipped"
    }

    /// The summary lines.
    public func summary(_ style: FrameRenderer.Style) -> [String] {
        let tlsCount = connections.filter(\.isTLS).count
        let skippedText = skippedPackets.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
        if style == .json {
            return [JSONText.object([("summary", .object([
                ("format", .string(format.rawValue)),
                ("connections", .uint(UInt64(connections.count))), ("tls_connections", .uint(UInt64(tlsCount))),
                ("frames", .uint(UInt64(tally.frames))), ("bytes", .uint(UInt64(tally.bytes))),
                ("malformed", .uint(UInt64(tally.malformed))), ("framing_errors", .uint(UInt64(tally.issues))),
                ("frames_by_kind", tally.kindsJSON),
                ("other_connections", .uint(UInt64(otherConnections))),
                ("skipped_packets", .object(skippedPackets.sorted { $0.key.rawValue < $1.key.rawValue }
                    .map { ($0.key.rawValue, .uint(UInt64($0.value))) })),
                ("truncated_file", .bool(truncatedTail)),
                ("connection_list", .array(connections.map(\.json))),
            ]))])]
        }
        var lines = [
            "summary: \(connections.count) connections" + (tlsCount > 0 ? " (\(tlsCount) TLS, encrypted, skipped)" : "")
                + ", \(tally.frames) frames, \(tally.bytes) bytes, \(tally.malformed) malformed, \(tally.issues) framing errors"
        ]
        if !tally.byKind.isEmpty { lines.append("  frames by kind: \(tally.kindsText)") }
        lines += connections.map { "  " + $0.summaryText }
        if otherConnections > 0 { lines.append("  \(otherConnections) TCP connections on other ports ignored") }
        if !skippedText.isEmpty { lines.append("  packets without a TCP segment: " + skippedText.joined(separator: ", ")) }
        if truncatedTail { lines.append("  the file ends inside a packet record (capture still running or cut); it was ignored") }
        return lines
    }
}
