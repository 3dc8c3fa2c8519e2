// URLs as a person may see them: without the user name and password a URL
// can carry (`https://user:secret@host/`, which libcurl sends as Basic
// authorization, and a proxy's `http://user:secret@proxy:3128`). Every URL
// that cog-cred prints (errors, "still waiting" lines, notes, refusals,
// the debug trace), and every message of libcurl's, goes through
// `withoutURLCredentials`; what is sent is left as it is. Written on bytes,
// as the front's Embedded Swift build compiles it too.

/// `text` (a URL, or a message naming URLs) with the userinfo taken out of
/// every URL in it, and out of every quoted `'…@host'` (libcurl quotes a
/// proxy setting it cannot read, with or without its scheme, spaces and
/// all: "Unsupported proxy syntax in 'user:secret@host:3128'"). Cuts too
/// much rather than too little: up to the last `@` before the end of the
/// URL's part that could hold it (a `/` there does not end it: a password
/// may hold one unencoded, though no client reads it so), and all of a
/// quoted setting cut off before its closing quote (libcurl's messages are
/// at most 255 bytes).
public func withoutURLCredentials(_ text: String) -> String {
    // Quoted settings first: their userinfo may hold a space, which ends a
    // URL below. An opening quote follows a space (an apostrophe, as in
    // "Couldn't", follows a letter).
    var bytes = removingUserinfo(Array(text.utf8), after: Array(" '".utf8), cutOff: .dropsTheRest) {
        $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\n")
    }
    let urlEnds = Array("?#'\"<>\\".utf8)
    bytes = removingUserinfo(bytes, after: Array("://".utf8), cutOff: .keepsTheRest) { $0 <= 0x20 || urlEnds.contains($0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// What becomes of a marker's text that runs to the end without its end.
private enum CutOff { case dropsTheRest, keepsTheRest }

/// Each `marker` followed (before a byte that `ends`) by an `@`: what lies
/// between the marker (or a scheme's `://` after it) and the last such `@`
/// goes, the `@` with it.
private func removingUserinfo(_ text: [UInt8], after marker: [UInt8], cutOff: CutOff, ends: (UInt8) -> Bool) -> [UInt8] {
    let scheme = Array("://".utf8)
    var out: [UInt8] = []
    var index = 0
    while index < text.count {
        guard text[index...].starts(with: marker) else {
            out.append(text[index])
            index += 1
            continue
        }
        out += marker
        index += marker.count
        var end = index
        var lastAt: Int? = nil
        while end < text.count && !ends(text[end]) {
            if text[end] == UInt8(ascii: "@") { lastAt = end }
            end += 1
        }
        if end == text.count && cutOff == .dropsTheRest && lastAt == nil && end > index {
            return out + Array("…".utf8)
        }
        guard let lastAt else { continue }
        if let start = (index..<lastAt).first(where: { text[$0...].starts(with: scheme) }) {
            out += text[index..<start + scheme.count]
        }
        index = lastAt + 1
    }
    return out
}
