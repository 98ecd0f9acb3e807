/// How each loop sends its connections' pending bytes before it sleeps (the `flush` toggle).
public enum FlushMode: String, Sendable, Hashable, CaseIterable {
    /// Gathered into the loop's send ring and sent with one `io_uring_enter` per loop iteration (`SendRing`);
    /// where the kernel offers no io_uring the loop logs it and sends per connection.
    case ring
    /// One `send` (or gathered `sendmsg`) per connection.
    case each
}
