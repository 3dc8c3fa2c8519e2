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
import CogCredRead

#if canImport(Glibc)
import Glibc
#endif

_ = clinux_forbid_core_dumps()

let handover = Handover(arguments: CommandLine.arguments)
guard let request = ReadRequest.parse(CommandLine.arguments) else { handover.run() }
Front(request: request, environment: { name in getenv(name).map { String(cString: $0) } }).answer(handover)
