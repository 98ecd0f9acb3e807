public import Foundation
public import LonglinkCore
import LonglinkJSON

/// Loading state machines from JSON: `{ "lines": [ <StateMachineDefinition>, ... ] }`.
extension StateMachineCatalog {
    /// Reads and validates the catalog in the JSON file at `path`.
    public static func load(jsonFile path: String) throws(StateMachineLoadError) -> StateMachineCatalog {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: error.localizedDescription)
        }
        return try load(jsonData: data)
    }

    /// Decodes and validates a catalog from JSON bytes.
    public static func load(jsonData data: Data) throws(StateMachineLoadError) -> StateMachineCatalog {
        let root: JSONValue
        do {
            root = try JSONValue.parse(Array(data), maxDepth: 64)
        } catch {
            throw .malformed("\(error)")
        }
        let file: CatalogFile
        do {
            file = try JSONValue.decode(CatalogFile.self, from: root)
        } catch let error as DecodingError {
            throw .malformed(describe(error, in: root))
        } catch {
            throw .malformed("\(error)")
        }
        do {
            return try StateMachineCatalog(definitions: file.lines)
        } catch {
            throw .invalid(error)
        }
    }

    /// Encodes this catalog as the JSON `load` reads (sorted keys, pretty-printed).
    public func jsonData() throws -> Data {
        Data(try JSONValue.encode(CatalogFile(lines: definitions)).prettyText(sortedKeys: true).utf8)
    }

    private struct CatalogFile: Codable {
        var lines: [StateMachineDefinition]
    }

    /// A decoding error's path with line and state names filled in where they can be read
    /// (`lines[1] (premium).states[3] (reserved).next: expected an array`).
    private static func describe(_ error: DecodingError, in root: JSONValue) -> String {
        let (path, message): ([any CodingKey], String) =
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                (context.codingPath, context.debugDescription)
            case .keyNotFound(let key, let context): (context.codingPath, "missing key '\(key.stringValue)'")
            @unknown default: ([], "\(error)")
            }
        var node: JSONValue? = root
        var text = ""
        for key in path {
            if let index = key.intValue {
                let array = node?.arrayValue
                node = array.flatMap { index < $0.count ? $0[index] : nil }
                text += "[\(index)]"
                if let name = (node?["line"] ?? node?["name"])?.stringValue {
                    text += " (\(name))"
                }
            } else {
                node = node?[key.stringValue]
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? message : "\(text): \(message)"
    }
}

/// Why a state machine file could not be loaded.
public enum StateMachineLoadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// The JSON does not have the expected shape; the text names where (line and state when known).
    case malformed(String)
    /// A definition is invalid (the error names the line and state).
    case invalid(StateMachineError)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "StateMachineLoadError: cannot read \(path): \(reason)"
        case .malformed(let what): "StateMachineLoadError: malformed state machine JSON at \(what)"
        case .invalid(let error): "StateMachineLoadError: \(error)"
        }
    }
}
