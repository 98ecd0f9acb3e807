extension JSONValue {
    /// Indented JSON text laid out as Foundation's `JSONEncoder` prints it with `.prettyPrinted`: two spaces per
    /// level, `"key" : value`, an empty array or object as an empty line between its brackets. With
    /// `sortedKeys`, members are in ascending key order; strings are escaped as `quote(_:into:htmlSafe:)` does.
    public func prettyText(sortedKeys: Bool = false, htmlSafe: Bool = false) -> String {
        var out = ""
        writePretty(into: &out, level: 0, sortedKeys: sortedKeys, htmlSafe: htmlSafe)
        return out
    }

    private func writePretty(into out: inout String, level: Int, sortedKeys: Bool, htmlSafe: Bool) {
        let inner = String(repeating: "  ", count: level + 1)
        let closing = String(repeating: "  ", count: level)
        switch self {
        case .array(let elements):
            out += "[\n"
            if elements.isEmpty { out += "\n" }
            for (index, element) in elements.enumerated() {
                out += inner
                element.writePretty(into: &out, level: level + 1, sortedKeys: sortedKeys, htmlSafe: htmlSafe)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        case .object(let members):
            out += "{\n"
            if members.isEmpty { out += "\n" }
            let ordered = sortedKeys ? members.sorted { $0.0 < $1.0 } : members
            for (index, (key, value)) in ordered.enumerated() {
                out += inner
                Self.quote(key, into: &out, htmlSafe: htmlSafe)
                out += " : "
                value.writePretty(into: &out, level: level + 1, sortedKeys: sortedKeys, htmlSafe: htmlSafe)
                out += index == ordered.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        default:
            write(into: &out, htmlSafe: htmlSafe)
        }
    }
}
