import LonglinkClient

/// The delegate style: the screen showing the ride, told about every change (the client holds it weakly, so the
/// app keeps it alive as long as the screen is shown).
final class RideScreen: ContentObserver {
    func contentDidChange(_ change: ContentChange) {
        Console.line("delegate: \(change)")
    }
}
