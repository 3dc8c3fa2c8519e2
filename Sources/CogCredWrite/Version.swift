/// The one place the version is written. `cog-cred --version` prints it and
/// packaging reads it from the binary.
public let cogCredVersion = "0.3.0"
