import LonglinkCore
import LonglinkProtobuf

/// Turns one frame body into a `DecodedFrame`: the production codec (`ProtobufFrameCodec`) for what it knows,
/// the raw wire decoder for the rest (unknown fields, and bodies the codec refuses).
public struct FrameBodyDecoder: Sendable {
    /// How the message type is chosen.
    public var direction: DirectionChoice
    private let codec = ProtobufFrameCodec()
    private let schema = FrameSchema.v1

    /// Creates a decoder.
    public init(direction: DirectionChoice = .auto) {
        self.direction = direction
    }

    /// The direction a body's kind field number says (ServerFrame 1–11, ClientFrame 12–19), or nil.
    public static func recognisedDirection(of fields: [RawField]) -> FrameDirection? {
        for field in fields where field.value.wireType == 2 {
            if (1...11).contains(field.number) { return .server }
            if (12...19).contains(field.number) { return .client }
        }
        return nil
    }

    /// Decodes `body`, which started (prefix included) at `byteOffset` with a prefix of `prefixLength` bytes.
    public func decode(body: [UInt8], byteOffset: Int, prefixLength: Int) -> DecodedFrame {
        let raw = RawWire.parsePrefix(body)
        let chosen: FrameDirection?
        switch direction {
        case .client: chosen = .client
        case .server: chosen = .server
        case .auto: chosen = Self.recognisedDirection(of: raw.fields)
        }
        var frame = DecodedFrame(
            byteOffset: byteOffset,
            prefixLength: prefixLength,
            body: body,
            direction: chosen,
            content: .undecodable(reason: "")
        )
        guard let chosen else {
            frame.content = .undecodable(reason: raw.error.map { "not a protobuf message (\($0))" }
                ?? "no known frame kind (ServerFrame uses fields 1–11, ClientFrame 12–19)")
            return frame
        }
        let result: Result<DecodedFrame.Content, FrameError> = body.withUnsafeBytes { bytes in
            do throws(FrameError) {
                switch chosen {
                case .server: return .success(.server(try codec.decodeServerFrame(body: bytes)))
                case .client: return .success(.client(try codec.decodeClientFrame(body: bytes)))
                }
            } catch {
                return .failure(error)
            }
        }
        let message = chosen == .server ? "ServerFrame" : "ClientFrame"
        switch result {
        case .success(let content):
            frame.content = content
            frame.unknownFields = schema.unknownFields(in: raw.fields, message: message)
        case .failure(let error):
            var reason = Self.describe(error)
            if let wire = raw.error { reason += " (\(wire))" }
            frame.content = .undecodable(reason: reason)
        }
        return frame
    }

    /// A `FrameError` without its type-name prefix.
    static func describe(_ error: FrameError) -> String {
        if case .malformed(let why) = error { return why }
        let text = error.description
        let prefix = "FrameError: "
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }
}
