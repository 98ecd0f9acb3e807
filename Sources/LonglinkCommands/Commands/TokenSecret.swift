import Foundation

/// Loads the HS256 token secret from a file (`--secret-file`, or `LONGLINK_SECRET_FILE`) or from the
/// `LONGLINK_SECRET` environment variable, never from a flag (flags show in `ps`). The secret's bytes never reach
/// a log or an error message.
enum TokenSecret {
    /// The environment variable that may hold the secret itself.
    static let environmentName = "LONGLINK_SECRET"

    /// The secret and where it came from (for messages), or nil when none is configured. A file wins over the
    /// environment variable. Trailing whitespace (the newline `echo` or `openssl rand -hex` leave) is dropped.
    static func load(file: String?, environment: [String: String]) throws(CommandFailure) -> (secret: [UInt8], source: String, warning: String?)? {
        if let file, !file.isEmpty {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure("cannot read the token secret file \(file)", exitCode: 2)
            }
            var warning: String?
            if let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0
            {
                warning = "the token secret file \(file) is readable by other users (mode \(String(mode, radix: 8))); chmod 600 it"
            }
            return (trimmed(Array(data)), "file \(file)", warning)
        }
        if let value = environment[environmentName], !value.isEmpty {
            return (trimmed(Array(value.utf8)), "environment variable \(environmentName)", nil)
        }
        return nil
    }

    private static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        var end = bytes.count
        while end > 0 && [UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "\t")].contains(bytes[end - 1]) {
            end -= 1
        }
        return Array(bytes[..<end])
    }
}
