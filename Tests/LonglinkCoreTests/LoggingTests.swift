import LonglinkCore
import Synchronization
import Testing
import LonglinkTestSupport

/// Collects records for assertions.
final class CollectingSink: LogSink {
    private let records = Mutex<[LogRecord]>([])
    func write(_ record: LogRecord) { records.withLock { $0.append(record) } }
    var all: [LogRecord] { records.withLock { $0 } }
}

@Suite("Logging: levels changeable at run time, no formatting when off, no secrets", .ownThreads)
struct LoggingTests {
    @Test("a level switch shared by derived loggers filters before formatting, and changes at run time")
    func levelSwitch() {
        let sink = CollectingSink()
        let levels = LogLevelSwitch(.warning)
        let root = Logger(label: "root", level: .trace, sink: sink, levelSwitch: levels)
        let child = root.labeled("gateway")
        let formatted = Atomic<Int>(0)
        func message(_ text: String) -> String {
            formatted.add(1, ordering: .relaxed)
            return text
        }
        child.info(message("hidden"))
        child.warning(message("shown"))
        #expect(formatted.load(ordering: .relaxed) == 1)
        levels.set(.debug)
        child.debug(message("now shown"), [("conn", "c1"), ("user", "rider-1")])
        #expect(sink.all.map(\.message) == ["shown", "now shown"])
        #expect(sink.all.last?.label == "gateway")
        #expect(sink.all.last?.metadata.map(\.0) == ["conn", "user"])
        #expect(child.effectiveLevel == .debug)
    }

    @Test("bearer credentials, JWT-shaped strings and secret-named fields never reach a sink")
    func redaction() {
        let sink = CollectingSink()
        let logger = Logger(label: "t", level: .trace, sink: sink)
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyaWRlci0xIn0.c2lnbmF0dXJl"
        logger.error("refused Authorization: Bearer s3cr3t-value for conn c1", [("token", "abc"), ("conn", "c1")])
        logger.error("invalid token: \(jwt) expired", [("detail", "sent \(jwt)"), ("client_secret", "x")])
        let text = sink.all.map { $0.message + $0.metadata.map { "\($0.0)=\($0.1)" }.joined() }.joined(separator: "\n")
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("eyJ"))
        #expect(!text.contains("=abc"))
        #expect(text.contains("conn c1") && text.contains("conn=c1"))
        #expect(sink.all[0].metadata.first { $0.0 == "token" }?.1 == LogRedaction.mask)
        #expect(sink.all[1].metadata.first { $0.0 == "client_secret" }?.1 == LogRedaction.mask)
        #expect(LogRedaction.scrub("plain words stay") == "plain words stay")
    }
}
