/// The config file format: one `name = value` per line, `#` starts a comment, blank lines ignored, names are
/// the long option names. Deliberately simple (like redis.conf or mosquitto.conf) and diff-friendly.
public struct ConfigFile: Sendable, Hashable {
    /// One setting with the line it came from.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var value: String
        public var line: Int
    }

    /// Settings in file order (a later duplicate overrides an earlier one; list options accumulate).
    public var entries: [Entry]
    /// The file's path, for messages.
    public var path: String

    /// Parses the text of a config file.
    public init(text: String, path: String) throws(CommandLineError) {
        self.path = path
        var entries: [Entry] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingSpaces
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw CommandLineError("\(path):\(lineNumber): expected 'name = value', found '\(trimmed)'")
            }
            let name = trimmed[..<equals].trimmingSpaces
            var value = trimmed[trimmed.index(after: equals)...].trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard !name.isEmpty else { throw CommandLineError("\(path):\(lineNumber): missing option name before '='") }
            entries.append(Entry(name: name, value: value, line: lineNumber))
        }
        self.entries = entries
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
