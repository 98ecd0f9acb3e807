import Foundation
import LonglinkTestSupport
import Testing

@testable import LonglinkCommands

@Suite("serve's banner: its copy-paste commands run as printed", .serialized, .ownThreads)
struct ServeBannerTests {
    @Test("the commands call the executable by the path serve was started with, or longlink from PATH")
    func invocation() {
        #expect(ServeBanner.invocation(argv0: ".build/release/longlink") == ".build/release/longlink")
        #expect(ServeBanner.invocation(argv0: "/usr/local/bin/longlink") == "/usr/local/bin/longlink")
        #expect(ServeBanner.invocation(argv0: "longlink") == "longlink")
        #expect(ServeBanner.invocation(argv0: "/work/.build/debug/LonglinkPackageTests.xctest") == "longlink")
        #expect(ServeBanner.invocation(argv0: nil) == "longlink")
        #expect(ServeBanner.invocation(argv0: "/opt/long link/longlink") == "'/opt/long link/longlink'")
        #expect(ServeBanner.shellWord("it's") == #"'it'\''s'"#)
    }

    @Test("after a make-run-style start, the banner's subscribe and publish lines work pasted into a shell at the root")
    func bannerCommandsRun() throws {
        let gateway = try MakeRunGateway()
        let banner = gateway.output
        let commands = Self.tryCommands(in: banner)
        try #require(commands.count == 2, "expected a subscribe and a publish line in:\n\(banner)")
        let subscribe = try #require(commands.first { $0.contains(" subscribe ") })
        let publish = try #require(commands.first { $0.contains(" publish ") })

        // A shell without longlink on PATH, in the directory serve was started in (the repository root for make run).
        let published = try gateway.bash(publish, withReleaseOnPath: false, name: "publish")
        #expect(published.status == 0, "\(publish)\n\(published.output)")
        #expect(published.output.contains("stored order://taxi/8812"), "\(published.output)")
        // The subscribe line runs until interrupted; bounded here to the first change (the order's snapshot).
        let subscribed = try gateway.bash(subscribe + " --count 1 --duration 20s", withReleaseOnPath: false, name: "subscribe")
        #expect(subscribed.status == 0, "\(subscribe)\n\(subscribed.output)")
        #expect(subscribed.output.contains("created"), "\(subscribed.output)")
    }

    /// The indented command lines after "Try, in another terminal", with `\` continuations joined.
    static func tryCommands(in banner: String) -> [String] {
        guard let start = banner.range(of: "Try, in another terminal") else { return [] }
        var commands: [String] = []
        var continued = false
        for line in banner[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("  ") else { break }
            var command = line.trimmingCharacters(in: .whitespaces)
            let continues = command.hasSuffix("\\")
            if continues { command = String(command.dropLast()).trimmingCharacters(in: .whitespaces) }
            if continued, let last = commands.popLast() { commands.append(last + " " + command) } else { commands.append(command) }
            continued = continues
        }
        return commands
    }
}
