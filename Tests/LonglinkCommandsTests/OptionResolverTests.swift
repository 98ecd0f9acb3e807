import Foundation
import LonglinkCommands
import LonglinkTestSupport
import Testing

@Suite("Option resolution: default < config file < environment < flag", .ownThreads)
struct OptionResolverTests {
    let specs = [
        OptionSpec("listen", default: "127.0.0.1:7070", help: "listener"),
        OptionSpec("store", default: "memory", help: "store"),
        OptionSpec("route", kind: .list, help: "routes"),
        OptionSpec("json", kind: .flag, help: "json"),
        OptionSpec("secret", help: "secret", configurable: false),
    ]

    func writeConfig(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "longlink-config-\(UUID().uuidString).conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("each higher source overrides the lower ones and remembers where the value came from")
    func precedence() throws {
        let path = try writeConfig("listen = 0.0.0.0:1\nstore = sqlite:a.db  # comment\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let resolver = OptionResolver(specs: specs)

        let fileOnly = try resolver.resolve(arguments: ["--config", path], environment: [:])
        #expect(fileOnly.string("listen") == "0.0.0.0:1")
        #expect(fileOnly.source("listen") == .file)
        #expect(fileOnly.string("store") == "sqlite:a.db")

        let withEnv = try resolver.resolve(arguments: ["--config", path], environment: ["LONGLINK_STORE": "memory"])
        #expect(withEnv.string("store") == "memory")
        #expect(withEnv.source("store") == .environment)
        #expect(withEnv.source("listen") == .file)

        let withFlag = try resolver.resolve(
            arguments: ["--config", path, "--store=sqlite:b.db"],
            environment: ["LONGLINK_STORE": "memory"]
        )
        #expect(withFlag.string("store") == "sqlite:b.db")
        #expect(withFlag.source("store") == .flag)

        let defaults = try resolver.resolve(arguments: [], environment: [:])
        #expect(defaults.string("listen") == "127.0.0.1:7070")
        #expect(defaults.source("listen") == .default)
    }

    @Test("the config file can also be named by LONGLINK_CONFIG")
    func configFromEnvironment() throws {
        let path = try writeConfig("store = sqlite:env.db\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = try OptionResolver(specs: specs).resolve(arguments: [], environment: ["LONGLINK_CONFIG": path])
        #expect(options.string("store") == "sqlite:env.db")
    }

    @Test("list options accumulate flags and split environment values on commas")
    func lists() throws {
        let resolver = OptionResolver(specs: specs)
        let flags = try resolver.resolve(arguments: ["--route", "a", "--route", "b", "pos"], environment: [:])
        #expect(flags.list("route") == ["a", "b"])
        #expect(flags.positionals == ["pos"])
        let env = try resolver.resolve(arguments: [], environment: ["LONGLINK_ROUTE": "x, y"])
        #expect(env.list("route") == ["x", "y"])
        #expect(try resolver.resolve(arguments: ["--json"], environment: [:]).flag("json"))
        #expect(!(try resolver.resolve(arguments: [], environment: [:]).flag("json")))
    }

    @Test("typos and bad files are errors, never silent defaults")
    func errors() throws {
        let resolver = OptionResolver(specs: specs)
        #expect(throws: CommandLineError.self) { try resolver.resolve(arguments: ["--stor", "x"], environment: [:]) }
        #expect(throws: CommandLineError.self) { try resolver.resolve(arguments: ["--store"], environment: [:]) }
        #expect(throws: CommandLineError.self) { try resolver.resolve(arguments: ["-x"], environment: [:]) }
        #expect(throws: CommandLineError.self) {
            try resolver.resolve(arguments: ["--config", "/nonexistent/longlink.conf"], environment: [:])
        }
        let unknown = try writeConfig("listen = a:1\nbogus = 1\n")
        defer { try? FileManager.default.removeItem(atPath: unknown) }
        do {
            _ = try resolver.resolve(arguments: ["--config", unknown], environment: [:])
            Issue.record("unknown config option accepted")
        } catch {
            #expect(error.message.contains(":2: unknown option 'bogus'"))
        }
        let secret = try writeConfig("secret = hunter2\n")
        defer { try? FileManager.default.removeItem(atPath: secret) }
        #expect(throws: CommandLineError.self) { try resolver.resolve(arguments: ["--config", secret], environment: [:]) }
        let noEquals = try writeConfig("listen 1\n")
        defer { try? FileManager.default.removeItem(atPath: noEquals) }
        #expect(throws: CommandLineError.self) { try resolver.resolve(arguments: ["--config", noEquals], environment: [:]) }
    }

    @Test("non-configurable options ignore the environment")
    func secretsOnlyFromFlags() throws {
        let options = try OptionResolver(specs: specs).resolve(arguments: [], environment: ["LONGLINK_SECRET": "s"])
        #expect(options.string("secret") == nil)
    }

    @Test("durations and sizes parse human forms")
    func parsers() {
        #expect(DurationParser.parse("250ms") == .milliseconds(250))
        #expect(DurationParser.parse("10s") == .seconds(10))
        #expect(DurationParser.parse("5m") == .seconds(300))
        #expect(DurationParser.parse("1h") == .seconds(3600))
        #expect(DurationParser.parse("1.5") == .milliseconds(1500))
        #expect(DurationParser.parse("ten") == nil)
        #expect(DurationParser.parse("-1s") == nil)
        #expect(ByteSizeParser.parse("64KiB") == 65_536)
        #expect(ByteSizeParser.parse("1m") == 1_048_576)
        #expect(ByteSizeParser.parse("100") == 100)
        #expect(ByteSizeParser.parse("1x") == nil)
    }
}

@Suite("longlink CLI", .ownThreads)
struct LonglinkCLITests {
    func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, CommandIO) {
        let io = CommandIO.capturing()
        let code = await LonglinkCLI.main(arguments: arguments, environment: environment, io: io)
        return (code, io)
    }

    @Test("help lists every command and each command has --help")
    func help() async {
        let (code, io) = await run(["help"])
        #expect(code == 0)
        for command in LonglinkCLI.commands {
            #expect(io.capturedOut.contains(command.name))
            let (helpCode, helpIO) = await run([command.name, "--help"])
            #expect(helpCode == 0)
            #expect(helpIO.capturedOut.hasPrefix("usage: longlink \(command.name)"))
        }
    }

    @Test("an unknown command or option exits 2 with a message on stderr")
    func unknown() async {
        let (code, io) = await run(["frobnicate"])
        #expect(code == 2)
        #expect(io.capturedErr.contains("unknown command 'frobnicate'"))
        let (optionCode, optionIO) = await run(["version", "--verbose"])
        #expect(optionCode == 2)
        #expect(optionIO.capturedErr.contains("unknown option '--verbose'"))
        #expect(optionIO.capturedOut.isEmpty)
    }

    @Test("config check validates values and prints where each came from")
    func configCheck() async {
        let (code, io) = await run(["config", "check", "--slow-policy", "coalesce"], environment: ["LONGLINK_LOOPS": "2"])
        #expect(code == 0)
        #expect(io.capturedOut.contains("slow-policy = coalesce"))
        #expect(io.capturedOut.contains("# flag"))
        #expect(io.capturedOut.contains("loops = 2"))
        #expect(io.capturedOut.contains("# env"))
        let (badCode, badIO) = await run(["config", "check", "--slow-policy", "drop"])
        #expect(badCode == 2)
        #expect(badIO.capturedErr.contains("--slow-policy must be 'disconnect' or 'coalesce'"))
        let (listenCode, _) = await run(["config", "check", "--listen", "nohost"])
        #expect(listenCode == 2)
    }

    @Test("config default prints a file that config check accepts")
    func configDefaultRoundTrip() async throws {
        let (code, io) = await run(["config", "default"])
        #expect(code == 0)
        let path = NSTemporaryDirectory() + "longlink-default-\(UUID().uuidString).conf"
        try io.capturedOut.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (checkCode, checkIO) = await run(["config", "check", path])
        #expect(checkCode == 0)
        #expect(checkIO.capturedOut.contains("listen = 127.0.0.1:7070"))
        #expect(checkIO.capturedOut.contains("# file"))
    }

    @Test("every command lists each option once; publish names the idempotency key and the TLS client key apart")
    func distinctOptionNames() {
        for command in LonglinkCLI.commands {
            let names = (command.options + OptionResolver.commonSpecs).map(\.name)
            #expect(Set(names).count == names.count, "\(command.name) declares an option twice: \(names.sorted())")
            let optionLines = command.help.components(separatedBy: "\noptions:\n").last ?? ""
            let helpLines = optionLines.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            for name in Set(names) {
                let listed = helpLines.filter { $0.hasPrefix("--\(name) ") || $0 == "--\(name)" }
                #expect(listed.count == 1, "\(command.name) --help lists --\(name) \(listed.count) times")
            }
        }
        let publish = PublishCommand.command.help
        #expect(publish.contains("--idempotency-key KEY"))
        #expect(publish.contains("--client-cert FILE") && publish.contains("--client-key FILE"))
        #expect(!publish.contains("--key "))
        #expect(publish.contains("exit codes:"))
    }
}
