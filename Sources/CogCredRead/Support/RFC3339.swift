#if canImport(Glibc)
import Glibc
#endif

/// Formats Unix seconds as an RFC 3339 UTC timestamp such as
/// `2026-11-21T21:05:00Z`.
///
/// gmtime_r is exact and costs nothing at start-up; date format styles would
/// pull in calendar machinery for one fixed format.
public func rfc3339(_ seconds: Int64) -> String {
    var t = time_t(seconds)
    var parts = tm()
    guard gmtime_r(&t, &parts) != nil else { return String(seconds) }
    func pad(_ v: Int32, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
        + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
}

/// A short human duration such as `59m 12s` or `2h 3m`, for status output.
public func humanDuration(_ seconds: Int64) -> String {
    let s = abs(seconds)
    let text: String
    if s < 60 {
        text = "\(s)s"
    } else if s < 3600 {
        text = "\(s / 60)m \(s % 60)s"
    } else if s < 86400 {
        text = "\(s / 3600)h \(s % 3600 / 60)m"
    } else {
        text = "\(s / 86400)d \(s % 86400 / 3600)h"
    }
    return seconds < 0 ? "\(text) ago" : "in \(text)"
}
