import Foundation
import LonglinkTestSupport
import Testing

@testable import LonglinkOperations

/// The operations listener serves copies of `clients/js/longlink.js` and `clients/js/example.html` (compiled into
/// `ClientAssets.swift`); this fails when a copy differs from its file. `LONGLINK_WRITE_CLIENT_ASSETS=1` rewrites
/// the Swift file from the files (then build again).
@Suite("client assets served by the operations listener", .ownThreads)
struct ClientAssetsTests {
    static var root: String { GatewayProcess.packageRoot }

    /// The Swift source that embeds the two files.
    static func source(script: String, example: String) -> String {
        func literal(_ text: String) -> String { "####\"\"\"\n" + text + "\n\"\"\"####" }
        return """
            // Generated from clients/js/longlink.js and clients/js/example.html; do not edit here. ClientAssetsTests fails
            // when they differ; `LONGLINK_WRITE_CLIENT_ASSETS=1 swift test --filter ClientAssetsTests` rewrites this file.

            /// The JavaScript client and its example page as the operations listener serves them (`/longlink.js`,
            /// `/example`): copies of `clients/js/`, so pages load them from the admin page's origin.
            enum ClientAssets {
                /// `clients/js/longlink.js`.
                static let script: [UInt8] = Array(scriptText.utf8)
                /// `clients/js/example.html`.
                static let example: [UInt8] = Array(exampleText.utf8)

                static let scriptText = \(literal(script))

                static let exampleText = \(literal(example))
            }

            """
    }

    @Test("the embedded client and example page are clients/js/longlink.js and clients/js/example.html")
    func embeddedCopies() throws {
        let script = try String(contentsOfFile: Self.root + "/clients/js/longlink.js", encoding: .utf8)
        let example = try String(contentsOfFile: Self.root + "/clients/js/example.html", encoding: .utf8)
        if ProcessInfo.processInfo.environment["LONGLINK_WRITE_CLIENT_ASSETS"] == "1" {
            try Self.source(script: script, example: example)
                .write(toFile: Self.root + "/Sources/LonglinkOperations/Admin/ClientAssets.swift", atomically: true, encoding: .utf8)
        }
        #expect(ClientAssets.scriptText == script, "ClientAssets.swift is out of date: LONGLINK_WRITE_CLIENT_ASSETS=1 swift test --filter ClientAssetsTests")
        #expect(ClientAssets.exampleText == example, "ClientAssets.swift is out of date: LONGLINK_WRITE_CLIENT_ASSETS=1 swift test --filter ClientAssetsTests")
    }
}
