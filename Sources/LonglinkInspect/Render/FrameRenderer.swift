import LonglinkCore
import LonglinkJSON

/// Where a frame was seen in a capture: shown instead of the byte offset on `pcap` lines.
public struct CaptureContext: Hashable, Sendable {
    /// Capture time of the packet that completed the frame, in microseconds since the Unix epoch.
    public var timeMicros: UInt64
    /// The client's address (`127.0.0.1:40312`, `[::1]:40312`).
    public var client: String

    /// Creates a context.
    public init(timeMicros: UInt64, client: String) {
        self.timeMicros = timeMicros
        self.client = client
    }
}

/// Renders decoded frames and stream issues: one readable line, one JSON line, or the line followed by every
/// field (`--verbose`).
///
/// A line reads: where (`@offset direction`, or capture time, client and `→`/`←`), the frame kind, the route,
/// the position (`epoch:offset`), `from → to`, the time (ISO 8601 with milliseconds) and the significant
/// fields as `key=value`; unknown fields follow raw as `[unknown path.number:value (wire type)]`.
public struct FrameRenderer: Sendable {
    /// The output form.
    public enum Style: String, Sendable, Hashable {
        /// One readable line per frame.
        case line
        /// One JSON object per line.
        case json
        /// The readable line, then every field of the frame indented below it.
        case verbose
    }

    /// The output form.
    public var style: Style

    /// Creates a renderer.
    public init(style: Style) { self.style = style }

    /// Renders one stream event (a frame or an issue); several lines for `verbose`.
    public func render(_ event: StreamEvent, capture: CaptureContext? = nil) -> String {
        switch event {
        case .frame(let frame): render(frame, capture: capture)
        case .issue(let issue): render(issue, capture: capture)
        }
    }

    /// Renders a frame.
    public func render(_ frame: DecodedFrame, capture: CaptureContext? = nil) -> String {
        switch style {
        case .json: return json(frame, capture: capture)
        case .line: return line(frame, capture: capture)
        case .verbose:
            var text = line(frame, capture: capture)
            let raw = frame.raw
            switch frame.content {
            case .server:
                text += "\n" + FrameSchema.v1.text(raw.fields, message: "ServerFrame", indent: 2)
            case .client:
                text += "\n" + FrameSchema.v1.text(raw.fields, message: "ClientFrame", indent: 2)
            case .undecodable:
                text += "\n" + RawWire.text(raw.fields, indent: 2)
                if let error = raw.error { text += "    # wire error at body \(error)\n" }
                text += "    # bytes: \(RawWire.hex(frame.body))\n"
            }
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }

    /// Renders an issue.
    public func render(_ issue: StreamIssue, capture: CaptureContext? = nil) -> String {
        if style == .json {
            var members = location(capture: capture, byteOffset: issue.byteOffset, direction: nil)
            members += [("issue", .string(issue.kind.rawValue)), ("message", .string(issue.message))]
            return JSONText.object(members)
        }
        return where_(capture: capture, byteOffset: issue.byteOffset, direction: nil) + " " + issue.message
    }

    // MARK: Lines

    private func line(_ frame: DecodedFrame, capture: CaptureContext?) -> String {
        var parts = [where_(capture: capture, byteOffset: frame.byteOffset, direction: frame.direction)]
        switch frame.content {
        case .undecodable(let reason):
            let raw = frame.raw
            var text = "malformed \(frame.messageName) (\(frame.body.count) bytes): \(reason)"
            if !raw.fields.isEmpty { text += "; raw: " + RawWire.compact(raw.fields) }
            parts.append(text)
            return parts.joined(separator: " ")
        case .server(let server):
            parts.append(server.kindName)
            parts += summaryText(FrameSummary(server))
        case .client(let client):
            parts.append(client.kindName)
            parts += summaryText(FrameSummary(client))
        }
        parts += frame.unknownFields.map { "[unknown \($0)]" }
        return parts.joined(separator: " ")
    }

    private func summaryText(_ summary: FrameSummary) -> [String] {
        var parts: [String] = []
        if let route = summary.route { parts.append(route) }
        if let position = summary.position { parts.append(position.description) }
        if let to = summary.to {
            if let from = summary.from {
                parts.append("\(from) → \(to)")
            } else {
                parts.append(summary.isRecord ? "∅ → \(to)" : "→ \(to)")
            }
        }
        if let time = summary.timeMillis { parts.append(JSONText.isoTime(millis: time)) }
        parts += summary.details.compactMap(\.text)
        return parts
    }

    /// `@12 server` for files; `2024-…Z 127.0.0.1:40312 ←` in captures (← server to client, → client to server).
    private func where_(capture: CaptureContext?, byteOffset: Int, direction: FrameDirection?) -> String {
        guard let capture else {
            return "@\(byteOffset)" + (direction.map { " \($0.rawValue)" } ?? "")
        }
        let arrow: String
        switch direction {
        case .client: arrow = "→"
        case .server: arrow = "←"
        case nil: arrow = "·"
        }
        return "\(JSONText.isoTime(micros: capture.timeMicros)) \(capture.client) \(arrow)"
    }

    // MARK: JSON

    private func location(capture: CaptureContext?, byteOffset: Int, direction: FrameDirection?) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let capture {
            members.append(("captured_at", .string(JSONText.isoTime(micros: capture.timeMicros))))
            members.append(("captured_at_us", .uint(capture.timeMicros)))
            members.append(("client", .string(capture.client)))
        }
        members.append(("byte_offset", .int(Int64(byteOffset))))
        if let direction { members.append(("direction", .string(direction.rawValue))) }
        return members
    }

    private func json(_ frame: DecodedFrame, capture: CaptureContext?) -> String {
        var members = location(capture: capture, byteOffset: frame.byteOffset, direction: frame.direction)
        members.append(("kind", .string(frame.kind)))
        members.append(("length", .int(Int64(frame.body.count))))
        let summary: FrameSummary
        switch frame.content {
        case .undecodable(let reason):
            let raw = frame.raw
            members.append(("error", .string(reason)))
            members.append(("raw", .string(RawWire.compact(raw.fields))))
            members.append(("bytes", .string(RawWire.hex(frame.body))))
            return JSONText.object(members)
        case .server(let server): summary = FrameSummary(server)
        case .client(let client): summary = FrameSummary(client)
        }
        if let route = summary.route { members.append(("route", .string(route))) }
        if let position = summary.position {
            members.append(("epoch", .uint(UInt64(position.epoch))))
            members.append(("offset", .uint(position.offset)))
        }
        if let from = summary.from { members.append(("from", .string(from))) }
        if let to = summary.to { members.append(("to", .string(to))) }
        if let time = summary.timeMillis {
            members.append(("time", .string(JSONText.isoTime(millis: time))))
            members.append(("time_ms", .uint(time)))
        }
        for detail in summary.details { members += detail.json }
        if !frame.unknownFields.isEmpty {
            members.append(("unknown", .array(frame.unknownFields.map { unknown in
                .object([
                    ("path", .string(unknown.path)),
                    ("field", .uint(UInt64(unknown.field.number))),
                    ("wire_type", .uint(UInt64(unknown.field.value.wireType))),
                    ("value", .string(RawWire.compact(unknown.field).drop { $0 != ":" }.dropFirst().description)),
                ])
            })))
        }
        return JSONText.object(members)
    }
}
