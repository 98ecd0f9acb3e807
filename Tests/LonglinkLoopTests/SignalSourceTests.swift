import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

@Suite("SignalSource", .ownThreads)
struct SignalSourceTests {
    /// The signal goes to the loop thread itself (`raise` from a loop job is a thread-directed tgkill), where
    /// `SignalSource` has already blocked it, so it queues for the signalfd instead of running SIGHUP's default action
    /// (terminate) in some test-runner thread that never blocked it. A process-wide `kill(getpid(), SIGHUP)` is only
    /// safe once every thread blocks the signal, which is what `SignalSource.block` at the top of `main` is for.
    @Test("a SIGHUP arrives through the signalfd as a loop event")
    func deliversHangup() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let received = Shared<[UnixSignal]>([])

        group.loops[0].execute { context in
            let source = try! SignalSource(signals: [.hangup], on: context) { signal in
                received.update { $0.append(signal) }
            }
            #expect(source.signals == [.hangup])
            raise(SIGHUP)
        }

        #expect(eventually { received.value.count == 1 })
        #expect(received.value == [.hangup])
        #expect(UnixSignal.hangup.description == "SIGHUP")
        #expect(UnixSignal.lifecycle.contains(.terminate))
    }
}
