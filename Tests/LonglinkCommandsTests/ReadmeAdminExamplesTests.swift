import Foundation
import LonglinkTestSupport
import Testing

/// README's admin examples, run as written against a gateway started like `make run` (its token secret, no
/// `--insecure-dev`): only the operations address is the test gateway's port instead of 9170.
@Suite("README: the admin API and admin page examples work after make run", .serialized, .ownThreads)
struct ReadmeAdminExamplesTests {
    static var readme: String {
        get throws {
            let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: package.appendingPathComponent("README.md"), encoding: .utf8)
        }
    }

    /// The first ```sh block of the section under `heading` (up to the next heading).
    static func firstShellBlock(after heading: String, in text: String) -> String? {
        guard let section = text.range(of: "\n\(heading)\n") else { return nil }
        let end = text.range(of: "\n#{2,4} ", options: .regularExpression, range: section.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        guard let open = text.range(of: "```sh\n", range: section.upperBound..<end),
            let close = text.range(of: "\n```", range: open.upperBound..<end)
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    @Test("every curl in the Admin API block is authorized (no 401/403), the drain at its end stops the gateway")
    func adminAPIBlock() throws {
        let block = try #require(Self.firstShellBlock(after: "### Admin API", in: try Self.readme))
        #expect(block.contains("$A/admin/"))
        let gateway = try MakeRunGateway()
        // curl is bounded (the tap streams until interrupted) and prints each status code on its own line.
        let script = """
            curl() { command curl --max-time 3 -w '\\n[status %{http_code}]\\n' "$@"; }
            \(block.replacingOccurrences(of: "127.0.0.1:9170", with: "127.0.0.1:\(gateway.operationsPort)"))
            """
        let result = try gateway.bash(script, withReleaseOnPath: true, name: "admin-api", seconds: 90)
        #expect(result.status != nil, "the README block did not finish:\n\(result.output)")
        let statuses = result.output.split(separator: "\n").filter { $0.hasPrefix("[status ") }
        #expect(statuses.count >= 8, "\(result.output)")
        #expect(!statuses.contains("[status 401]") && !statuses.contains("[status 403]"), "\(result.output)")
        #expect(statuses.filter { $0 == "[status 200]" }.count >= 6, "\(result.output)")
        #expect(gateway.child.waitForExit(seconds: 20) == 0, "POST /admin/drain should stop the gateway: \(gateway.output)")
    }

    @Test("the Admin page command prints an address whose token the admin API accepts")
    func adminPageAddress() throws {
        let block = try #require(Self.firstShellBlock(after: "### Admin page", in: try Self.readme))
        let gateway = try MakeRunGateway()
        let result = try gateway.bash(block, withReleaseOnPath: true, name: "admin-page")
        #expect(result.status == 0, "\(result.output)")
        let address = try #require(result.output.split(separator: "\n").first { $0.hasPrefix("http://127.0.0.1:9170/admin#token=") })
        let token = String(address.dropFirst("http://127.0.0.1:9170/admin#token=".count))
        let page = try HTTPTestClient.fetch(port: gateway.operationsPort, "GET", "/admin")
        #expect(page.status == 200)
        let stats = try HTTPTestClient.fetch(port: gateway.operationsPort, "GET", "/admin/stats", headers: [("Authorization", "Bearer \(token)")])
        #expect(stats.status == 200, "\(stats.status) \(stats.text)")
    }
}
