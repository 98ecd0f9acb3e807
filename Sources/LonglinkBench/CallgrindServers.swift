import Foundation
import Glibc

/// Starts the servers `bench profile` measures under `valgrind --tool=callgrind` (Debian's valgrind), each writing
/// its counts to a file of its own, and ends them cleanly so that callgrind writes that file.
///
/// Valgrind 3.19 cannot read the DWARF 5 debug information Swift 6 emits, so the gateway runs from a copy of the
/// binary made with `objcopy --strip-debug` (symbols stay: `callgrind_annotate` still names every function).
struct CallgrindServers {
    /// The `valgrind` executable.
    let valgrind: String
    /// `nice`, when installed: the servers run at a higher priority than the machine's other work where that is
    /// permitted (a server under callgrind that gets less than the core it needs falls behind and batches, which
    /// lowers its count per delivery).
    let nice: String?
    /// How much higher than bench's own priority the servers run (`nice -n`).
    static let priorityBoost = -10
    /// The stripped copy of the `longlink` binary the gateway runs from.
    let gatewayBinary: String
    /// How long a server may take to start under callgrind (tens of times slower than natively).
    var startTimeout: Duration = .seconds(120)
    /// How long a server may take to end and write its file.
    var stopTimeout: Duration = .seconds(120)

    /// Finds valgrind and objcopy, and writes the stripped copy of `binary` into `directory`.
    init(binary: String, directory: String) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("--binary \(binary) is not an executable (build it first: make release)")
        }
        guard let valgrind = BenchServers.findExecutable("valgrind") else {
            throw BenchError("valgrind is not installed (Debian package valgrind)")
        }
        guard let objcopy = BenchServers.findExecutable("objcopy") else {
            throw BenchError("objcopy is not installed (Debian package binutils)")
        }
        self.valgrind = valgrind
        self.nice = BenchServers.findExecutable("nice")
        self.gatewayBinary = "\(directory)/longlink-stripped"
        let log = "\(directory)/objcopy.log"
        let child = try ChildProcess(executable: objcopy, arguments: ["--strip-debug", binary, gatewayBinary], logPath: log)
        guard child.waitForExit(timeout: .seconds(120)), FileManager.default.isExecutableFile(atPath: gatewayBinary) else {
            child.stop()
            throw BenchError("objcopy --strip-debug \(binary) failed: \(child.log)")
        }
    }

    /// The wrapper command that runs a server under callgrind, counting into `outputFile`.
    func wrapper(outputFile: String) -> [String] {
        let priority = nice.map { [$0, "-n", String(Self.priorityBoost)] } ?? []
        return priority + [valgrind, "--tool=callgrind", "--callgrind-out-file=\(outputFile)"]
    }

    /// The niceness of process (or thread) `pid`, 0 = the calling thread; nil when it cannot be read.
    static func niceness(of pid: Int32 = 0) -> Int32? {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(pid))
        return errno == 0 ? value : nil
    }

    /// Raises the calling thread's priority by `priorityBoost` when permitted; threads it starts afterwards (the
    /// load generator's loops) inherit it, so the paced publisher keeps its rate on a busy machine too.
    static func raiseOwnPriority() {
        guard let current = niceness() else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, current + Int32(priorityBoost))
    }

    /// Starts the gateway (memory store, one event loop, bench's serve flags) under callgrind.
    func startGateway(outputFile: String) throws -> BenchServer {
        try BenchServers.startGateway(
            executable: gatewayBinary,
            flags: BenchServers.gatewayFlags + ["--loops", "1", "--drain-period", "1s", "--insecure-dev"],
            listen: "127.0.0.1:0",
            timeout: startTimeout,
            wrapper: wrapper(outputFile: outputFile)
        )
    }

    /// Starts `redis-server` (bench's flags, no persistence) under callgrind.
    func startRedis(outputFile: String) throws -> BenchServer {
        try BenchServers.startRedis(timeout: startTimeout, wrapper: wrapper(outputFile: outputFile))
    }

    /// Ends `server` with SIGTERM (the gateway drains and exits; redis-server shuts down without saving, it has no
    /// persistence configured) and reads the file callgrind writes on the way out.
    func stop(_ server: BenchServer, outputFile: String) throws -> CallgrindFile {
        guard let child = server.child else { throw BenchError("bench profile did not start this server") }
        child.signal(SIGTERM)
        let exited = child.waitForExit(timeout: stopTimeout)
        if !exited { child.stop(grace: .milliseconds(100)) }
        guard exited, let file = CallgrindFile.read(outputFile), file.instructions != nil else {
            throw BenchError(
                "callgrind wrote no totals to \(outputFile)\(exited ? "" : " (the server did not exit within \(stopTimeout))"): "
                    + String(child.log.suffix(2_000))
            )
        }
        return file
    }
}
