import Foundation
import Glibc
import LonglinkCommands
import LonglinkTestSupport
import Testing

/// deploy/longlink.service's documented install, performed for real without systemd: the header's commands run
/// with a shell (without `sudo`, system paths redirected into a temporary root), then what systemd does for
/// `systemctl enable --now longlink` is emulated from the installed unit's `[Service]` lines: its state and
/// credential directories, `Environment=`, `WorkingDirectory=`, `ExecStartPre=` and `ExecStart=`.
@Suite("deploy/longlink.service: the documented install starts a serving gateway", .serialized, .ownThreads)
struct SystemdInstallTests {
    /// System paths the documented steps touch, mapped into `root`; the installed binary is the one under test.
    struct Redirect {
        let root: String
        let binary: String

        func callAsFunction(_ text: String) -> String {
            var result = text.replacingOccurrences(of: "/usr/local/bin/longlink", with: binary)
            for top in ["etc", "var", "run"] {
                result = result.replacingOccurrences(
                    of: #"(^|[\s=:])/\#(top)/"#,
                    with: "$1\(root)/\(top)/",
                    options: .regularExpression
                )
            }
            return result
        }
    }

    @Test("config default writes the options given as flags (validated) in place of their defaults")
    func configDefaultWithFlags() async throws {
        let (code, io) = await run(["config", "default", "--store", "sqlite:/var/lib/x.sqlite", "--secret-file", "/run/s"])
        #expect(code == 0, "\(io.capturedErr)")
        let file = try ConfigFile(text: io.capturedOut, path: "default")
        #expect(file.entries.filter { $0.name == "store" }.map(\.value) == ["sqlite:/var/lib/x.sqlite"])
        #expect(file.entries.filter { $0.name == "secret-file" }.map(\.value) == ["/run/s"])
        #expect(file.entries.contains { $0.name == "listen" && $0.value == "127.0.0.1:7070" })
        let (devCode, devIO) = await run(["config", "default", "--insecure-dev"])
        #expect(devCode == 2 && devIO.capturedErr.contains("cannot be set in a config file"))
        let (badCode, _) = await run(["config", "default", "--listen", "nohost"])
        #expect(badCode == 2)
        let (checkCode, checkIO) = await run(["config", "check", "--store", "memory"])
        #expect(checkCode == 0 && checkIO.capturedErr.contains("no token secret"))
    }

    @Test("the header's install steps, then the unit's ExecStartPre and ExecStart with its settings, answer /readyz")
    func documentedInstall() async throws {
        let binary = try #require(longlinkExecutable(), "longlink is not built; run `swift build`")
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let root = try TemporaryDirectory()
        let redirect = Redirect(root: root.path, binary: binary)
        // What a Debian host has before the steps; `longlink` is on PATH once installed to /usr/local/bin.
        try FileManager.default.createDirectory(atPath: root.path + "/etc/systemd/system", withIntermediateDirectories: true)
        let shellEnvironment = [
            "PATH": (binary as NSString).deletingLastPathComponent + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": root.path,
        ]

        // 1. The header's steps, in order. Installing the binary is the one step not performed (the redirect points
        //    /usr/local/bin/longlink at the binary under test); systemctl is emulated below.
        let documented = try SystemdUnitFile(text: String(contentsOfFile: package + "/deploy/longlink.service", encoding: .utf8))
        #expect(documented.installSteps.contains { $0.contains("systemctl enable --now longlink") }, "\(documented.installSteps)")
        for (index, step) in documented.installSteps.enumerated() {
            let command = step.replacingOccurrences(of: "sudo ", with: "")
            if command.hasPrefix("systemctl ") || command.contains(".build/release/longlink /usr/local/bin/longlink") { continue }
            let (status, output) = try SpawnedCommand.shell(
                redirect(command),
                environment: shellEnvironment,
                directory: package,
                outputPath: root.path + "/step-\(index).log"
            )
            try #require(status == 0, "documented step failed: \(step)\n\(output)")
        }

        // 2. What systemd does on start, from the installed unit.
        let unit = try SystemdUnitFile(text: String(contentsOfFile: root.path + "/etc/systemd/system/longlink.service", encoding: .utf8))
        let unhandled = unit.service.map(\.key).filter { !SystemdUnitFile.startKeys.contains($0) && !SystemdUnitFile.isSandboxOrLifecycle($0) }
        try #require(unhandled.isEmpty, "this test does not emulate \(unhandled); teach it before relying on them")
        var environment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
        for name in unit.values("StateDirectory") {
            let path = root.path + "/var/lib/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            environment["STATE_DIRECTORY"] = path
        }
        for name in unit.values("ConfigurationDirectory") { environment["CONFIGURATION_DIRECTORY"] = root.path + "/etc/" + name }
        let credentials = root.path + "/run/credentials/longlink.service"
        for credential in unit.values("LoadCredential") {
            let parts = credential.split(separator: ":", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "LoadCredential=\(credential)")
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let source = redirect(parts[1])
            try #require(FileManager.default.fileExists(atPath: source), "LoadCredential source \(parts[1]) was not created by the documented steps")
            try FileManager.default.copyItem(atPath: source, toPath: credentials + "/" + parts[0])
            try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: credentials + "/" + parts[0])
            environment["CREDENTIALS_DIRECTORY"] = credentials
        }
        for (key, value) in unit.environment { environment[key] = redirect(value) }
        let directory = redirect(unit.values("WorkingDirectory").last ?? "/")

