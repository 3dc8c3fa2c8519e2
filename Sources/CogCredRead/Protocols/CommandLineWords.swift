import CLinux

/// The command line as both binaries read it.
public enum CommandLineWords {
    /// This process's arguments, argv[0] first, read from argv as the C
    /// library passed it (CLinux) rather than through `CommandLine`: the
    /// standard library builds `CommandLine.arguments` with an unspecialized
    /// `map` whose types are looked up by name at run time, a cost the front
    /// pays on every call, and the front's Embedded Swift build has no
    /// `CommandLine` at all (docs/performance.md).
    public static func ofThisProcess() -> [String] {
        let count = Int(clinux_argc())
        guard count > 0, let argv = clinux_argv() else { return [] }
        var words: [String] = []
        words.reserveCapacity(count)
        for index in 0..<count {
            words.append(argv[index].map { String(cString: $0) } ?? "")
        }
        return words
    }

    /// The words both binaries parse: `-pNAME` as `-p NAME` (getopt's
    /// joined short option), then the profile options moved to just after
    /// the command's words (`profileAfterCommand`). Only before `--`:
    /// exec's command is passed on as typed. `nested` says whether a word
    /// names a subcommand of the command named so far (`passkey list`); the front, whose
    /// commands have none, leaves it out.
    public static func normalized(_ words: [String], nested: (_ command: [String], _ word: String) -> Bool = { _, _ in false }) -> [String] {
        var split: [String] = []
        split.reserveCapacity(words.count + 1)
        var index = 0
        while index < words.count, words[index] != "--" {
            let word = words[index]
            if word.utf8.count > 2, word.hasPrefix("-p") {
                split += ["-p", String(word.dropFirst(2))]
            } else {
                split.append(word)
            }
            index += 1
        }
        split += words[index...]
        return profileAfterCommand(split, nested: nested)
    }

    /// `cog-cred --profile work token`, `cog-cred -p work passkey list`,
    /// `cog-cred passkey -p work list`: the profile options wherever they
    /// are before `--` (`--profile NAME`, `--profile=NAME`, `-p NAME`) are
    /// moved to just after the command's words, where every command takes
    /// them, so they work in any position as aws and gh users type them.
    /// `words` excludes argv[0]. The command's words are the first word
    /// that is not an option, then each next one `nested` names. With no
    /// command word (`cog-cred -p work --help`) nothing moves.
    public static func profileAfterCommand(_ words: [String], nested: (_ command: [String], _ word: String) -> Bool = { _, _ in false }) -> [String] {
        let end = words.firstIndex(of: "--") ?? words.endIndex
        let (moved, rest) = profileOptions(words[..<end])
        guard !moved.isEmpty, let first = rest.firstIndex(where: { !$0.hasPrefix("-") }) else { return words }
        var last = first
        while last + 1 < rest.count, nested(Array(rest[first...last]), rest[last + 1]) { last += 1 }
        return Array(rest[...last]) + moved + rest[(last + 1)...] + words[end...]
    }

    /// The profile options in `words` (`--profile NAME`, `--profile=NAME`,
    /// `-p NAME`; a `--profile` with no value after it is left for the
    /// parser to refuse), and the other words, each in their order.
    public static func profileOptions(_ words: ArraySlice<String>) -> (profile: [String], rest: [String]) {
        var moved: [String] = []
        var rest: [String] = []
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            if word == "--profile" || word == "-p", index + 1 < words.endIndex {
                moved += [word, words[index + 1]]
                index += 2
            } else {
                if word.hasPrefix("--profile=") { moved.append(word) } else { rest.append(word) }
                index += 1
            }
        }
        return (moved, rest)
    }
}
