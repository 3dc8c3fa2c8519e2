import ArgumentParser
import CogCredWrite

/// `cog-cred profiles`: every profile in the config, and whether it is signed in.
struct Profiles: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "List the profiles: pool, app client, username, signed in or not, access token expiry.",
        discussion: """
            Never prints a token. The keyring is asked for each profile; when it cannot be \
            (locked, no Secret Service) the list is still printed, with the signed-in column \
            unknown, and the command exits 69. --profile lists that profile alone (78 when it \
            is not configured).

            With an agent (COG_CRED_AGENT), the profiles are the agent's: those its \
            machine configures, with their sessions there. The table says so first (on \
            stderr), and each JSON entry names the agent's socket in "agent" (null for \
            this machine's own).
            """)
    static let examples = [
        "cog-cred profiles",
        "cog-cred profiles --json",
        "cog-cred profiles --profile work",
    ]

    @OptionGroup var globals: GlobalOptions

    @OptionGroup var output: OutputOptions

    func run() throws {
        let wiring = Wiring()
        let agent = wiring.agent
        var keyringFailure: SecretServiceError? = nil
        let summaries: [ConfiguredProfiles.Summary]
        if let agent {
            summaries = try ConfiguredProfiles.summaries(of: agent, only: globals.profile)
        } else {
            (summaries, keyringFailure) = try wiring.profiles.summaries(only: globals.profile)
        }
        let rows = summaries.map(Row.init)
        if output.json {
            Output.json(.array(rows.map(\.json)))
        } else if rows.isEmpty {
            Output.note(agent.map { "The agent at \($0.connection.path.oneLine(limit: 200)) serves no profile: configure one where it runs (cog-cred configure ...)" }
                ?? "No profiles yet: cog-cred configure --user-pool-id POOL_ID --client-id CLIENT_ID")
        } else {
            if let agent { Output.note("The agent's profiles (\(agent.connection.path.oneLine(limit: 200))):") }
            let table = [["PROFILE", "USER POOL", "APP CLIENT", "USERNAME", "SIGNED IN", "ACCESS TOKEN"]] + rows.map(\.cells)
            let widths = (0..<table[0].count).map { column in table.map { $0[column].count }.max() ?? 0 }
            for line in table {
                Output.data(zip(line, widths).map { $0.padding($1 + 1) }.joined().trimmingTrailingSpaces())
            }
        }
        if let keyringFailure { throw keyringFailure }
    }

    struct Row {
        var name: String
        var profile: Profile
        /// nil: the keyring could not be asked.
        var signedIn: Bool?
        var username: String?
        var accessTokenExpiresAt: Int64?
        var now: Int64
        var agent: String?

        init(_ summary: ConfiguredProfiles.Summary) {
            name = summary.name
            profile = summary.profile
            signedIn = summary.status?.signedIn
            username = summary.status?.username ?? profile.username
            accessTokenExpiresAt = summary.status?.accessTokenExpiresAt
            now = summary.status?.now ?? 0
            agent = summary.agent
        }

        var cells: [String] {
            let expiry = accessTokenExpiresAt.map { exp in
                exp > now ? "expires \(rfc3339(exp)) (\(humanDuration(exp - now)))" : "expired \(rfc3339(exp))"
            }
            return [name, profile.userPoolID, profile.clientID, (username ?? profile.username)?.oneLine(limit: 64) ?? "-",
                    signedIn.map { $0 ? "yes" : "no" } ?? "unknown", expiry ?? "-"]
        }

        /// Field names as in `status --json`.
        var json: JSONValue {
            var members: [String: JSONValue] = [
                "profile": .string(name), "user_pool_id": .string(profile.userPoolID), "client_id": .string(profile.clientID),
                "signed_in": signedIn.map { .bool($0) } ?? .null,
            ]
            members["username"] = (username ?? profile.username).map { .string($0) } ?? .null
            members["access_token_expires_at"] = accessTokenExpiresAt.map { .string(rfc3339($0)) } ?? .null
            members["agent"] = agent.map { .string($0) } ?? .null
            return .object(members)
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
