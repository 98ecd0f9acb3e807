import LonglinkCore
import LonglinkStores
import LonglinkServer

/// `longlink migrate --from STORE --to STORE [--verify] [--overwrite]`: copies everything a store holds (every
/// order with its retained history, every feature toggle) between any two stores through the `OrderStore` and
/// `ToggleStore` seams.
/// The source is opened read-only and must exist; a run after the source moved on brings the target up to date;
/// a target holding something else is refused (naming which side holds what) unless `--overwrite`; `--verify`
/// compares both stores afterwards and exits 1 on any difference. Progress goes to stderr.
public enum MigrateCommand {
    /// The command.
    public static let command = Command(
        name: "migrate",
        summary: "copy every order (with its history) and toggle from one store to another, and verify",
        usage: "--from STORE --to STORE [--verify] [--overwrite] [--without-toggles]",
        details: "STORE is sqlite:PATH, redis://HOST:PORT/DB or redis-cluster://HOST:PORT[,HOST:PORT…]. The source is\n"
            + "read, never written or created. Run it while the gateway is stopped, or beside a shadow store, so the\n"
            + "source does not change underneath; run it again to catch up with a source that moved on.",
        maximumPositionals: 0,
        options: [
            OptionSpec("from", valueName: "STORE", help: "source store (must exist; opened read-only)", configurable: false),
            OptionSpec("to", valueName: "STORE", help: "target store", configurable: false),
            OptionSpec("verify", kind: .flag, help: "compare both stores afterwards; exit 1 on any difference"),
            OptionSpec("verify-only", kind: .flag, help: "compare without copying", configurable: false),
            OptionSpec("overwrite", kind: .flag, help: "replace orders and toggles that differ in the target", configurable: false),
            OptionSpec(
                "without-toggles",
                kind: .flag,
                help: "copy and compare orders only (the source's feature toggles stay behind)",
                configurable: false
            ),
            OptionSpec("progress-interval", default: "1s", valueName: "DURATION", help: "progress line on stderr every DURATION (0: every page)"),
            OptionSpec("state-machines", valueName: "FILE", help: "JSON state machines (default: built-in)"),
            OptionSpec("redis-password-file", valueName: "FILE", help: "Redis password (else LONGLINK_REDIS_PASSWORD)"),
        ]
    ) { options, context in
        let from = try StoreFactory.specification(try options.required("from"), option: "from")
        let to = try StoreFactory.specification(try options.required("to"), option: "to")
        guard from != to else { throw CommandLineError("--from and --to name the same store") }
        if from == .memory {
            throw CommandLineError("--from memory: a memory store starts empty in every process, so there is nothing to copy; name sqlite:PATH or redis://HOST:PORT/DB")
        }
        if to == .memory {
            throw CommandLineError("--to memory: a memory store is gone when migrate exits; name sqlite:PATH or redis://HOST:PORT/DB")
        }
        let interval = try options.duration("progress-interval") ?? .seconds(1)
        let toggles = !options.flag("without-toggles")
        let catalog = try StoreFactory.catalog(file: options.string("state-machines"))
        let redis = RedisSettings(
            password: try RedisSettings.password(file: options.string("redis-password-file"), environment: context.environment)
        )
        let source: any OrderStore
        do throws(StoreError) {
            source = try StoreFactory.openExisting(from, catalog: catalog, redis: redis)
        } catch {
            throw CommandFailure("cannot read the source \(from): \(explain(error))")
        }
        defer { source.shutdown() }
        let target: any OrderStore
        do throws(StoreError) {
            target = try StoreFactory.open(to, catalog: catalog, redis: redis)
        } catch {
            throw CommandFailure("cannot open the target \(to): \(explain(error))")
        }
        defer { target.shutdown() }
        var toggleStores: StoreMigration.Toggles?
        if toggles {
            let sourceToggles: any ToggleStore
            do throws(StoreError) {
                sourceToggles = try StoreFactory.openExistingToggles(from, redis: redis)
            } catch {
                throw CommandFailure("cannot read the toggles of the source \(from): \(explain(error))")
            }
            let targetToggles: any ToggleStore
            do throws(StoreError) {
                targetToggles = try StoreFactory.openToggles(to, redis: redis)
            } catch {
                sourceToggles.shutdown()
                throw CommandFailure("cannot open the toggles of the target \(to): \(explain(error))")
            }
            toggleStores = StoreMigration.Toggles(source: sourceToggles, target: targetToggles)
        }
        defer {
            toggleStores?.source.shutdown()
            toggleStores?.target.shutdown()
        }
        let io = context.io
        if !options.flag("verify-only") {
            let progress = MigrateProgress(io: io, interval: interval)
            let report: StoreMigration.Report
            do throws(StoreMigration.MigrationError) {
                report = try StoreMigration.copy(
                    from: source,
                    to: target,
                    overwrite: options.flag("overwrite"),
                    toggles: toggleStores,
                    progress: progress.update
                )
            } catch {
                throw failure(error, target: to)
            }
            progress.finish()
            io.out(summary(report.orders, noun: "orders", extended: "extended"))
            if let counts = report.toggles, counts.written + counts.identical + counts.targetOnly > 0 {
                io.out(summary(counts, noun: "toggles", extended: "updated"))
            }
            if !toggles { io.out("toggles not copied (--without-toggles)") }
        }
        guard options.flag("verify") || options.flag("verify-only") else { return 0 }
        let progress = MigrateProgress(io: io, interval: interval)
        let verification: StoreMigration.Verification
        do throws(StoreMigration.MigrationError) {
            verification = try StoreMigration.verify(source: source, target: target, toggles: toggleStores, progress: progress.update)
        } catch {
            throw failure(error, target: to)
        }
        progress.finish()
        let what =
            !toggles ? "\(verification.checked) orders (toggles not compared)"
            : verification.togglesChecked > 0 ? "\(verification.checked) orders and \(verification.togglesChecked) toggles"
            : "\(verification.checked) orders"
        if verification.isClean {
            io.out("verified \(what): identical")
            return 0
        }
        io.err("verification failed: \(verification.differenceCount) differences in \(what)")
        for difference in verification.differences { io.err("  \(difference)") }
        return 1
    }

