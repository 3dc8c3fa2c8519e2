import CogCredWrite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads passwords without ever putting them on argv, in the environment or
/// on screen.
enum PasswordInput {
    /// One line from standard input, without its line ending (`\n` or `\r\n`).
    /// An empty line or no input at all is an error: an empty password is
    /// never what was meant.
    static func fromStandardInput(what: String = "password") throws(InputError) -> String {
        // Whoever answers (a person, a script waiting for a code to be sent)
        // takes their time: not the command's network time (PersonTime).
        guard var line = PersonTime.waiting({ readLine(strippingNewline: true) }) else {
            throw InputError("no \(what) on standard input (--password-stdin reads one line)")
        }
        if line.hasSuffix("\r") { line.removeLast() }
        guard !line.isEmpty else { throw InputError("the \(what) is empty") }
        return line
    }

    /// Asks on the controlling terminal with echo off. Without a terminal that
    /// is a usage error: the caller should have used --password-stdin.
    static func prompt(_ text: String, flagHint: String = "--password-stdin") throws(InputError) -> String {
        var bytes = try promptBytes(text, flagHint: flagHint)
        let password = String(decoding: bytes, as: UTF8.self)
        // Overwrite our copy; Swift's string copy is out of reach.
        wipe(&bytes)
        guard !password.isEmpty else { throw InputError("the password is empty") }
        return password
    }

    /// `prompt`'s line as bytes, which the caller overwrites when done
    /// (a keyring's password, never made a String); empty is allowed here.
    static func promptBytes(_ text: String, flagHint: String = "--password-stdin") throws(InputError) -> [UInt8] {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            throw InputError("no terminal to ask for the password on; pipe it in with \(flagHint)", category: .usage)
        }
        defer { close(fd) }
        notePipedInput(flagHint)
        guard var bytes = try promptLine(on: fd, text, silent: true, limit: 4096) else {
            throw InputError("that password is longer than 4096 bytes")
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }

    /// Shows `text` on the terminal `fd` and reads one line, nil when it is
    /// longer than `limit` bytes. While it waits, the prompt is the
    /// person's to end: Ctrl-C ends the command (on a new line, with one
    /// message, the terminal as it was: installInterruptRestorer), and
    /// Ctrl-D (end of input, nothing typed) ends it too (InputError.promptClosed).
    /// Neither counts as an answer. `silent`: echo off, for passwords.
    static func promptLine(on fd: Int32, _ text: String, silent: Bool, limit: Int) throws(InputError) -> [UInt8]? {
        var original = termios()
        let haveTermios = tcgetattr(fd, &original) == 0
        savedTerminal.set(fd: fd, state: haveTermios ? original : nil)
        installInterruptRestorer()
        defer { savedTerminal.clear() }
        if haveTermios && silent {
            // Echo goes off before the prompt is shown, as readpassphrase(3)
            // does it: a password typed or pasted the moment the prompt
            // appears must neither be echoed nor be thrown away by the
            // switch's flush (TCSAFLUSH), which would leave the command
            // waiting for a line already given.
            var quiet = original
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer { if haveTermios && silent { tcsetattr(fd, TCSAFLUSH, &original) } }
        writeAll(fd, text)
        var sawInput = false
        let line = PersonTime.waiting { readLineBytes(from: fd, limit: limit, sawInput: &sawInput) }
        guard sawInput else {
            // The cursor is still on the prompt's line: end it.
            writeAll(fd, "\n")
            throw .promptClosed
        }
        return line
    }

    /// One line of standard input as bytes, without its line ending (`\n`
    /// or `\r\n`), read a byte at a time so nothing after it is taken; the
    /// caller overwrites them when done. No input, an empty line or one
    /// longer than 4096 bytes is an error.
    static func bytesFromStandardInput(what: String = "password") throws(InputError) -> [UInt8] {
        var sawInput = false
        guard var bytes = PersonTime.waiting({ readLineBytes(from: 0, limit: 4096, sawInput: &sawInput) }) else {
            throw InputError("the \(what) on standard input is longer than 4096 bytes")
        }
        guard sawInput else { throw InputError("no \(what) on standard input (--password-stdin reads one line)") }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw InputError("the \(what) is empty") }
        return bytes
    }

    static func wipe(_ bytes: inout [UInt8]) {
        for i in bytes.indices { bytes[i] = 0 }
    }

    /// Input piped to a command that asks on the terminal (`printf pw |
    /// cog-cred sign-in`) is never read: say so, and which flag reads it,
    /// once a process, before the first silent prompt.
    static func notePipedInput(_ flag: String) {
        var info = stat()
        guard fstat(0, &info) == 0 else { return }
        let type = info.st_mode & mode_t(S_IFMT)
        guard type == mode_t(S_IFIFO) || type == mode_t(S_IFREG), !pipedInputNoted.exchange(true, ordering: .relaxed) else { return }
        Output.note("cog-cred: standard input is piped but not read: asking on the terminal (\(flag) reads standard input)")
    }

    private static let pipedInputNoted = Atomic(false)

    /// True when there is a controlling terminal to ask on.
    static var hasTerminal: Bool { hasControllingTerminal() }

    /// Runs `body` with the controlling terminal open for writing (what a
    /// person must see and no log may keep: stderr may be a file); false,
    /// and `body` not run, without one.
    @discardableResult
    static func onTerminal(_ body: (Int32) -> Void) -> Bool {
        let fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        body(fd)
        return true
    }

