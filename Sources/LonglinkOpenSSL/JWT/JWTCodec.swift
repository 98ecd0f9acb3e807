public import LonglinkCore
import LonglinkJSON

/// Parses and builds the JSON parts of HS256 JWTs with `LonglinkJSON`. Used at connect and refresh only (never
/// per message). Parsing takes any valid JSON (whitespace, any key order, escapes), so tokens other JWT libraries
/// make verify; a member given twice is refused (which of the two would count is ambiguous). The signature covers
/// the exact bytes of the token, never a re-serialisation.
///
/// Verification order matters: structure, then the header's `alg` (only `HS256`; `none` and every other algorithm
/// are refused before anything else is looked at), then the signature in constant time, and only then is the
/// untrusted payload parsed.
public enum JWTCodec {
    /// Longest token accepted (bytes); longer ones are refused before any work.
    public static let maximumTokenLength = 8 * 1024
    /// Most route patterns in one token.
    public static let maximumRoutes = 1024

    /// The header every Longlink token carries.
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    /// Splits `token` into its three parts and checks the header; returns the signing input, the payload bytes
    /// and the signature.
    public static func split(_ token: String) throws(AuthorizationError) -> (signingInput: [UInt8], payload: [UInt8], signature: [UInt8]) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { throw .invalidToken("missing token") }
        guard bytes.count <= maximumTokenLength else { throw .invalidToken("token longer than \(maximumTokenLength) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .invalidToken("not a JWT (expected three dot-separated parts)") }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw .invalidToken("header is not base64url") }
        guard let payload = Base64URL.decode(parts[1]) else { throw .invalidToken("payload is not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw .invalidToken("signature is not base64url") }
        let header = try object(headerBytes, "header")
        guard let alg = header["alg"]?.stringValue else { throw .invalidToken("header has no alg") }
        guard alg == "HS256" else { throw .invalidToken("algorithm '\(alg.prefix(16))' is not accepted (only HS256)") }
        if let typ = header["typ"], typ.stringValue?.uppercased() != "JWT" {
            throw .invalidToken("header typ is not JWT")
        }
        if header["crit"] != nil { throw .invalidToken("critical header extensions are not supported") }
        let signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
        return (signingInput, payload, signature)
    }

    /// Parses verified payload bytes into claims.
    public static func claims(_ payload: [UInt8]) throws(AuthorizationError) -> JWTClaims {
        let json = try object(payload, "payload")
        guard let subject = json["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 256 else {
            throw .invalidToken("sub must be a non-empty string of at most 256 bytes")
        }
        guard let expiresAt = try seconds(json["exp"], "exp") else { throw .invalidToken("exp is required") }
        let notBefore = try seconds(json["nbf"], "nbf")
        let issuedAt = try seconds(json["iat"], "iat")
        var issuer: String?
        if let value = json["iss"] {
            guard let text = value.stringValue else { throw .invalidToken("iss must be a string") }
            issuer = text
        }
        var audience: [String] = []
        switch json["aud"] {
        case nil: break
        case .string(let text)?: audience = [text]
        case .array(let list)?:
            for item in list {
                guard let text = item.stringValue else { throw .invalidToken("aud must be a string or a list of strings") }
                audience.append(text)
            }
        default: throw .invalidToken("aud must be a string or a list of strings")
        }
        var role = Principal.Role.subscriber
        if let value = json["role"] {
            guard let text = value.stringValue, let parsed = Principal.Role(rawValue: text) else {
                throw .invalidToken("role must be subscriber, publisher or admin")
            }
            role = parsed
        }
        var routes: [RoutePattern] = []
        if let value = json["routes"] {
            guard let list = value.arrayValue, list.count <= maximumRoutes else {
                throw .invalidToken("routes must be a list of at most \(maximumRoutes) route patterns")
            }
            for item in list {
                guard let text = item.stringValue else { throw .invalidToken("routes must hold strings") }
                do {
                    routes.append(try RoutePattern(parsing: text))
                } catch {
                    throw .invalidToken("routes: \(error)")
                }
            }
        }
        return JWTClaims(
            subject: subject,
            role: role,
            routes: routes,
            expiresAt: expiresAt,
            notBefore: notBefore,
            issuedAt: issuedAt,
            issuer: issuer,
            audience: audience
        )
    }

    /// The payload JSON for `claims`: compact, keys sorted (so equal claims give equal tokens), strings escaped only
    /// where JSON requires it; the bytes `JSONSerialization` with `.sortedKeys` and `.withoutEscapingSlashes` wrote.
    public static func payload(_ claims: JWTClaims) -> [UInt8] {
        var members: [(String, JSONValue)] = []
        if claims.audience.count == 1 { members.append(("aud", .string(claims.audience[0]))) }
        if claims.audience.count > 1 { members.append(("aud", .array(claims.audience.map(JSONValue.string)))) }
        members.append(("exp", .uint(claims.expiresAt)))
        if let iat = claims.issuedAt { members.append(("iat", .uint(iat))) }
        if let iss = claims.issuer { members.append(("iss", .string(iss))) }
        if let nbf = claims.notBefore { members.append(("nbf", .uint(nbf))) }
        members.append(("role", .string(claims.role.rawValue)))
        members.append(("routes", .array(claims.routes.map { .string($0.description) })))
        members.append(("sub", .string(claims.subject)))
        return Array(JSONValue.object(members).serialized(htmlSafe: false).utf8)
    }

    /// `bytes` as a JSON object whose members each appear once.
    private static func object(_ bytes: [UInt8], _ part: String) throws(AuthorizationError) -> JSONValue {
        guard let value = try? JSONValue.parse(bytes), case .object(let members) = value else {
            throw .invalidToken("\(part) is not a JSON object")
        }
        var names = Set<String>()
        for (name, _) in members where !names.insert(name).inserted {
            throw .invalidToken("\(part) has the member '\(name.prefix(32))' twice")
        }
        return value
    }

    /// A NumericDate claim: a non-negative number of seconds (fractions are truncated).
    private static func seconds(_ value: JSONValue?, _ name: String) throws(AuthorizationError) -> UInt64? {
        guard let value else { return nil }
        guard let double = value.doubleValue else { throw .invalidToken("\(name) must be a number") }
        guard double.isFinite, double >= 0, double < 1e15 else { throw .invalidToken("\(name) is out of range") }
        return UInt64(double)
    }
}
