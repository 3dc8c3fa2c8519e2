// swift-tools-version:6.0
import PackageDescription

// The read side (the front and CogCredRead) gets generic type metadata from
// direct accessor calls rather than by mangled name: in a process that lives
// for one answer, looking types up by name (demangling, then a linear search
// of the static binary's conformance records) took about 15% of the front's
// time (docs/performance.md). And each function in its own section, so the
// front's link order (link-order.txt) places exactly the functions a read
// runs side by side, not the whole source file each belongs to. Release
// only: the mangled-name form is smaller, and debug builds are not timed.
let readSideSwiftSettings: [SwiftSetting] = [
    .unsafeFlags(
        ["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors", "-Xfrontend", "-function-sections"],
        .when(configuration: .release))
]

let package = Package(
    name: "cog-cred",
    products: [
        .executable(name: "cog-cred", targets: ["cog-cred"]),
        .executable(name: "cog-cred-cli", targets: ["cog-cred-cli"]),
        .library(name: "CogCredCore", targets: ["CogCredCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // base64url for JWTs on the read side, which does not load Foundation.
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
    ],
    targets: [
        // What users run. Every read-only request (`token`, `get-header`,
        // the git, docker and kubectl helpers' reads, `exec`) is answered
        // here, straight from the Secret Service, without loading libcurl,
        // OpenSSL and their dependencies (whose loading alone costs more than
        // the whole read). Anything that needs the network, a prompt or a
        // write goes to cog-cred-cli with the same arguments.
        .executableTarget(
            name: "cog-cred",
            dependencies: ["CogCredRead", "CLinux", "CDBusStatic"],
            // Generated (scripts/link-order), not source.
            exclude: ["link-order.txt"],
            swiftSettings: readSideSwiftSettings,
            // A fully static executable: no dynamic loader at all, and
            // libdbus-1 linked in from Debian's libdbus-1.a, starts and reads
            // in a fraction of the time a dynamically linked one takes
            // (docs/performance.md). Linked by lld, which lays out the
            // functions a read runs side by side, in link-order.txt's order:
            // a read then faults in and maps far fewer pages of the 5 MB of
            // code. A name the list has and the binary lacks is skipped
            // silently. Release only: debug builds and tests keep the usual
            // linking.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-executable", "-use-ld=lld",
                        "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/cog-cred/link-order.txt",
                        "-Xlinker", "--no-warn-symbol-ordering",
                    ], .when(configuration: .release))
            ]
        ),
        // The command line: parses arguments, wires library objects together,
        // maps failures to exit codes.
        .executableTarget(
            name: "cog-cred-cli",
            dependencies: [
                "CogCredCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The write side: Cognito (HTTPS), sign-in, refresh, SRP, account
        // calls, verification. Unit-tested with in-memory fakes.
        .target(
            name: "CogCredCore",
            dependencies: ["CogCredRead", "CCurl", "COpenSSL", "CLinux"]
        ),
        // Everything a read needs and nothing that loads libcurl, OpenSSL or
        // Foundation: paths, profiles and the config file, JWT claims, the
        // freshness rule, the Secret Service client (libdbus-1), the
        // stored-token reader and the protocol renderers (JSON by json-c).
        // Used by both executables, so the front and the full command line
        // cannot disagree.
        .target(
            name: "CogCredRead",
            dependencies: ["CDBus", "CJSON", "CLinux", .product(name: "ExtrasBase64", package: "swift-extras-base64")],
            swiftSettings: readSideSwiftSettings
        ),
        // System library targets: one per C library, each with a shim header
        // that makes the variadic C APIs callable from Swift.
        .systemLibrary(
            name: "CJSON",
            pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"])]
        ),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // What the static front binary needs besides libdbus-1.a, and what
        // it must not take from libc.a (stubs.c says why; release only).
        .target(name: "CDBusStatic", cSettings: [.define("COG_CRED_STATIC_FRONT", .when(configuration: .release))]),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // prctl, setrlimit, memfd_create and a timed flock.
        .target(name: "CLinux"),
        .testTarget(
            name: "CogCredCoreTests",
            dependencies: ["CogCredCore", "CogCredRead"],
            // Read by path from the source tree (see SRPTests).
            exclude: ["Fixtures"]
        ),
    ]
)

// libFuzzer targets, one per parser of untrusted input. Only declared when
// asked for (scripts/fuzz sets COG_CRED_FUZZ), because they link against
// libFuzzer and build with -sanitize=fuzzer.
if Context.environment["COG_CRED_FUZZ"] != nil {
    package.targets.append(.target(name: "CFuzzer", path: "Tests/Fuzz/CFuzzer"))
    for (product, target) in [
        ("fuzz-git-credential", "FuzzGitCredential"), ("fuzz-jwt", "FuzzJWT"),
        ("fuzz-cognito-response", "FuzzCognitoResponse"), ("fuzz-config", "FuzzConfig"),
        ("fuzz-kubernetes-exec-info", "FuzzKubernetesExecInfo"), ("fuzz-docker-credential", "FuzzDockerCredential"),
        ("fuzz-oauth-callback", "FuzzOAuthCallback"), ("fuzz-token-response", "FuzzTokenResponse"),
        ("fuzz-identity-response", "FuzzIdentityResponse"),
    ] {
        package.targets.append(.executableTarget(name: target, dependencies: ["CogCredCore", "CFuzzer"], path: "Tests/Fuzz/\(target)"))
        package.products.append(.executable(name: product, targets: [target]))
    }
}