    /// A line typed on the terminal with echo on, for codes and choices.
    static func ask(_ text: String) throws(InputError) -> String {
        let text = text.printable  // may quote Cognito (an SMS destination)
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError("no terminal to ask on", category: .usage) }
        defer { close(fd) }
        guard let bytes = try promptLine(on: fd, text, silent: false, limit: 1024) else {
            throw InputError("that line is longer than 1024 bytes")
        }
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }

    /// A 6-digit code typed on the terminal. A typo (or an empty line) is
    /// asked again, up to three tries in all, saying why: the code sent is
    /// still good, and failing would cost a new sign-in, a new email or a
    /// second password. Codes from flags or stdin are never re-asked: a
    /// script gets the error at once.
    static func askCode(_ text: String, tries: Int = 3) throws(InputError) -> String {
        var attempt = 1
        while true {
            do {
                return try AccountValidation.normalizedCode(try ask(text))
            } catch {
                guard attempt < tries, error.category == .dataError else { throw error }
                attempt += 1
                onTerminal { writeAll($0, "\(error.message); try again (\(attempt) of \(tries)).\n") }
            }
        }
    }

    /// One of `choices`, by its number or its name, asked on the terminal:
    /// a word that is neither is asked again, up to `tries` in all, saying why.
    static func askChoice<Choice>(_ question: String, from choices: [Choice], named name: (Choice) -> String, tries: Int = 3)
        throws(InputError) -> Choice
    {
        let menu = choices.enumerated().map { "\($0.offset + 1)) \(name($0.element))" }.joined(separator: "  ")
        var attempt = 1
        while true {
            let answer = try ask("\(question): \(menu)? ")
            if let number = Int(answer), number >= 1, number <= choices.count { return choices[number - 1] }
            if let named = choices.first(where: { name($0) == answer.lowercased() }) { return named }
            let problem = "'\(answer)' is not one of the choices"
            guard attempt < tries else { throw InputError(problem) }
            attempt += 1
            onTerminal { writeAll($0, "\(problem); try again (\(attempt) of \(tries)).\n") }
        }
    }

    /// A yes-or-no question on the terminal, default no: only y or yes
    /// (any case) is yes.
    static func askYesNo(_ question: String) throws(InputError) -> Bool {
        ["y", "yes"].contains(try ask("\(question) [y/N] ").lowercased())
    }

    /// A password being chosen: one line from stdin, or asked twice on the
    /// terminal and compared, so a typo does not lock the user out.
    static func newPassword(fromStandardInput: Bool, prompt text: String = "New password: ") throws(InputError) -> String {
        if fromStandardInput { return try PasswordInput.fromStandardInput(what: "new password") }
        let first = try prompt(text)
        let second = try prompt("Repeat it: ")
        guard first == second else { throw InputError("the two passwords do not match") }
        return first
    }

    /// One line from the terminal (up to a newline or end of input), nil
    /// when it is longer than `limit` bytes. The rest of an overlong line is
    /// read and thrown away: left in the terminal, the shell would run it
    /// as a command once cog-cred exits.
    static func readTerminalLine(from fd: Int32, limit: Int) -> [UInt8]? {
        var sawInput = false
        return readLineBytes(from: fd, limit: limit, sawInput: &sawInput)
    }

    /// `readTerminalLine` of any descriptor; `sawInput`: whether anything,
    /// even an empty line, was read before the end of input.
    static func readLineBytes(from fd: Int32, limit: Int, sawInput: inout Bool) -> [UInt8]? {
        var bytes: [UInt8] = []
        var overlong = false
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n > 0 { sawInput = true }
            if n <= 0 || byte == UInt8(ascii: "\n") { break }
            if bytes.count < limit { bytes.append(byte) } else { overlong = true }
        }
        guard !overlong else {
            for i in bytes.indices { bytes[i] = 0 }  // may be a password
            return nil
        }
        return bytes
    }
}

extension InputError {
    /// A prompt ended with Ctrl-D (end of input) before anything was
    /// typed: not an answer. The command stops there; what it would have
    /// sent or written is not.
    static let promptClosed = InputError("cancelled at the prompt (end of input, Ctrl-D)", category: .other)
}

/// The prompt waiting now, to end well if the user presses Ctrl-C (or the
/// session hangs up): its terminal, on a new line, as it was before (echo
/// back on after a silent prompt), and one message.
private final class SavedTerminal: @unchecked Sendable {
    // Written before the handler is armed, read by the handler only: the
    // handler may only use async-signal-safe calls, so no locks.
    var fd: Int32 = -1
    var restores = false
    var state = termios()

    func set(fd: Int32, state: termios?) {
        if let state { self.state = state }
        restores = state != nil
        self.fd = fd
    }

    func clear() { fd = -1 }
}

private let savedTerminal = SavedTerminal()

private func installInterruptRestorer() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { signal in
        if savedTerminal.fd >= 0 {
            if savedTerminal.restores { tcsetattr(savedTerminal.fd, TCSAFLUSH, &savedTerminal.state) }
            _ = write(savedTerminal.fd, "\n", 1)
            if signal == SIGINT {
                let message = "cog-cred: cancelled at the prompt (Ctrl-C)\n"
                _ = message.withCString { write(2, $0, strlen($0)) }
            }
        }
        // Die of the same signal so the shell sees the usual status.
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
    }
    sigemptyset(&action.sa_mask)
    for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaction(sig, &action, nil) }
}
