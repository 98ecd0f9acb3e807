import Foundation
import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Issue 14, item 1: answers count against the outbound limit like pushes. A client that pipelines requests and
/// never reads the answers is held by back-pressure and then cut with `slow`; the server's memory stays flat.
@Suite("Every queued frame counts against the outbound limit (real gateway process)", .serialized, .ownThreads)
struct OutboundLimitTests {
    /// What the never-reading client pipelines.
    enum Flood: String, CustomStringConvertible, Sendable {
        /// Pings (each answered by a pong).
        case pings
        /// Publishes the gateway refuses (an unknown state; past the publish rate, `rate_limited`).
        case refusedPublishes

        var description: String { rawValue }

        /// About 64 KiB of frames.
        func batch() throws -> [UInt8] {
            var bytes: [UInt8] = []
            var requestID: UInt32 = 0
            while bytes.count < 64 * 1024 {
                requestID += 1
                switch self {
                case .pings:
                    bytes += try FramePeer.bytes(.ping)
                case .refusedPublishes:
                    bytes += try FramePeer.bytes(
                        .publish(PublishRequest(requestID: requestID, orderID: "flood-1", line: "taxi", targetState: "nosuch"))
                    )
                }
            }
            return bytes
        }
    }

    /// How a never-reading client's flood ended.
    struct FloodOutcome {
        var sentBytes = 0
        var cutByServer = false
        var peakResidentBytes = 0
    }

    static let floodBytes = 30 << 20

    @Test(
        "a never-reading client pipelining 30 MB is cut as slow and the server's RSS stays within a few MiB",
        arguments: [
            (1, "disconnect", Flood.pings),
            (2, "disconnect", Flood.refusedPublishes),
            (2, "coalesce", Flood.pings),
            (4, "coalesce", Flood.refusedPublishes),
        ]
    )
    func neverReadingClient(loops: Int, policy: String, flood: Flood) throws {
        // The default 1 MiB outbound limit; a short pong timeout so a stalled reader is cut within the test.
        let server = try ServeProcess(["--loops", "\(loops)", "--slow-policy", policy, "--pong-timeout", "1s"])
        defer { server.stop() }
        let peer = try FramePeer(port: server.port, receiveBuffer: 4096)
        defer { peer.close() }
        #expect(try peer.handshake(token: "dev") != nil)
        usleep(300_000)
        let baseline = try #require(server.residentBytes)
        // Loopback's kernel buffers take several MiB of answers before the gateway's own queue fills; a debug build
        // on a loaded machine needs tens of seconds to answer that many pings, hence the generous bound.
        let outcome = try Self.pipelineWithoutReading(peer, try flood.batch(), server: server, within: .seconds(60))
        let slow = try server.metric("longlink_slow_consumer_disconnects_total")
        let slowCode = try server.metric("longlink_disconnects_total", labels: #"code="3002""#)
        let grown = Double(outcome.peakResidentBytes - baseline) / 1_048_576
        let report = "\(flood), loops \(loops), \(policy): sent \(outcome.sentBytes >> 20) MiB, cut \(outcome.cutByServer), "
            + "RSS \(baseline >> 20) → peak \(outcome.peakResidentBytes >> 20) MiB, slow \(slow)"
        #expect(outcome.cutByServer, "\(report)")
        #expect(grown < 8, "\(report)")
        #expect(slow == 1 && slowCode == 1, "\(report)")
    }

    /// Writes `batch` over and over (non-blocking) until `floodBytes` are sent, the server cuts the connection or
    /// `within` passes, sampling the server's resident memory every 100 ms. Never reads.
    static func pipelineWithoutReading(
        _ peer: FramePeer,
        _ batch: [UInt8],
        server: ServeProcess,
        within: Duration
    ) throws -> FloodOutcome {
        try Socket.setBufferSizes(peer.fd, send: 64 * 1024)
        try Socket.setNonBlocking(peer.fd)
        var outcome = FloodOutcome(peakResidentBytes: server.residentBytes ?? 0)
        let deadline = ContinuousClock.now + within
        var nextSample = ContinuousClock.now
        var offset = 0
        sending: while outcome.sentBytes < floodBytes && ContinuousClock.now < deadline {
            if ContinuousClock.now >= nextSample {
                outcome.peakResidentBytes = max(outcome.peakResidentBytes, server.residentBytes ?? 0)
                nextSample = ContinuousClock.now + .milliseconds(100)
            }
            var pfd = pollfd(fd: peer.fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let sent = batch.withUnsafeBytes { raw in
                Glibc.send(peer.fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                switch errno {
                case EAGAIN, EINTR: continue sending
                case EPIPE, ECONNRESET:
                    outcome.cutByServer = true
                    break sending
                default: throw IOError(errno: errno, function: "send")
                }
            }
            outcome.sentBytes += sent
            offset = (offset + sent) % batch.count
        }
        // The server may still be working through what it read: keep sampling for a moment.
        for _ in 0..<10 {
            outcome.peakResidentBytes = max(outcome.peakResidentBytes, server.residentBytes ?? 0)
            usleep(100_000)
        }
        return outcome
    }
}