        // The config file the steps installed is the whole configuration: no Environment= line may override it.
        let configPath = root.path + "/etc/longlink/longlink.conf"
        let config = try ConfigFile(text: String(contentsOfFile: configPath, encoding: .utf8), path: configPath)
        for spec in ServeOptions.specs where unit.environment[spec.environmentName] != nil {
            #expect(
                !config.entries.contains { $0.name == spec.name },
                "the unit's Environment=\(spec.environmentName) silently overrides the config file's \(spec.name)"
            )
        }
        // Ports: the documented way to change a setting is a line in the config file (a later line wins), so every
        // listener it configures moves to port 0 that way; nothing else about the steps changes.
        let listeners = Set(config.entries.filter { ($0.name == "listen" || $0.name.hasSuffix("-listen")) && $0.value != "off" }.map(\.name))
        #expect(listeners.contains("metrics-listen"), "the operations listener must be on for /readyz")
        let override = listeners.sorted().map { "\($0) = 127.0.0.1:0\n" }.joined()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: configPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("# test: ephemeral ports\n\(override)".utf8))
        try handle.close()
        let store = try #require(config.entries.last { $0.name == "store" }?.value, "the config names no store")

        func command(_ line: String) -> (arguments: [String], mayFail: Bool) {
            var line = line
            var mayFail = false
            while let first = line.first, "-@+!:".contains(first) {
                if first == "-" { mayFail = true }
                line.removeFirst()
            }
            var expanded = line.replacingOccurrences(of: "%d", with: credentials)
            for (key, value) in environment {
                expanded = expanded.replacingOccurrences(of: "${\(key)}", with: value).replacingOccurrences(of: "$\(key)", with: value)
            }
            return (redirect(expanded).split(separator: " ").map(String.init), mayFail)
        }
        for (index, line) in unit.values("ExecStartPre").enumerated() {
            let (arguments, mayFail) = command(line)
            let pre = try SpawnedCommand(arguments, environment: environment, directory: directory, outputPath: root.path + "/pre-\(index).log")
            let status = pre.waitForExit(seconds: 30)
            #expect(mayFail || status == 0, "ExecStartPre=\(line) failed: \(pre.output)")
        }
        let start = try #require(unit.values("ExecStart").last, "no ExecStart")
        let gateway = try SpawnedCommand(command(start).arguments, environment: environment, directory: directory, outputPath: root.path + "/serve.log")
        let port = gateway.waitForNumber(after: "operations: http://127.0.0.1:", seconds: 30)
        try #require(port != nil, "the documented service did not start:\n\(gateway.output)")
        let ready = try HTTPTestClient.fetch(port: port!, "GET", "/readyz")
        #expect(ready.status == 200 && ready.text.contains("ready"), "\(ready.status) \(ready.text)")

        // It serves the config file's store and checks tokens with the secret the steps created.
        #expect(gateway.output.contains("(store \(store)"), "\(gateway.output)")
        if store.hasPrefix("sqlite:") { #expect(FileManager.default.fileExists(atPath: String(store.dropFirst("sqlite:".count)))) }
        let (tokenCode, tokenIO) = await run([
            "token", "--secret-file", root.path + "/etc/longlink/token-secret", "--sub", "ops", "--role", "admin", "--ttl", "5m",
        ])
        try #require(tokenCode == 0, "\(tokenIO.capturedErr)")
        let token = tokenIO.capturedOut.trimmingCharacters(in: .whitespacesAndNewlines)
        let stats = try HTTPTestClient.fetch(port: port!, "GET", "/admin/stats", headers: [("Authorization", "Bearer \(token)")])
        #expect(stats.status == 200, "\(stats.status) \(stats.text)")
        let unauthorized = try HTTPTestClient.fetch(port: port!, "GET", "/admin/stats", headers: [("Authorization", "Bearer dev")])
        #expect(unauthorized.status == 401)

        #expect(gateway.terminate() == 0, "\(gateway.output)")
    }
}
