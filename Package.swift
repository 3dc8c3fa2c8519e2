// swift-tools-version:6.0
import PackageDescription

#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#else
let multiarch = "x86_64-linux-gnu"
#endif
/// `pkg-config --cflags libsecret-1` on Debian, for the one C file that includes it.
let libsecretHeaders = [
    "-I/usr/include/libsecret-1", "-I/usr/include/glib-2.0", "-I/usr/lib/\(multiarch)/glib-2.0/include",
]

let package = Package(
    name: "cog-cred",
    products: [
        .executable(name: "cog-cred", targets: ["cog-cred"]),
        .executable(name: "cog-cred-cli", targets: ["cog-cred-cli"]),
        .library(name: "CogCredWrite", targets: ["CogCredWrite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // What users run. Every read-only request (`token`, `get-header`,
        // the git, docker and kubectl helpers' reads, `exec`) is answered
        // here, straight from the Secret Service, without loading libcurl,
        // OpenSSL and their dependencies (whose loading alone costs more than
        // the whole read). Anything that needs the network, a prompt or a
        // write goes to cog-cred-cli with the same arguments.
        //
        // This target is the debug build's front. The release front, which
        // ships and which scripts/test runs the end-to-end tests against, is
        // the same sources compiled by scripts/build as Embedded Swift into a
        // fully static executable (no Swift runtime to start, no type
        // metadata made at run time; docs/performance.md): SwiftPM cannot
        // build that beside a normal Swift target sharing its library.
        .executableTarget(
            name: "cog-cred",
            dependencies: ["CogCredRead", "CLinux"],
            // Used by scripts/build's Embedded build only.
            exclude: ["link-order.txt", "Embedded"]
        ),
        // The command line: parses arguments, wires library objects together,
        // maps failures to exit codes.
        .executableTarget(
            name: "cog-cred-cli",
            dependencies: [
                "CogCredWrite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The write side: Cognito (HTTPS), sign-in, refresh, SRP, account
        // calls, verification. Unit-tested with in-memory fakes.
        .target(
            name: "CogCredWrite",
            dependencies: ["CogCredRead", "CCurl", "COpenSSL", "CLinux", "CSecret", "CFido2", "CMicroHTTPD"]
        ),
        // Everything a read needs and nothing that loads libcurl, OpenSSL or
        // Foundation: paths, profiles and the config file, JWT claims, the
        // freshness rule, the Secret Service client (libdbus-1), the
        // stored-token reader and the protocol renderers (JSON by json-c).
        // Used by both executables, so the front and the full command line
        // cannot disagree.
        .target(
            name: "CogCredRead",
            dependencies: ["CDBus", "CJSON", "CLinux"]
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
        // libcurl, loaded by dlopen (CCurl.h says why), not linked: so no
        // pkg-config target, whose libraries SwiftPM would link. Its header
        // (libcurl4-openssl-dev) is on the compiler's own path.
        .target(name: "CCurl", dependencies: ["CLinux"]),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libsecret, loaded by dlopen when a write first needs it, not linked
        // (CSecret.h says why): so no pkg-config target, whose libraries
        // SwiftPM would link; its headers (libsecret-1-dev, GLib's) are
        // named here, at Debian's paths.
        .target(
            name: "CSecret",
            dependencies: ["CLinux"],
            cSettings: [.unsafeFlags(libsecretHeaders)]
        ),
        // libfido2 (security keys, for passkeys), loaded by dlopen when a
        // passkey is first needed, not linked (CFido2.h says why); its header
        // (libfido2-dev) is on the compiler's own path.
        .target(name: "CFido2", dependencies: ["CLinux"]),
        // libmicrohttpd (the HTTP server of `cog-cred proxy`), loaded by
        // dlopen when the proxy starts, not linked (CMicroHTTPD.h says why);
        // its header (libmicrohttpd-dev) is on the compiler's own path.
        .target(name: "CMicroHTTPD", dependencies: ["CLinux"]),
        // Linux calls Swift cannot make directly (CLinux.h says which), and
        // base64url by glibc's b64_pton, in libresolv.
        .target(name: "CLinux", linkerSettings: [.linkedLibrary("resolv")]),
        // Unit tests, one target per library, and the command line's
        // grammar against the front's (CogCredCLITests); what they share
        // (fixed JWTs, a settable clock) is in CogCredTestSupport.
        .testTarget(
            name: "CogCredReadTests",
            dependencies: ["CogCredRead", "CogCredTestSupport"]
        ),
        .testTarget(
            name: "CogCredWriteTests",
            dependencies: ["CogCredWrite", "CogCredRead", "CogCredTestSupport"],
            // Read by path from the source tree (see SRPTests).
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "CogCredCLITests",
            dependencies: ["cog-cred-cli", "CogCredRead"]
        ),
        .target(name: "CogCredTestSupport", dependencies: ["CogCredRead"], path: "Tests/TestSupport"),
    ]
)

// libFuzzer targets, one per parser of untrusted input. Only declared when
// asked for (scripts/fuzz sets COG_CRED_FUZZ), because they link against
// libFuzzer and build with -sanitize=fuzzer. With COG_CRED_FUZZ=replay their
// driver is Tests/Fuzz/CFuzzerReplay instead: no libFuzzer, no sanitizer,
// each kept input run once (scripts/fuzz --replay).
if let fuzz = Context.environment["COG_CRED_FUZZ"] {
    package.targets.append(.target(name: "CFuzzer", path: fuzz == "replay" ? "Tests/Fuzz/CFuzzerReplay" : "Tests/Fuzz/CFuzzer"))
    for (product, target) in [
        ("fuzz-git-credential", "FuzzGitCredential"), ("fuzz-jwt", "FuzzJWT"),
        ("fuzz-cognito-response", "FuzzCognitoResponse"), ("fuzz-config", "FuzzConfig"),
        ("fuzz-kubernetes-exec-info", "FuzzKubernetesExecInfo"), ("fuzz-docker-credential", "FuzzDockerCredential"),
        ("fuzz-oauth-callback", "FuzzOAuthCallback"), ("fuzz-token-response", "FuzzTokenResponse"),
        ("fuzz-identity-response", "FuzzIdentityResponse"), ("fuzz-passkey-options", "FuzzPasskeyOptions"),
        ("fuzz-authenticator-answer", "FuzzAuthenticatorAnswer"),
    ] {
        package.targets.append(.executableTarget(name: target, dependencies: ["CogCredWrite", "CFuzzer"], path: "Tests/Fuzz/\(target)"))
        package.products.append(.executable(name: product, targets: [target]))
    }
}
