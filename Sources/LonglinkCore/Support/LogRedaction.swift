/// Keeps credentials out of log lines: every record passes through `redacted()` before it reaches a sink.
///
/// Metadata whose key names a credential (`token`, `secret`, `password`, `authorization`, `cookie`, `key` as in
/// `api_key`) has its value replaced; in messages and other values, `Bearer <credential>` and anything shaped like
/// a JWT (`eyJ…​.…​.…`) are replaced. Code should not log credentials in the first place; this is the safety net.
public enum LogRedaction {
    /// The replacement text.
    public static let mask = "[redacted]"

    /// Whether a metadata key names a credential.
    public static func isSecretKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        return ["token", "secret", "password", "passwd", "authorization", "cookie", "api_key", "apikey", "credential"]
            .contains { lower.contains($0) }
    }

    /// `text` with bearer credentials and JWT-shaped strings masked (returned unchanged, without copying, when it
    /// has neither).
    public static func scrub(_ text: String) -> String {
        guard text.contains("eyJ") || text.contains("earer ") else { return text }
        var words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index < words.count {
            if words[index].lowercased().hasSuffix("bearer") && index + 1 < words.count && !words[index + 1].isEmpty {
                words[index + 1] = mask
                index += 2
                continue
            }
            if looksLikeJWT(words[index]) { words[index] = mask }
            index += 1
        }
        return words.joined(separator: " ")
    }

    /// A word containing `eyJ` followed by two more dot-separated base64url parts.
    static func looksLikeJWT(_ word: String) -> Bool {
        guard let start = word.firstRange(of: "eyJ") else { return false }
        let tail = word[start.lowerBound...]
        let parts = tail.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return false }
        let base64url: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=" }
        return parts[0].count >= 8 && parts[0].allSatisfy(base64url) && parts[1].prefix(4).allSatisfy(base64url)
    }
}

extension LogRecord {
    /// This record with credentials masked (see `LogRedaction`).
    public func redacted() -> LogRecord {
        var copy = self
        copy.message = LogRedaction.scrub(message)
        copy.metadata = metadata.map { key, value in
            (key, LogRedaction.isSecretKey(key) ? LogRedaction.mask : LogRedaction.scrub(value))
        }
        return copy
    }
}
