// cog-cred: the command users run.
//
// Every read-only request (see ReadRequest) is answered here, straight from
// the Secret Service: one D-Bus connection, a session, a search and a
// GetSecrets on each call, nothing kept in between, so a locked keyring, a
// deleted or replaced item or a changed profile shows on the very next call.
// What cannot be answered from what is stored (a token to refresh, not
// signed in, a locked keyring, any error) and every other command go to
// cog-cred-cli with the same arguments, which gives the answer the full way
// (and the same answer: both use the CogCredRead library).
import CLinux
#if canImport(CogCredRead)  // not in the Embedded build, which compiles the library in
import CogCredRead
#endif

#if canImport(Glibc)
import Glibc
#endif

_ = clinux_forbid_core_dumps()

let arguments = CommandLineWords.ofThisProcess()
let environment: @Sendable (String) -> String? = { name in getenv(name).map { String(cString: $0) } }
let handover = Handover(arguments: arguments)
// Connecting and opening a session is most of a read's time, and almost all
// of it is the keyring daemon's: ask for it first, and parse the command
// line and the config while the daemon works.
// The debug trace is cog-cred-cli's (its DebugTrace): a traced request goes there.
if DebugSwitch.isOn(environment(DebugSwitch.variable)) { handover.run() }
let store = SecretServiceStore(environment: environment)
// With an agent, it is the store: a read asks its socket and never the keyring.
let agent = AgentConnection.configured(environment)
if agent == nil && ReadRequest.mayBeRead(arguments) { store.connect() }
guard let request = ReadRequest.parse(arguments) else { handover.run() }
Front(request: request, environment: environment, source: agent.map { .agent($0) } ?? .keyring(store)).answer(handover)
