import Dispatch
import Synchronization
import LonglinkLoop
import LonglinkServer

/// The `longlink` executable's logic: picks the subcommand, resolves its options and runs it. `main.swift` only
/// calls `LonglinkCLI.main(arguments:environment:io:)`; tests call the same function.
public enum LonglinkCLI {
    /// Every subcommand, in the order `longlink help` lists them.
    public static var commands: [Command] {
        [
            ServeCommand.command,
            PublishCommand.command,
            SubscribeCommand.command,
            PresenceCommand.command,
            SimulateCommand.command,
            OrdersCommand.command,
            MigrateCommand.command,
            TokenCommand.command,
            VersionCommand.command,
            ConfigCommand.command,
            InspectCommand.command,
            BenchCommand.command,
            TogglesCommand.command,
        ]
    }

    /// Process set-up that must happen before any thread starts: `serve` handles SIGTERM/SIGINT/SIGHUP through a
    /// signalfd, which only works if those signals are blocked in every thread, so they are blocked here, first.
    /// Every command ignores SIGPIPE (a peer closing mid-write must not kill the process).
    public static func prepareProcess(arguments: [String]) {
        SignalSource.ignoreBrokenPipe()
        if arguments.first == "serve" || arguments.first == "bench" {
            SignalSource.block(UnixSignal.lifecycle)
        }
    }

    /// Runs `main` on the concurrency runtime while the calling (main) thread waits; for the executable.
    public static func runBlocking(arguments: [String], environment: [String: String], io: CommandIO) -> Int32 {
        let result = Mutex<Int32>(1)
        let done = DispatchSemaphore(value: 0)
        Task {
            let code = await main(arguments: arguments, environment: environment, io: io)
            result.withLock { $0 = code }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// Runs `arguments` (without the program name); returns the exit code.
    public static func main(arguments: [String], environment: [String: String], io: CommandIO) async -> Int32 {
        guard let name = arguments.first, !["help", "--help", "-h"].contains(name) else {
            if arguments.count >= 2, let command = commands.first(where: { $0.name == arguments[1] }) {
                io.out(command.help)
            } else {
                io.out(overview)
            }
            return 0
        }
        if name == "--version" { return await main(arguments: ["version"], environment: environment, io: io) }
        guard let command = commands.first(where: { $0.name == name }) else {
            io.err("longlink: unknown command '\(name)'. Run 'longlink help' for the list.")
            return 2
        }
        do {
            let options = try OptionResolver(specs: command.options)
                .resolve(arguments: Array(arguments.dropFirst()), environment: environment)
            if options.flag("help") {
                io.out(command.help)
                return 0
            }
            if let maximum = command.maximumPositionals, options.positionals.count > maximum {
                let extra = options.positionals[maximum...].map { "'\($0)'" }.joined(separator: ", ")
                let takes = maximum == 0 ? "takes no arguments besides options" : "takes at most \(maximum) arguments"
                throw CommandLineError("unexpected argument \(extra): \(name) \(takes) (see --help)")
            }
            return try await command.run(options, CommandContext(io: io, environment: environment))
        } catch let error as CommandLineError {
            io.err("longlink \(name): \(error.message)")
            return 2
        } catch let failure as CommandFailure {
            io.err("longlink \(name): \(failure.message)")
            return failure.exitCode
        } catch let failure as ServerFailure {
            io.err("longlink \(name): \(failure.message)")
            return failure.exitCode
        } catch {
            io.err("longlink \(name): \(error)")
            return 1
        }
    }

    /// The command list.
    public static var overview: String {
        var lines = [
            "longlink \(LonglinkVersion.current): real-time push gateway for ride-hailing order updates",
            "",
            "usage: longlink COMMAND [options]        longlink COMMAND --help",
            "",
            "commands:",
        ]
        for command in commands {
            lines.append("  " + command.name + String(repeating: " ", count: max(1, 12 - command.name.count)) + command.summary)
        }
        lines += [
            "",
            "Every option can also be set in a config file (--config FILE, 'name = value' lines) or in the",
            "environment (LONGLINK_NAME). Precedence: default < config file < environment < flag.",
        ]
        return lines.joined(separator: "\n")
    }
}
