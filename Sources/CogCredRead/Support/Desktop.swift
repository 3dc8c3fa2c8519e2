/// What a person at this machine could be shown: a window needs a
/// graphical session (over SSH, in a container or from cron there is none),
/// and a browser opens there or through `$BROWSER`.
public enum Desktop {
    /// DISPLAY or WAYLAND_DISPLAY is set.
    public static func hasDisplay(_ environment: (String) -> String?) -> Bool {
        ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment($0) ?? "").isEmpty }
    }

    /// A browser could be started: a graphical session, or `$BROWSER`.
    public static func mayOpenBrowser(_ environment: (String) -> String?) -> Bool {
        hasDisplay(environment) || !(environment("BROWSER") ?? "").isEmpty
    }
}
