import ArgumentParser
import CogCredWrite

/// `--min-ttl`: the seconds of life a command needs left in what it hands
/// out, within the bounds the front parses by too (ReadRequest).
struct MinTTLOptions<Bounds: MinTTLBounds>: ParsableArguments {
    // Taken as text, whatever it looks like, so that `--min-ttl -5` is
    // told what is wrong with -5 rather than that a value is missing.
    @Option(name: .customLong("min-ttl"), parsing: .unconditional, help: ArgumentHelp(Bounds.help, valueName: "seconds"))
    var minTTLText: String?

    func validate() throws {
        if let minTTLText, minTTL == nil {
            let range = Bounds.range
            throw ValidationError("--min-ttl takes a whole number of seconds from \(range.lowerBound) to \(range.upperBound), not '\(minTTLText)'")
        }
    }

    /// The seconds given, nil when none were.
    var minTTL: Int64? { minTTLText.flatMap { ReadRequest.seconds($0, in: Bounds.range) } }
}

protocol MinTTLBounds {
    static var range: ClosedRange<Int64> { get }
    static var help: String { get }
}

/// The token commands' (`token`, `get-header`, the helpers, `exec`).
typealias FreshnessOptions = MinTTLOptions<TokenLife>

enum TokenLife: MinTTLBounds {
    static let range = ReadRequest.tokenMinTTL
    static let help =
        "Refresh unless the token has at least this many seconds left, \(range.lowerBound) to \(range.upperBound) (default: 60 s or 10% of its lifetime, whichever is larger)."
}

extension MinTTLOptions where Bounds == TokenLife {
    var policy: RefreshPolicy { RefreshPolicy(minTTL: minTTL) }
}

/// aws-credentials' (the identity pool's credentials).
enum AWSCredentialsLife: MinTTLBounds {
    static let range = ReadRequest.awsMinTTL
    static let help =
        "Fetch new credentials unless these have at least this many seconds left, \(range.lowerBound) to \(range.upperBound) (default \(AWSCredentials.defaultMinTTL))."
}
