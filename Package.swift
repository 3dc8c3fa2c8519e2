// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cog-cred",
    products: [
        .executable(name: "cog-cred", targets: ["cog-cred"]),
        .executable(name: "cog-cred-cli", targets: ["cog-cred-cli"]),
        .library(name: "CogCredCore", targets: ["CogCredCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // What users run: answers `token` and `get-header` from the kernel
        // keyring cache in a couple of milliseconds, and otherwise hands the
        // same argv to cog-cred-cli. It links no library that has to be
        // loaded and initialised on every call (glib, libcurl, OpenSSL and
        // their dependencies cost more than the whole fast path).
        .executableTarget(
            name: "cog-cred",
            dependencies: ["CogCredCache", "CLinux"],
            // A fully static executable: no dynamic loader at all starts in
            // under 1 ms, against about 2.4 ms for one that still loads libc,
            // libstdc++ and libm (shared/notes/baselines.md, docs/performance.md).
            // Release only: debug builds and tests keep the usual linking.
            linkerSettings: [.unsafeFlags(["-static-executable"], .when(configuration: .release))]
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
        // All of the logic, unit-tested with in-memory fakes.
        .target(
            name: "CogCredCore",
            dependencies: ["CogCredCache", "CGio", "CCurl", "COpenSSL", "CLinux"]
        ),
        // The kernel-keyring token cache and the freshness rule, shared by the
        // fast front binary and the library; libc only.
        .target(
            name: "CogCredCache",
            dependencies: ["CLinux"]
        ),
        // System library targets: one per C library, each with a shim header
        // that makes the variadic C APIs callable from Swift.
        .systemLibrary(
            name: "CGio",
            pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
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
        // prctl and setrlimit for keeping secrets out of core dumps.
        .target(name: "CLinux"),
        .testTarget(
            name: "CogCredCoreTests",
            dependencies: ["CogCredCore"],
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
    ] {
        package.targets.append(.executableTarget(name: target, dependencies: ["CogCredCore", "CFuzzer"], path: "Tests/Fuzz/\(target)"))
        package.products.append(.executable(name: product, targets: [target]))
    }
}
