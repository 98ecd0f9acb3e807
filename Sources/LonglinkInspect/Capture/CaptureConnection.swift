import LonglinkJSON
/// One TCP connection found in a capture, with what was decoded in each direction.
public struct CaptureConnection: Sendable {
    /// 1-based, in order of first packet.
    public var number: Int
    /// The client side (the connecting side).
    public var client: TCPEndpoint
    /// The gateway side.
    public var server: TCPEndpoint
    /// Time of the first packet.
    public var firstSeenMicros: UInt64
    /// True when either direction starts with a TLS record header (0x16 0x03 …): not decoded.
    public var isTLS: Bool
    /// True when the client's stream starts with a WebSocket upgrade (`serve --ws-listen`): the frames are
    /// decoded from the WebSocket messages' payloads.
    public var isWebSocket: Bool = false
    /// Stream bytes captured client → server and server → client.
    public var clientBytes: Int
    /// Stream bytes captured server → client.
    public var serverBytes: Int
    /// Frames client → server.
    public var clientTally: FrameTally
    /// Frames server → client.
    public var serverTally: FrameTally
    /// How it ended in the capture: `FIN`, `RST`, or nil while still open.
    public var ending: String?
    /// Retransmitted bytes dropped during reassembly.
    public var duplicateBytes: Int
    /// Segments captured out of order (reordered or retransmitted).
    public var outOfOrderSegments: Int
    /// Holes in the streams (bytes missing from the capture).
    public var gaps: Int
    /// WebSocket close frames, as `3007 "reason" from the server`.
    public var webSocketCloses: [String] = []

    /// One summary line.
    public var summaryText: String {
        var text = "connection \(number): \(client) → \(server): "
        if isTLS {
            text += "TLS, encrypted, skipped (\(clientBytes) bytes from the client, \(serverBytes) from the server)"
        } else {
            if isWebSocket { text += "WebSocket, " }
            text += "client \(clientTally.frames) frames (\(clientTally.bytes) bytes), "
                + "server \(serverTally.frames) frames (\(serverTally.bytes) bytes)"
            let problems = clientTally.malformed + serverTally.malformed
            if problems > 0 { text += ", \(problems) malformed" }
        }
        if outOfOrderSegments > 0 || duplicateBytes > 0 {
            text += ", \(outOfOrderSegments) segments out of order, \(duplicateBytes) retransmitted bytes dropped"
        }
        if gaps > 0 { text += ", \(gaps) gaps" }
        if !webSocketCloses.isEmpty { text += ", WebSocket close " + webSocketCloses.joined(separator: ", ") }
        text += ending.map { ", closed (\($0))" } ?? ", open at the end of the capture"
        return text
    }

    /// The summary as JSON.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("number", .uint(UInt64(number))), ("client", .string(client.description)),
            ("server", .string(server.description)), ("tls", .bool(isTLS)), ("websocket", .bool(isWebSocket)),
            ("client_bytes", .uint(UInt64(clientBytes))), ("server_bytes", .uint(UInt64(serverBytes))),
            ("client_frames", .uint(UInt64(clientTally.frames))), ("server_frames", .uint(UInt64(serverTally.frames))),
            ("malformed", .uint(UInt64(clientTally.malformed + serverTally.malformed))),
            ("out_of_order_segments", .uint(UInt64(outOfOrderSegments))),
            ("duplicate_bytes", .uint(UInt64(duplicateBytes))), ("gaps", .uint(UInt64(gaps))),
        ]
        members.append(("ending", ending.map { .string($0) } ?? .null))
        if isWebSocket { members.append(("websocket_closes", .array(webSocketCloses.map(JSONValue.string)))) }
        return .object(members)
    }
}
