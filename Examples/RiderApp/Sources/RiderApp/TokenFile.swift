import Foundation
import LonglinkClient

/// The app's token source: the file its login flow keeps fresh (a real app would call its backend here). Read again
/// on every call, so a token written there after the client started is the one the next request gets: before every
/// connection attempt, when the gateway warns that the token expires soon, and once after a refusal.
struct TokenFile: Sendable {
    /// The file's path.
    var path: String

    /// The token in the file now (surrounding whitespace dropped); the provider the client is given.
    func token(for request: TokenRequest) throws(TokenFileError) -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw TokenFileError(path: path, reason: "cannot read it")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw TokenFileError(path: path, reason: "it is empty") }
        Console.line("token: \(request): read \(path)")
        return token
    }
}

/// No token could be read (the client then stops with this reason: `authentication(.tokenUnavailable)`).
struct TokenFileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "token file \(path): \(reason)" }
}
