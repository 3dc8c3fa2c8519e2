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

/// The Unix seconds of an RFC 3339 UTC timestamp as `rfc3339` writes it
/// (`2026-11-21T21:05:00Z`); nil for any other text.
public func rfc3339Seconds(_ text: String) -> Int64? {
    let bytes = Array(text.utf8)
    guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
        bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int32? {
        var value: Int32 = 0
        for byte in bytes[range] {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int32(byte - 48)
        }
        return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
        let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24,
        minute < 60, second < 61
    else { return nil }
    var parts = tm()
    parts.tm_year = year - 1900
    parts.tm_mon = month - 1
    parts.tm_mday = day
    parts.tm_hour = hour
    parts.tm_min = minute
    parts.tm_sec = second
    return Int64(timegm(&parts))
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
