public import Foundation
public import LonglinkCore

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
        let file: CatalogFile
        do {
            file = try JSONDecoder().decode(CatalogFile.self, from: data)
        } catch let error as DecodingError {
            throw .malformed(describe(error, in: data))
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(CatalogFile(lines: definitions))
    }

    private struct CatalogFile: Codable {
        var lines: [StateMachineDefinition]
    }

    /// A decoding error's path with line and state names filled in where they can be read
    /// (`lines[1] (premium).states[3] (reserved).next: expected an array`).
    private static func describe(_ error: DecodingError, in data: Data) -> String {
        let (path, message): ([any CodingKey], String) =
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                (context.codingPath, context.debugDescription)
            case .keyNotFound(let key, let context): (context.codingPath, "missing key '\(key.stringValue)'")
            @unknown default: ([], "\(error)")
            }
        let root = try? JSONSerialization.jsonObject(with: data)
        var node: Any? = root
        var text = ""
        for key in path {
            if let index = key.intValue {
                let array = node as? [Any]
                node = array.flatMap { index < $0.count ? $0[index] : nil }
                text += "[\(index)]"
                if let object = node as? [String: Any], let name = (object["line"] ?? object["name"]) as? String {
                    text += " (\(name))"
                }
            } else {
                node = (node as? [String: Any])?[key.stringValue]
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
