import LonglinkCore
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

/// The JSON of tokens (LonglinkJSON): what other libraries write verifies, and what `longlink token` writes stays
/// byte for byte what it was.
@Suite("JWT codec JSON", .ownThreads)
struct JWTCodecTests {
    let authorizer = try! JWTAuthorizer(secret: secret)

    @Test("verifies tokens laid out as other JWT libraries write them: spaces, other key order, escapes, decimals")
    func otherLayouts() throws {
        let header = #"{ "typ": "JWT", "alg": "HS256" }"#
        let body = """
            {
              "routes": ["order:\\/\\/taxi\\/8812", "order://food/*"],
              "exp": \(nowSeconds + 3600).0,
              "role": "publisher",
              "sub": "svc-\\u00e9\\ud83d\\ude95"
            }
            """
        let principal = try authorizer.authenticate(token: token(header: header, payload: body), nowMillis: now)
        #expect(principal.userID == "svc-é🚕")
        #expect(principal.role == .publisher)
        #expect(principal.expiresAtMillis == (nowSeconds + 3600) * 1000)
        #expect(principal.maySubscribe(to: try Route(parsing: "order://taxi/8812")))
        #expect(principal.maySubscribe(to: try Route(parsing: "order://food/7")))
    }

    @Test("refuses a header or payload that gives a member twice (which one counts would be ambiguous)")
    func duplicateMembers() {
        let twice = [
            token(payload: #"{"sub":"rider-1","exp":\#(nowSeconds + 3600),"role":"subscriber","role":"admin"}"#),
            token(header: #"{"alg":"HS256","alg":"none"}"#, payload: payload()),
        ]
        for token in twice {
            #expect(throws: AuthorizationError.self) { _ = try authorizer.authenticate(token: token, nowMillis: now) }
        }
    }

    @Test("a minted payload is compact JSON with sorted keys, slashes and HTML characters as they are")
    func mintedBytes() throws {
        let claims = JWTClaims(
            subject: "a<b>&c \"q\"",
            role: .publisher,
            routes: [try RoutePattern(parsing: "order://taxi/*")],
            expiresAt: 1_800_000_060,
            notBefore: 1_799_999_999,
            issuedAt: 1_800_000_000,
            issuer: "longlink",
            audience: ["apps", "backends"]
        )
        let expected = #"{"aud":["apps","backends"],"exp":1800000060,"iat":1800000000,"iss":"longlink","nbf":1799999999,"#
            + #""role":"publisher","routes":["order://taxi/*"],"sub":"a<b>&c \"q\""}"#
        #expect(String(decoding: JWTCodec.payload(claims), as: UTF8.self) == expected)
        let single = JWTClaims(subject: "s", role: .subscriber, routes: [], expiresAt: 5, audience: ["web"])
        #expect(String(decoding: JWTCodec.payload(single), as: UTF8.self) == #"{"aud":"web","exp":5,"role":"subscriber","routes":[],"sub":"s"}"#)
    }
}