    /// `copied 1 orders, extended 1, skipped 11 already identical`.
    private static func summary(_ counts: StoreMigration.Counts, noun: String, extended: String) -> String {
        "copied \(counts.created) \(noun)"
            + (counts.extended > 0 ? ", \(extended) \(counts.extended)" : "")
            + (counts.replaced > 0 ? ", replaced \(counts.replaced)" : "")
            + ", skipped \(counts.identical) already identical"
            + (counts.targetOnly > 0 ? ", left \(counts.targetOnly) \(noun) only the target has" : "")
    }

    /// The message for a migration that stopped.
    private static func failure(_ error: StoreMigration.MigrationError, target: StoreSpecification) -> CommandFailure {
        switch error {
        case .targetNotEmpty(let differing, let first):
            let names = first.map { "  \($0)" }.joined(separator: "\n")
            return CommandFailure(
                "the target holds \(differing) orders or toggles that differ from the source and are not an earlier "
                    + "state of it; nothing was written.\n\(names)\nRun with --overwrite to replace them with the "
                    + "source's copies (orders and toggles only the target holds are left in place; a finished order "
                    + "only the target holds may be one the source has expired since).",
                exitCode: 1
            )
        case .store(let error, let order):
            return CommandFailure("\(order.map { "\($0): " } ?? "")\(explain(error))")
        }
    }

    /// A store error as the person running migrate should read it (no internal type name).
    private static func explain(_ error: StoreError) -> String {
        if case .storage(let why, _) = error { return why }
        let text = "\(error)"
        return text.hasPrefix("StoreError: ") ? String(text.dropFirst("StoreError: ".count)) : text
    }
}
