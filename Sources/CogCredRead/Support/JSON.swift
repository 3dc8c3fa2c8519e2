#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One-line JSON with sorted keys and unescaped slashes: what every JSON
/// output of cog-cred looks like, so it diffs and greps well.
public func compactJSON<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding strings, numbers and booleans cannot fail.
    return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
}
