import LonglinkLoop

/// The figures `bench profile` needs from a `callgrind.out` file: the event names and the whole program's totals.
///
/// Callgrind writes an `events:` line naming the counted events (`Ir` first, instructions executed) and, at the
/// end, `summary:` (older versions) or `totals:` with one number per event for the whole process (every thread).
/// Those totals are what `callgrind_annotate` prints as `PROGRAM TOTALS`.
public struct CallgrindFile: Sendable, Hashable {
    /// The event names, in file order (`Ir` without cache simulation).
    public var events: [String]
    /// The program totals, one per event.
    public var totals: [UInt64]

    /// Instructions executed (`Ir`), user space, every thread.
    public var instructions: UInt64? {
        guard let index = events.firstIndex(of: "Ir"), index < totals.count else { return nil }
        return totals[index]
    }

    /// Parses the header and totals of a callgrind output; nil when the text has no `events:` line or no totals.
    public static func parse(_ text: Substring) -> CallgrindFile? {
        var events: [String] = []
        var summary: [UInt64]?
        var totals: [UInt64]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            // Only header and trailer lines start with a lowercase word and a colon; cost lines start with digits,
            // `+`, `-`, `*` or a name spec such as `fn=`.
            if line.hasPrefix("events:") {
                events = line.dropFirst("events:".count).split(separator: " ").map(String.init)
            } else if line.hasPrefix("summary:") {
                summary = numbers(line.dropFirst("summary:".count))
            } else if line.hasPrefix("totals:") {
                totals = numbers(line.dropFirst("totals:".count))
            }
        }
        guard !events.isEmpty, let values = totals ?? summary, !values.isEmpty else { return nil }
        return CallgrindFile(events: events, totals: values)
    }

    /// Reads and parses `path`; nil when it cannot be read or holds no totals.
    public static func read(_ path: String) -> CallgrindFile? {
        guard let text = ProcFile.read(path) else { return nil }
        return parse(text[...])
    }

    private static func numbers(_ text: Substring) -> [UInt64]? {
        let values = text.split(separator: " ").compactMap { UInt64($0) }
        return values.isEmpty ? nil : values
    }
}
