/// One server-sent event.
public struct SSEEvent: Hashable, Sendable {
    /// The `event:` name (`message` when absent).
    public var name: String
    /// The `data:` lines joined with newlines.
    public var data: String
    /// The last `id:` seen, if any.
    public var id: String?

    /// Creates an event.
    public init(name: String = "message", data: String, id: String? = nil) {
        self.name = name
        self.data = data
        self.id = id
    }
}

/// An incremental `text/event-stream` parser (the WHATWG rules): feed it bytes as they arrive, in any split;
/// it returns the events completed so far.
///
/// Lines end with CRLF, LF or CR; `data:` lines accumulate; an empty line dispatches (nothing when no data);
/// lines starting with `:` are comments (keep-alives); one space after the colon is dropped; a leading BOM
/// is ignored.
public struct SSEParser: Sendable {
    private var line: [UInt8] = []
    private var skipLineFeed = false
    private var started = false
    private var data: [String] = []
    private var name = ""
    private var lastID: String?

    /// Creates a parser.
    public init() {}

    /// Adds bytes; returns the events they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [SSEEvent] {
        var events: [SSEEvent] = []
        for byte in bytes {
            if skipLineFeed {
                skipLineFeed = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                skipLineFeed = true
                if let event = endLine() { events.append(event) }
            case 0x0A:
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> SSEEvent? {
        var bytes = line
        line.removeAll(keepingCapacity: true)
        if !started {
            started = true
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        }
        guard !bytes.isEmpty else { return dispatch() }
        if bytes[0] == UInt8(ascii: ":") { return nil }
        let field: String
        var value: String
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var rest = bytes[(colon + 1)...]
            if rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
            value = String(decoding: rest, as: UTF8.self)
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "data": data.append(value)
        case "event": name = value
        case "id": if !value.contains("\0") { lastID = value }
        default: value = ""  // `retry` and unknown fields are ignored
        }
        return nil
    }

    private mutating func dispatch() -> SSEEvent? {
        defer {
            data.removeAll()
            name = ""
        }
        guard !data.isEmpty else { return nil }
        return SSEEvent(name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"), id: lastID)
    }
}
