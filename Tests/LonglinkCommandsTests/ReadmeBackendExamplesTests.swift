import Foundation
import LonglinkTestSupport
import Testing

/// README's "Backends, dispatch consoles and presence" examples, run as written against a gateway started like
/// `make run` (its token secret, its `--api-listen`): only the addresses are the test gateway's free ports.
@Suite("README: the backend API, console and presence examples work after make run", .serialized, .ownThreads)
struct ReadmeBackendExamplesTests {
    /// Every ```sh block of the section under `heading`, in order.
    static func shellBlocks(after heading: String, in text: String) -> [String] {
        guard let section = text.range(of: "\n\(heading)\n") else { return [] }
        let end = text.range(of: "\n## ", range: section.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        var blocks: [String] = []
        var cursor = section.upperBound
        while let open = text.range(of: "```sh\n", range: cursor..<end), let close = text.range(of: "\n```", range: open.upperBound..<end) {
            blocks.append(String(text[open.upperBound..<close.lowerBound]))
            cursor = close.upperBound
        }
        return blocks
    }

    @Test("the API publishes with a publisher token, a console follows order://taxi/*, a rider sees the driver")
    func examples() throws {
        let blocks = Self.shellBlocks(after: "## Backends, dispatch consoles and presence", in: try ReadmeAdminExamplesTests.readme)
        try #require(blocks.count == 3, "expected the API, console and presence blocks, found \(blocks.count)")
        let gateway = try MakeRunGateway()
        let script = "export LONGLINK_SERVER=127.0.0.1:\(gateway.port)\n"
            + blocks.joined(separator: "\necho '--- next block'\n").replacingOccurrences(of: "127.0.0.1:9180", with: "127.0.0.1:\(gateway.apiPort)")
        let result = try gateway.bash(script, withReleaseOnPath: true, name: "backend-examples", seconds: 60)
        #expect(result.status == 0, "\(result.output)")
        let output = result.output
        #expect(output.contains(#""route":"order://taxi/9101","#) && output.contains(#""offset":1,"#), "\(output)")
        #expect(output.contains(#""applied":2,"refused":1"#), "\(output)")
        #expect(output.contains(#""driver_id":"d-42""#), "\(output)")
        #expect(output.contains(#""field":"eta","code":422,"status":422"#), "\(output)")
        let lines = output.split(separator: "\n")
        #expect(lines.contains { $0.contains("order://taxi/9102") } && lines.contains { $0.contains("order://taxi/9103") }, "\(output)")
        #expect(output.contains("order://taxi/9101: 1 subscribed, 1 users"), "\(output)")
        #expect(output.contains("driver-42  client=longlink-subscribe  conn=c"), "\(output)")
    }
}
