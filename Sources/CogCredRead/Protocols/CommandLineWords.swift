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
    /// joined short option), then the profile options moved after the
    /// subcommand (`profileAfterSubcommand`). Only before `--`: exec's
    /// command is passed on as typed.
    public static func normalized(_ words: [String]) -> [String] {
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
        return profileAfterSubcommand(split)
    }

    /// `cog-cred --profile work token`, as aws and gh users type it: the
    /// profile options given before the subcommand (`--profile NAME`,
    /// `--profile=NAME`, `-p NAME`) are moved to just after it, where every
    /// subcommand takes them. `words` excludes argv[0]. Anything else before
    /// the subcommand (`--help`, `--version`, a typo) stops the move and is
    /// left for the parser to answer.
    public static func profileAfterSubcommand(_ words: [String]) -> [String] {
        var moved: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--profile" || word == "-p", index + 1 < words.count {
                moved += [word, words[index + 1]]
                index += 2
            } else if word.hasPrefix("--profile=") {
                moved.append(word)
                index += 1
            } else {
                break
            }
        }
        guard !moved.isEmpty, index < words.count, !words[index].hasPrefix("-") else { return words }
        return [words[index]] + moved + words[(index + 1)...]
    }
}
