import ArgumentParser
import CogCredWrite

/// `--json`, alike on every command that prints data (token, whoami,
/// status, profiles, configure, mfa show, devices list, passkey list,
/// version): the data as one line of JSON on stdout, keys sorted.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print the data as one line of JSON.")
    var json = false
}

extension Output {
    /// The one way a command writes JSON: one line, keys sorted, slashes
    /// unescaped, as the front writes it (JSONValue.compactText).
    static func json(_ value: JSONValue) {
        data(value.compactText)
    }
}
