#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The AWS CLI's and SDKs' shared config file (`AWS_CONFIG_FILE`, else
/// `~/.aws/config`), read for the few settings cog-cred honours as they
/// do: the section of `AWS_PROFILE` (`[profile NAME]`), else `[default]`.
/// An unreadable or missing file says nothing.
enum AWSSharedConfig {
    struct Found: Equatable {
        var value: String
        /// As the person wrote it (`~/.aws/config`, or AWS_CONFIG_FILE's).
        var path: String
        var section: String
    }

    static func value(_ key: String, environment: [String: String]) -> Found? {
        let path: String
        let shown: String
        if let file = environment["AWS_CONFIG_FILE"], !file.isEmpty {
            (path, shown) = (file, file)
        } else if let home = environment["HOME"], !home.isEmpty {
            (path, shown) = (home + "/.aws/config", "~/.aws/config")
        } else {
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        guard let value = value(key, in: text, profile: profile) else { return nil }
        return Found(value: value, path: shown, section: profile == "default" ? "default" : "profile \(profile)")
    }

    /// `key`'s value in the profile's section of an INI `text`: the
    /// default profile is `[default]` (or `[profile default]`), another
    /// `[profile NAME]`; `#` and `;` start comments.
    static func value(_ key: String, in text: String, profile: String) -> String? {
        let headers = profile == "default" ? ["default", "profile default"] : ["profile \(profile)"]
        var inSection = false
        var found: String?
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = String(raw).trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
                inSection = headers.contains(name)
                continue
            }
            guard inSection, let equals = line.firstIndex(of: "=") else { continue }
            if String(line[..<equals]).trimmingWhitespace() == key {
                found = String(line[line.index(after: equals)...]).trimmingWhitespace()
            }
        }
        return found
    }
}
