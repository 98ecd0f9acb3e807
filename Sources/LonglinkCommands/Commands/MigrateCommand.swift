import LonglinkCore
import LonglinkStores

/// `longlink migrate --from STORE --to STORE [--verify] [--overwrite]`: copies every order with its retained
/// history between any two stores through the `OrderStore` seam. Safe to run twice (identical orders are
/// skipped); refuses a target that holds different data unless `--overwrite`; `--verify` compares both stores
/// order by order afterwards and exits 1 on any difference, naming the first ones.
public enum MigrateCommand {
    /// The command.
    public static let command = Command(
        name: "migrate",
        summary: "copy every order and its history from one store to another, and verify",
        usage: "--from STORE --to STORE [--verify] [--overwrite]",
        details: "STORE is memory, sqlite:PATH or redis://HOST:PORT/DB. Run it while the gateway is stopped, or\nbeside a shadow store, so the source does not change underneath.",
        maximumPositionals: 0,
        options: [
            OptionSpec("from", valueName: "STORE", help: "source store", configurable: false),
            OptionSpec("to", valueName: "STORE", help: "target store", configurable: false),
            OptionSpec("verify", kind: .flag, help: "compare both stores afterwards; exit 1 on any difference"),
            OptionSpec("verify-only", kind: .flag, help: "compare without copying", configurable: false),
            OptionSpec("overwrite", kind: .flag, help: "replace orders that differ in the target", configurable: false),
            OptionSpec("state-machines", valueName: "FILE", help: "JSON state machines (default: built-in)"),
            OptionSpec("redis-password-file", valueName: "FILE", help: "Redis password (else LONGLINK_REDIS_PASSWORD)"),
        ]
    ) { options, context in
        let from = try StoreFactory.specification(try options.required("from"), option: "from")
        let to = try StoreFactory.specification(try options.required("to"), option: "to")
        guard from != to else { throw CommandLineError("--from and --to name the same store") }
        let catalog = try StoreFactory.catalog(file: options.string("state-machines"))
        let redis = RedisSettings(
            password: try RedisSettings.password(file: options.string("redis-password-file"), environment: context.environment)
        )
        let source: any OrderStore
        let target: any OrderStore
        do {
            source = try StoreFactory.open(from, catalog: catalog, redis: redis)
            target = try StoreFactory.open(to, catalog: catalog, redis: redis)
        } catch {
            throw CommandFailure("\(error)")
        }
        defer {
            source.shutdown()
            target.shutdown()
        }
        let io = context.io
        if !options.flag("verify-only") {
            let overwrite = options.flag("overwrite")
            do throws(StoreMigration.MigrationError) {
                let report = try StoreMigration.copy(from: source, to: target, overwrite: overwrite) { progress in
                    if io.stdoutIsTerminal { io.outRaw("\r\(progress)   ") }
                }
                if io.stdoutIsTerminal { io.outRaw("\n") }
                io.out(
                    "copied \(report.copied) orders, skipped \(report.skipped) already identical"
                        + (report.replaced > 0 ? ", replaced \(report.replaced)" : "")
                        + (report.targetOnly > 0 ? ", left \(report.targetOnly) orders only the target has" : "")
                )
            } catch .targetNotEmpty(let differing, let first) {
                let names = first.map { "  \($0)" }.joined(separator: "\n")
                throw CommandFailure(
                    "the target holds \(differing) orders that differ from the source; nothing was written.\n\(names)\nRun with --overwrite to replace them.",
                    exitCode: 1
                )
            } catch {
                throw CommandFailure("\(error)")
            }
        }
        guard options.flag("verify") || options.flag("verify-only") else { return 0 }
        let verification: StoreMigration.Verification
        do {
            verification = try StoreMigration.verify(source: source, target: target)
        } catch {
            throw CommandFailure("\(error)")
        }
        if verification.isClean {
            io.out("verified \(verification.checked) orders: identical")
            return 0
        }
        io.err("verification failed: \(verification.differenceCount) differences in \(verification.checked) orders")
        for difference in verification.differences { io.err("  \(difference)") }
        return 1
    }
}
