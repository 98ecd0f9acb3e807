import Foundation
import LonglinkOperations
import LonglinkJSON
import LonglinkTestSupport
import Testing

/// `docs/api/openapi.json` against the API a real gateway serves, both ways: every documented operation exists and
/// answers with a documented status and the documented required members, and every served endpoint is documented.
@Suite("OpenAPI document of the backend API matches what is served", .serialized, .ownThreads)
struct OpenAPIDocumentTests {
    static func document() throws -> JSONValue {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: package.appendingPathComponent("docs/api/openapi.json"), encoding: .utf8)
        return try JSONValue.parse(text)
    }

    /// (method, path) of every documented operation.
    static func operations(_ document: JSONValue) throws -> [(method: String, path: String, operation: JSONValue)] {
        guard case .object(let paths) = try #require(document["paths"]) else { throw HTTPTestError("paths is not an object") }
        var result: [(String, String, JSONValue)] = []
        for (path, item) in paths {
            guard case .object(let methods) = item else { continue }
            for (method, operation) in methods where ["get", "post", "put", "delete", "patch"].contains(method) {
                result.append((method.uppercased(), path, operation))
            }
        }
        return result
    }

    /// The schema behind `value`, following one `$ref` into components.
    static func resolve(_ value: JSONValue?, in document: JSONValue) -> JSONValue? {
        guard let value else { return nil }
        guard let reference = value["$ref"]?.stringValue else { return value }
        var current: JSONValue? = document
        for part in reference.dropFirst(2).split(separator: "/") { current = current?[String(part)] }
        return current
    }

    @Test("the document lists exactly the endpoints the server routes (both ways) and is OpenAPI 3")
    func documentMatchesEndpoints() throws {
        let document = try Self.document()
        #expect(document["openapi"]?.stringValue?.hasPrefix("3.") == true)
        let documented = Set(try Self.operations(document).map { "\($0.method) \($0.path)" })
        let served = Set(APIServer.endpoints.map { "\($0.method) \($0.path)" })
        #expect(documented == served, "documented only: \(documented.subtracting(served)); served only: \(served.subtracting(documented))")
    }

    @Test("every documented operation answers a valid request with a documented status and its required members")
    func documentedOperationsAnswerAsDocumented() throws {
        let document = try Self.document()
        let gateway = try MakeRunGateway()
        let token = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let requests: [String: (target: String, body: String?)] = [
            "POST /api/v1/publish": ("/api/v1/publish", #"{"order":"9501","line":"taxi","state":"created"}"#),
            "POST /api/v1/publish/batch": ("/api/v1/publish/batch", #"{"changes":[{"order":"9501","line":"taxi","state":"dispatching"}]}"#),
            "GET /api/v1/orders/{line}/{id}": ("/api/v1/orders/taxi/9501", nil),
        ]
        let operations = try Self.operations(document).sorted { ($0.method == "GET" ? 1 : 0, $0.path) < ($1.method == "GET" ? 1 : 0, $1.path) }
        for (method, path, operation) in operations {
            let key = "\(method) \(path)"
            let request = try #require(requests[key], "no sample request for the documented operation \(key)")
            let response = try HTTPTestClient.fetch(
                port: gateway.apiPort, method, request.target,
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: request.body
            )
            #expect(response.status == 200, "\(key): \(response.status) \(response.text)")
            let documented = try #require(operation["responses"]?["\(response.status)"], "\(key) answered an undocumented \(response.status)")
            let schema = Self.resolve(documented["content"]?["application/json"]?["schema"], in: document)
            let body = try JSONValue.parse(response.body)
            for member in schema?["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                #expect(body[member] != nil, "\(key): the documented member '\(member)' is missing from \(response.text)")
            }
            // Without a token: 401, which every operation documents.
            let anonymous = try HTTPTestClient.fetch(port: gateway.apiPort, method, request.target, body: request.body)
            #expect(anonymous.status == 401 && operation["responses"]?["401"] != nil, "\(key) without a token: \(anonymous.status)")
        }
        let undocumented = try HTTPTestClient.fetch(port: gateway.apiPort, "GET", "/api/v1/everything", headers: [("Authorization", "Bearer \(token)")])
        #expect(undocumented.status == 404, "an undocumented path is not served: \(undocumented.status)")
    }
}
