import ArgumentParser
import CogCredWrite

/// `--yes`, taken by every command that destroys something (configure when
/// it re-points a signed-in profile or deletes one, sign-out, devices
/// forget, passkey remove). On a terminal such a command first says what
/// will be lost and asks, default no; `--yes` answers for the person, and
/// without a terminal nothing is asked, so scripts keep working as before.
struct ConfirmOptions: ParsableArguments {
    @Flag(help: "Answer yes to the question asked on a terminal before destroying something (without a terminal nothing is asked).")
    var yes = false

    /// Goes on when `question` is answered yes, `--yes` was given or there
    /// is no terminal to ask on. Any other answer, Enter included, ends the
    /// command with nothing changed (exit 1).
    func confirm(_ question: String) throws(InputError) {
        guard !yes, PasswordInput.hasTerminal else { return }
        guard try PasswordInput.askYesNo(question) else { throw InputError.declined }
    }
}

extension InputError {
    /// The question before destroying something, answered no.
    static let declined = InputError("answered no: nothing was changed", category: .other)
}
