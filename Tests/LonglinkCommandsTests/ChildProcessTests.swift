import Foundation
import Glibc
import LonglinkTestSupport
import Testing

/// The shared test helper that every end-to-end test starts its children with.
@Suite("ChildProcess: posix_spawn, reaped by its own PID", .ownThreads)
struct ChildProcessTests {
    static let scratch = NSTemporaryDirectory() + "longlink-child-\(getpid())-"

    @Test("an exit status and a signal are told apart")
    func exitAndSignal() throws {
        let exits = try ChildProcess("/bin/sh", ["-c", "exit 3"])
        #expect(exits.waitForExit(timeout: .seconds(20)) == .exited(3))
        #expect(!exits.isRunning)
        let sleeper = try ChildProcess("/bin/sleep", ["30"])
        #expect(sleeper.isRunning)
        #expect(sleeper.terminate(timeout: .seconds(20)) == .signaled(SIGTERM))
        #expect(sleeper.termination?.shellStatus == 128 + SIGTERM)
        #expect(!sleeper.signal(SIGTERM), "no signal once it is reaped")
    }

    @Test("at the deadline the child is killed and reaped, and nil returned")
    func deadline() throws {
        let sleeper = try ChildProcess("sleep", ["30"])
        #expect(sleeper.waitForExit(timeout: .milliseconds(100)) == nil)
        #expect(sleeper.termination == .signaled(SIGKILL))
        #expect(kill(sleeper.pid, 0) != 0, "no zombie left")
    }

    @Test("environment, working directory, stdin file and one file for stdout and stderr")
    func environmentDirectoryAndFiles() throws {
        let output = Self.scratch + "out-\(UUID().uuidString)"
        let input = Self.scratch + "in-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: input)
        }
        try "from stdin\n".write(toFile: input, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            "/bin/sh", ["-c", "pwd; echo \"$GREETING\"; cat; echo oops >&2; echo \"${HOME:-no home}\""],
            environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"], directory: "/usr",
            standardInput: input, standardOutput: output, standardError: output
        )
        #expect(child.waitForExit(timeout: .seconds(20)) == .exited(0))
        #expect(child.standardOutputText == "/usr\nhello\nfrom stdin\noops\nno home\n")
        #expect(child.standardOutputBytes(from: 5) == Array("hello\nfrom stdin\noops\nno home\n".utf8))
    }

    @Test("the child has only descriptors 0, 1 and 2, and no signal the test thread blocks stays blocked")
    func descriptorsAndSignalMask() throws {
        let inherited = open("/dev/null", O_RDONLY)  // no O_CLOEXEC: a plain fork/exec would pass it on
        defer { close(inherited) }
        let probe = try ChildProcess("/bin/sh", ["-c", "test -e /proc/$$/fd/\(inherited)"])
        #expect(probe.waitForExit(timeout: .seconds(20)) == .exited(1))

        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let sleeper = try ChildProcess("/bin/sleep", ["30"])
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        #expect(sleeper.terminate(timeout: .seconds(10)) == .signaled(SIGTERM))
    }
}
