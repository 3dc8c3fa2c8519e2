#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One-line JSON with sorted keys and unescaped slashes, from an Encodable
/// value: the full command line's structured output (`status --json`) looks
/// like the read side's (`JSONValue.compactText`).
public func compactJSON<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding strings, numbers and booleans cannot fail.
    return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
}
