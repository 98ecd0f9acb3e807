public import LonglinkCore

/// Feature toggles in a migration: the one place that copies and compares them, through the `ToggleStore` seam.
///
/// A toggle keeps only its current value and the offset of its last change, so a target copy with a lower offset
/// is an earlier state (brought up to date), a higher offset is ahead, and the same offset with another value or
/// time has diverged. Toggles are few: they are read whole, not in pages.
extension StoreMigration {
    /// The toggle stores of a migration's two ends (the source's read-only, like its order store).
    public struct Toggles {
        /// Where toggles are read.
        public var source: any ToggleStore
        /// Where they are written.
        public var target: any ToggleStore

        public init(source: any ToggleStore, target: any ToggleStore) {
            self.source = source
            self.target = target
        }
    }

    /// Writes every toggle of the source to the target under `policy`.
    static func copyToggles(from source: any ToggleStore, to target: any ToggleStore, policy: ImportPolicy)
        throws(MigrationError) -> Counts
    {
        var counts = Counts()
        for toggle in try read(source) {
            do throws(StoreError) {
                counts.note(try target.importToggle(toggle, policy: policy))
            } catch {
                throw .store(error, order: "toggle \(toggle.app)/\(toggle.name)")
            }
        }
        return counts
    }

    /// Every toggle that differs between the stores, in app, name order.
    static func toggleDifferences(source: any ToggleStore, target: any ToggleStore) throws(MigrationError) -> [Difference] {
        let inSource = Dictionary(uniqueKeysWithValues: try read(source).map { (Key($0), $0) })
        let inTarget = Dictionary(uniqueKeysWithValues: try read(target).map { (Key($0), $0) })
        var differences: [Difference] = []
        for key in Set(inSource.keys).union(inTarget.keys).sorted() {
            let subject = Difference.Subject.toggle(app: key.app, name: key.name)
            let a = inSource[key].map { "source has \(ChangeValidation.describe($0))" }
            let b = inTarget[key].map { "target has \(ChangeValidation.describe($0))" }
            switch (inSource[key], inTarget[key]) {
            case (.some(let s), .some(let t)):
                if let difference = difference(
                    of: subject,
                    ChangeValidation.lineage(of: t, comparedWith: s),
                    inSource: a ?? "",
                    inTarget: b ?? ""
                ) {
                    differences.append(difference)
                }
            case (.some, nil): differences.append(Difference(subject, .missingInTarget, detail: a ?? ""))
            case (nil, .some): differences.append(Difference(subject, .missingInSource, detail: b ?? ""))
            case (nil, nil): break
            }
        }
        return differences
    }

    /// How many distinct toggles the two stores hold together.
    static func toggleCount(source: any ToggleStore, target: any ToggleStore) throws(MigrationError) -> Int {
        Set(try read(source).map(Key.init)).union(try read(target).map(Key.init)).count
    }

    /// A toggle's identity.
    private struct Key: Hashable, Comparable {
        var app: String
        var name: String

        init(_ toggle: FeatureToggle) {
            app = toggle.app
            name = toggle.name
        }

        static func < (a: Key, b: Key) -> Bool { (a.app, a.name) < (b.app, b.name) }
    }

    private static func read(_ store: any ToggleStore) throws(MigrationError) -> [FeatureToggle] {
        do throws(StoreError) {
            return try store.toggles(app: nil)
        } catch {
            throw .store(error, order: nil)
        }
    }
}
