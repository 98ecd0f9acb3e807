import LonglinkCore
import LonglinkOpenSSL

/// Fuzz target: the JWT parser and verifier. The first byte picks the mode: even, the rest is a token as a client
/// would send it (structure, header and signature checks); odd, the rest is `header 0x00 payload`, signed with
/// the right secret so the fuzzer reaches the claims parser behind the signature check. Base64url decoding must
/// be canonical: whatever decodes re-encodes to the same text.
enum JWTParserFuzz {
    static let secret = Array("fuzzing-secret-fuzzing-secret-32".utf8)
    static let authorizer = try! JWTAuthorizer(secret: secret, issuer: nil, audience: nil)
    static let now: UInt64 = 1_800_000_000_000

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        if let decoded = Base64URL.decode(rest) {
            precondition(Array(Base64URL.encode(decoded).utf8) == rest, "base64url decoding is not canonical")
        }
        let token: String
        if mode & 1 == 0 {
            token = String(decoding: rest, as: UTF8.self)
        } else {
            let split = rest.firstIndex(of: 0) ?? rest.count
            let header = Array(rest[..<split])
            let payload = split < rest.count ? Array(rest[(split + 1)...]) : []
            token = JWTMinter.sign(header: header, payload: payload, secret: secret)
        }
        do {
            let claims = try authorizer.verify(token, nowMillis: now)
            // Whatever is accepted is well-formed: a subject, an expiry in the future, a known role.
            precondition(!claims.subject.isEmpty && claims.expiresAt * 1000 > now, "accepted bad claims \(claims)")
            if mode & 1 == 1 {
                precondition(token.hasPrefix(Base64URL.encode(Array(rest[..<(rest.firstIndex(of: 0) ?? rest.count)]))))
            }
        } catch {
            // Refusals are the normal outcome.
        }
    }

    static func seeds() -> [[UInt8]] {
        let minter = try! JWTMinter(secret: secret)
        let claims = JWTClaims(
            subject: "rider-1",
            role: .publisher,
            routes: [.all, try! RoutePattern(parsing: "order://taxi/*")],
            expiresAt: now / 1000 + 3600,
            notBefore: now / 1000 - 10,
            issuedAt: now / 1000,
            issuer: "longlink",
            audience: ["apps", "web"]
        )
        let token = minter.mint(claims)
        let header = Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)
        let payload = Array(#"{"sub":"a","exp":1800003600,"nbf":1,"routes":["order://taxi/1","*"],"role":"admin","aud":["x"]}"#.utf8)
        return [
            [0] + Array(token.utf8),
            [1] + header + [0] + payload,
            [1] + Array(#"{"alg":"none"}"#.utf8) + [0] + payload,
            [0] + Array("eyJhbGciOiJub25lIn0.e30.".utf8),
        ]
    }
}
