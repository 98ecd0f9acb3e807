import Glibc
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport

/// A hand-driven WebSocket client over a blocking socket (`HTTPTestClient` for the upgrade): sends exactly the
/// frames a test wants, masked or not, and reads server frames with a deadline. Independent of the server's
/// WebSocket code (frames are built by `ClientFrames` and parsed here).
final class WebSocketPeer {
    /// What arrived from the server.
    enum Event: Equatable, CustomStringConvertible {
        case binary([UInt8])
        case text([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        case close(UInt16?, String)
        /// The server closed the TCP connection.
        case eof
        /// A frame this client cannot parse (a server bug).
        case malformed(String)

        var description: String {
            switch self {
            case .binary(let bytes): "binary(\(bytes.count) bytes)"
            case .text(let bytes): "text(\(bytes.count) bytes)"
            case .ping(let bytes): "ping(\(bytes))"
            case .pong(let bytes): "pong(\(bytes))"
            case .close(let code, let reason): "close(\(code.map(String.init) ?? "none"), \(reason))"
            case .eof: "eof"
            case .malformed(let why): "malformed(\(why))"
            }
        }
    }

    let http: HTTPTestClient
    private var consumed = 0
    private var stream = ByteBuffer()
    private let codec = ProtobufFrameCodec()

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the socket's receive buffer (a reader that stalls
    /// sooner; set before the connect, see `LoopbackSocket.connect`).
    init(port: Int, receiveBuffer: Int? = nil) throws {
        http = try HTTPTestClient(port: port, receiveBuffer: receiveBuffer)
    }

    /// The standard upgrade request for `path`, with `fields` added.
    static func request(path: String = "/longlink", port: Int, fields: [(String, String)] = []) -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: longlink.v1.protobuf\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// Sends the standard upgrade and returns the response (nil when none came).
    @discardableResult
    func upgrade(port: Int, fields: [(String, String)] = []) throws -> HTTPTestResponse? {
        try http.send(Self.request(port: port, fields: fields))
        return response()
    }

    /// The HTTP response to what was sent.
    func response(seconds: Double = 10) -> HTTPTestResponse? {
        let response = http.readResponse(seconds: seconds)
        consumed = 0
        return response
    }

    func send(_ bytes: [UInt8]) throws { try http.send(bytes) }

    /// Sends a Longlink frame in one masked binary message.
    func send(_ frame: ClientFrame) throws { try send(ClientFrames.binary(FramePeer.bytes(frame))) }

    /// The next server frame as an event (fragments are returned as they come; this server never fragments).
    func next(seconds: Double = 10) -> Event? {
        var event: Event?
        _ = http.receive(until: { bytes in
            event = Self.parse(bytes, from: self.consumed)?.0
            return event != nil
        }, seconds: seconds)
        if let (parsed, length) = Self.parse(http.buffered, from: consumed) {
            consumed += length
            return parsed
        }
        return http.closed ? .eof : nil
    }

    /// The next event that is not a ping (answered with nothing; pings are not expected in these tests).
    func nextNonPing(seconds: Double = 10) -> Event? {
        while let event = next(seconds: seconds) {
            if case .ping = event { continue }
            return event
        }
        return nil
    }

    /// The next Longlink frame carried in binary messages (other events end the wait with nil).
    func nextFrame(seconds: Double = 10) throws -> ServerFrame? {
        while true {
            if let frame = try codec.decodeNextServerFrame(from: &stream) { return frame }
            guard case .binary(let payload)? = next(seconds: seconds) else { return nil }
            stream.writeBytes(payload)
        }
    }

    /// Connects with `token` and returns the `connected` frame.
    func connect(token: String = "") throws -> Connected? {
        try send(.connect(ConnectRequest(token: token, clientName: "ws-test")))
        guard case .connected(let connected)? = try nextFrame() else { return nil }
        return connected
    }

    /// Parses one server frame at `offset` of `bytes`; nil when incomplete.
    static func parse(_ bytes: [UInt8], from offset: Int) -> (Event, Int)? {
        guard bytes.count - offset >= 2 else { return nil }
        let first = bytes[offset]
        let second = bytes[offset + 1]
        if second & 0x80 != 0 { return (.malformed("a masked server frame"), bytes.count - offset) }
        if first & 0x70 != 0 { return (.malformed("reserved bits"), bytes.count - offset) }
        var length = Int(second & 0x7F)
        var header = 2
        if length == 126 {
            guard bytes.count - offset >= 4 else { return nil }
            length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count - offset >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | Int(bytes[offset + 2 + index]) }
            header = 10
        }
        guard bytes.count - offset >= header + length else { return nil }
        let payload = Array(bytes[(offset + header)..<(offset + header + length)])
        let event: Event
        switch first & 0x0F {
        case 0x1: event = .text(payload)
        case 0x2, 0x0: event = .binary(payload)
        case 0x8:
            if payload.count >= 2 {
                event = .close(UInt16(payload[0]) << 8 | UInt16(payload[1]), String(decoding: payload[2...], as: UTF8.self))
            } else {
                event = .close(nil, "")
            }
        case 0x9: event = .ping(payload)
        case 0xA: event = .pong(payload)
        default: event = .malformed("opcode \(first & 0x0F)")
        }
        return (event, header + length)
    }
}
