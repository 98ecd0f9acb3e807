import Foundation
import Testing

/// A gateway started the way `make run` starts it, in a temporary stand-in for the repository root: the binary
/// at `.build/release/longlink` (a link to the one under test), a development secret made with
/// `openssl rand -hex 32` in `data/dev-secret`, and `.build/release/longlink serve … --secret-file data/dev-secret`
/// run from that directory. Only the store (memory) and the ports (0, for both listeners) differ.
final class MakeRunGateway {
    let root: TemporaryDirectory
    let child: SpawnedCommand
    let port: Int
    let operationsPort: Int

    /// The environment a shell in `root` gets: no `longlink` on PATH unless `withReleaseOnPath`, as README's
    /// "With PATH=$PWD/.build/release:$PATH" says.
    func shellEnvironment(withReleaseOnPath: Bool) -> [String: String] {
        let path = (withReleaseOnPath ? "\(root.path)/.build/release:" : "") + "/usr/bin:/bin"
        return ["PATH": path, "HOME": root.path]
    }

    init() throws {
        let binary = try #require(longlinkExecutable(), "longlink is not built; run `swift build`")
        root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/.build/release", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/.build/release/longlink", withDestinationPath: binary)
        let secret = try SpawnedCommand.shell(
            "mkdir -p data && (umask 077 && openssl rand -hex 32 > data/dev-secret)",
            environment: ["PATH": "/usr/bin:/bin"],
            directory: root.path,
            outputPath: root.path + "/secret.log"
        )
        try #require(secret.status == 0, "openssl rand: \(secret.output)")
        child = try SpawnedCommand(
            ["/bin/sh", "-c", "exec .build/release/longlink serve --store memory --secret-file data/dev-secret "
                + "--listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --loops 1 --drain-period 200ms"],
            environment: ["PATH": "/usr/bin:/bin"],
            directory: root.path,
            outputPath: root.path + "/serve.log"
        )
        operationsPort = try #require(child.waitForNumber(after: "operations: http://127.0.0.1:", seconds: 30), "serve did not start: \(child.output)")
        port = try #require(child.waitForNumber(after: "serving on 127.0.0.1:", seconds: 1), "no port in: \(child.output)")
    }

    /// Its banner and log so far.
    var output: String { child.output }

    /// Runs `script` with bash in the stand-in repository root.
    func bash(_ script: String, withReleaseOnPath: Bool, name: String, seconds: Double = 60) throws -> (status: Int32?, output: String) {
        let path = root.path + "/\(name).sh"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try SpawnedCommand(
            ["/bin/bash", path],
            environment: shellEnvironment(withReleaseOnPath: withReleaseOnPath),
            directory: root.path,
            outputPath: root.path + "/\(name).log"
        )
        let status = run.waitForExit(seconds: seconds)
        return (status, run.output)
    }

    deinit { _ = child.terminate() }
}
