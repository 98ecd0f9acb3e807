import LonglinkLoop

/// How often a callgrind profile calls given functions: the heap allocations `bench profile` reports.
///
/// Callgrind's format (`valgrind/docs/callgrind-format`): `fn=` names the function whose costs follow, `cfn=` the
/// callee of the next call, and a `calls=N target` line says the following cost line is N calls to that callee.
/// Names are compressed: the first use is `(id) name`, later ones `(id)` alone. Recursion levels appear as
/// `name'2` (with `--separate-recs`), and are counted under `name`. A call made from inside one of the counted
/// functions (glibc's `realloc(NULL, n)` going through `malloc`) is not counted again.
public struct CallgrindCalls: Sendable, Hashable {
    /// The functions whose calls are heap allocations: the C allocator's entry points. Swift objects (`swift_allocObject`
    /// → `swift_slowAlloc`), C++ `operator new` and protobuf-c's fallback all end in one of these.
    public static let allocators: Set<String> = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc"]

    /// Calls per callee, for the callees asked for (absent: never called).
    public var calls: [String: UInt64]

    /// All calls to the asked callees.
    public var total: UInt64 { calls.values.reduce(0, +) }

    /// Counts the calls to `callees` in a callgrind file's text.
    public static func parse(_ text: Substring, callees: Set<String> = allocators) -> CallgrindCalls {
        var names: [Substring: Substring] = [:]
        var calls: [String: UInt64] = [:]
        var callerCounted = false
        var callee: Substring?
        func name(_ spec: Substring) -> Substring {
            // `(id) name`, `(id)` or, uncompressed, `name`.
            guard spec.first == "(", let close = spec.firstIndex(of: ")") else { return base(spec) }
            let id = spec[spec.index(after: spec.startIndex)..<close]
            let rest = spec[spec.index(after: close)...].drop { $0 == " " }
            if rest.isEmpty { return names[id] ?? id }
            let full = base(rest)
            names[id] = full
            return full
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("fn=") {
                callerCounted = callees.contains(String(name(line.dropFirst(3))))
                callee = nil
            } else if line.hasPrefix("cfn=") {
                callee = name(line.dropFirst(4))
            } else if line.hasPrefix("calls=") {
                guard let target = callee, !callerCounted else { continue }
                let key = String(target)
                guard callees.contains(key) else { continue }
                let count = line.dropFirst("calls=".count).prefix { $0 != " " }
                calls[key, default: 0] += UInt64(count) ?? 0
            }
        }
        return CallgrindCalls(calls: calls)
    }

    /// Reads and parses `path`; nil when it cannot be read.
    public static func read(_ path: String, callees: Set<String> = allocators) -> CallgrindCalls? {
        guard let text = ProcFile.read(path) else { return nil }
        return parse(text[...], callees: callees)
    }

    /// `malloc'2` → `malloc`.
    private static func base(_ name: Substring) -> Substring {
        guard let quote = name.lastIndex(of: "'"), name[name.index(after: quote)...].allSatisfy(\.isNumber) else { return name }
        return name[..<quote]
    }
}
