/// The admin page (filled in below).
enum AdminPage {
    static let contentSecurityPolicy = "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
    static let bytes: [UInt8] = Array(html.utf8)
    static let html = "<!doctype html><title>longlink</title>"
}
