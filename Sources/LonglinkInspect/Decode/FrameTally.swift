import LonglinkJSON
/// Counts of what a decode or capture run saw: frames by kind, bytes, malformed frames and framing issues.
public struct FrameTally: Hashable, Sendable {
    /// Frames decoded (malformed ones included).
    public var frames = 0
    /// Bytes of frames (prefixes included).
    public var bytes = 0
    /// Frames the codec refused.
    public var malformed = 0
    /// Framing problems (bad prefixes, truncation, gaps); resynchronisation notes are not counted.
    public var issues = 0
    /// Frames by `direction kind` (`server push`), malformed ones as `malformed`.
    public var byKind: [String: Int] = [:]

    /// Creates an empty tally.
    public init() {}

    /// Whether nothing was wrong.
    public var isClean: Bool { malformed == 0 && issues == 0 }

    /// Adds one event.
    public mutating func count(_ event: StreamEvent) {
        switch event {
        case .frame(let frame):
            frames += 1
            bytes += frame.wireSize
            if frame.isMalformed { malformed += 1 }
            let key = frame.isMalformed ? "malformed" : "\(frame.direction?.rawValue ?? "?") \(frame.kind)"
            byKind[key, default: 0] += 1
        case .issue(let issue):
            if issue.kind != .resynchronised { issues += 1 }
        }
    }

    /// Adds another tally.
    public mutating func add(_ other: FrameTally) {
        frames += other.frames
        bytes += other.bytes
        malformed += other.malformed
        issues += other.issues
        byKind.merge(other.byKind, uniquingKeysWith: +)
    }

    /// `push 3, subscribe 1` in a stable order (most frequent first, then by name).
    public var kindsText: String {
        byKind.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// `frames_by_kind` as a JSON object, keys sorted.
    var kindsJSON: JSONValue {
        .object(byKind.sorted { $0.key < $1.key }.map { ($0.key, .uint(UInt64($0.value))) })
    }

    /// One summary line for `decode`.
    public func summary(style: FrameRenderer.Style) -> String {
        if style == .json {
            return JSONText.object([
                ("summary", .bool(true)), ("frames", .uint(UInt64(frames))), ("bytes", .uint(UInt64(bytes))),
                ("malformed", .uint(UInt64(malformed))), ("issues", .uint(UInt64(issues))),
                ("frames_by_kind", kindsJSON),
            ])
        }
        return "\(frames) frames, \(bytes) bytes, \(malformed) malformed, \(issues) framing errors"
            + (byKind.isEmpty ? "" : " (\(kindsText))")
    }
}
